"""The recall difference ``sleepcompact eval`` reports against truncation, with its interval
(``evaluation.intervals``): a paired bootstrap over conversations, reproducible, that says when a
difference is no more than which conversations happened to be in the set."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sleepcompact.evaluation.intervals import recall_difference
from sleepcompact.evaluation.replay import PolicyResult


def test_the_same_policy_twice_differs_by_nothing_for_sure() -> None:
    pairs = [(90, 100), (40, 50), (7, 10)]
    d = recall_difference(pairs, pairs)
    assert (d.difference, d.low, d.high, d.conversations) == (0.0, 0.0, 0.0, 3)


def test_a_gain_in_every_conversation_is_sure_and_one_conversation_is_not() -> None:
    better = [(95, 100), (48, 50), (30, 40), (60, 80), (9, 10), (18, 20)]
    worse = [(90, 100), (45, 50), (28, 40), (56, 80), (8, 10), (16, 20)]
    sure = recall_difference(better, worse)
    assert sure.difference == pytest.approx(260 / 300 - 243 / 300)
    assert 0 < sure.low <= sure.difference <= sure.high

    # The same total gain made by one conversation out of six, the others a little worse: not sure.
    lucky = [(100, 100), (44, 50), (27, 40), (55, 80), (8, 10), (16, 20)]
    unsure = recall_difference(lucky, worse)
    assert unsure.difference > 0 and unsure.low < 0 < unsure.high


def test_the_interval_is_reproducible_and_weighs_conversations_by_their_references() -> None:
    a = [(5, 10), (900, 1000), (1, 10)]
    b = [(9, 10), (850, 1000), (9, 10)]
    assert recall_difference(a, b) == recall_difference(a, b)
    # Two short conversations lost, one long one won: recall is over references, so a is ahead.
    assert recall_difference(a, b).difference == pytest.approx(906 / 1020 - 868 / 1020)


def test_no_conversations_and_mismatched_replays() -> None:
    assert recall_difference([], []).conversations == 0
    with pytest.raises(ValueError, match="replayed 2 and 1 conversations"):
        recall_difference([(1, 1), (1, 1)], [(1, 1)])


@given(
    st.lists(
        st.tuples(st.integers(0, 50), st.integers(0, 50), st.integers(1, 50)).map(
            lambda t: (min(t[0], t[2]), min(t[1], t[2]), t[2])
        ),
        min_size=1,
        max_size=12,
    )
)
def test_the_interval_lies_within_what_recall_can_differ_by(rows: list[tuple[int, int, int]]) -> None:
    a = [(x, n) for x, _, n in rows]
    b = [(y, n) for _, y, n in rows]
    d = recall_difference(a, b, draws=200)
    assert -1.0 <= d.low <= d.high <= 1.0
    assert d.conversations == len(rows)


def test_eval_json_carries_the_difference_against_truncation() -> None:
    truncate, ours = PolicyResult("truncate"), PolicyResult("sleepcompact")
    truncate.per_conversation = [(8, 10), (30, 40)]
    ours.per_conversation = [(9, 10), (36, 40)]
    ours.recalled, ours.references = 45, 50
    shown = ours.to_dict(baseline=truncate)["recall_vs_truncate"]
    assert shown["difference"] == pytest.approx(45 / 50 - 38 / 50)
    assert shown["conversations"] == 2 and shown["level"] == 0.95
    assert "recall_vs_truncate" not in truncate.to_dict()
