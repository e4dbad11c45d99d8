"""Imported as a library, sleepcompact writes nothing to stdout or stderr unless the application asks.

Each case runs a fresh interpreter (logging state is per process) that does what an application does
on its request path and in the background: the guard compacting over hard, a manual compaction, and
a sleep tick. Unconfigured, it prints nothing at all; with SLEEPCOMPACT_LOG_FORMAT=json it writes
JSON lines to stderr; with the host's own ``logging.basicConfig`` the events arrive as records of the
``sleepcompact.*`` loggers; with the host's own structlog configuration they go through it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

WORK = """
import sys
{setup}
from sleepcompact import Memory
from sleepcompact.demo.synthetic import coding_agent

mem = Memory.from_env(database_url=sys.argv[1])
messages = coding_agent(seed=0).messages
over = mem.create_conversation("claude-sonnet-4-5", context_window=8_000)
mem.append_many(over, messages)
ctx = mem.prepare_context(over, system="You are a careful coding agent.")
assert ctx.action in ("emergency_compacted", "fallback_compacted"), ctx.action
other = mem.create_conversation("claude-sonnet-4-5", context_window=8_000)
mem.append_many(other, messages)
assert mem.compactions.compact(other).status == "applied"
third = mem.create_conversation("claude-sonnet-4-5", context_window=8_000)
mem.append_many(third, messages)
mem.journal.add(third, "The user prefers metric units", tags=["preference"])
assert mem.sleep.tick(third).compaction.status == "applied"
mem.close()
"""


def _run(tmp_path: Path, setup: str = "", **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("SLEEPCOMPACT_", "ANTHROPIC_"))}
    return subprocess.run(
        [sys.executable, "-c", WORK.format(setup=setup), f"sqlite:///{tmp_path}/lib.db"],
        env={**clean, **env},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_unconfigured_the_library_prints_nothing(tmp_path: Path) -> None:
    run = _run(tmp_path)
    assert run.returncode == 0, run.stderr
    assert run.stdout == ""
    assert run.stderr == ""


def test_sleepcompact_log_format_turns_on_json_lines_on_stderr(tmp_path: Path) -> None:
    run = _run(tmp_path, SLEEPCOMPACT_LOG_FORMAT="json")
    assert run.returncode == 0, run.stderr
    assert run.stdout == ""
    lines = [json.loads(line) for line in run.stderr.splitlines()]
    events = [line["event"] for line in lines]
    assert "guard" in events and "compaction" in events and "sleep_tick" in events


def test_the_hosts_stdlib_logging_receives_the_events(tmp_path: Path) -> None:
    setup = "import logging\nlogging.basicConfig(level=logging.INFO, format='%(name)s|%(message)s')"
    run = _run(tmp_path, setup)
    assert run.returncode == 0, run.stderr
    assert run.stdout == ""
    names = {line.split("|", 1)[0] for line in run.stderr.splitlines() if "|" in line}
    assert "sleepcompact.telemetry" in names
    guard = next(line for line in run.stderr.splitlines() if line.startswith("sleepcompact.telemetry|guard "))
    assert "action=" in guard and "conversation_id=" in guard


def test_the_hosts_structlog_configuration_receives_the_events(tmp_path: Path) -> None:
    setup = (
        "import structlog\n"
        "structlog.configure(processors=[structlog.processors.JSONRenderer()],"
        " logger_factory=structlog.PrintLoggerFactory(file=sys.stdout))"
    )
    run = _run(tmp_path, setup)
    assert run.returncode == 0, run.stderr
    assert run.stderr == ""
    events = [json.loads(line)["event"] for line in run.stdout.splitlines()]
    assert {"guard", "compaction", "sleep_tick"} <= set(events)
