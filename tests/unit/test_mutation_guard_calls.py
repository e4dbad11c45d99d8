"""What the guard hands back for a call and how it waits for a worker's lease, where mutation testing
found the suite blind (docs/mutation.md, fourth session). On a throwaway SQLite file: no server.

* The cache breakpoints' TTL: the setting's, in the Anthropic format only, none when caching is off.
* Tools: none given is none sent; the recall tools join the caller's in the call's format; tools that
  are not valid JSON are refused before anything is read; tools are counted as the API is sent them
  (compact JSON, text unescaped).
* Every call emits one ``guard`` line: its conversation, action, decision, tokens (raw and calibrated),
  usable and how full; tools count in those figures, and the calibration a summarizer's usage taught
  (read by a fresh process) scales them.
* A hundred images are within the provider's limit (a hundred and one are not: see
  ``test_mutation_guard_emergency.py``).
* The lease wait: a lease freed while the guard waits is taken (the guard's compaction runs under it);
  a lease never freed is waited for at most half of what is left of the guard's deadline, polling every
  50 ms, and then the guard compacts on its own.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from types import SimpleNamespace
from typing import Any

import pytest

import sleepcompact.services.guard as guard_service
from sleepcompact import ContextOverflow, MalformedContent, Memory, Settings
from sleepcompact.demo.synthetic import coding_agent
from sleepcompact.domain.budget import model_spec
from sleepcompact.services.clock import utcnow
from tests.support.events import recorded
from tests.support.png import blank
from tests.support.summarizers import Priced

TOOLS = [
    {
        "name": "lookup",
        "description": "日本語の説明: 在庫を調べる。 Look an item up in the stock list.",
        "input_schema": {"type": "object", "properties": {"item": {"type": "string"}}},
    }
]


def _coding(mem: Memory, window: int) -> str:
    cid = mem.create_conversation("claude-sonnet-4-5", context_window=window)
    mem.append_many(cid, coding_agent(seed=0).messages)
    return cid


def _small(mem: Memory) -> str:
    cid = mem.create_conversation("claude-sonnet-4-5")
    mem.append_many(cid, [{"role": "user", "content": "hello"}, {"role": "assistant", "content": "hi"}])
    return cid


def test_the_cache_ttl_is_the_settings_in_the_anthropic_format_only(sqlite_url: str) -> None:
    with Memory(Settings(database_url=sqlite_url), auto_migrate=True) as mem:
        cid = _small(mem)
        assert mem.prepare_context(cid).cache_ttl == "5m"
        assert mem.prepare_context(cid, fmt="openai").cache_ttl is None
    with Memory(Settings(database_url=sqlite_url, prompt_cache="1h"), auto_migrate=True) as mem:
        assert mem.prepare_context(cid).cache_ttl == "1h"
        assert mem.prepare_context(cid, fmt="openai").cache_ttl is None
    with Memory(Settings(database_url=sqlite_url, prompt_cache="off"), auto_migrate=True) as mem:
        ctx = mem.prepare_context(cid)
        assert ctx.cache_ttl is None
        assert "cache_control" not in json.dumps(ctx.request())


def test_no_tools_given_is_no_tools_sent(mem: Memory) -> None:
    cid = _small(mem)
    ctx = mem.prepare_context(cid)
    assert ctx.tools is None and "tools" not in ctx.request()


def test_the_recall_tools_join_the_callers_in_the_calls_format(mem: Memory) -> None:
    cid = _small(mem)
    anthropic = mem.prepare_context(cid, tools=TOOLS, recall_tools=True)
    assert anthropic.tools == [*TOOLS, *Memory.recall_tools("anthropic")]
    assert all("input_schema" in t for t in anthropic.tools or [])
    openai = mem.prepare_context(cid, recall_tools=True, fmt="openai")
    assert openai.tools == Memory.recall_tools("openai")
    assert openai.tools and all(t["type"] == "function" for t in openai.tools)
    assert mem.prepare_context(cid, tools=TOOLS).tools == TOOLS


def test_tools_that_are_not_json_are_refused_before_anything_is_read(mem: Memory) -> None:
    cid = _small(mem)
    bad = [{"name": "score", "description": "d", "input_schema": {"type": "number", "default": math.nan}}]
    with pytest.raises(MalformedContent) as raised:
        mem.prepare_context(cid, tools=bad)
    assert str(raised.value).startswith("tools: nan is not a finite number")


def test_tools_are_counted_as_the_api_is_sent_them(mem: Memory) -> None:
    counter = mem.admin.counter  # the Memory's own token counter
    sent = json.dumps(TOOLS, ensure_ascii=False, separators=(",", ":"))
    assert guard_service.tool_tokens(counter, TOOLS) == counter.count(sent)
    assert guard_service.tool_tokens(counter, TOOLS) < counter.count(json.dumps(TOOLS))
    assert guard_service.tool_tokens(counter, []) == guard_service.tool_tokens(counter, None) == 0


class _Clock:
    """The guard's clock: time passes only when the guard pauses; ``on_pause`` runs at the first one."""

    def __init__(self, on_pause: Any = None) -> None:
        self.now = time.monotonic()
        self.pauses: list[float] = []
        self.on_pause = on_pause

    def monotonic(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        if not self.pauses and self.on_pause is not None:
            self.on_pause()
        self.pauses.append(seconds)
        self.now += seconds


def _hold_lease(mem: Memory, cid: str, owner: str) -> None:
    with mem.admin.uow() as uow:
        assert uow.ticks.acquire_lease(cid, owner, utcnow(), 600)
        uow.commit()


@contextmanager
def _watching_leases(sqlite_url: str) -> Iterator[tuple[Memory, str, list[str | None]]]:
    """A Memory over a coding conversation at 8k whose summarizer notes who held the lease when called."""
    owners: list[str | None] = []
    holder: list[tuple[Memory, str]] = []

    def summarizer(prompt: str) -> str:
        mem, cid = holder[0]
        owners.append(mem.admin.conversation(cid).lease_owner)
        return "## Task and goals\n- fix the parser in src/ledger/totals.py"

    with Memory(Settings(database_url=sqlite_url), summarizer=summarizer, auto_migrate=True) as mem:
        cid = _coding(mem, 8_000)
        holder.append((mem, cid))
        yield mem, cid, owners


def test_a_lease_freed_while_the_guard_waits_is_taken_for_its_compaction(
    sqlite_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    with _watching_leases(sqlite_url) as (mem, cid, owners):
        _hold_lease(mem, cid, "tick:night-1")

        def worker_done() -> None:
            with mem.admin.uow() as uow:
                uow.ticks.release_lease(cid, "tick:night-1")
                uow.commit()

        clock = _Clock(worker_done)
        monkeypatch.setattr(
            guard_service, "time", SimpleNamespace(monotonic=clock.monotonic, sleep=clock.sleep)
        )
        ctx = mem.prepare_context(cid)
        assert ctx.action == "emergency_compacted"
        assert len(clock.pauses) == 1  # taken at the next poll, not after the whole wait
        assert len(owners) == 1 and (owners[0] or "").startswith("guard:")
        assert mem.admin.conversation(cid).lease_owner is None  # and given back


def test_a_free_lease_is_taken_at_once_for_the_guards_compaction(
    sqlite_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    with _watching_leases(sqlite_url) as (mem, cid, owners):
        clock = _Clock()
        monkeypatch.setattr(
            guard_service, "time", SimpleNamespace(monotonic=clock.monotonic, sleep=clock.sleep)
        )
        assert mem.prepare_context(cid).action == "emergency_compacted"
        assert clock.pauses == []  # no wait for a lease nobody holds
        assert len(owners) == 1 and (owners[0] or "").startswith("guard:")
        assert mem.admin.conversation(cid).lease_owner is None


def test_a_lease_never_freed_is_waited_for_at_most_half_the_deadline_left(
    sqlite_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = Settings(database_url=sqlite_url, guard_deadline_s=4.0, guard_lease_wait_s=10.0)
    with Memory(settings, auto_migrate=True) as mem:
        cid = _coding(mem, 8_000)
        _hold_lease(mem, cid, "tick:night-1")
        clock = _Clock()
        monkeypatch.setattr(
            guard_service, "time", SimpleNamespace(monotonic=clock.monotonic, sleep=clock.sleep)
        )
        ctx = mem.prepare_context(cid)
        assert ctx.action in ("emergency_compacted", "fallback_compacted") and ctx.tokens <= ctx.usable
        assert max(clock.pauses) == pytest.approx(0.05)  # polls every 50 ms
        assert sum(clock.pauses) == pytest.approx(2.0, abs=0.051)  # half of the 4 s left, not 10 s
        assert mem.admin.conversation(cid).lease_owner == "tick:night-1"  # never the guard's


def test_each_call_emits_one_guard_line_naming_its_action_and_decision(sqlite_url: str) -> None:
    with Memory(Settings(database_url=sqlite_url), auto_migrate=True) as mem:
        small = _small(mem)
        between = _coding(mem, 70_000)  # over soft, under hard
        with recorded("guard") as events:
            below = mem.prepare_context(small, tools=TOOLS)
            asked = mem.prepare_context(between, tools=TOOLS)
            with pytest.raises(ContextOverflow):
                mem.prepare_context(small, system="rule " * 300_000)
    assert [(e["conversation_id"], e["action"], e["decision"]) for e in events] == [
        (small, "none", "none"),
        (between, "sleep_requested", "request_sleep"),
        (small, "overflow", "compact_now"),
    ]
    first = events[0]
    assert first == {
        "conversation_id": small,
        "action": "none",
        "decision": "none",
        "tokens": below.tokens,
        "tokens_raw": below.view.counted_tokens,
        "usable": below.usable,
        "percent_of_usable": round(100.0 * below.tokens / below.usable, 1),
        "token_basis": "calibrated",
    }
    assert 0 < first["tokens_raw"] <= first["tokens"] < first["usable"]
    second = events[1]  # how full, to a tenth of a percent, where it shows
    assert second["percent_of_usable"] == round(100.0 * asked.tokens / asked.usable, 1)
    assert 50 < second["percent_of_usable"] < 100 and second["percent_of_usable"] != int(
        second["percent_of_usable"]
    )
    assert (below.action, asked.action) == ("none", "sleep_requested")
    assert below.tools == asked.tools == TOOLS
    assert below.cache_ttl == asked.cache_ttl == "5m"


def test_an_emergency_compacted_call_keeps_its_tools_and_cache_ttl(mem: Memory) -> None:
    cid = _coding(mem, 8_000)
    ctx = mem.prepare_context(cid, tools=TOOLS)
    assert ctx.action in ("emergency_compacted", "fallback_compacted")
    assert ctx.tools == TOOLS and ctx.cache_ttl == "5m"
    assert mem.prepare_context(_coding(mem, 8_000), fmt="openai").cache_ttl is None


def test_tools_count_in_the_calls_figures(mem: Memory) -> None:
    cid = _small(mem)
    without = mem.prepare_context(cid)
    with_tools = mem.prepare_context(cid, tools=TOOLS)
    tools = guard_service.tool_tokens(mem.admin.counter, TOOLS)
    assert with_tools.view.counted_tokens == without.view.counted_tokens + tools
    assert with_tools.tokens > without.tokens


def test_a_hundred_images_are_within_the_providers_limit(mem: Memory) -> None:
    cid = _small(mem)
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": blank(28, 28)}}
    mem.append(cid, {"role": "user", "content": [{"type": "text", "text": "And these?"}] + [image] * 100})
    assert mem.prepare_context(cid).action == "none"


def _request_of(mem: Memory, size: int, filler: str = "a") -> Any:
    """A rendered call whose request serializes to exactly ``size`` bytes (one user message of filler)."""
    view = mem.context(_small(mem))
    empty = {"system": view.system, "messages": [{"role": "user", "content": ""}]}
    room = size - len(json.dumps(empty, ensure_ascii=False).encode("utf-8"))
    escaped = len(json.dumps(filler, ensure_ascii=False)) - 2
    messages = [{"role": "user", "content": filler * (room // escaped) + "a" * (room % escaped)}]
    return replace(view, messages=messages, request_weight=None)


def test_a_request_of_exactly_the_byte_limit_goes_and_one_byte_more_does_not(mem: Memory) -> None:
    """The provider takes 32 MiB: the guard weighs the request as it is serialized, so a request of
    exactly that many bytes is within the limit and one more byte is over it, with the exact size."""
    limit = 32 * 1024 * 1024
    assert guard_service.request_load(_request_of(mem, limit)) is None
    assert guard_service.request_load(_request_of(mem, limit + 1)) == (0, limit + 1)


def test_a_request_full_of_control_characters_is_weighed_as_it_is_serialized(mem: Memory) -> None:
    """A tool's output of NULs and terminal codes serializes at six bytes a character (``\\u0000``): 6 MiB
    of them is a 36 MiB request, over the limit, although its text is a fifth of it."""
    limit = 32 * 1024 * 1024
    assert guard_service.request_load(_request_of(mem, limit, filler="\x00\x1b")) is None
    over = _request_of(mem, limit + 6, filler="\x00\x1b")
    assert len(over.messages[0]["content"]) < limit // 5
    assert guard_service.request_load(over) == (0, limit + 6)


def test_the_guard_counts_with_the_learned_calibration(sqlite_url: str) -> None:
    with Memory(Settings(database_url=sqlite_url), summarizer=Priced(), auto_migrate=True) as mem:
        big = _coding(mem, 200_000)
        before = mem.prepare_context(big)
        calibrated = _coding(mem, 8_000)
        assert mem.compactions.compact(calibrated).status == "applied"
    default = model_spec("claude-sonnet-4-5").safety_factor
    assert before.tokens / before.view.counted_tokens == pytest.approx(default, abs=0.001)
    with Memory(Settings(database_url=sqlite_url)) as fresh:  # its factors read from the database
        after = fresh.prepare_context(big)
    assert after.view.counted_tokens == before.view.counted_tokens
    assert after.tokens / after.view.counted_tokens == pytest.approx((default + 1.234) / 2, abs=0.001)


def _tool(words: int) -> list[dict[str, Any]]:
    return [{"name": "lookup", "description": "word " * words, "input_schema": {"type": "object"}}]


def test_recalled_history_leaves_room_for_the_calls_tools(mem: Memory) -> None:
    """The archived snippets recalled into the newest turn fill only the room the call leaves under the
    hard threshold, the tool definitions included: larger tools bring fewer snippets, then none, and no
    call they are recalled into goes over hard (tools alone may take a call over it, not over usable)."""
    cid = _coding(mem, 16_000)
    assert mem.compactions.compact(cid).status == "applied"
    mem.append(cid, {"role": "user", "content": "What did the grep for LineItemAggregator in src show?"})
    first = mem.prepare_context(cid, tools=_tool(4_500))  # an emergency: more of the history archived
    assert first.action == "emergency_compacted" and first.view.recalled
    recalled = []
    for words in range(4_500, 7_600, 250):
        ctx = mem.prepare_context(cid, tools=_tool(words))
        assert ctx.action in ("none", "sleep_requested") and ctx.tokens <= ctx.usable
        # Over hard only by what no compaction can shrink (the tools), never by a recalled snippet.
        assert not ctx.view.recalled or ctx.tokens <= ctx.view.budget.hard
        recalled.append(len(ctx.view.recalled))
    assert recalled[0] == len(first.view.recalled) > recalled[-1] == 0
    assert any(0 < n < recalled[0] for n in recalled)  # cut short by the tools, not only on or off
