"""The ladder's thinking rung: thinking blocks of assistant turns before the current one are taken out
first, once the layout is over the target (docs/architecture.md: the model only needs the thinking of
the tool loop it is still in; the provider drops older thinking blocks anyway).

Mutation testing (docs/mutation.md) found no selected test that reached ``elision.drop_thinking``
with a thinking block in the layout: reversing its role test or dropping its tokens passed every test.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from sleepcompact.domain.ladder import Plan, Policy, Snapshot, plan
from sleepcompact.domain.messages import part_tokens
from sleepcompact.domain.records import MessageRecord
from tests.unit.test_ladder import PartSpec, Rows, budget_for, count, filler

WINDOW = 16_000


def _thinking(text: str) -> dict[str, Any]:
    return {"type": "thinking", "thinking": text, "signature": "sig-" + str(len(text))}


def _text(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def _plan(rows: list[MessageRecord]) -> Plan:
    return plan(Snapshot("conv-1", 0, rows[-1].seq, tuple(rows)), budget_for(WINDOW), Policy(), count)


def _history(observation: int = 1_000) -> list[MessageRecord]:
    """Two past exchanges whose assistant turns thought at length, then the current one (user, then an
    assistant that thinks too), with user observations of about ``observation`` filler tokens each."""
    b = Rows().system("You are a careful agent.")
    b.user("OBSERVATION A\n" + filler(observation, "obsa"))
    b.message(PartSpec("assistant", "message", [_thinking(filler(3_000, "pondera")), _text("Answer A.")]))
    b.user("OBSERVATION B\n" + filler(observation, "obsb"))
    b.message(PartSpec("assistant", "message", [{"type": "redacted_thinking", "data": filler(2_000, "red")}]))
    b.user("The current question")
    b.message(PartSpec("assistant", "message", [_thinking(filler(1_000, "now")), _text("Working on it.")]))
    return b.rows


def test_past_thinking_is_taken_out_and_the_text_around_it_stays() -> None:
    rows = _history()
    p = _plan(rows)
    by_seq = {c.seq: c for c in p.changes}
    answered = by_seq[rows[2].seq]
    assert answered.state == "masked" and answered.step == "thinking"
    assert answered.live_content == [_text("Answer A.")]
    assert answered.live_tokens == part_tokens([_text("Answer A.")], count)
    only_thinking = by_seq[rows[4].seq]
    assert (only_thinking.state, only_thinking.step) == ("archived", "thinking")
    step = next(s for s in p.steps if s.step == "thinking")
    assert (step.messages, step.section) == (2, "HISTORY")
    assert step.tokens_saved == (rows[2].live_tokens - answered.live_tokens) + rows[4].live_tokens


def test_the_current_turns_thinking_and_the_users_text_are_never_touched() -> None:
    rows = _history()
    p = _plan(rows)
    changed = {c.seq for c in p.changes}
    assert rows[-1].seq not in changed, "the loop the model is still in keeps its thinking"
    assert not changed & {r.seq for r in rows if r.role == "user"}, "thinking out first: users' text stays"
    assert p.fits


def test_a_block_typed_thinking_in_a_user_message_is_not_thinking() -> None:
    rows = _history()
    # The same blocks in a user message (pasted by a user, or a tool's echo) are the user's content.
    user = next(i for i, r in enumerate(rows) if r.role == "user")
    rows[user] = replace(rows[user], content=[_thinking(filler(2_000, "pasted")), _text("see above")])
    p = _plan(rows)
    assert rows[user].seq not in {c.seq for c in p.changes if c.step == "thinking"}


def test_thinking_stays_while_the_layout_fits() -> None:
    rows = _history(observation=200)
    small = plan(Snapshot("conv-1", 0, rows[-1].seq, tuple(rows)), budget_for(200_000), Policy(), count)
    assert small.changes == () and small.steps == ()


def test_the_step_counts_every_turn_it_thinned() -> None:
    b = Rows().system("You are a careful agent.")
    for n in range(3):
        b.user(f"OBSERVATION {n}\n" + filler(600, f"obs{n}x"))
        b.message(
            PartSpec("assistant", "message", [_thinking(filler(1_500, f"ponder{n}x")), _text(f"Answer {n}.")])
        )
    b.user("The current question")
    rows = b.rows
    p = _plan(rows)
    thinned = [c for c in p.changes if c.step == "thinking"]
    assert len(thinned) == 3 and {c.state for c in thinned} == {"masked"}
    by_id = {r.id: r for r in rows}
    step = next(s for s in p.steps if s.step == "thinking")
    assert step.messages == 3
    assert step.tokens_saved == sum(by_id[c.message_id].live_tokens - c.live_tokens for c in thinned)
