"""The compaction ladder: property tests of plan()'s invariants and a few hand-built cases.

Everything here is pure: rows are plain ``MessageRecord`` values built the way the store hands them to
the planner (one row per part, consecutive seqs, token counts from the real cl100k counter plus the
per-message overhead, so ``live_tokens == token_count`` for a fresh row).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sleepcompact.adapters.tokenizer import load_counter
from sleepcompact.domain.budget import Budget, Thresholds, make_budget, output_reserve_for
from sleepcompact.domain.ladder import (
    Plan,
    Policy,
    Snapshot,
    assign_sections,
    plan,
)
from sleepcompact.domain.messages import MESSAGE_OVERHEAD, Content, content_text, part_tokens
from sleepcompact.domain.records import MESSAGE_STATES, MessageRecord, logical_order
from sleepcompact.domain.rendering import render_anthropic
from sleepcompact.domain.steps import middle_out
from sleepcompact.domain.validation import anthropic_problems

count = load_counter().count
NOW = datetime(2025, 1, 1, tzinfo=UTC)
MODEL = "claude-sonnet-4-5"
WINDOWS = (8_000, 16_000, 32_000, 200_000)


def budget_for(window: int) -> Budget:
    return make_budget(
        context_window=window,
        output_reserve=output_reserve_for(MODEL, window),
        thresholds=Thresholds(),
        safety_factor=1.15,
    )


# -- building rows ---------------------------------------------------------------------------------------


@dataclass
class PartSpec:
    """One part of an appended message, before it gets its seq."""

    role: str
    kind: str
    content: Content
    tool_call_id: str | None = None
    tool_name: str | None = None
    tool_summary: str | None = None
    include_in_history: bool = False
    is_error: bool = False


class Rows:
    """Builds rows as the store would: one appended message becomes consecutive parts 0..n-1."""

    def __init__(self, id_offset: int = 100) -> None:
        self.rows: list[MessageRecord] = []
        self.id_offset = id_offset
        self.calls = 0  # tool call ids handed out so far

    def message(self, *parts: PartSpec) -> Rows:
        for i, p in enumerate(parts):
            seq = self.rows[-1].seq + 1 if self.rows else 1
            tokens = part_tokens(p.content, count)
            self.rows.append(
                MessageRecord(
                    id=seq + self.id_offset,
                    conversation_id="conv-1",
                    seq=seq,
                    part=i,
                    role=p.role,
                    kind=p.kind,
                    content=p.content,
                    raw=None,
                    tool_name=p.tool_name,
                    tool_call_id=p.tool_call_id,
                    token_count=tokens,
                    state="live",
                    live_content=None,
                    live_tokens=tokens,
                    created_at=NOW,
                    tool_summary=p.tool_summary,
                    tool_summary_tokens=count(p.tool_summary) if p.tool_summary else None,
                    include_in_history=p.include_in_history,
                    metadata={"is_error": True} if p.is_error else {},
                )
            )
        return self

    def system(self, text: str) -> Rows:
        return self.message(PartSpec("system", "message", text))

    def user(self, text: Content) -> Rows:
        return self.message(PartSpec("user", "message", text))

    def assistant(self, text: str | None, *calls: tuple[str, str, dict[str, Any]]) -> Rows:
        """An assistant message: an optional text part 0, then one tool_call part per call."""
        parts = [PartSpec("assistant", "message", text)] if text is not None else []
        for call_id, name, tool_input in calls:
            use = {"type": "tool_use", "id": call_id, "name": name, "input": tool_input}
            parts.append(PartSpec("assistant", "tool_call", [use], tool_call_id=call_id, tool_name=name))
        return self.message(*parts)

    def results(self, *results: PartSpec, text: str | None = None) -> Rows:
        """A user message carrying tool results (rows of role ``tool``), then any text, as one message."""
        parts = list(results)
        if text is not None:
            parts.append(PartSpec("user", "message", text))
        return self.message(*parts)


def result(
    call_id: str,
    name: str,
    output: str,
    *,
    tool_summary: str | None = None,
    include_in_history: bool = False,
    is_error: bool = False,
) -> PartSpec:
    return PartSpec(
        "tool",
        "tool_result",
        output,
        tool_call_id=call_id,
        tool_name=name,
        tool_summary=tool_summary,
        include_in_history=include_in_history,
        is_error=is_error,
    )


def filler(tokens: int, word: str = "alpha") -> str:
    """Text of roughly ``tokens`` tokens, with varied words so tokenization is realistic."""
    words = [f"{word}{i % 97} value={i}" for i in range(tokens // 4 + 1)]
    return " ".join(words)


# -- the generator ---------------------------------------------------------------------------------------

_chars = st.characters(codec="utf-8", exclude_categories=("Cs",))
_word_chars = st.characters(codec="utf-8", exclude_categories=("Cs", "Cc", "Zs", "Zl", "Zp"))
texts = st.text(_chars, min_size=1, max_size=120).map(lambda s: s if s.strip() else s + "x")
words = st.lists(st.text(_word_chars, min_size=1, max_size=10), min_size=1)


@st.composite
def tool_output(draw: st.DrawFn) -> str:
    """Small unicode text mostly; sometimes a medium block; sometimes a huge (5k-40k chars) dump."""
    size = draw(st.sampled_from(["small", "small", "small", "medium", "huge"]))
    if size == "small":
        return draw(st.text(_chars, max_size=200))
    vocab = draw(words)
    n = draw(st.integers(500, 4_000) if size == "medium" else st.integers(5_000, 40_000))
    line = " ".join(vocab) + "\n"
    return (line * (n // len(line) + 1))[:n]


def _turns(draw: st.DrawFn, b: Rows, turns: int) -> None:
    """Append ``turns`` user turns, each with 0..4 assistant steps of 0..3 tool calls and their results."""
    for _ in range(turns):
        pasted_log = draw(st.integers(0, 7)) == 0
        b.user(draw(tool_output()) + " x" if pasted_log else draw(texts))
        for _ in range(draw(st.integers(0, 4))):
            n_calls = draw(st.integers(0, 3))
            text = draw(texts) if n_calls == 0 or draw(st.booleans()) else None
            specs = []
            for _ in range(n_calls):
                b.calls += 1
                name = draw(st.sampled_from(["bash", "read_file", "grep", "web_fetch"]))
                specs.append((f"toolu_{b.calls:03d}", name, {"arg": draw(st.text(_chars, max_size=40))}))
            b.assistant(text, *specs)
            answered = [s for s in specs if draw(st.integers(0, 4)) > 0]  # mostly answered
            outputs = [
                result(
                    call_id,
                    name,
                    draw(tool_output()),
                    tool_summary=draw(texts) if draw(st.integers(0, 3)) == 0 else None,
                    include_in_history=draw(st.integers(0, 5)) == 0,
                    is_error=draw(st.integers(0, 8)) == 0,
                )
                for call_id, name, _ in answered
            ]
            if not outputs:
                continue
            if draw(st.booleans()):  # Anthropic: one user message with every result (and maybe text)
                b.results(*outputs, text=draw(texts) if draw(st.integers(0, 3)) == 0 else None)
            else:  # OpenAI: one tool message per result
                for spec in outputs:
                    b.results(spec)


@st.composite
def conversations(draw: st.DrawFn) -> list[MessageRecord]:
    """Live rows of a conversation; a third of them were compacted once already and then grew again."""
    b = Rows(id_offset=draw(st.integers(0, 1_000)))
    if draw(st.booleans()):
        b.system(draw(texts))
    _turns(draw, b, draw(st.integers(1, 10)))
    if draw(st.integers(0, 2)) == 0:
        # An earlier compaction (masked/truncated views, maybe a summary row with a higher seq than the
        # rows it kept), after which the agent went on; the snapshot holds only the live rows.
        earlier = plan(
            Snapshot("conv-1", 1, b.rows[-1].seq, tuple(b.rows)),
            budget_for(draw(st.sampled_from(WINDOWS[1:3]))),
            Policy(),
            count,
            force_summary=draw(st.booleans()),
        )
        b.rows = [r for r in apply_plan(tuple(b.rows), earlier) if r.is_live]
        _turns(draw, b, draw(st.integers(1, 6)))
    return b.rows


@st.composite
def cases(draw: st.DrawFn) -> tuple[Snapshot, Budget, bool]:
    rows = draw(conversations())
    extra = draw(st.sampled_from([0, 0, 0, 300]))
    snapshot = Snapshot("conv-1", 3, rows[-1].seq, tuple(rows), 0, extra)
    return snapshot, budget_for(draw(st.sampled_from(WINDOWS))), draw(st.booleans())


# -- applying a plan -------------------------------------------------------------------------------------


def apply_plan(rows: tuple[MessageRecord, ...], p: Plan) -> list[MessageRecord]:
    """The rows as the store would hold them after the plan (and its summary) were applied."""
    by_id = {c.message_id: c for c in p.changes}
    out = []
    for r in rows:
        c = by_id.get(r.id)
        if c is not None:
            r = replace(r, state=c.state, live_content=c.live_content, live_tokens=c.live_tokens)
        out.append(r)
    if p.summary is not None:
        folded = {r.id for r in p.summary.rows}
        if p.summary.previous is not None:
            folded.add(p.summary.previous.id)
        out = [replace(r, state="archived") if r.id in folded else r for r in out]
        text = "S " * p.summary.max_tokens
        seq = max(r.seq for r in rows) + 1
        out.append(
            replace(
                rows[-1],
                id=10**6 + seq,
                seq=seq,
                part=0,
                role="user",
                kind="summary",
                content=text,
                tool_name=None,
                tool_call_id=None,
                token_count=p.summary.max_tokens + MESSAGE_OVERHEAD,
                state="live",
                live_content=None,
                live_tokens=p.summary.max_tokens + MESSAGE_OVERHEAD,
                tool_summary=None,
                include_in_history=False,
                metadata={},
            )
        )
    return out


def _describe(rows: list[MessageRecord]) -> str:
    return "\n".join(
        f"{r.seq}/{r.part} {r.role}:{r.kind} {r.state} id={r.tool_call_id} tokens={r.live_tokens}"
        for r in rows
    )


# -- properties ------------------------------------------------------------------------------------------

PROPERTY_SETTINGS = settings(
    max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
)


@PROPERTY_SETTINGS
@given(case=cases())
def test_applied_plan_renders_as_a_valid_anthropic_request(case: tuple[Snapshot, Budget, bool]) -> None:
    snapshot, budget, force = case
    p = plan(snapshot, budget, Policy(), count, force_summary=force)
    after = apply_plan(snapshot.rows, p)
    live = [r for r in after if r.is_live]
    rendered = render_anthropic(live)
    problems = anthropic_problems(rendered.messages, allow_pending_calls=True)
    assert problems == [], f"{problems}\n{_describe(after)}\n{json.dumps(rendered.messages)[:3000]}"


@PROPERTY_SETTINGS
@given(case=cases())
def test_a_tool_call_and_its_result_are_archived_together(case: tuple[Snapshot, Budget, bool]) -> None:
    snapshot, budget, force = case
    p = plan(snapshot, budget, Policy(), count, force_summary=force)
    after = apply_plan(snapshot.rows, p)
    calls = {r.tool_call_id: r for r in after if r.kind == "tool_call"}
    for r in after:
        if r.kind == "tool_result":
            call = calls[r.tool_call_id]
            assert call.is_live == r.is_live, f"call {call.seq} {call.state} vs result {r.seq} {r.state}"


@PROPERTY_SETTINGS
@given(case=cases())
def test_the_first_live_message_is_never_a_tool_result(case: tuple[Snapshot, Budget, bool]) -> None:
    snapshot, budget, force = case
    p = plan(snapshot, budget, Policy(), count, force_summary=force)
    after = logical_order([r for r in apply_plan(snapshot.rows, p) if r.is_live])
    body = [r for r in after if r.role != "system" and r.kind != "summary"]
    if body:
        assert body[0].kind != "tool_result", _describe(after)
        # and an assistant message is never entered halfway
        assert body[0].role != "assistant" or body[0].part == 0, _describe(after)


@PROPERTY_SETTINGS
@given(case=cases())
def test_fits_or_says_why_and_its_figures_add_up(case: tuple[Snapshot, Budget, bool]) -> None:
    snapshot, budget, force = case
    p = plan(snapshot, budget, Policy(), count, force_summary=force)
    assert p.fits or p.reason.strip()
    if p.fits:
        assert budget.effective(p.tokens_after) <= budget.target
    assert p.target == budget.target
    assert p.tokens_before == sum(r.live_tokens for r in snapshot.rows) + snapshot.extra_tokens
    after = apply_plan(snapshot.rows, p)
    # tokens_after is what the live rows cost, with the summary at its maximum size
    assert p.tokens_after == sum(r.live_tokens for r in after if r.is_live) + snapshot.extra_tokens
    if p.summary is not None:
        assert 0 < p.summary.max_tokens <= Policy().summary_cap(budget.usable)
        assert p.summary.rows, "a summary request folds at least one row"


@PROPERTY_SETTINGS
@given(case=cases())
def test_changes_touch_only_snapshot_rows_and_never_system_rows(case: tuple[Snapshot, Budget, bool]) -> None:
    snapshot, budget, force = case
    p = plan(snapshot, budget, Policy(), count, force_summary=force)
    by_id = {r.id: r for r in snapshot.rows}
    ids = [c.message_id for c in p.changes]
    assert len(ids) == len(set(ids)), "a row is changed at most once"
    for c in p.changes:
        assert c.message_id in by_id
        row = by_id[c.message_id]
        assert c.seq == row.seq
        assert row.role != "system"
        assert c.state in MESSAGE_STATES and c.state != "live"
        if c.state != "archived":
            assert c.live_tokens < row.live_tokens, "a new view is cheaper than the old one"
    if p.summary is not None:
        changed = {c.message_id for c in p.changes if c.state == "archived"}
        folded = {r.id for r in p.summary.rows}
        if p.summary.previous is not None:
            folded.add(p.summary.previous.id)
        assert folded == changed


@PROPERTY_SETTINGS
@given(case=cases())
def test_masked_and_truncated_views_point_to_their_own_seq(case: tuple[Snapshot, Budget, bool]) -> None:
    snapshot, budget, force = case
    p = plan(snapshot, budget, Policy(), count, force_summary=force)
    for c in p.changes:
        if c.state in ("masked", "truncated"):
            assert c.live_content is not None
            view = content_text(c.live_content)
            assert f"read_archived(seq={c.seq})" in view
            assert c.live_tokens == count(view) + MESSAGE_OVERHEAD


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=cases())
def test_plan_is_deterministic(case: tuple[Snapshot, Budget, bool]) -> None:
    snapshot, budget, force = case
    first = plan(snapshot, budget, Policy(), count, force_summary=force)
    again = plan(snapshot, budget, Policy(), count, force_summary=force)
    assert first == again
    # planning does not consume or mutate its input: a copy of the snapshot plans the same
    copy = replace(snapshot, rows=tuple(replace(r) for r in snapshot.rows))
    assert plan(copy, budget, Policy(), count, force_summary=force) == first


# -- middle_out ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("cap", [200, 1_200, 2_500])
def test_middle_out_keeps_head_and_tail_within_the_cap(cap: int) -> None:
    text = "HEAD-START " + filler(12_000) + " TAIL-END"
    tokens = count(text) + MESSAGE_OVERHEAD
    out, cost = middle_out(text, tokens, cap, 42, count)
    assert cost <= cap
    assert cost == count(out) + MESSAGE_OVERHEAD
    assert out.startswith("HEAD-START ")
    assert out.endswith(" TAIL-END")
    assert "read_archived(seq=42)" in out
    head, _, tail = out.partition("\n\n[... ")
    assert text.startswith(head) and text.endswith(tail.split("]\n\n", 1)[1])
    removed = int(tail.split(" tokens truncated", 1)[0].replace(",", ""))
    assert removed > 0
    assert removed == tokens - count(head) - count(tail.split("]\n\n", 1)[1])


@settings(max_examples=80, deadline=None)
@given(
    vocab=words,
    size=st.integers(3_000, 30_000),
    cap=st.sampled_from([200, 600, 1_200, 2_500]),
)
def test_middle_out_fits_the_cap_on_any_text(vocab: list[str], size: int, cap: int) -> None:
    line = " ".join(vocab) + "\n"
    text = (line * (size // len(line) + 1))[:size]
    tokens = count(text) + MESSAGE_OVERHEAD
    out, cost = middle_out(text, tokens, cap, 7, count)
    assert cost == count(out) + MESSAGE_OVERHEAD
    assert cost <= cap
    assert "read_archived(seq=7)" in out


# -- sections --------------------------------------------------------------------------------------------


def test_assign_sections_on_a_hand_built_conversation() -> None:
    rows = (
        Rows()
        .system("rules")  # 1
        .user("first task")  # 2
        .assistant("looking", ("c1", "bash", {"cmd": "ls"}))  # 3, 4
        .results(result("c1", "bash", "a b c"))  # 5
        .assistant("done")  # 6
        .user("second task")  # 7: the current turn starts here
        .assistant(None, ("c2", "grep", {"q": "x"}), ("c3", "grep", {"q": "y"}))  # 8, 9
        .results(result("c2", "grep", "hit"), result("c3", "grep", "miss"))  # 10, 11
        .assistant("thinking")  # 12
        .assistant("and now", ("c4", "read_file", {"path": "a.py"}))  # 13, 14
        .results(result("c4", "read_file", "print(1)"))  # 15
        .rows
    )
    sections = dict(zip((r.seq for r in rows), assign_sections(rows), strict=True))
    assert [s for q, s in sections.items() if q <= 6] == ["HISTORY"] * 6
    assert [sections[q] for q in range(7, 13)] == ["IN_LOOP"] * 6
    assert [sections[q] for q in range(13, 16)] == ["CURRENT"] * 3


def test_assign_sections_without_an_answer_yet() -> None:
    rows = Rows().user("a").assistant("b").user("c").rows
    assert assign_sections(rows) == ["HISTORY", "HISTORY", "IN_LOOP"]
    loop = Rows().assistant(None, ("c1", "bash", {})).results(result("c1", "bash", "x"))
    loop.assistant(None, ("c2", "bash", {})).results(result("c2", "bash", "y"))
    assert assign_sections(loop.rows) == ["IN_LOOP", "IN_LOOP", "CURRENT", "CURRENT"]
    assert assign_sections([]) == []


# -- concrete plans --------------------------------------------------------------------------------------


def test_masking_alone_fits_a_16k_conversation() -> None:
    b = Rows().system("You are a careful agent.")
    for t in range(10):
        b.user(f"task {t}: inspect module {t}")
        b.assistant(f"reading module {t}", (f"c{t}", "read_file", {"path": f"m{t}.py"}))
        b.results(result(f"c{t}", "read_file", filler(900, word=f"m{t}")))
        b.assistant(f"module {t} looks fine")
    snapshot = Snapshot("conv-1", 0, b.rows[-1].seq, tuple(b.rows))
    budget = budget_for(16_000)
    assert budget.effective(sum(r.live_tokens for r in b.rows)) > budget.target
    p = plan(snapshot, budget, Policy(), count)
    assert p.fits, p.reason
    assert p.summary is None
    assert p.changes and {c.state for c in p.changes} == {"masked"}
    assert {s.step for s in p.steps} == {"mask"}
    masked = {c.seq for c in p.changes}
    results = [r for r in b.rows if r.kind == "tool_result"]
    assert masked == {r.seq for r in results[: len(masked)]}, "the oldest outputs go first"
    assert results[-1].seq not in masked and results[-2].seq not in masked  # the last 2 user turns
    assert budget.effective(p.tokens_after) <= budget.target


def _agent_loop(iterations: int) -> tuple[MessageRecord, ...]:
    """One user message, then ``iterations`` tool calls each answered with about 2k tokens of output."""
    b = Rows().system("You are an autonomous coding agent.").user("Fix the failing tests in the repo.")
    for i in range(iterations):
        b.assistant(f"step {i}: run the next check", (f"c{i}", "bash", {"cmd": f"pytest -k case_{i}"}))
        b.results(result(f"c{i}", "bash", filler(1_350, word=f"out{i}")))
    return tuple(b.rows)


def _check_loop_plan(rows: tuple[MessageRecord, ...], p: Plan, budget: Budget) -> dict[int, str]:
    assert p.fits, p.reason
    assert budget.effective(p.tokens_after) <= budget.target
    sections = dict(zip((r.id for r in rows), assign_sections(rows), strict=True))
    after = {r.id: r for r in apply_plan(rows, p)}
    current = [r for r in rows if sections[r.id] == "CURRENT"]
    assert [r.kind for r in current] == ["message", "tool_call", "tool_result"]
    assert current[0].seq == max(r.seq for r in rows if r.role == "assistant" and r.part == 0)
    assert all(after[r.id].is_live for r in current), "the newest assistant message and its results stay"
    assert after[rows[0].id].state == "live", "the system prompt is never touched"
    if p.summary is not None:
        assert {sections[r.id] for r in p.summary.rows} <= {"HISTORY", "IN_LOOP"}
    live = [r for r in after.values() if r.is_live]
    assert anthropic_problems(render_anthropic(live).messages) == []
    return sections


def test_a_single_turn_agent_loop_fits_16k_keeping_the_current_step() -> None:
    rows = _agent_loop(40)
    assert 1_900 <= rows[-1].live_tokens <= 2_100
    budget = budget_for(16_000)
    p = plan(Snapshot("conv-1", 0, rows[-1].seq, rows), budget, Policy(), count)
    sections = _check_loop_plan(rows, p, budget)
    assert set(sections.values()) == {"HISTORY", "IN_LOOP", "CURRENT"}
    # Every earlier iteration is in the loop (the one user turn protects nothing), so it is compacted there.
    touched = {sections[c.message_id] for c in p.changes}
    assert touched <= {"IN_LOOP", "CURRENT"} and "IN_LOOP" in touched


def test_a_longer_single_turn_loop_is_summarized_inside_the_loop() -> None:
    rows = _agent_loop(120)  # too many iterations for placeholders alone to fit
    budget = budget_for(16_000)
    p = plan(Snapshot("conv-1", 0, rows[-1].seq, rows), budget, Policy(), count)
    sections = _check_loop_plan(rows, p, budget)
    assert p.summary is not None
    assert {sections[r.id] for r in p.summary.rows} == {"IN_LOOP"}
    assert p.summary.previous is None


def test_a_plan_that_fits_never_says_it_cannot_fit() -> None:
    rows = tuple(Rows().user("hi").assistant("hello").rows)
    p = plan(Snapshot("conv-1", 0, 2, rows), budget_for(16_000), Policy(), count, force_summary=True)
    assert p.fits and p.is_noop
    assert "cannot fit" not in p.reason
