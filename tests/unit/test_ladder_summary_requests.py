"""What the ladder asks the summarizer to fold, exactly: which rows, whether an earlier summary goes
in, how many tokens it replaces, and when a summary is not worth an LLM call.

Mutation testing (docs/mutation.md, twentieth session) found the fast tests blind to the leading
system rows, an earlier summary, the caller's own prompt tokens (``extra_tokens``) and the
five-message minimum of an optional summary.
"""

from __future__ import annotations

from dataclasses import replace

from sleepcompact.domain.ladder import Plan, Policy, Snapshot, plan
from sleepcompact.domain.records import MessageRecord
from tests.unit.test_ladder import PartSpec, Rows, budget_for, count, filler

BUDGET = budget_for(16_000)  # usable 12,000, target 7,800, hard 10,200


def chat(
    turns: int, size: int = 20, *, systems: int = 1, earlier_summary: bool = False
) -> list[MessageRecord]:
    """``systems`` system rows, an optional earlier summary, then ``turns`` user/assistant exchanges of
    about ``size`` filler tokens per message."""
    b = Rows()
    for k in range(systems):
        b.system(f"rule {k}")
    if earlier_summary:
        b.message(PartSpec("system", "summary", "Earlier: " + filler(300, "gist")))
    for t in range(turns):
        b.user(f"q{t} " + filler(size, f"q{t}"))
        b.assistant(f"a{t} " + filler(size, f"a{t}"))
    return b.rows


def planned(rows: list[MessageRecord], *, extra: int = 0, force: bool = False) -> Plan:
    snapshot = Snapshot("conv-1", 0, rows[-1].seq, tuple(rows), extra_tokens=extra)
    return plan(snapshot, BUDGET, Policy(), count, force_summary=force)


def test_an_optional_summary_needs_five_messages_to_fold() -> None:
    # Under the target, a forced summary keeps the newest 20 messages: 25 leave five to fold, 24 four.
    five = planned(chat(13)[:-1], force=True)
    assert five.reason == "summarize the prefix outside the preserve window"
    assert five.summary is not None and [r.seq for r in five.summary.rows] == [2, 3, 4, 5, 6]
    four = planned(chat(12)[:-1], force=True)
    assert (four.reason, four.summary) == (
        "already under the target; too few messages worth summarizing",
        None,
    )


def test_an_earlier_summary_is_folded_in_whatever_the_count() -> None:
    # One message outside the window, but an earlier summary to fold with it: worth the call.
    p = planned(chat(11, earlier_summary=True)[:-1], force=True)
    assert p.summary is not None
    assert p.summary.previous is not None and p.summary.previous.seq == 2
    assert [r.seq for r in p.summary.rows] == [3]
    # What it replaces is the folded message and the earlier summary, both.
    assert (p.summary.tokens_replaced, p.summary.max_tokens) == (422, 126)
    assert {c.seq for c in p.changes} == {2, 3}
    assert (p.tokens_before, p.tokens_after) == (1_149, 857)
    assert planned(chat(11)[:-1], force=True).summary is None  # the same count without one is not


def test_leading_system_rows_stay_and_the_summary_starts_after_them() -> None:
    p = planned(chat(30, size=150, systems=2))
    assert p.summary is not None
    assert (p.summary.first_seq, len(p.summary.rows)) == (3, 40)
    assert not {1, 2} & {c.seq for c in p.changes}
    # With no system row, the very first message is folded too.
    bare = planned(chat(30, size=150, systems=0))
    assert bare.summary is not None and bare.summary.first_seq == 1


def test_the_callers_own_prompt_tokens_make_the_summary_fold_more() -> None:
    rows = chat(30, size=150)
    alone, crowded = planned(rows), planned(rows, extra=2_000)
    assert alone.summary is not None and crowded.summary is not None
    assert (len(alone.summary.rows), alone.summary.tokens_replaced, alone.tokens_after) == (40, 8_400, 5_691)
    assert (len(crowded.summary.rows), crowded.summary.tokens_replaced, crowded.tokens_after) == (
        45,
        9_520,
        6_571,
    )
    assert crowded.tokens_before == alone.tokens_before + 2_000


def test_a_conversation_of_system_rows_only_has_nothing_to_fold() -> None:
    p = planned(Rows().system(filler(4_000, "rule")).system(filler(3_000, "more")).rows)
    assert (p.reason, p.fits, p.summary, p.changes) == (
        "cannot fit: too few messages outside the preserve window to summarize",
        False,
        None,
        (),
    )


def test_over_the_target_even_one_message_is_worth_folding_forced_or_not() -> None:
    rows = (
        Rows()
        .system("rule")
        .user("q " + filler(3_000, "q"))
        .assistant("a " + filler(3_000, "a"))
        .user("now?")
        .rows
    )
    for force in (False, True):
        p = planned(rows, force=force)
        assert (p.reason, p.tokens_before, p.tokens_after) == (
            "summarize the prefix outside the preserve window",
            7_531,
            4_903,
        )
        assert p.summary is not None and [r.seq for r in p.summary.rows] == [2]


def test_folded_rows_keep_their_stored_view_and_name_the_summary_as_their_step() -> None:
    # A message an earlier compaction truncated, and the earlier summary, are both folded: each change
    # keeps the view and tokens the row had live (what restore and inspect show), under "summarize".
    rows = chat(11, earlier_summary=True)[:-1]
    rows[1] = replace(rows[1], live_content="Earlier: the gist, as shown", live_tokens=7)
    rows[2] = replace(rows[2], state="truncated", live_content="q0 [... truncated ...]", live_tokens=5)
    p = planned(rows, force=True)
    assert [(c.seq, c.state, c.live_content, c.live_tokens, c.step) for c in p.changes] == [
        (3, "archived", "q0 [... truncated ...]", 5, "summarize"),
        (2, "archived", "Earlier: the gist, as shown", 7, "summarize"),
    ]
