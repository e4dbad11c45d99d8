"""Logging configured on the first line (``configure_logging_when_used``, what ``sleepcompact check``
installs): a process that logs nothing never loads structlog, and one that does gets every line
rendered once, as the configured CLI renders it. Each case runs in a fresh interpreter, since this one
has configured logging already."""

from __future__ import annotations

import json
import subprocess
import sys

PRELUDE = (
    "import logging, sys\n"
    "from sleepcompact.config import Settings\n"
    "from sleepcompact.logs import configure_logging_when_used, get_logger\n"
    "configure_logging_when_used(Settings(log_format='json', log_level='INFO'))\n"
)


def _run(body: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", PRELUDE + body], capture_output=True, text=True, check=True)


def _lines(stderr: str) -> list[dict[str, object]]:
    return [json.loads(line) for line in stderr.splitlines() if line.strip()]


def test_a_process_that_logs_nothing_loads_neither_structlog_nor_rich() -> None:
    done = _run("print(sorted({'structlog', 'rich'} & set(sys.modules)))")
    assert done.stdout.strip() == "[]"
    assert done.stderr == ""


def test_the_first_library_line_configures_and_each_line_is_rendered_once_as_json() -> None:
    done = _run(
        "get_logger('sleepcompact.store').warning('lease_lost', conversation_id='conv_1')\n"
        "get_logger('sleepcompact.store').info('lease_taken', conversation_id='conv_2')\n"
        "get_logger('sleepcompact.store').debug('below_the_level')\n"
    )
    lines = _lines(done.stderr)
    assert [(line["event"], line["conversation_id"], line["level"]) for line in lines] == [
        ("lease_lost", "conv_1", "warning"),
        ("lease_taken", "conv_2", "info"),
    ]


def test_a_first_line_from_another_library_is_rendered_once_then_ours_follow() -> None:
    done = _run(
        "logging.getLogger('sqlalchemy.pool').warning('connection %s was invalidated', 7)\n"
        "logging.getLogger('sqlalchemy.pool').info('a second line')\n"
        "get_logger('sleepcompact.guard').warning('guard_enqueue_failed', error='ConnectionError')\n"
    )
    lines = _lines(done.stderr)
    assert [line["event"] for line in lines] == [
        "connection 7 was invalidated",
        "a second line",
        "guard_enqueue_failed",
    ]
    assert lines[0]["logger"] == "sqlalchemy.pool"
    assert lines[2]["error"] == "ConnectionError"


def test_a_first_line_below_the_level_is_not_rendered() -> None:
    done = _run(
        "logging.getLogger('sqlalchemy.pool').debug('chatter')\n"
        "logging.getLogger('sqlalchemy.pool').error('the database went away')\n"
    )
    assert [line["event"] for line in _lines(done.stderr)] == ["the database went away"]
