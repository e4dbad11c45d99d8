"""A stand-in for the ``time`` module of the compaction services: ``monotonic`` moves only when a test
moves it, so a recorded duration is exact and no test needs a wall-clock limit."""

from __future__ import annotations

import pytest

from sleepcompact.services import compaction, compaction_writes


class StoppedClock:
    """``time.monotonic`` at ``now`` seconds, moved by hand (``clock.now += 1.5``)."""

    def __init__(self) -> None:
        self.now = 1000.0

    def monotonic(self) -> float:
        return self.now


def stopped_compaction_clock(monkeypatch: pytest.MonkeyPatch) -> StoppedClock:
    """A clock the compaction pipeline and its apply both read instead of ``time``."""
    clock = StoppedClock()
    monkeypatch.setattr(compaction, "time", clock)
    monkeypatch.setattr(compaction_writes, "time", clock)
    return clock
