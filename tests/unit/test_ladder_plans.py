"""The ladder's plans in figures, exactly: which rung ran on which section, what it saved, what a summary
folds and how large it may be, and the policy's derived limits.

A plan's figures are what the compaction records and what ``sleepcompact inspect`` shows; a rung run
on the wrong section, or a summary allowed twice its size, still "fits" and would pass a test that only
asks whether it fits.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

import pytest

from sleepcompact.domain.ladder import (
    Plan,
    Policy,
    Snapshot,
    assign_sections,
    conversation_policy,
    plan,
    with_summary_size,
)
from sleepcompact.domain.records import ConversationRecord, MessageRecord
from tests.unit.test_ladder import PartSpec, Rows, budget_for, count, filler, result

BUDGET = budget_for(16_000)  # usable 12,000, target 7,800, hard 10,200


def snapshot(rows: list[MessageRecord]) -> Snapshot:
    return Snapshot("conv-1", 0, rows[-1].seq, tuple(rows))


def steps(p: Plan) -> list[tuple[str, str, int, int]]:
    return [(s.step, s.section, s.messages, s.tokens_saved) for s in p.steps]


def reading_run() -> list[MessageRecord]:
    """Six turns that each read a file: five outputs of about 2,200 tokens, the newest one small."""
    b = Rows().system("You are careful.")
    for t in range(6):
        b.user(f"task {t}: check module {t}")
        b.assistant(f"reading {t}", (f"c{t}", "read_file", {"path": f"m{t}.py"}))
        b.results(result(f"c{t}", "read_file", filler(2200 if t < 5 else 300, f"w{t}")))
    return b.rows


def chat_run() -> list[MessageRecord]:
    """Thirty turns of plain chat, about 400 tokens each: nothing to mask or truncate."""
    b = Rows().system("You are careful.")
    for t in range(30):
        b.user(f"question {t}: " + filler(150, f"q{t}"))
        b.assistant(f"answer {t}: " + filler(250, f"a{t}"))
    return b.rows


@pytest.mark.parametrize(
    ("usable", "cap", "protect", "minimum", "summary_cap", "of_100", "of_5000", "of_100000"),
    [
        (2_000, 200, 500, 200, 200, 64, 200, 200),
        (16_000, 1_600, 4_000, 1_600, 1_600, 64, 1_500, 1_600),
        (16_009, 1_600, 4_002, 1_600, 1_600, 64, 1_500, 1_600),  # whole tokens, rounded down
        (100_000, 2_500, 25_000, 10_000, 2_048, 64, 1_500, 2_048),
        (400_000, 2_500, 40_000, 20_000, 2_048, 64, 1_500, 2_048),
    ],
)
def test_the_policys_limits_scale_with_the_usable_budget(
    usable: int,
    cap: int,
    protect: int,
    minimum: int,
    summary_cap: int,
    of_100: int,
    of_5000: int,
    of_100000: int,
) -> None:
    policy = Policy()
    assert (policy.cap(usable), policy.protect(usable), policy.minimum(usable)) == (cap, protect, minimum)
    assert policy.summary_cap(usable) == summary_cap
    sizes = (
        policy.summary_size(usable, 100),
        policy.summary_size(usable, 5_000),
        policy.summary_size(usable, 100_000),
    )
    assert sizes == (of_100, of_5000, of_100000)


def test_set_limits_are_taken_as_they_are() -> None:
    policy = Policy(protect_tokens=7, minimum_saving=0, tool_output_cap=300, summary_max_tokens=100)
    assert (policy.protect(100_000), policy.minimum(100_000), policy.cap(100_000)) == (7, 0, 300)
    assert (policy.summary_cap(100_000), policy.summary_size(100_000, 10_000)) == (128, 128)


def test_a_conversations_own_policy_overrides_only_what_it_names() -> None:
    def conversation(metadata: dict[str, object]) -> ConversationRecord:
        now = datetime(2025, 1, 1, tzinfo=UTC)
        return ConversationRecord(
            "c", "t", "a", "m", None, 16_000, 4_000, 0, 0, 1, 0, now, now, metadata=metadata
        )

    default = Policy(preserve_messages=12)
    assert conversation_policy(conversation({}), default) == default
    assert conversation_policy(conversation({"policy": None}), default) == default
    tuned = conversation_policy(conversation({"policy": {"tool_output_cap": 900, "colour": "red"}}), default)
    assert tuned == replace(default, tool_output_cap=900)


def test_the_newest_turn_is_split_into_the_loop_and_the_current_step() -> None:
    sections = assign_sections(reading_run())
    assert sections == ["HISTORY"] * 21 + ["IN_LOOP"] + ["CURRENT"] * 3
    b = Rows().user("q").assistant("a").user("next")
    assert assign_sections(b.rows) == ["HISTORY", "HISTORY", "IN_LOOP"]
    b = (
        Rows()
        .user("q")
        .assistant("thinking", ("c1", "ls", {}))
        .results(result("c1", "ls", "x"))
        .assistant("done")
    )
    assert assign_sections(b.rows) == ["IN_LOOP", "IN_LOOP", "IN_LOOP", "IN_LOOP", "CURRENT"]
    # No user message at all (a trajectory that starts with the agent): the newest assistant message
    # and its results are still the current step, even when that message is the first row.
    b = Rows().assistant("looking", ("c1", "ls", {})).results(result("c1", "ls", "x"))
    assert assign_sections(b.rows) == ["CURRENT", "CURRENT", "CURRENT"]
    b = Rows().assistant("first").assistant("looking", ("c1", "ls", {})).results(result("c1", "ls", "x"))
    assert assign_sections(b.rows) == ["IN_LOOP", "CURRENT", "CURRENT", "CURRENT"]
    # Context a caller appends as the user (kind "context": the environment, a file opened) starts a turn.
    b = Rows().user("q").assistant("a").message(PartSpec("user", "context", "cwd=/srv/app"))
    assert assign_sections(b.rows) == ["HISTORY", "HISTORY", "IN_LOOP"]
    # A call with no text before it: the assistant's only row is the one before the result.
    b = Rows().user("q").assistant(None, ("c1", "ls", {})).results(result("c1", "ls", "x"))
    assert assign_sections(b.rows) == ["IN_LOOP", "CURRENT", "CURRENT"]


def test_large_old_outputs_are_truncated_and_nothing_is_summarized() -> None:
    p = plan(snapshot(reading_run()), BUDGET, Policy(), count)
    assert (p.reason, p.fits, p.tokens_before, p.tokens_after) == (
        "fits after LLM-free steps",
        True,
        14_385,
        5_500,
    )
    assert p.sections == {"HISTORY": 13_968, "IN_LOOP": 12, "CURRENT": 405}
    assert steps(p) == [("truncate", "HISTORY", 5, 8_885)]
    assert [(c.seq, c.state, c.step, c.live_tokens) for c in p.changes] == [
        (seq, "truncated", "truncate", 982) for seq in (5, 9, 13, 17, 21)
    ]
    assert p.summary is None and not p.over_limits


def test_a_long_chat_folds_its_prefix_into_a_summary_of_bounded_size() -> None:
    rows = chat_run()
    p = plan(snapshot(rows), BUDGET, Policy(), count)
    assert (p.reason, p.fits, p.tokens_before, p.tokens_after) == (
        "summarize the prefix outside the preserve window",
        True,
        17_258,
        6_630,
    )
    assert p.summary is not None
    assert [r.seq for r in p.summary.rows] == list(range(2, 44))
    assert (p.summary.max_tokens, p.summary.tokens_replaced, p.summary.previous) == (1_200, 11_832, None)
    assert (p.summary.first_seq, p.summary.last_seq) == (2, 43)
    assert steps(p) == [("summarize", "HISTORY", 42, 10_632)]
    assert p.sections == {"HISTORY": 16_656, "IN_LOOP": 226, "CURRENT": 376}
    assert {c.state for c in p.changes} == {"archived"} and len(p.changes) == 42
    smaller = with_summary_size(p, 500)
    assert (smaller.tokens_after, steps(smaller)) == (5_930, [("summarize", "HISTORY", 42, 11_332)])
    quiet = plan(snapshot(reading_run()), BUDGET, Policy(), count)
    assert with_summary_size(quiet, 500) is quiet


def test_a_short_conversation_is_left_alone_even_when_a_summary_is_asked_for() -> None:
    b = Rows().system("You are careful.")
    for t in range(3):
        b.user(f"q{t}").assistant(f"a{t}")
    forced = plan(snapshot(b.rows), BUDGET, Policy(), count, force_summary=True)
    assert (forced.reason, forced.fits, forced.tokens_before, forced.tokens_after) == (
        "already under the target; too few messages worth summarizing",
        True,
        44,
        44,
    )
    assert forced.is_noop
    unforced = plan(snapshot(b.rows), BUDGET, Policy(), count)
    assert (unforced.reason, unforced.fits, unforced.sections) == (
        "already under the target",
        True,
        {"HISTORY": 32, "IN_LOOP": 6, "CURRENT": 6},
    )
    assert unforced.is_noop
    assert unforced.target == BUDGET.target == 7_800
