"""Moments inside one night's sweep window, whatever the hour the tests run at."""

from __future__ import annotations

from datetime import datetime, timedelta

from sleepcompact.config import Settings
from sleepcompact.services.clock import utcnow
from sleepcompact.services.sweeps import night_for


def night_after(days: int = 1, settings: Settings | None = None) -> datetime:
    """One hour after the nightly sweep time of a night at least ``days`` days from now.

    A later beat of the same night (minutes, or an hour, later) stays in that night. ``utcnow() + 1 day,
    1 hour`` did not: run in the hour before the sweep time (02:00 to 03:00 UTC with the default cron),
    the beat five minutes later fell into the next night and sent every tick again."""
    start = night_for(settings or Settings(), utcnow() + timedelta(days=days + 1)).start
    return start + timedelta(hours=1)
