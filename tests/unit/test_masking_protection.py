"""Observation masking never touches the tool outputs of the last user turns (``Policy.protected_user_turns``,
2 by default), however much it has to mask before them.

The conversation: six user turns, each one tool call with an output of about 1,600 tokens. Truncation is
out of the way (every output is under the per-output cap) and so is the token-based protection of the
newest outputs (``protect_tokens=0``), so the turn rule alone decides. Masking takes every candidate of
a section at once, so without the rule the second-to-last turn's output (in HISTORY with the rest)
would be masked too; with it, exactly the outputs before the protected turns are.
"""

from __future__ import annotations

import pytest

from sleepcompact.domain.budget import Thresholds, make_budget
from sleepcompact.domain.ladder import Policy, Snapshot, assign_sections, plan
from tests.unit.test_ladder import Rows, count, filler, result

TURNS = 6


def _conversation() -> Snapshot:
    b = Rows().system("You are a careful agent.")
    for t in range(TURNS):
        b.user(f"task {t}: inspect module {t}")
        b.assistant(f"reading module {t}", (f"c{t}", "read_file", {"path": f"m{t}.py"}))
        b.results(result(f"c{t}", "read_file", filler(1_250, word=f"m{t}")))
        b.assistant(f"module {t} looks fine")
    return Snapshot("conv-1", 0, b.rows[-1].seq, tuple(b.rows))


# usable 20,000: each output (about 1,600 tokens) is under the 2,000-token cap; the target (6,000) is
# well under the 9,400 the outputs weigh together, and above what is left once three of them are masked.
BUDGET = make_budget(
    context_window=21_000,
    output_reserve=1_000,
    thresholds=Thresholds(soft=0.5, hard=0.6, target=0.3),
    safety_factor=1.0,
)


@pytest.mark.parametrize("protected", [None, 1, 2, 3])
def test_masking_spares_exactly_the_outputs_of_the_protected_user_turns(protected: int | None) -> None:
    snapshot = _conversation()
    outputs = [r for r in snapshot.rows if r.kind == "tool_result"]
    assert len(outputs) == TURNS and all(r.live_tokens < Policy().cap(BUDGET.usable) for r in outputs)
    assert BUDGET.effective(sum(r.live_tokens for r in snapshot.rows)) > BUDGET.target
    turns = Policy().protected_user_turns if protected is None else protected
    if protected is None:
        assert turns == 2  # the default: the last two user turns
    policy = Policy(protect_tokens=0, minimum_saving=0, protected_user_turns=turns)

    p = plan(snapshot, BUDGET, policy, count)

    assert p.fits and p.summary is None, p.reason
    assert {c.state for c in p.changes} == {"masked"} and {s.step for s in p.steps} == {"mask"}
    masked = sorted(c.seq for c in p.changes)
    assert masked == [r.seq for r in outputs[: TURNS - turns]]
    # The second-to-last turn's output sits in HISTORY with the masked ones: only the rule spares it.
    sections = dict(zip((r.seq for r in snapshot.rows), assign_sections(snapshot.rows), strict=True))
    if turns >= 2:
        assert sections[outputs[-2].seq] == "HISTORY" and outputs[-2].seq not in masked
