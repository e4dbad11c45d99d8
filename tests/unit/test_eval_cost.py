"""The evaluation's prompt-cache and pricing model, on hand-made requests with hand-computed prices."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from sleepcompact import Memory
from sleepcompact.adapters.tokenizer import load_counter
from sleepcompact.domain.budget import Thresholds, make_budget
from sleepcompact.evaluation.cache import LOOKBACK, CallLog, CallRecord, Request, RequestBlocks
from sleepcompact.evaluation.cost import Pricing, SummarizerTokens, price
from sleepcompact.evaluation.policies import Costs, Seen, Truncate, context_seen
from sleepcompact.evaluation.replay import PolicyResult, replay

COUNT = load_counter().count
NONE = SummarizerTokens()


def req(*blocks: tuple[str, int]) -> Request:
    """A request from (name, tokens) blocks: equal names are equal bytes."""
    return Request(tuple(hash(name) for name, _ in blocks), tuple(tokens for _, tokens in blocks))


A, B, C, D, E = ("A", 2000), ("B", 500), ("C", 800), ("D", 400), ("E", 100)


def test_the_shared_prefix_is_the_leading_identical_blocks() -> None:
    assert req(A, B, C).shared_prefix(req(A, B, D)) == 2500
    assert req(A, B, C).shared_prefix(req(B, A, C)) == 0
    assert req(A, B).shared_prefix(req(A, B, C)) == 2500  # the previous request was longer
    assert req(A).shared_prefix(None) == 0


def test_four_calls_priced_by_hand() -> None:
    log = CallLog()
    log.call(req(A))  # first: all written
    log.call(req(A, B), gap=30)  # A read, B written
    log.call(req(C, D), gap=30, compacted=True)  # a compaction rewrote the start: all written
    log.call(req(C, D, E), gap=30)  # C+D read, E written
    assert [(c.tokens, c.shared, c.first, c.compacted) for c in log.calls] == [
        (2000, 0, True, False),
        (2500, 2000, False, False),
        (1200, 0, False, True),
        (1300, 1200, False, False),
    ]
    cost = price(log.calls, NONE, Pricing())
    # Input tokens at their multipliers: 2000*1.25 + (2000*0.1 + 500*1.25) + 1200*1.25 + (1200*0.1 + 100*1.25)
    assert cost.input_cost == pytest.approx((2500 + 825 + 1500 + 245) * 3 / 1e6)
    assert cost.input_cost_no_cache == pytest.approx(7000 * 3 / 1e6)
    assert (cost.read_tokens, cost.written_tokens, cost.input_tokens) == (3200, 3800, 7000)
    assert cost.hit_ratio == pytest.approx(3200 / 7000)
    # Between compactions: calls 2 and 4 (call 1 has no previous call, call 3 follows a compaction).
    assert cost.between_calls == 2 and cost.hit_ratio_between == pytest.approx(3200 / 3800)
    assert cost.per_100_calls == pytest.approx(100 * cost.total_cost / 4)
    off = price(log.calls, NONE, Pricing(cache=False))
    assert off.input_cost == pytest.approx(off.input_cost_no_cache) and off.hit_ratio == 0.0


def test_the_cache_expires_after_its_ttl_by_the_gap_between_calls() -> None:
    timed = CallLog()
    timed.call(req(A))
    timed.call(req(A, B), gap=301)  # the log's clock: 301 s later, past the 5-minute TTL
    assert price(timed.calls, NONE, Pricing()).read_tokens == 0
    assert price(timed.calls, NONE, Pricing(ttl_seconds=3600)).read_tokens == 2000
    untimed = CallLog()
    untimed.call(req(A))
    untimed.call(req(A, B))  # no clock: the call gap applies
    assert price(untimed.calls, NONE, Pricing()).read_tokens == 2000  # 30 s
    assert price(untimed.calls, NONE, Pricing(call_gap=400)).read_tokens == 0


def test_a_refused_call_is_not_billed_and_its_time_adds_up() -> None:
    log = CallLog()
    log.call(req(A))
    log.call(req(C, D), gap=200, refused=True)
    third = log.call(req(A, B), gap=200)
    # Compared with the last request sent (A), 400 s ago: past the TTL.
    assert (third.shared, third.seconds, third.untimed) == (2000, 400.0, 0)
    cost = price(log.calls, NONE, Pricing())
    assert (cost.calls, cost.billed_calls, cost.input_tokens, cost.read_tokens) == (3, 2, 4500, 0)


def test_short_requests_are_not_cached_and_the_one_hour_cache_writes_at_twice() -> None:
    small = [CallRecord(tokens=1000, shared=0, first=True), CallRecord(tokens=1010, shared=1000)]
    cost = price(small, NONE, Pricing())
    assert cost.input_cost == pytest.approx(2010 * 3 / 1e6) and cost.read_tokens == 0
    hour = price([CallRecord(tokens=2000, shared=0, first=True)], NONE, Pricing(ttl_seconds=3600))
    assert hour.input_cost == pytest.approx(2000 * 2.0 * 3 / 1e6)


def test_the_summarizer_pays_full_price_on_the_request_path_and_half_at_sleep() -> None:
    tokens = SummarizerTokens(
        urgent_in=1_000_000, urgent_out=100_000, deferred_in=1_000_000, deferred_out=100_000
    )
    cost = price([], tokens, Pricing())
    assert cost.summarizer_cost == pytest.approx((3.0 + 1.5) + (3.0 + 1.5) / 2)
    assert cost.total_cost == pytest.approx(6.75) and cost.per_100_calls == 0.0


def test_rendered_requests_compare_by_bytes_without_cache_markers() -> None:
    blocks = RequestBlocks(COUNT)
    first = blocks.rendered("You are terse.", [{"role": "user", "content": "Fix src/tax.py"}])
    marked = [
        {
            "role": "user",
            "content": [{"type": "text", "text": "Fix src/tax.py", "cache_control": {"type": "ephemeral"}}],
        },
        {"role": "assistant", "content": "Done."},
    ]
    second = blocks.rendered("You are terse.", marked)
    # A string is the one text block it stands for, and the marker is not content.
    assert second.shared_prefix(first) == first.total
    plain = blocks.rendered(
        "You are terse.", [{"role": "user", "content": [{"type": "text", "text": "Fix src/tax.py"}]}]
    )
    assert second.shared_prefix(plain) == plain.total and plain.total == COUNT("You are terse.") + COUNT(
        "Fix src/tax.py"
    )
    assert blocks.rendered("You are brief.", marked).shared_prefix(second) == 0


def test_openai_tool_calls_are_part_of_the_bytes() -> None:
    blocks = RequestBlocks(COUNT)

    def call(args: str) -> list[dict[str, Any]]:
        fn = {"name": "run", "arguments": args}
        return [
            {"role": "system", "content": "You run commands."},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [{"id": "c1", "type": "function", "function": fn}],
            },
        ]

    one, other = blocks.rendered(None, call('{"cmd": "ls"}')), blocks.rendered(None, call('{"cmd": "pwd"}'))
    assert other.shared_prefix(one) == COUNT("You run commands.") < one.total


def turns(n: int) -> list[dict[str, Any]]:
    """n user/assistant exchanges, each about 60 tokens."""
    out: list[dict[str, Any]] = []
    for i in range(n):
        out.append(
            {
                "role": "user",
                "content": f"Step {i}: run the tests in tests/unit/test_{i}.py " + "and report " * 20,
            }
        )
        out.append(
            {"role": "assistant", "content": f"Ran tests/unit/test_{i}.py: {i} failures. " + "details " * 20}
        )
    return out


def test_a_replay_shows_the_hit_ratio_between_compactions() -> None:
    budget = make_budget(context_window=4000, output_reserve=500, thresholds=Thresholds(), safety_factor=1.0)
    result = PolicyResult("truncate")
    replay(turns(60), Truncate(budget, COUNT), result, tick_every=0, usable=budget.usable)
    calls = result.call_log
    assert len(calls) == result.calls == 60 and sum(c.compacted for c in calls) > 0
    for before, call in itertools.pairwise(calls):
        if call.compacted:
            assert call.shared < before.tokens  # truncation drops the oldest turns: the prefix is gone
        else:
            assert call.shared == before.tokens  # append-only: the whole previous request is cached
    cost = result.cost(Pricing(min_cacheable=0))
    assert cost.hit_ratio < cost.hit_ratio_between and cost.hit_ratio_between > 0.9
    assert result.to_dict()["cost"]["calls"] == 60


class Clocked:
    """A policy showing a fixed growing request, compacting (a new first block) at call 3."""

    name = "clocked"

    def __init__(self) -> None:
        self.costs = Costs()
        self.calls = 0

    def append(self, message: Any) -> None:
        assert "sent_at" not in message  # the time is the replay's, not the policy's

    def before_call(self) -> Seen:
        self.calls += 1
        head = ("summary", 1500) if self.calls >= 3 else ("A", 2000)
        request = req(head, *[(f"m{i}", 100) for i in range(self.calls)])
        return Seen(tokens=request.total, text="", request=request)

    def tick(self) -> None:
        pass

    def applied(self) -> int:
        return int(self.calls >= 3)


def test_replay_takes_the_gaps_from_the_messages_times() -> None:
    start = datetime(2026, 1, 1, tzinfo=UTC)
    at = [0, 10, 20, 400, 410, 420, 430, 440]  # seconds: the calls (odd places) at 10, 400, 420, 440
    messages = [
        {
            "role": "user" if i % 2 == 0 else "assistant",
            "content": "x",
            "sent_at": (start + timedelta(seconds=s)).isoformat(),
        }
        for i, s in enumerate(at)
    ]
    result = PolicyResult("clocked")
    replay(messages, Clocked(), result, tick_every=0, usable=10**6)
    assert [(c.seconds, c.untimed, c.compacted) for c in result.call_log] == [
        (0.0, 1, False),
        (390.0, 0, False),
        (20.0, 0, True),
        (20.0, 0, False),
    ]
    cost = result.cost()
    # Call 2 is past the TTL; call 3 follows a compaction; call 4 reads the new head and 3 messages.
    assert cost.read_tokens == 1500 + 300 and cost.between_calls == 2


def marked(marks: tuple[int, ...], *blocks: tuple[str, int]) -> Request:
    """A request that says where its breakpoints are (the indexes of its marked blocks)."""
    return Request(req(*blocks).keys, req(*blocks).tokens, marks)


def test_with_breakpoints_only_an_entry_the_previous_request_wrote_is_read() -> None:
    # The previous request wrote A (system) and A+B (its newest turn), and sent C after its last
    # breakpoint (recalled snippets): C is gone from this one, so the read is A+B, an entry.
    previous = marked((0, 1), A, B, C)
    assert marked((0, 1, 3), A, B, D, E).shared_prefix(previous) == 2500
    # Same bytes up to D, but the previous request wrote nothing after B: B's end is what is read.
    assert marked((0, 2), A, B, D).shared_prefix(marked((0, 1), A, B, D, E)) == 2500
    # No breakpoint of the previous request inside the shared part: nothing is read.
    assert marked((2,), A, B, C).shared_prefix(marked((2,), A, B, E)) == 0
    # Unmarked requests (a baseline's rows) keep the any-block-boundary reading.
    assert req(A, B, D).shared_prefix(req(A, B, C)) == 2500


def test_an_entry_is_read_only_within_the_lookback_of_a_breakpoint() -> None:
    many = [(f"x{i}", 100) for i in range(LOOKBACK + 5)]
    previous = marked((3,), A, *many[:3])  # wrote A and three blocks
    near = marked((5,), A, *many[:3], B, C)  # its one breakpoint, two blocks later, reaches back to it
    assert near.shared_prefix(previous) == 2300
    far = marked((LOOKBACK + 4,), A, *many)  # its only breakpoint is more than LOOKBACK blocks after A
    assert far.shared_prefix(marked((0,), A, *many)) == 0


def test_what_follows_the_last_breakpoint_is_plain_input() -> None:
    log = CallLog()
    log.call(marked((0, 1), A, B, C), gap=30)  # first: A+B written (2500), C plain (800)
    log.call(marked((0, 1, 3), A, B, D, E, C), gap=30)  # A+B read, D+E written, C plain
    assert [(c.shared, c.cacheable) for c in log.calls] == [(0, 2500), (2500, 3000)]
    cost = price(log.calls, NONE, Pricing())
    expected = (2500 * 1.25 + 800) + (2500 * 0.1 + 500 * 1.25 + 800)
    assert cost.input_cost == pytest.approx(expected * 3 / 1e6)
    assert (cost.read_tokens, cost.written_tokens) == (2500, 3000)
    # Scaled to the call's counted tokens like the shared prefix.
    scaled = CallLog().call(marked((0,), A, B), tokens=5000)
    assert (scaled.cacheable, scaled.tokens) == (4000, 5000)
    # A request with no breakpoint at all caches nothing.
    bare = CallLog()
    bare.call(marked((), A, B))
    bare.call(marked((), A, B, C), gap=30)
    assert price(bare.calls, NONE, Pricing()).input_cost == pytest.approx((2500 + 3300) * 3 / 1e6)


def test_sent_requests_carry_their_breakpoints() -> None:
    blocks = RequestBlocks(COUNT)
    messages = [
        {
            "role": "user",
            "content": [{"type": "text", "text": "Fix it", "cache_control": {"type": "ephemeral"}}],
        },
        {"role": "assistant", "content": "Done."},
        {"role": "user", "content": [{"type": "text", "text": "<recalled_history>x</recalled_history>"}]},
    ]
    system = [{"type": "text", "text": "You are terse.", "cache_control": {"type": "ephemeral"}}]
    sent = blocks.rendered(system, messages, marked=True)
    assert sent.marks == (0, 1)
    assert sent.cacheable == COUNT("You are terse.") + COUNT("Fix it")
    assert blocks.rendered(system, messages).marks is None  # not said: read as before


def test_sleepcompact_is_priced_on_the_request_it_sends(mem: Memory) -> None:
    cid = mem.create_conversation("claude-sonnet-4-5", context_window=32_000)
    blocks = RequestBlocks(COUNT)
    mem.append(cid, {"role": "user", "content": "Fix the rounding in src/tax.py " + "please " * 300})
    first = context_seen(mem, cid, blocks).request
    mem.append_many(cid, [*turns(3), {"role": "user", "content": "And src/vat.py?"}])
    second = context_seen(mem, cid, blocks).request
    assert first is not None and second is not None
    # ctx.request() marks the newest user turns: the first request's entry is read by the second.
    assert first.marks is not None and second.marks is not None and second.marks
    assert second.shared_prefix(first) == first.cacheable == first.total
    assert second.cacheable == second.total  # nothing follows the last breakpoint (nothing recalled)
