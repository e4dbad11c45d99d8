"""Which newest rows a summary leaves live (``domain/preserve.py``), decided to the token.

Each test pins one decision a user would see as a different context after compaction: how many user
turns are protected and how the ladder falls back when they do not fit, a protected message never split
between the summary and the context, a conversation with no user message at all, and the two figures
the choice rests on, the room the target leaves for the kept rows and the saving a compaction must make
(5%), each at exactly its boundary. Rows carry token counts set by hand, so a boundary is a boundary.
"""

from __future__ import annotations

from dataclasses import replace

from sleepcompact.domain.ladder import Plan, Policy, Snapshot, plan
from sleepcompact.domain.records import MessageRecord
from tests.unit.test_ladder import PartSpec, Rows, budget_for, count, result

BUDGET = budget_for(8_000)  # usable 6,000, target 3,900, hard 5,100, safety factor 1.15
SYSTEM = "You are a careful agent."  # 10 tokens: the room for kept rows is 2,777 under the target


def _sized(rows: list[MessageRecord], *tokens: int) -> list[MessageRecord]:
    """Rows 1.. given these token counts (the system row keeps its own)."""
    sized = [replace(r, token_count=n, live_tokens=n) for r, n in zip(rows[1:], tokens, strict=True)]
    return [rows[0], *sized]


def _plan(rows: list[MessageRecord], policy: Policy | None = None, *, force: bool = False) -> Plan:
    snapshot = Snapshot("conv-1", 0, rows[-1].seq, tuple(rows))
    return plan(snapshot, BUDGET, policy or Policy(), count, force_summary=force)


def _folded(p: Plan) -> list[int]:
    return sorted(c.seq for c in p.changes if c.state == "archived")


def _two_turns(old: int, second: int, *, previous_summary: int = 0, now: int = 1_000) -> list[MessageRecord]:
    """[a previous summary,] an old exchange (``old`` + 20), then the last two user turns: ``second``,
    an answer of 100 and the current question (``now``)."""
    b = Rows().system(SYSTEM)
    if previous_summary:
        b.user("the summary so far")
    b.user("old question").assistant("old answer").user("second to last").assistant("an answer").user("now")
    sized = _sized(b.rows, *([previous_summary] if previous_summary else []), old, 20, second, 100, now)
    if previous_summary:
        sized[1] = replace(sized[1], kind="summary")
    return sized


# -- how many turns are protected ------------------------------------------------------------------------


def test_one_protected_turn_when_the_policy_says_one() -> None:
    rows = _two_turns(3_000, 2_720)  # the last two turns: 3,820, at the hard ceiling
    assert _folded(_plan(rows))[-1] == 3, "by default both turns stay (the older one is seq 4)"
    assert _folded(_plan(rows, Policy(protected_user_turns=1))) == [2, 3, 4], "with one, the older is folded"


def test_when_two_turns_do_not_fit_under_hard_the_current_user_turn_still_stays_whole() -> None:
    """Protecting two turns is over the ceiling; protecting one (the current question, 2,700 tokens, and
    the reply being written) is over the target but under hard: the question stays. Only if that did not
    fit either would the ladder keep just the newest assistant message."""
    b = Rows().system(SYSTEM)
    b.user("old").assistant("old answer").user("second").assistant("second answer")
    b.user("the current question").assistant("working on it")
    rows = _sized(b.rows, 500, 100, 1_000, 100, 2_700, 150)
    p = _plan(rows)
    assert _folded(p) == [2, 3, 4, 5]
    assert BUDGET.effective(p.tokens_after) <= BUDGET.hard


def test_a_protected_message_opening_the_conversation_is_never_split() -> None:
    """The older protected turn is a two-part user message right after the system prompt. It does not fit
    with the rest, so the ladder protects the current turn only and folds the whole message, both parts:
    never its first part into the summary and its second into the context."""
    b = Rows().system(SYSTEM)
    b.message(PartSpec("user", "message", "part zero"), PartSpec("user", "message", "part one"))
    b.assistant("an answer").user("the current question")
    rows = _sized(b.rows, 1_000, 2_000, 100, 1_000)
    assert _folded(_plan(rows)) == [2, 3]


def test_a_current_message_of_three_parts_is_kept_from_its_first_part_and_no_further() -> None:
    """The two protected turns are the last two parts of the current message: it is kept from its first
    part, whole, and the long answer before it (2,000 tokens, over the room) is folded."""
    b = Rows().system(SYSTEM)
    b.user("old question").assistant("a long answer")
    b.message(*(PartSpec("user", "message", f"part {i}") for i in range(3)))
    rows = _sized(b.rows, 500, 2_000, 300, 300, 300)
    assert _folded(_plan(rows)) == [2, 3]


def test_a_loop_with_no_user_message_keeps_its_newest_message_and_what_fits_the_target() -> None:
    b = Rows().system(SYSTEM)
    for step in range(4):
        b.assistant(f"step {step}")
    rows = _sized(b.rows, 1_500, 1_500, 1_500, 1_500)
    assert _folded(_plan(rows)) == [2, 3, 4], "the newest alone: with the one before, 3,000 > 2,777"


def test_a_loop_whose_newest_step_does_not_fit_is_folded_whole_not_from_its_tool_result() -> None:
    """No user message, and the newest step (a 3,000-token assistant message, its call, the result) is
    over the room: the rows that would fit are the call's second part and its result, and a kept window
    may start with neither, so the whole step is folded into the summary."""
    b = Rows().system(SYSTEM)
    b.assistant("thinking it through", ("call-1", "search", {"q": "x"}))
    b.results(result("call-1", "search", "found it"))
    rows = _sized(b.rows, 3_000, 20, 500)
    p = _plan(rows)
    assert _folded(p) == [2, 3, 4]
    assert p.summary is not None


def test_a_forced_compaction_over_the_target_keeps_the_window_by_tokens_not_by_count() -> None:
    """An entry-count compaction keeps 20 messages when the conversation fits; over the target it keeps
    the preserve window in tokens (35% of usable: 1,826 counted tokens), here 23 messages of 80."""
    b = Rows().system(SYSTEM)
    for k in range(22):
        b.user(f"question {k}").assistant(f"answer {k}")
    rows = _sized(b.rows, *([80] * 44))
    assert BUDGET.target < BUDGET.effective(sum(r.live_tokens for r in rows)) < BUDGET.soft
    folded = _folded(_plan(rows, force=True))
    assert folded == list(range(2, 23)), "21 folded, the newest 23 kept"


# -- the room under the target -----------------------------------------------------------------------------


def test_the_room_under_the_target_counts_the_summary_message_overhead() -> None:
    """The room the target leaves for kept rows is the target less the system prompt, the largest
    summary and that summary message's overhead: 2,777 here. The last two turns take 2,760; the old
    answer (20 tokens) would make 2,780, three over, so it is folded with its question."""
    rows = _two_turns(608, 1_660)
    assert _folded(_plan(rows)) == [2, 3]


def test_rows_that_fill_the_room_exactly_are_kept() -> None:
    rows = _two_turns(608, 1_657)  # the last two turns and the old answer: 2,777, the room exactly
    assert _folded(_plan(rows)) == [2], "only the old question is folded"


def test_the_window_stops_at_exactly_35_percent_of_usable_once_20_messages_are_kept() -> None:
    """35% of usable is 1,826 counted tokens: the newest 21 messages weigh exactly that (twenty of 80, one
    of 226), so the 22nd, which would still fit the room, is folded."""
    b = Rows().system(SYSTEM)
    b.user("old question").assistant("old answer")
    for k in range(11):
        b.user(f"question {k}").assistant(f"answer {k}")
    rows = _sized(b.rows, 1_500, 20, 80, 226, *([80] * 20))
    assert _folded(_plan(rows)) == [2, 3, 4]


def test_a_fold_of_only_the_first_row_is_taken_when_it_saves_enough() -> None:
    """A welcome message, then the last two turns (3,100 tokens: over the target's room, under hard):
    folding the welcome alone saves more than 5%, so both turns stay."""
    b = Rows().system(SYSTEM)
    b.assistant("welcome").user("second").assistant("second answer").user("current")
    rows = _sized(b.rows, 300, 2_000, 100, 1_000)
    assert _folded(_plan(rows)) == [2]


# -- the 5% a compaction must save ---------------------------------------------------------------------------


def test_keeping_both_turns_at_exactly_five_percent_saved() -> None:
    exact = _two_turns(228, 2_042)  # 3,400 tokens before; folding the old exchange saves exactly 170
    p = _plan(exact)
    assert p.tokens_before == 3_400
    assert _folded(p) == [2, 3], "exactly 5%: enough, both turns stay"


def test_the_saving_counts_the_summary_message_overhead() -> None:
    rows = _two_turns(216, 2_050)  # folding the old exchange saves a few tokens short of 5%
    assert _folded(_plan(rows)) == [2, 3, 4], "short of 5%: the older turn is folded too"


def test_the_saving_counts_the_previous_summary_folded_again() -> None:
    """The previous summary (200 tokens) is replaced too: counted, folding it with the small old
    exchange saves 5%, so both turns stay."""
    rows = _two_turns(34, 1_530, previous_summary=200, now=1_500)
    assert _folded(_plan(rows)) == [2, 3, 4]


def test_a_forced_compaction_keeps_both_turns_filling_the_room_exactly_however_little_folding_saves() -> None:
    """Forced (the entry-count trigger), under the target: the last two user turns take the room
    exactly (2,777) and the current one alone holds the preserve window's 20 messages. Both stay, though
    folding the three old exchanges (120 tokens) saves under 5%: they fit, so the saving is not asked."""
    b = Rows().system(SYSTEM)
    for k in range(3):
        b.user(f"old question {k}").assistant(f"old answer {k}")
    b.user("second to last").assistant("an answer").user("now")
    for k in range(10):
        b.assistant(None, (f"c{k}", "bash", {"cmd": "ls"})).results(result(f"c{k}", "bash", "out"))
    rows = _sized(b.rows, *([20] * 6), 997, 100, 100, *([79] * 20))
    p = _plan(rows, force=True)
    assert _folded(p) == [2, 3, 4, 5, 6, 7], "the old exchanges only; the second to last turn stays"
    assert p.summary is not None
