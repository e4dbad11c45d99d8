"""Context windows, output reserves and the thresholds derived from them.

Defaults come from the reference systems (see DESIGN section 3): BaseAgent
reserves output out of a 200k window and compacts at 85% of what is left;
the sleep-compaction seed compacts at night above 70%; Merlin caps plans.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from sleepcompact.domain.errors import InvalidSetting


@dataclass(frozen=True)
class ModelSpec:
    """What a model family offers: window, longest output, and the tokenizer safety factor."""

    prefix: str
    context_window: int
    max_output: int
    # cl100k_base under-counts other tokenizers; the factor scales our counts up to theirs.
    safety_factor: float


# Longest prefix wins. Figures are the providers' published limits.
MODELS: tuple[ModelSpec, ...] = (
    ModelSpec("claude-opus-4-5", 200_000, 64_000, 1.15),
    ModelSpec("claude-opus-4-1", 200_000, 32_000, 1.15),
    ModelSpec("claude-opus-4", 200_000, 32_000, 1.15),
    ModelSpec("claude-sonnet-4-5", 200_000, 64_000, 1.15),
    ModelSpec("claude-sonnet-4", 200_000, 64_000, 1.15),
    ModelSpec("claude-haiku-4-5", 200_000, 64_000, 1.15),
    ModelSpec("claude-3-7-sonnet", 200_000, 64_000, 1.15),
    ModelSpec("claude-3-5-haiku", 200_000, 8_192, 1.15),
    ModelSpec("claude-3-5-sonnet", 200_000, 8_192, 1.15),
    ModelSpec("claude", 200_000, 8_192, 1.15),
    ModelSpec("gpt-5", 400_000, 128_000, 1.0),
    ModelSpec("gpt-4.1", 1_047_576, 32_768, 1.0),
    ModelSpec("gpt-4o", 128_000, 16_384, 1.0),
    ModelSpec("gpt-4-turbo", 128_000, 4_096, 1.0),
    ModelSpec("o3", 200_000, 100_000, 1.0),
    ModelSpec("o4-mini", 200_000, 100_000, 1.0),
    ModelSpec("gemini", 1_048_576, 65_536, 1.15),
)
DEFAULT_MODEL = ModelSpec("", 128_000, 16_384, 1.10)
"""Unknown models: 128k, as the design says, with a cautious factor."""

# Models that offer a 1M window (beta) when the caller asks for it explicitly.
LONG_CONTEXT_WINDOWS: dict[str, int] = {"claude-sonnet-4-5": 1_000_000, "claude-sonnet-4": 1_000_000}

PLAN_CAPS: dict[str, int | None] = {"free": 16_000, "pro": 32_000, "ultra": None}
"""Per-plan window caps (Merlin); ``None`` means the model's own window."""

MAX_OUTPUT_RESERVE = 32_000


def model_spec(model: str) -> ModelSpec:
    """The spec of the longest known prefix of ``model``, else the default."""
    name = model.lower()
    best = DEFAULT_MODEL
    for spec in MODELS:
        if name.startswith(spec.prefix) and len(spec.prefix) > len(best.prefix):
            best = spec
    return best


@dataclass(frozen=True)
class Thresholds:
    """Fractions of the usable budget."""

    soft: float = 0.70
    hard: float = 0.85
    target: float = 0.65  # measured: forward-reference recall at or above truncation (docs/evaluation.md)

    def __post_init__(self) -> None:
        if not 0 < self.target < self.soft <= self.hard <= 1:
            raise InvalidSetting(
                f"thresholds must satisfy 0 < target < soft <= hard <= 1, got target={self.target}, "
                f"soft={self.soft}, hard={self.hard}"
            )


@dataclass(frozen=True)
class Budget:
    """The token figures of one conversation, all in the model's own tokens."""

    context_window: int
    output_reserve: int
    usable: int
    soft: int
    hard: int
    target: int
    safety_factor: float

    def effective(self, counted_tokens: int) -> int:
        """Our cl100k count scaled to the model's tokenizer (rounded up: better early than late)."""
        return math.ceil(counted_tokens * self.safety_factor)

    def percent_of_usable(self, counted_tokens: int) -> float:
        """How full the usable budget is, in percent."""
        return round(100.0 * self.effective(counted_tokens) / self.usable, 1) if self.usable else 100.0


def entry_count_due(live_messages: int, tokens: int, budget: Budget, trigger: int, floor: float) -> bool:
    """Whether the entry-count trigger fires: more than ``trigger`` live messages (0: off), and ``tokens``
    (model tokens) at least ``floor`` x the soft threshold, so a large window is never summarized while
    nearly empty (at 100 messages a 200k conversation can be at a fraction of a percent of its budget)."""
    return trigger > 0 and live_messages > trigger and tokens >= floor * budget.soft


def resolve_window(model: str, plan: str | None, context_window: int | None) -> int:
    """The window a conversation gets: an explicit one, else the model's, capped by its plan."""
    spec = model_spec(model)
    if context_window is not None:
        if context_window < 1024:
            raise InvalidSetting(f"context_window must be at least 1024 tokens, got {context_window}")
        window = context_window
    else:
        window = spec.context_window
    if plan is not None:
        if plan not in PLAN_CAPS:
            raise InvalidSetting(f"unknown plan {plan!r}; expected one of {', '.join(PLAN_CAPS)}")
        cap = PLAN_CAPS[plan]
        if cap is not None:
            window = min(window, cap)
    return window


def output_reserve_for(model: str, window: int) -> int:
    """min(32k, the model's longest output, 25% of the window)."""
    return min(MAX_OUTPUT_RESERVE, model_spec(model).max_output, window // 4)


def make_budget(
    *,
    context_window: int,
    output_reserve: int,
    thresholds: Thresholds,
    safety_factor: float,
) -> Budget:
    """Derive usable, soft, hard and target from a window and its reserve."""
    usable = max(0, context_window - output_reserve)
    return Budget(
        context_window=context_window,
        output_reserve=output_reserve,
        usable=usable,
        soft=round(usable * thresholds.soft),
        hard=round(usable * thresholds.hard),
        target=round(usable * thresholds.target),
        safety_factor=safety_factor,
    )


MIN_FACTOR, MAX_FACTOR = 0.9, 1.6
CALIBRATION_WINDOW = 20


def model_family(model: str) -> str:
    """Models that share a tokenizer share a calibration: claude, gpt, gemini, or the name itself."""
    name = model.lower()
    for family in ("claude", "gemini"):
        if name.startswith(family):
            return family
    if name.startswith(("gpt", "o1", "o3", "o4")):
        return "gpt"
    return name


def calibrated(factor: float, samples: int, counted: int, observed: int) -> float:
    """A bounded running estimate of observed/counted: the mean of the last ~20 calls, clamped.

    One odd call (a cached prompt, a huge image) moves the factor by at most 1/20 of its error, and the
    factor never leaves [0.9, 1.6] whatever the API reports.
    """
    if counted <= 0 or observed <= 0:
        return factor
    ratio = min(MAX_FACTOR, max(MIN_FACTOR, observed / counted))
    # The table's prior counts as one observation, so the first real call moves the factor halfway.
    weight = 1.0 / min(samples + 2, CALIBRATION_WINDOW)
    return round(min(MAX_FACTOR, max(MIN_FACTOR, factor + (ratio - factor) * weight)), 4)
