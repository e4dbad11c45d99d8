"""``sleepcompact check``: answered before the Typer app is built (``cli/quick.py``), so it must print
exactly what the full CLI prints, and hand every form it does not answer to the full CLI."""

from __future__ import annotations

import subprocess
import sys

import pytest

from sleepcompact import Memory
from tests.e2e.conftest import Cli, Result

FULL_APP = "import sys\nfrom sleepcompact.cli.commands import app\nsys.argv[0] = 'sleepcompact'\napp()\n"


def _full(cli: Cli, *args: str) -> Result:
    """The same command through the Typer app, as every other command runs."""
    proc = subprocess.run(
        [sys.executable, "-c", FULL_APP, *args],
        env=cli.env(),
        capture_output=True,
        text=True,
        cwd=cli.cwd,
        timeout=120,
        check=False,
    )
    return Result(args, proc.returncode, proc.stdout, proc.stderr)


@pytest.fixture
def cid(cli: Cli, sqlite_url: str) -> str:
    with Memory(database_url=sqlite_url) as mem:
        conv = mem.create_conversation("claude-sonnet-4-5", context_window=8_000, output_reserve=1_000)
        mem.append(conv, {"role": "user", "content": "Please deploy build 4471 to staging. " * 600})
    return conv


@pytest.mark.parametrize(
    "args",
    [("check", "{cid}"), ("check", "{cid}", "--json"), ("check", "--json", "{cid}"), ("check", "conv_nope")],
    ids=["text", "json-after", "json-before", "unknown"],
)
def test_check_prints_what_the_full_cli_prints(cli: Cli, cid: str, args: tuple[str, ...]) -> None:
    argv = tuple(a.format(cid=cid) for a in args)
    quick, full = cli.run(*argv), _full(cli, *argv)
    assert (quick.returncode, quick.stdout, quick.stderr) == (full.returncode, full.stdout, full.stderr)
    if "conv_nope" in argv:
        assert quick.typed_error() == "error: unknown conversation: 'conv_nope'"
    else:
        assert ('"decision": "compact_now"' if "--json" in argv else "compact_now: ") in quick.stdout


def test_check_forms_it_does_not_answer_get_the_full_clis_help_and_usage_errors(cli: Cli, cid: str) -> None:
    helped = cli.ok("check", "--help")
    assert "Usage: sleepcompact check" in helped.stdout and "--json" in helped.stdout
    for argv in (("check",), ("check", cid, "extra"), ("check", "--jsn", cid)):
        result = cli.run(*argv)
        assert result.returncode == 2, result.describe()  # Click's usage error, not a typed error
        assert "Usage: sleepcompact check" in result.stderr and result.stdout == ""
