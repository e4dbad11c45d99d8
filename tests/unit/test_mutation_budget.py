"""Token calibration and the entry-count trigger, where mutation testing found the suite blind
(docs/mutation.md).

The calibration factor is a bounded running mean of observed/counted: the first real call moves it
halfway, later ones by 1/(samples + 2) down to 1/20, rounded to four places, never outside [0.9, 1.6],
and a call with no count or no usage leaves it alone. The entry-count trigger fires only when it is on,
past its count, and over its floor.
"""

from __future__ import annotations

import pytest

from sleepcompact.domain.budget import Budget, calibrated, entry_count_due


@pytest.mark.parametrize(
    ("factor", "samples", "counted", "observed", "expected"),
    [
        (1.0, 0, 1000, 1200, 1.1),  # the first call: halfway to 1.2
        (1.0, 1, 1000, 1300, 1.1),  # the second: a third of the way
        (1.0, 1, 1000, 1100, 1.0333),  # rounded to four places
        (1.0, 100, 1000, 1600, 1.03),  # after the window: a twentieth
        (1.2, 0, 1000, 1000, 1.1),  # down as well as up
        (1.0, 0, 1, 1, 1.0),  # the smallest real figures count
        (1.0, 0, 1, 2, 1.3),
        (1.5, 0, 10, 1000, 1.55),  # a wild ratio is clamped before it is averaged
        (1.0, 0, 1000, 1, 0.95),
        (1.6, 18, 10, 1000, 1.6),  # the factor itself never leaves the bounds
        (0.9, 18, 1000, 1, 0.9),
    ],
)
def test_the_factor_moves_by_its_weight_toward_the_clamped_ratio(
    factor: float, samples: int, counted: int, observed: int, expected: float
) -> None:
    assert calibrated(factor, samples, counted, observed) == expected


@pytest.mark.parametrize(("counted", "observed"), [(0, 1200), (1000, 0), (0, 0), (-5, 100), (100, -5)])
def test_a_call_without_a_count_or_usage_leaves_the_factor_alone(counted: int, observed: int) -> None:
    assert calibrated(1.25, 3, counted, observed) == 1.25


BUDGET = Budget(
    context_window=200_000,
    output_reserve=8_000,
    usable=192_000,
    soft=120_000,
    hard=170_000,
    target=60_000,
    safety_factor=1.0,
)


def test_the_entry_count_trigger_needs_it_on_past_its_count_and_over_its_floor() -> None:
    floor = 0.25  # 30,000 tokens at this budget's soft threshold
    assert entry_count_due(101, 30_000, BUDGET, 100, floor)
    assert not entry_count_due(100, 30_000, BUDGET, 100, floor)  # not past the count
    assert not entry_count_due(101, 29_999, BUDGET, 100, floor)  # under the floor
    assert not entry_count_due(5, 150_000, BUDGET, 100, floor)  # few messages, however many tokens
    assert not entry_count_due(10_000, 150_000, BUDGET, 0, floor)  # 0 is off
    assert entry_count_due(2, 30_000, BUDGET, 1, floor)  # 1 is on: two messages are past it
