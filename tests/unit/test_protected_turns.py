"""The last user turns are what the model is acting on: a compaction keeps them whole when the result
fits under the hard threshold, even above the target, and cuts them only as far as hard requires.

Before, a compaction that could not reach the target with the last two user turns kept protected fewer
(folding a turn two messages back into the summary) or cut the newest message down to a tenth of the
usable budget; on the tune half of the shared trajectories at a 6k window that lost identifiers the next
call used (docs/evaluation.md, "Protected turns").
"""

from __future__ import annotations

from dataclasses import replace

from sleepcompact.domain.ladder import Plan, Policy, Snapshot, plan
from sleepcompact.domain.messages import MESSAGE_OVERHEAD
from sleepcompact.domain.records import MessageRecord
from tests.unit.test_ladder import PartSpec, Rows, budget_for, count, filler

WINDOW = 8_000
BUDGET = budget_for(WINDOW)


def _plan(rows: list[MessageRecord]) -> Plan:
    return plan(Snapshot("conv-1", 0, rows[-1].seq, tuple(rows)), BUDGET, Policy(), count)


def _by_seq(p: Plan) -> dict[int, str]:
    return {c.seq: c.state for c in p.changes}


def _current_message(*sizes: int) -> list[MessageRecord]:
    """An earlier exchange, then the current user message in parts of about ``sizes`` filler tokens."""
    b = Rows().system("You are a careful agent. " + filler(300, "rule"))
    b.user("OBSERVATION 0\n" + filler(500, "first")).assistant("thinking about observation 0")
    b.message(
        *(PartSpec("user", "message", f"PART {i}\n" + filler(n, f"part{i}x")) for i, n in enumerate(sizes))
    )
    return b.rows


def test_a_current_message_over_the_target_but_under_hard_stays_whole() -> None:
    rows = _current_message(1_800)  # about 3,200 of the 3,900-token target's room, with the rest
    p = _plan(rows)
    current = rows[-1]
    assert current.seq not in _by_seq(p), "neither folded nor cut"
    assert _by_seq(p)[rows[1].seq] == "archived", "the earlier exchange is folded"
    assert p.summary is not None
    assert BUDGET.target < BUDGET.effective(p.tokens_after) <= BUDGET.hard
    assert not p.fits


def test_a_protected_message_is_never_split_between_the_summary_and_the_context() -> None:
    rows = _current_message(1_000, 1_000)  # one user message of two parts, about 1,765 tokens each
    p = _plan(rows)
    states = _by_seq(p)
    assert rows[-2].seq not in states and rows[-1].seq not in states, "both parts stay live, whole"
    assert BUDGET.effective(p.tokens_after) <= BUDGET.hard


def test_over_hard_the_last_rung_cuts_only_until_the_layout_is_under_hard() -> None:
    rows = _current_message(1_500, 1_500)  # about 2,640 tokens each: together over hard
    p = _plan(rows)
    cut = [seq for seq, state in _by_seq(p).items() if state == "truncated"]
    assert len(cut) == 1, "one part cut is enough to get under hard; the other stays whole"
    assert cut[0] in (rows[-2].seq, rows[-1].seq)
    assert BUDGET.target < BUDGET.effective(p.tokens_after) <= BUDGET.hard


def test_a_turn_that_fits_the_target_after_folding_is_kept_whole_and_fits() -> None:
    rows = _current_message(1_500)  # the two last user turns together would fold nothing
    p = _plan(rows)
    assert rows[-1].seq not in _by_seq(p), "the current message is not cut"
    assert _by_seq(p)[rows[1].seq] == "archived"
    assert p.fits


# -- exactly at the ceiling --------------------------------------------------------------------------------


def _sized(row: MessageRecord, tokens: int) -> MessageRecord:
    return replace(row, token_count=tokens, live_tokens=tokens)


def _two_turns_summing_to(total: int) -> list[MessageRecord]:
    """system, an old exchange (large), then the last two user turns: user1 + assistant1 + user2 == total."""
    b = Rows().system("You are a careful agent.")
    b.user("old question").assistant("old answer")
    b.user("second to last question").assistant("second to last answer").user("the current question")
    rows = b.rows
    rows[1], rows[2] = _sized(rows[1], 3_000), _sized(rows[2], 100)
    rows[3], rows[4] = _sized(rows[3], total - 1_100), _sized(rows[4], 100)
    rows[5] = _sized(rows[5], 1_000)
    return rows


def _ceiling(rows: list[MessageRecord]) -> int:
    """The most the kept turns may weigh: hard, less the system prompt and a full-size summary."""
    summary_cap = Policy().summary_cap(BUDGET.usable)
    return int(BUDGET.hard / BUDGET.safety_factor) - rows[0].live_tokens - summary_cap - MESSAGE_OVERHEAD


def test_the_last_two_turns_stay_at_exactly_the_ceiling_and_one_token_over_the_older_is_folded() -> None:
    probe = _two_turns_summing_to(2_000)
    ceiling = _ceiling(probe)
    target_room = int(BUDGET.target / BUDGET.safety_factor) - probe[0].live_tokens
    assert ceiling > target_room - Policy().summary_cap(BUDGET.usable), "the ceiling is above the target"

    at = _two_turns_summing_to(ceiling)
    states = _by_seq(_plan(at))
    assert [states.get(r.seq) for r in at[3:]] == [None, None, None], "both turns live at the ceiling"
    assert states[at[1].seq] == states[at[2].seq] == "archived"

    over = _two_turns_summing_to(ceiling + 1)
    states = _by_seq(_plan(over))
    assert states[over[3].seq] == "archived", "one over: the older turn is folded"
    assert over[4].seq not in states and over[5].seq not in states, "the newest exchange stays whole"


def test_keeping_the_last_turns_never_leaves_a_compaction_that_saves_too_little_to_apply() -> None:
    """Between soft and hard (a sleep tick), keeping the last two turns would fold only a small old
    exchange: less than a compaction must save (5%), so it would be recorded as stalled and change
    nothing. The ladder then protects fewer turns, as below the target."""
    b = Rows().system("You are a careful agent.")
    b.user("old question").assistant("old answer")
    b.user("second to last question").assistant("second to last answer").user("the current question")
    rows = b.rows
    rows[1], rows[2] = _sized(rows[1], 200), _sized(rows[2], 10)
    rows[3], rows[4], rows[5] = _sized(rows[3], 2_500), _sized(rows[4], 100), _sized(rows[5], 1_000)
    before = sum(r.live_tokens for r in rows)
    assert BUDGET.soft < BUDGET.effective(before) < BUDGET.hard
    p = _plan(rows)
    assert p.tokens_before - p.tokens_after >= Policy().stall_ratio * p.tokens_before
    assert _by_seq(p)[rows[3].seq] == "archived", "the older of the two turns is folded"
    assert rows[5].seq not in _by_seq(p)


def test_when_the_last_turns_are_the_whole_history_the_older_is_folded_not_cut() -> None:
    """The LLM-free steps (here: past thinking taken out) leave the layout over the target, and the last
    two user turns are all there is: keeping them would fold nothing, so the ladder protects the current
    turn and folds the older one into the summary rather than cutting it middle-out."""
    thinking = {"type": "thinking", "thinking": filler(1_700, "mull"), "signature": "sig"}
    b = Rows().system("You are a careful agent.")
    b.user("OBSERVATION\n" + filler(2_400, "seen"))
    b.message(PartSpec("assistant", "message", [thinking, {"type": "text", "text": "Noted."}]))
    b.user("the current question " + filler(330, "now"))
    rows = b.rows
    p = _plan(rows)
    assert p.steps[0].step == "thinking"
    states = _by_seq(p)
    assert states[rows[1].seq] == "archived", "the older turn is folded into the summary"
    assert p.summary is not None and rows[1] in p.summary.rows
    assert rows[-1].seq not in states


def test_the_last_rung_counts_the_summary_it_makes_room_for() -> None:
    """The current message (two parts, about 480 and 2,960 filler tokens) with an old exchange folded:
    without its cut the call would be the hard threshold plus one token, once the summary is in. The
    rung counts that summary, so it cuts the larger part and the call fits."""
    b = Rows().system("You are a careful agent.")
    b.user("old " + filler(50, "old")).assistant("old answer")
    b.message(
        PartSpec("user", "message", "PART 0\n" + filler(480, "zero")),
        PartSpec("user", "message", "PART 1\n" + filler(2_960, "one")),
    )
    rows = [b.rows[0], replace(b.rows[1], token_count=300, live_tokens=300), *b.rows[2:]]
    p = _plan(rows)
    assert _by_seq(p) == {2: "archived", 5: "truncated"}
    assert BUDGET.effective(p.tokens_after) <= BUDGET.hard
