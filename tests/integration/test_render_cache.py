"""The guard's cached rendering gives exactly the request a fresh rendering gives (issue 18, item 1),
while another process appends, compacts, pops, restores and clears the same conversation.

Three views of one database: ``cached`` (the default: a per-process cache extended with appended rows),
``fresh`` (the cache off: every call renders every live row) and a writer in a separate process. After
every write, both guard calls must send byte-identical requests, in both formats.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from sleepcompact import Memory, Settings

SYSTEM = "You are a coding agent. Work in /repo."
TOOLS = [{"name": "bash", "description": "Run a command.", "input_schema": {"type": "object"}}]


class Writer:
    """The other process (``tests.support.history_writer``)."""

    def __init__(self, database_url: str) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tests.support.history_writer", database_url],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )

    def __call__(self, op: str, conversation_id: str, **args: Any) -> Any:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps({"op": op, "conversation_id": conversation_id, **args}) + "\n")
        self.proc.stdin.flush()
        answer = json.loads(self.proc.stdout.readline())
        assert answer["ok"]
        return answer["result"]

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=60)


@pytest.fixture
def views(database_url: str) -> Iterator[tuple[Memory, Memory, Writer]]:
    # The guard's deadline is not what these tests are about: a hook that waits on another process
    # must not lose its append to a loaded machine's clock.
    cached = Memory(Settings(database_url=database_url, guard_deadline_s=600.0), auto_migrate=True)
    fresh = Memory(Settings(database_url=database_url, render_cache_conversations=0))
    writer = Writer(database_url)
    try:
        yield cached, fresh, writer
    finally:
        writer.close()
        cached.close()
        fresh.close()


def turn(i: int) -> list[dict[str, Any]]:
    """One agent step: a request, a tool call, its (long) output, an answer."""
    call = f"toolu_{i:04d}"
    return [
        {"role": "user", "content": f"Step {i}: run the tests in module_{i}.py and tell me what failed."},
        {
            "role": "assistant",
            "content": [
                {"type": "tool_use", "id": call, "name": "bash", "input": {"command": f"pytest m{i}"}}
            ],
        },
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": call, "content": f"FAILED test_{i}\n" * 60}],
        },
        {"role": "assistant", "content": f"test_{i} fails on an off-by-one in module_{i}."},
    ]


def same_requests(cached: Memory, fresh: Memory, cid: str) -> None:
    for fmt in ("anthropic", "openai"):
        a = cached.prepare_context(cid, system=SYSTEM, tools=TOOLS, fmt=fmt)
        b = fresh.prepare_context(cid, system=SYSTEM, tools=TOOLS, fmt=fmt)
        assert json.dumps(a.request(), sort_keys=True) == json.dumps(b.request(), sort_keys=True)
        assert (a.tokens, a.action) == (b.tokens, b.action)


def test_cached_and_fresh_renderings_agree_through_every_kind_of_write(
    views: tuple[Memory, Memory, Writer],
) -> None:
    cached, fresh, write = views
    cid = cached.create_conversation("claude-sonnet-4-5", context_window=200_000, auto_compact=False)
    write("append", cid, messages=turn(0))
    same_requests(cached, fresh, cid)
    for i in range(1, 8):  # appends only: the cached rendering is extended each time
        write("append", cid, messages=turn(i))
        same_requests(cached, fresh, cid)
    first = write("compact", cid)
    assert first is not None
    same_requests(cached, fresh, cid)
    write("append", cid, messages=turn(8))
    same_requests(cached, fresh, cid)
    second = write("compact", cid)
    write("append", cid, messages=turn(9)[:1])  # a question with no answer yet
    same_requests(cached, fresh, cid)
    write("pop", cid)
    same_requests(cached, fresh, cid)
    write("restore", cid, compaction_id=second or first)
    same_requests(cached, fresh, cid)
    write("append", cid, messages=turn(10))
    same_requests(cached, fresh, cid)
    write("clear", cid)
    write("append", cid, messages=turn(11))
    same_requests(cached, fresh, cid)


def test_a_cached_call_carries_what_another_process_just_appended(
    views: tuple[Memory, Memory, Writer],
) -> None:
    cached, _, write = views
    cid = cached.create_conversation("claude-sonnet-4-5", context_window=200_000, auto_compact=False)
    write("append", cid, messages=turn(0))
    before = cached.prepare_context(cid).messages
    write("append", cid, messages=[{"role": "user", "content": "and now deploy it to staging"}])
    after = cached.prepare_context(cid).messages
    assert after[: len(before) - 1] == before[:-1]
    assert "deploy it to staging" in json.dumps(after[-1])


def _kind(mem: Memory, cid: str, compaction_id: str | None) -> str:
    record = next(c for c in mem.compactions.history(cid) if c.id == compaction_id)
    return "summarize" if any(s["step"] == "summarize" for s in record.steps) else "llm-free"


@pytest.mark.parametrize("fmt", ["anthropic", "openai"])
def test_the_call_after_an_emergency_compaction_is_what_a_fresh_rendering_sends(
    views: tuple[Memory, Memory, Writer], fmt: str
) -> None:
    """The emergency path renders the compacted rows from memory, re-rendering only the turns the
    compaction changed (issue 18, item 2): the call it returns, and every call after it, are what a
    process with no cache renders from the database."""
    cached, fresh, _ = views
    cid = cached.create_conversation("claude-sonnet-4-5", context_window=6_000)
    kinds = set()
    for i in range(30):
        cached.append_many(cid, turn(i))
        a = cached.prepare_context(cid, system=SYSTEM, tools=TOOLS, fmt=fmt)  # type: ignore[arg-type]
        b = fresh.prepare_context(cid, system=SYSTEM, tools=TOOLS, fmt=fmt)  # type: ignore[arg-type]
        assert json.dumps(a.request(), sort_keys=True) == json.dumps(b.request(), sort_keys=True)
        assert a.tokens == b.tokens
        if a.action == "emergency_compacted":
            assert b.action == "none"
            kinds.add(_kind(cached, cid, a.compaction_id))
    assert kinds == {"summarize", "llm-free"}


def test_rows_another_process_appends_while_the_guard_compacts_are_in_its_call(
    views: tuple[Memory, Memory, Writer],
) -> None:
    """Between the guard's plan and its apply, another process appends: the compacted call carries
    that message too, with a summary (its seq comes after it) and without one."""
    cached, fresh, write = views
    cid = cached.create_conversation("claude-sonnet-4-5", context_window=6_000)
    said: list[str] = []

    @cached.hooks.before_compaction
    def meanwhile(event: Any) -> None:
        said.append(f"meanwhile {len(said)}: also check the docs")
        write("append", event.conversation_id, messages=[{"role": "user", "content": said[-1]}])

    kinds = set()
    for i in range(30):
        cached.append_many(cid, turn(i))
        a = cached.prepare_context(cid, system=SYSTEM, tools=TOOLS)
        if a.action == "emergency_compacted":
            kinds.add(_kind(cached, cid, a.compaction_id))
            assert said[-1] in json.dumps(a.request())
            b = fresh.prepare_context(cid, system=SYSTEM, tools=TOOLS)
            assert json.dumps(a.request(), sort_keys=True) == json.dumps(b.request(), sort_keys=True)
    assert kinds == {"summarize", "llm-free"}
