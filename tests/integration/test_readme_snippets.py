"""Every fenced Python block of README.md runs as written, in order, against a temporary database.

The blocks run in one fresh interpreter, one after the other in one namespace, as a reader would paste
them into a session. The only things replaced are the remote model (the README's Anthropic client
talks to the local stand-in through ``ANTHROPIC_BASE_URL``) and the database (a temporary SQLite file
through ``SLEEPCOMPACT_DATABASE_URL``).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from tests.support.fake_anthropic import FakeAnthropic, Scripted

README = Path(__file__).resolve().parents[2] / "README.md"
BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)


def python_blocks() -> list[str]:
    """The README's fenced Python blocks, in order."""
    return BLOCK.findall(README.read_text(encoding="utf-8"))


def test_the_readme_has_python_examples() -> None:
    assert len(python_blocks()) >= 3


def test_every_python_block_of_the_readme_runs_as_written(
    fake_anthropic: FakeAnthropic, tmp_path: Path
) -> None:
    # The guard's example gets the stand-in's plain reply; in the recall example the model first asks the
    # archive (a search_history call), then answers.
    search = {
        "type": "tool_use",
        "id": "toolu_recall_1",
        "name": "search_history",
        "input": {"query": "invoice.py"},
    }
    fake_anthropic.script(
        Scripted(),
        Scripted(content=[search], stop_reason="tool_use"),
        Scripted(text="We read total() in src/billing/invoice.py."),
    )
    script = "\n\n".join(f"# --- README block {i + 1}\n{block}" for i, block in enumerate(python_blocks()))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLEEPCOMPACT_", "ANTHROPIC_"))}
    env.update(
        SLEEPCOMPACT_DATABASE_URL=f"sqlite:///{tmp_path}/readme.db",
        ANTHROPIC_API_KEY="sk-ant-readme-test",
        ANTHROPIC_BASE_URL=fake_anthropic.url,
    )
    run = subprocess.run(
        [sys.executable, "-c", script], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert run.returncode == 0, f"{run.stdout}\n{run.stderr}"
    assert run.stderr == ""
    lines = run.stdout.splitlines()
    assert lines[0] == "none 56 168000"  # the quick start's check, exactly as its comment says
    assert lines[1].split()[0] == "none"  # the guard's action below soft
    # The model's reply was stored: the request the guard built reached the stand-in with the tools.
    first, asked, answered = fake_anthropic.message_requests()
    assert first["tools"][0]["name"] == "read_file"
    # With its prompt-cache breakpoint (the default, 5 minutes): the system prompt caches the tools too.
    assert first["system"] == [
        {"type": "text", "text": "You are a careful coding agent.", "cache_control": {"type": "ephemeral"}}
    ]
    assert [t["name"] for t in asked["tools"]] == ["read_file", "search_history", "read_archived"]
    # The recall tool's answer went back to the model as the tool_result of its call.
    result = answered["messages"][-1]["content"][0]
    assert result["type"] == "tool_result" and result["tool_use_id"] == "toolu_recall_1"
    assert "We read total() in src/billing/invoice.py." in lines
