"""The request a provider can cache: a byte-identical prefix between compactions, cache breakpoints that
follow the provider's rules, and a prefix that moves at most once per compaction (real SQLite and
PostgreSQL; the real SDK against the local stand-in, which refuses what the API refuses)."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

import anthropic
import pytest

from sleepcompact import Memory, Settings
from sleepcompact.domain.cache_breakpoints import cache_problems, count_breakpoints
from tests.support.fake_anthropic import FakeAnthropic
from tests.support.queues import RecordingQueue

SYSTEM = "You are a careful billing agent. Keep answers short."
TOOLS = [
    {
        "name": "bash",
        "description": "Run a shell command in the repository and return its output.",
        "input_schema": {"type": "object", "properties": {"command": {"type": "string"}}},
    }
]


def _memory(database_url: str, **settings: Any) -> Memory:
    return Memory(Settings(database_url=database_url, **settings), queue=RecordingQueue(), auto_migrate=True)


@pytest.fixture
def cached(database_url: str) -> Iterator[Memory]:
    mem = _memory(database_url)
    try:
        yield mem
    finally:
        mem.close()


def _unmarked(request: dict[str, Any]) -> dict[str, Any]:
    """The request without its cache markers (they mark where entries end; the bytes cached are the rest)."""
    out = copy.deepcopy(request)
    system = out.get("system")
    if isinstance(system, list):
        out["system"] = "".join(b["text"] for b in system)
    for tool in out.get("tools", []):
        tool.pop("cache_control", None)
    for msg in out["messages"]:
        if isinstance(msg["content"], list):
            for block in msg["content"]:
                block.pop("cache_control", None)
            if len(msg["content"]) == 1 and set(msg["content"][0]) == {"type", "text"}:
                msg["content"] = msg["content"][0]["text"]
    return out


def _turn(mem: Memory, cid: str, i: int, output: str = "ok") -> None:
    mem.append_many(
        cid,
        [
            {
                "role": "assistant",
                "content": [
                    {
                        "type": "tool_use",
                        "id": f"toolu_{i}",
                        "name": "bash",
                        "input": {"command": f"step {i}"},
                    }
                ],
            },
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": f"toolu_{i}", "content": output}],
            },
        ],
    )


def _shared_prefix(before: dict[str, Any], after: dict[str, Any]) -> bool:
    """Whether ``after`` repeats ``before`` byte for byte up to the previous newest message."""
    old = before["messages"][:-1]
    return (
        before.get("system") == after.get("system")
        and before.get("tools") == after.get("tools")
        and after["messages"][: len(old)] == old
    )


def test_the_prefix_is_byte_identical_over_50_turns_with_memories(cached: Memory) -> None:
    cid = cached.create_conversation("claude-sonnet-4-5", tenant_id="t1", agent_id="a1")
    cached.append(cid, {"role": "user", "content": "The invoice tax total is off by a cent; find out why."})
    cached.journal.add(cid, "The invoice tax total uses banker's rounding, half to even", tags=["fact"])
    cached.journal.add(cid, "The user wants invoices in euros", tags=["preference"])
    cached.memories.consolidate(cid)
    previous: dict[str, Any] | None = None
    for i in range(50):
        ctx = cached.prepare_context(cid, system=SYSTEM, tools=TOOLS)
        assert ctx.action == "none" and ctx.view.memories, "memories are in the context"
        request = ctx.request()
        assert cache_problems(request) == [] and count_breakpoints(request) == (2 if i == 0 else 3)
        plain = _unmarked(request)
        if previous is not None:
            assert _shared_prefix(previous, plain), f"turn {i}: the prefix moved"
        previous = plain
        _turn(cached, cid, i, output=f"tax line {i}: 0.{i:02d} EUR")
    # A new memory is the one thing that may move the prefix without a compaction.
    cached.journal.add(cid, "Rounding changed to half up on 2024-01-01", tags=["fact"])
    cached.memories.consolidate(cid)
    assert previous is not None
    assert not _shared_prefix(
        previous, _unmarked(cached.prepare_context(cid, system=SYSTEM, tools=TOOLS).request())
    )


def test_the_openai_rendering_keeps_the_same_stable_prefix(cached: Memory) -> None:
    cid = cached.create_conversation("gpt-4o", tenant_id="t1", agent_id="a1")
    cached.append(cid, {"role": "user", "content": "Why is the invoice total off by a cent?"})
    cached.journal.add(cid, "The invoice tax total uses banker's rounding", tags=["fact"])
    cached.memories.consolidate(cid)
    previous: list[dict[str, Any]] | None = None
    for i in range(20):
        request = cached.prepare_context(cid, system=SYSTEM, fmt="openai").request()
        assert "cache_control" not in repr(request)  # OpenAI caches a stable prefix by itself
        if previous is not None:
            assert request["messages"][: len(previous) - 1] == previous[:-1]
        previous = request["messages"]
        _turn(cached, cid, i)


def test_breakpoints_follow_the_rules_and_respect_the_callers_own(cached: Memory) -> None:
    cid = cached.create_conversation("claude-sonnet-4-5")
    cached.append(cid, {"role": "user", "content": "Start."})
    _turn(cached, cid, 0)
    request = cached.prepare_context(cid, system=SYSTEM, tools=TOOLS).request()
    assert request["system"] == [{"type": "text", "text": SYSTEM, "cache_control": {"type": "ephemeral"}}]
    last = request["messages"][-1]["content"][-1]
    assert last["cache_control"] == {"type": "ephemeral"}  # the newest turn, for the next call to read
    # A caller's marker on the tools is kept and not doubled; the system prompt is still cached.
    mine = [{**TOOLS[0], "cache_control": {"type": "ephemeral", "ttl": "1h"}}]
    request = cached.prepare_context(cid, system=SYSTEM, tools=mine).request()
    assert request["tools"] == mine and count_breakpoints(request) <= 4 and cache_problems(request) == []
    # Markers stored with old messages never pile up past the provider's four.
    for i in range(1, 8):
        cached.append(
            cid,
            {
                "role": "assistant",
                "content": [{"type": "text", "text": f"note {i}", "cache_control": {"type": "ephemeral"}}],
            },
        )
        cached.append(cid, {"role": "user", "content": f"go on {i}"})
    request = cached.prepare_context(cid, system=SYSTEM, tools=TOOLS).request()
    assert count_breakpoints(request) == 3 and cache_problems(request) == []


def test_the_ttl_is_a_setting_and_caching_can_be_switched_off(database_url: str) -> None:
    for setting, expected in (("1h", {"type": "ephemeral", "ttl": "1h"}), ("off", None)):
        mem = _memory(database_url, prompt_cache=setting)
        try:
            cid = mem.create_conversation("claude-sonnet-4-5")
            mem.append(cid, {"role": "user", "content": "Start."})
            request = mem.prepare_context(cid, system=SYSTEM).request()
            if expected is None:
                assert request["system"] == SYSTEM and "cache_control" not in repr(request)
            else:
                assert request["system"][0]["cache_control"] == expected
        finally:
            mem.close()


def test_the_prefix_moves_at_most_once_per_compaction(database_url: str) -> None:
    mem = _memory(database_url)
    fake = FakeAnthropic()
    try:
        client = anthropic.Anthropic(api_key="sk-test", base_url=fake.url, max_retries=0)
        cid = mem.create_conversation("claude-sonnet-4-5", context_window=8_000)
        mem.append(
            cid, {"role": "user", "content": "Audit every invoice module and report the rounding bugs."}
        )
        previous: dict[str, Any] | None = None
        moves = compactions = 0
        for i in range(60):
            before = len(mem.compactions.history(cid))
            ctx = mem.prepare_context(cid, system=SYSTEM, tools=TOOLS)
            if ctx.action == "sleep_requested":
                mem.sleep.tick(cid)
                ctx = mem.prepare_context(cid, system=SYSTEM, tools=TOOLS)
            request = ctx.request()
            client.messages.create(model="claude-haiku-4-5", max_tokens=64, **request)  # the API accepts it
            compacted = len(mem.compactions.history(cid)) > before
            plain = _unmarked(request)
            if previous is not None and not _shared_prefix(previous, plain):
                moves += 1
                assert compacted, f"call {i}: the prefix moved without a compaction"
            compactions += len(mem.compactions.history(cid)) - before
            if compacted:
                # One step to the target, not a little every turn.
                assert ctx.view.budget.effective(mem.stats(cid).live_tokens) <= ctx.view.budget.target
            previous = plain
            _turn(
                mem, cid, i, output="\n".join(f"invoice_{i}_{n}.py: total rounded half up" for n in range(40))
            )
        assert compactions >= 2 and moves <= compactions
        assert len(fake.requests) == 60
    finally:
        fake.stop()
        mem.close()
