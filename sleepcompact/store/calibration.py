"""The tokenizer calibration in SQL: one learned factor per model family."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from sleepcompact.domain.budget import calibrated
from sleepcompact.store.models import ModelCalibration


class SqlCalibration:
    """``CalibrationRepository`` over one SQLAlchemy session."""

    def __init__(self, session: Session) -> None:
        self.session = session

    def factors(self) -> dict[str, float]:
        """The learned tokenizer factor of every model family seen so far."""
        return {r.family: r.factor for r in self.session.scalars(select(ModelCalibration))}

    def record(self, family: str, counted: int, observed: int, now: datetime, default: float) -> float:
        """Fold one observation (our count vs the API's input_tokens) into the family's factor."""
        row = self.session.get(ModelCalibration, family, with_for_update=True)
        if row is None:
            row = ModelCalibration(family=family, factor=default, samples=0, updated_at=now)
            self.session.add(row)
        row.factor = calibrated(row.factor, row.samples, counted, observed)
        row.samples += 1
        row.updated_at = now
        self.session.flush()
        return row.factor
