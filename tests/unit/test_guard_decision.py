"""The guard's decision exactly on each threshold and one token either side (``domain.guard.decide``).

Thresholds are strict: a call exactly at soft needs nothing, exactly at hard it asks for a sleep tick
(never an emergency compaction), one token over hard it compacts now. With auto-compaction off a call
exactly filling the usable budget still goes out; one token more is an overflow.
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from sleepcompact.domain.budget import Budget, Thresholds, make_budget
from sleepcompact.domain.guard import decide


@st.composite
def budgets(draw: st.DrawFn) -> Budget:
    """Any valid budget: a window from 1k to 1M tokens, any reserve, any thresholds the settings allow."""
    window = draw(st.integers(1_024, 1_000_000))
    reserve = draw(st.integers(0, window // 2))
    hard = draw(st.floats(0.2, 1.0))
    soft = draw(st.floats(0.1, hard))
    target = draw(st.floats(0.05, soft).filter(lambda t: t < soft))
    thresholds = Thresholds(soft=soft, hard=hard, target=target)
    return make_budget(
        context_window=window, output_reserve=reserve, thresholds=thresholds, safety_factor=1.15
    )


@given(budgets())
def test_exactly_at_hard_asks_for_sleep_and_one_token_over_compacts_now(budget: Budget) -> None:
    assert decide(budget.hard + 1, budget) == "compact_now"
    if budget.soft < budget.hard:
        assert decide(budget.hard, budget) == "request_sleep"
        assert decide(budget.hard - 1, budget) == (
            "request_sleep" if budget.hard - 1 > budget.soft else "none"
        )
    else:  # soft == hard: nothing between them to ask a tick for
        assert decide(budget.hard, budget) == "none"


@given(budgets())
def test_exactly_at_soft_needs_nothing_and_one_token_over_asks_for_sleep(budget: Budget) -> None:
    assert decide(budget.soft - 1, budget) == "none"
    assert decide(budget.soft, budget) == "none"
    assert decide(budget.soft + 1, budget) == (
        "request_sleep" if budget.soft < budget.hard else "compact_now"
    )


@given(budgets())
def test_with_auto_compaction_off_the_usable_budget_is_the_only_line(budget: Budget) -> None:
    assert decide(budget.hard + 1, budget, auto_compact=False) == (
        "none" if budget.hard + 1 <= budget.usable else "overflow"
    )
    assert decide(budget.usable, budget, auto_compact=False) == "none"
    assert decide(budget.usable + 1, budget, auto_compact=False) == "overflow"


def test_the_default_thresholds_of_a_200k_window() -> None:
    """Claude's 200k window with its 32k output reserve: 168,000 usable, soft 117,600, hard 142,800."""
    budget = make_budget(
        context_window=200_000, output_reserve=32_000, thresholds=Thresholds(), safety_factor=1.15
    )
    assert (budget.usable, budget.soft, budget.hard) == (168_000, 117_600, 142_800)
    decisions = [decide(t, budget) for t in (117_600, 117_601, 142_800, 142_801)]
    assert decisions == ["none", "request_sleep", "request_sleep", "compact_now"]
