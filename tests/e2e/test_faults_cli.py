"""Faults at the command line: one ``error:`` line on stderr, exit status 1, no traceback, nothing written.

stderr also carries the JSON log lines (``SLEEPCOMPACT_LOG_FORMAT=json``); the user-facing message is
the one line that is not a JSON object.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from sleepcompact import Memory
from tests.e2e.conftest import Cli, Result
from tests.integration.conftest import snapshot
from tests.support.locks import sqlite_write_lock
from tests.support.servers import free_port


def _error_line(result: Result) -> str:
    """The one line meant for the user, after checking the exit status and that nothing else leaked."""
    assert result.returncode == 1, result.describe()
    assert "Traceback" not in result.stderr, result.describe()
    lines = [line for line in result.stderr.splitlines() if line.strip() and not _is_json_object(line)]
    assert len(lines) == 1 and lines[0].startswith("error: "), result.describe()
    return lines[0]


def _is_json_object(line: str) -> bool:
    try:
        return isinstance(json.loads(line), dict)
    except ValueError:
        return False


def _snapshot(cli: Cli) -> dict[str, list[tuple[Any, ...]]]:
    assert cli.database_url is not None
    with Memory(database_url=cli.database_url) as mem:
        return snapshot(mem)


def test_a_locked_database_is_one_line_and_exit_1(cli: Cli) -> None:
    cid = cli.ok("create").stdout.strip()
    cli.ok("append", cid, "--role", "user", "--content", "hello")
    before = _snapshot(cli)
    impatient = cli.with_env(SLEEPCOMPACT_SQLITE_BUSY_TIMEOUT="0.5")
    assert cli.database_url is not None
    with sqlite_write_lock(cli.database_url):
        line = _error_line(impatient.run("append", cid, "--role", "assistant", "--content", "hi"))
        assert "busy" in line and "nothing was written" in line
        # Reading does not wait for the writer.
        assert "hello" in impatient.ok("context", cid).stdout
    assert _snapshot(cli) == before


def test_deep_nesting_and_nan_in_an_import_are_one_line_and_exit_1(cli: Cli, tmp_path: Path) -> None:
    before = _snapshot(cli)
    deep = tmp_path / "deep.jsonl"
    nested = "[" * 100_000 + "]" * 100_000
    deep.write_text('{"role": "user", "content": "hi"}\n{"role": "user", "content": ' + nested + "}\n")
    assert "nested too deeply" in _error_line(cli.run("import", deep))
    fenced = tmp_path / "deep-args.json"
    args = json.dumps("[" * 70 + "]" * 70)
    call = {"id": "c1", "type": "function", "function": {"name": "f", "arguments": args}}
    fenced.write_text(json.dumps([{"role": "assistant", "content": None, "tool_calls": [call]}]))
    assert "deep" in _error_line(cli.run("import", fenced))
    nan = tmp_path / "nan.jsonl"
    nan.write_text(
        '{"role": "user", "content": "hi"}\n'
        '{"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "f", '
        '"input": {"x": NaN}}]}\n'
    )
    assert "line 2" in _error_line(cli.run("import", nan))
    assert _snapshot(cli) == before


def test_a_database_server_that_is_not_there_is_one_line_and_exit_1(tmp_path: Path) -> None:
    gone = Cli(f"postgresql://nobody@127.0.0.1:{free_port()}/sleepcompact", tmp_path)
    for args in (("stats",), ("create",), ("init",)):
        line = _error_line(gone.run(*args))
        assert "unavailable" in line and "127.0.0.1" in line
