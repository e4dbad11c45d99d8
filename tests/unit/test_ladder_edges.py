"""The ladder at its edges, each plan whole: what it does with what no summary can reach, at the
target's exact edge, between the target and hard, and where a summary still leaves it over.

These are the boundaries mutation testing (docs/mutation.md, twentieth session) found unchecked: a
``<`` for a ``<=`` at the target, the ceiling of the last rung, a row of exactly the cap.
"""

from __future__ import annotations

from sleepcompact.domain.ladder import Policy, plan
from sleepcompact.domain.steps import StepResult
from tests.unit.test_ladder import PartSpec, Rows, budget_for, count, filler
from tests.unit.test_ladder_rungs import BUDGET, figures, snapshot, steps


def test_what_no_summary_can_reach_is_cut_down_to_the_target_not_to_hard() -> None:
    # A long system prompt and one message: nothing outside the preserve window to summarize, so the
    # user's message is cut middle-out, to the target (7,800), not only as far as hard (10,200).
    rows = Rows().system(filler(5_000, "rule")).user("go " + filler(2_000, "said")).rows
    p = plan(snapshot(rows), BUDGET, Policy(), count)
    assert figures(p) == (
        "cannot fit: too few messages outside the preserve window to summarize",
        False,
        9_020,
        7_489,
        {"HISTORY": 6_510, "IN_LOOP": 2_510, "CURRENT": 0},
        False,
    )
    assert steps(p) == [("truncate_turn", "CURRENT", 1, 1_531)]
    alone = Rows().system(filler(6_500, "rule")).user("go").rows
    assert figures(plan(snapshot(alone), BUDGET, Policy(), count))[:4] == (
        "cannot fit: too few messages outside the preserve window to summarize",
        False,
        8_765,
        8_765,
    )


def test_between_the_target_and_hard_an_unsummarizable_message_is_still_cut_to_the_target() -> None:
    # 8,270 tokens (9,511 scaled): under hard, over the target, and nothing to fold.
    rows = Rows().system(filler(4_500, "rule")).user("go " + filler(2_000, "said")).rows
    p = plan(snapshot(rows), BUDGET, Policy(), count)
    assert figures(p) == (
        "fits after the LLM-free steps; nothing worth summarizing",
        True,
        8_270,
        6_739,
        {"HISTORY": 5_760, "IN_LOOP": 2_510, "CURRENT": 0},
        False,
    )
    assert steps(p) == [("truncate_turn", "CURRENT", 1, 1_531)]


def test_a_conversation_exactly_at_the_target_is_left_whole_and_one_token_more_is_cut() -> None:
    # 6,782 counted tokens scale (x 1.15, rounded up) to exactly the target, 7,800; 6,783 to 7,801.
    user = "go " + filler(2_000, "said")
    at = Rows().system(filler(3_200, "rule") + " ok" * 263).user(user).rows
    p = plan(snapshot(at), BUDGET, Policy(), count, force_summary=True)
    assert (p.reason, p.fits, p.target, p.tokens_before, p.tokens_after, p.changes) == (
        "already under the target; too few messages worth summarizing",
        True,
        7_800,
        6_782,
        6_782,
        (),
    )
    over = Rows().system(filler(3_200, "rule") + " ok" * 264).user(user).rows
    p = plan(snapshot(over), BUDGET, Policy(), count, force_summary=True)
    assert (p.reason, p.tokens_before, p.tokens_after) == (
        "fits after the LLM-free steps; nothing worth summarizing",
        6_783,
        5_252,
    )
    assert steps(p) == [("truncate_turn", "CURRENT", 1, 1_531)]


def test_a_summary_that_still_leaves_the_layout_over_the_target_says_so() -> None:
    # A system prompt of 12,500 tokens: the first message is folded (a 64-token summary for 5), and the
    # prompt alone is still over the target.
    rows = Rows().system(filler(9_000, "rule")).user("hi").assistant("hello").user("go").rows
    p = plan(snapshot(rows), BUDGET, Policy(), count)
    assert figures(p) == (
        "summarized as far as the preserve window allows; still over the target",
        False,
        12_525,
        12_588,
        {"HISTORY": 12_520, "IN_LOOP": 5, "CURRENT": 0},
        False,
    )
    assert p.target == 7_800
    assert p.summary is not None and [r.seq for r in p.summary.rows] == [2]


def test_with_a_summary_the_kept_turns_are_cut_only_when_they_would_not_fit_beside_it() -> None:
    # Two user turns; the newest is huge. The older exchange is folded; the newest message is cut
    # middle-out as well, since it and the summary together would be over hard.
    b = Rows().system("rule").user("q1 " + filler(2_000, "q")).assistant("a1 " + filler(200, "a"))
    b.user("q2 " + filler(6_000, "z"))
    p = plan(snapshot(b.rows), BUDGET, Policy(), count)
    assert figures(p) == (
        "summarize the prefix outside the preserve window",
        True,
        10_789,
        2_032,
        {"HISTORY": 2_777, "IN_LOOP": 8_012, "CURRENT": 0},
        False,
    )
    assert steps(p) == [("truncate_turn", "CURRENT", 1, 7_003), ("summarize", "HISTORY", 1, 1_758)]
    # 5,000 tokens instead: with the summary it is under hard, so it is kept whole (over the target).
    b = Rows().system("rule").user("q1 " + filler(2_000, "q")).assistant("a1 " + filler(200, "a"))
    b.user("q2 " + filler(5_000, "z"))
    p = plan(snapshot(b.rows), BUDGET, Policy(), count)
    assert figures(p)[:4] == (
        "summarized as far as the preserve window allows; still over the target",
        False,
        9_289,
        7_352,
    )
    assert steps(p) == [("summarize", "HISTORY", 2, 1_941)]


def test_the_last_rung_stops_cutting_once_the_layout_is_exactly_at_the_target() -> None:
    # One user message of two parts; cutting the larger brings the layout to 6,782 tokens, which scale
    # to exactly the target: the second part (over the cap too) stays whole.
    first = PartSpec("user", "message", "first " + filler(3_000, "f"))
    second = PartSpec("user", "message", "second " + filler(1_200, "s"))
    rows = Rows().system(filler(2_500, "rule") + " ok" * 1_149).message(first, second).rows
    p = plan(snapshot(rows), BUDGET, Policy(), count)
    assert figures(p)[:4] == ("fits after the LLM-free steps; nothing worth summarizing", True, 9_553, 6_782)
    assert steps(p) == [("truncate_turn", "CURRENT", 1, 2_771)]


def test_the_last_rung_leaves_a_message_of_exactly_the_cap() -> None:
    rows = Rows().system(filler(5_000, "rule")).user("note " + filler(700, "n") + " ok" * 315).rows
    assert rows[-1].live_tokens == Policy().cap(BUDGET.usable) == 1_200
    p = plan(snapshot(rows), BUDGET, Policy(), count)
    assert figures(p)[:4] == (
        "cannot fit: too few messages outside the preserve window to summarize",
        False,
        7_710,
        7_710,
    )
    assert steps(p) == [] and p.changes == ()


def test_a_current_message_too_large_beside_the_largest_summary_is_cut_to_fit() -> None:
    """An 8,000-token window (usable 6,000: target 3,900, hard 5,100), where a summary may take a tenth
    of usable (602 tokens with its message). Seven old messages are folded; the newest user message
    (3,835 tokens) and the short answer before it are over the room hard leaves beside that summary,
    so the last rung cuts the message and the call fits. Checked without the summary's reserve, the
    plan looked fitting and went out at 5,136 scaled tokens, over hard."""
    b = Rows().system("You are a careful agent.")
    for k in range(4):
        b.user(f"old {k} " + filler(297, "asked")).assistant(
            f"answer {k} " + filler(297 if k < 3 else 5, "told")
        )
    rows = b.user("now " + filler(3_060, "said")).rows
    assert rows[-1].token_count == 3_835
    budget = budget_for(8_000)
    p = plan(snapshot(rows), budget, Policy(), count)
    assert p.fits and budget.effective(p.tokens_after) <= budget.target
    assert p.tokens_after == 1_124
    assert list(p.steps) == [
        StepResult("truncate_turn", "CURRENT", 1, 3_342),
        StepResult("summarize", "HISTORY", 7, 2_074),
    ]
