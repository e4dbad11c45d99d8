"""``sleepcompact export --shareable``: every planted secret redacted; the default export stays exact."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from sleepcompact import Memory
from tests.e2e.conftest import Cli
from tests.support.redteam import load_secrets, placements, tool_arguments

SECRETS = load_secrets()[:20]


def test_a_shareable_export_has_no_secret_and_the_default_one_is_exact(db_cli: Cli) -> None:
    assert db_cli.database_url is not None
    mem = Memory(database_url=db_cli.database_url)
    try:
        cid = mem.create_conversation("claude-sonnet-4-5")
        for i, p in enumerate(SECRETS):
            call = {"type": "tool_use", "id": f"toolu_{i}", "name": "bash", "input": tool_arguments(p)}
            result = {
                "type": "tool_result",
                "tool_use_id": f"toolu_{i}",
                "content": placements(p)["tool result"],
            }
            mem.append_many(
                cid,
                [
                    {"role": "user", "content": placements(p)["user message"]},
                    {"role": "assistant", "content": [call]},
                    {"role": "user", "content": [result]},
                ],
            )
        appended = list(mem.export(cid).appended)
    finally:
        mem.close()

    exact = db_cli.ok("export", cid).json()
    assert exact["format"] == "sleepcompact.export/2" and exact["appended"] == appended
    shared = db_cli.ok("export", cid, "--shareable").stdout
    document = json.loads(shared)
    assert document["format"] == "sleepcompact.export/2+shareable"
    assert len(document["appended"]) == len(appended) and "[REDACTED:" in shared
    assert [p.kind for p in SECRETS if p.secret in shared or json.dumps(p.secret)[1:-1] in shared] == []
    assert [p.kind for p in SECRETS if p.secret in exact_text(exact)] == [p.kind for p in SECRETS]


def exact_text(document: object) -> str:
    """The document as the text a secret is looked for in (decoded strings, so escapes do not hide it)."""
    out: list[str] = []

    def walk(value: object) -> None:
        if isinstance(value, str):
            out.append(value)
        elif isinstance(value, dict):
            for v in value.values():
                walk(v)
        elif isinstance(value, list):
            for v in value:
                walk(v)

    walk(document)
    return "\n".join(out)


_LOGGING_PROCESS = """
import logging, sys
from sleepcompact import Memory, Settings
from sleepcompact.logs import get_logger
mem = Memory(Settings(database_url=sys.argv[1], log_format="json"), auto_migrate=True)
celery = logging.getLogger("celery.worker")
celery.warning("connecting to amqp://u:%s@rabbit// with password=%s", *sys.argv[2:4])
get_logger("sleepcompact.services.guard").info("checked", command=f"PGPASSWORD={sys.argv[3]} psql")
try:
    raise RuntimeError(f"login failed with password={sys.argv[3]}")
except RuntimeError:
    celery.exception("task failed")
mem.close()
"""


def test_the_installed_logging_redacts_every_line_whoever_wrote_it(sqlite_url: str, tmp_path: Path) -> None:
    """The configuration the processes install (JSON lines on stderr) redacts the library's events and
    other libraries' records alike."""
    secrets = ("s3cretRabbitPw", "hunter2xyzPw")
    proc = subprocess.run(
        [sys.executable, "-c", _LOGGING_PROCESS, sqlite_url, *secrets],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    lines = [json.loads(line) for line in proc.stderr.splitlines() if line.startswith("{")]
    assert {line.get("logger") for line in lines} >= {"celery.worker"}
    assert any(line.get("event") == "checked" for line in lines)
    assert any("RuntimeError" in line.get("exception", "") for line in lines)  # the traceback, redacted
    assert "[REDACTED:" in proc.stderr and not any(s in proc.stderr for s in secrets)
