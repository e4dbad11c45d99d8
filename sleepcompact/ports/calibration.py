"""The tokenizer calibration's port: one learned factor per model family."""

from __future__ import annotations

from datetime import datetime
from typing import Protocol


class CalibrationRepository(Protocol):
    """Learned tokenizer factors, inside one transaction."""

    def factors(self) -> dict[str, float]:
        """Learned tokenizer factors by model family."""
        ...

    def record(self, family: str, counted: int, observed: int, now: datetime, default: float) -> float:
        """Fold one observation (our count against the API's) into a family's factor; the new factor."""
        ...
