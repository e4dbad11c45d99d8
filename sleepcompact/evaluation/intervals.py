"""How sure a difference in recall is: a paired bootstrap over conversations.

Two policies replay the same conversations, so their recalls differ conversation by conversation; the
conversations, not the references, are the independent draws (a long conversation's references rise
and fall together). The interval resamples whole conversations with replacement and recomputes both
recalls on each resample (recall is a ratio of sums, so a long conversation weighs more), with a fixed
seed, so a report is reproducible.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

DRAWS = 2_000
LEVEL = 0.95


@dataclass(frozen=True)
class Difference:
    """Recall of one policy minus another's over the same conversations, with its interval."""

    difference: float
    low: float
    high: float
    conversations: int

    def to_dict(self) -> dict[str, float | int]:
        """JSON-ready, rounded like the recalls."""
        return {
            "difference": round(self.difference, 4),
            "low": round(self.low, 4),
            "high": round(self.high, 4),
            "level": LEVEL,
            "conversations": self.conversations,
        }


def _recall(pairs: Sequence[tuple[int, int]], picks: Sequence[int]) -> float:
    found = sum(pairs[i][0] for i in picks)
    total = sum(pairs[i][1] for i in picks)
    return found / total if total else 1.0


def recall_difference(
    a: Sequence[tuple[int, int]], b: Sequence[tuple[int, int]], *, draws: int = DRAWS, seed: int = 0
) -> Difference:
    """Recall of ``a`` minus recall of ``b`` (each a (references in context, references) pair per
    conversation, in the same order) and its ``LEVEL`` percentile bootstrap interval."""
    if len(a) != len(b):
        raise ValueError(f"the two policies replayed {len(a)} and {len(b)} conversations")
    every = range(len(a))
    point = _recall(a, every) - _recall(b, every)
    if not a:
        return Difference(point, point, point, 0)
    rng = random.Random(seed)
    n = len(a)
    spread = sorted(
        _recall(a, picks) - _recall(b, picks) for picks in (rng.choices(every, k=n) for _ in range(draws))
    )
    tail = (1 - LEVEL) / 2
    return Difference(point, spread[int(tail * draws)], spread[min(draws - 1, int((1 - tail) * draws))], n)
