"""When a night is, what a sweep calls the tick it enqueues, and a tick as stored (standard library only)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from sleepcompact.domain.json_shapes import json_ready


@dataclass(frozen=True)
class Night:
    """The most recent nightly sweep time at or before some moment, and the tick key of that night."""

    start: datetime  # in UTC
    key: str


def night_of(now: datetime, timezone: str, hour: int, minute: int) -> Night:
    """The night whose sweep time (``hour:minute`` local) is the latest one not after ``now``.

    The key names the local date of that sweep time, so every sweep of one night (the cron, a second
    beat, a catch-up an hour later) computes the same key and the unique (conversation, key) dedupes.
    Around a DST change the wall-clock time is resolved by ``zoneinfo``'s fold=0 rule.
    """
    zone = ZoneInfo(timezone)
    local = now.astimezone(zone)
    start = local.replace(hour=hour, minute=minute, second=0, microsecond=0)
    if start > local:
        day = (start - timedelta(days=1)).date()
        start = datetime(day.year, day.month, day.day, hour, minute, tzinfo=zone)
    return Night(start=start.astimezone(UTC), key=f"night-{start.date().isoformat()}")


def not_due_tonight(
    created_at: datetime, last_activity_at: datetime, last_sleep_at: datetime | None, night_start: datetime
) -> str | None:
    """Why the nightly sweep skips a conversation (None: it is due). The rule of ``due_nightly``: active
    since its last sleep, which was before tonight's sweep time; never slept and created before it."""
    if last_sleep_at is None:
        if created_at < night_start:
            return None
        return (
            f"created after tonight's sweep time ({night_start:%Y-%m-%d %H:%M %Z}): due from the next night"
        )
    if last_sleep_at >= night_start:
        return f"already slept tonight ({last_sleep_at:%Y-%m-%d %H:%M %Z})"
    if last_activity_at <= last_sleep_at:
        return f"no activity since its last sleep ({last_sleep_at:%Y-%m-%d %H:%M %Z})"
    return None


def idle_key(last_activity_at: datetime) -> str:
    """One idle tick per quiet spell: new activity makes a new key, a repeated sweep the same one."""
    return f"idle-{last_activity_at.astimezone(UTC):%Y%m%dT%H%M%S.%f}"


def request_key(requested_at: datetime) -> str:
    """One tick per request from the guard."""
    return f"request-{requested_at.astimezone(UTC):%Y%m%dT%H%M%S.%f}"


@dataclass(frozen=True)
class TickRecord:
    """One sleep tick of a conversation: its key, where it is, and what it did once done."""

    conversation_id: str
    tick_key: str
    status: str  # queued, running, done
    queued_at: datetime  # when it was last enqueued (a sweep re-enqueueing a stale tick moves it)
    started_at: datetime | None = None
    finished_at: datetime | None = None
    result: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return dict(json_ready(self))
