"""What a compaction asks its summarizer for (``services.compaction.summary_input``): the folded rows,
the rows after them, and the body's budget, which is what the planner gave the whole summary message
less its prefix and, from the third summary on, the note that says how often the turns were folded;
never under 48 tokens, however small the fold. The admin re-run's preview asks the same.
"""

from __future__ import annotations

from sleepcompact.domain.ladder import Policy, Snapshot, plan
from sleepcompact.domain.prompt import SUMMARY_PREFIX
from sleepcompact.services.compaction import REPEAT_NOTE, summary_input
from tests.unit.test_ladder import Rows, budget_for, count, filler

BUDGET = budget_for(8_000)


def _snapshot(folded_tokens: int, summaries_so_far: int) -> Snapshot:
    """Six old messages of ``folded_tokens`` in all, then the twenty a forced compaction keeps."""
    b = Rows().system("You are a careful agent.")
    each = folded_tokens // 6
    for k in range(3):
        b.user(f"q{k} " + filler(each - 2, "asked")).assistant(f"a{k} " + filler(each - 2, "told"))
    for k in range(10):
        b.user(f"question {k}").assistant(f"answer {k}")
    return Snapshot("conv-1", 0, b.rows[-1].seq, tuple(b.rows), summaries_so_far=summaries_so_far)


def test_a_small_fold_gives_the_body_48_tokens_though_the_prefix_leaves_less() -> None:
    snapshot = _snapshot(120, summaries_so_far=2)
    p = plan(snapshot, BUDGET, Policy(), count, force_summary=True)
    assert p.summary is not None and p.summary.max_tokens == 64  # the smallest summary
    inp, note = summary_input(snapshot, p, count)
    assert note == REPEAT_NOTE.format(n=3) + "\n\n"
    assert 64 - count(SUMMARY_PREFIX + note) < 48
    assert inp.max_tokens == 48
    assert [r.seq for r in inp.rows] == [2, 3, 4, 5, 6, 7]
    assert [r.seq for r in inp.following] == list(range(8, 28))


def test_a_larger_fold_gives_the_body_what_the_prefix_and_the_note_leave() -> None:
    for depth, note in ((0, ""), (2, REPEAT_NOTE.format(n=3) + "\n\n")):
        snapshot = _snapshot(1_200, summaries_so_far=depth)
        p = plan(snapshot, BUDGET, Policy(), count, force_summary=True)
        assert p.summary is not None
        inp, got = summary_input(snapshot, p, count)
        assert got == note
        assert inp.max_tokens == p.summary.max_tokens - count(SUMMARY_PREFIX + note) > 48
