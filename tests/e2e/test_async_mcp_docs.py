"""The Python examples of docs/integrations.md's "AsyncMemory" and "MCP server" sections run as
written, each in a fresh interpreter against a temporary SQLite database, and print what their
comments say."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[2] / "docs" / "integrations.md"
BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)


def _example(heading: str) -> str:
    """The one Python block of the section under ``## heading``."""
    text = DOC.read_text(encoding="utf-8")
    section = text.split(f"\n## {heading}\n", 1)[1].split("\n## ", 1)[0]
    (block,) = BLOCK.findall(section)
    return block


@pytest.mark.parametrize(
    ("heading", "expected"),
    [
        ("AsyncMemory", ["none 21", "none 21", "none 21", "1", "2"]),
        ("MCP server", ["['memories', 'read_archived', 'search_history', 'stats']", "1"]),
    ],
)
def test_the_example_runs_as_written(heading: str, expected: list[str], tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLEEPCOMPACT_", "ANTHROPIC_"))}
    env["SLEEPCOMPACT_DATABASE_URL"] = f"sqlite:///{tmp_path}/docs.db"
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"  # the console script
    run = subprocess.run(
        [sys.executable, "-c", _example(heading)],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 0, f"{run.stdout}\n{run.stderr}"
    lines = run.stdout.splitlines()
    for want in expected:
        assert want in lines, f"{want!r} not printed:\n{run.stdout}"
    if heading == "MCP server":
        assert "The deploy key is in the vault under ops/deploy." in lines
