"""Night boundaries and tick keys where mutation testing found the suite blind (docs/mutation.md).

Every sweep of one night must compute the same night and the same key, whatever the second it runs at
and whatever the time zone of the host; a conversation is due exactly when the rule says.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

from sleepcompact.domain.schedule import TickRecord, idle_key, night_of, not_due_tonight, request_key

NEW_YORK = ZoneInfo("America/New_York")


def test_a_sweep_seconds_after_the_sweep_time_starts_the_night_on_the_minute() -> None:
    now = datetime(2026, 3, 10, 3, 30, 41, 123456, tzinfo=NEW_YORK)
    night = night_of(now, "America/New_York", 3, 30)
    assert night.start == datetime(2026, 3, 10, 7, 30, tzinfo=UTC)
    assert night.key == "night-2026-03-10"


def test_hours_after_the_sweep_time_the_night_starts_at_its_hour_and_minute_not_the_clocks() -> None:
    now = datetime(2026, 1, 15, 5, 45, 12, tzinfo=NEW_YORK)
    night = night_of(now, "America/New_York", 3, 30)
    assert night.start == datetime(2026, 1, 15, 8, 30, tzinfo=UTC)  # 03:30 EST
    assert night.key == "night-2026-01-15"


def test_a_sweep_at_the_exact_sweep_time_starts_tonight() -> None:
    now = datetime(2026, 1, 15, 3, 30, tzinfo=NEW_YORK)
    assert night_of(now, "America/New_York", 3, 30).key == "night-2026-01-15"


def test_before_the_sweep_time_the_night_is_yesterdays_at_the_local_hour_and_minute() -> None:
    now = datetime(2026, 1, 15, 2, 10, 5, tzinfo=NEW_YORK)
    night = night_of(now, "America/New_York", 3, 30)
    assert night.start == datetime(2026, 1, 14, 8, 30, tzinfo=UTC)  # 03:30 EST the day before
    assert night.key == "night-2026-01-14"


def test_the_night_is_the_same_on_a_host_in_another_time_zone(host_in_tokyo: None) -> None:
    now = datetime(2026, 1, 15, 2, 10, 5, tzinfo=NEW_YORK)
    night = night_of(now, "America/New_York", 3, 30)
    assert night.start == datetime(2026, 1, 14, 8, 30, tzinfo=UTC)
    assert night.start.utcoffset() == timedelta(0)


def test_tick_keys_name_utc_whatever_the_hosts_time_zone(host_in_tokyo: None) -> None:
    moment = datetime(2026, 11, 24, 23, 15, 7, 250000, tzinfo=UTC)
    assert idle_key(moment) == "idle-20261124T231507.250000"
    assert request_key(moment) == "request-20261124T231507.250000"


def test_a_conversation_created_exactly_at_the_sweep_time_waits_for_the_next_night() -> None:
    start = datetime(2026, 11, 24, 3, 0, tzinfo=UTC)
    reason = not_due_tonight(start, start, None, start)
    assert reason is not None and "due from the next night" in reason
    assert not_due_tonight(start - timedelta(microseconds=1), start, None, start) is None


def test_activity_at_the_very_instant_of_the_last_sleep_is_not_new_activity() -> None:
    night = datetime(2026, 11, 24, 3, 0, tzinfo=UTC)
    slept = night - timedelta(days=1)
    created = slept - timedelta(days=3)
    reason = not_due_tonight(created, slept, slept, night)
    assert reason is not None and reason.startswith("no activity since its last sleep")
    assert not_due_tonight(created, slept + timedelta(microseconds=1), slept, night) is None


def test_a_tick_prints_as_a_json_ready_dict() -> None:
    queued = datetime(2026, 1, 15, 8, 30, tzinfo=UTC)
    tick = TickRecord("conv-1", "night-2026-01-15", "done", queued, queued, queued, {"compacted": True})
    assert tick.to_dict() == {
        "conversation_id": "conv-1",
        "tick_key": "night-2026-01-15",
        "status": "done",
        "queued_at": "2026-01-15T08:30:00+00:00",
        "started_at": "2026-01-15T08:30:00+00:00",
        "finished_at": "2026-01-15T08:30:00+00:00",
        "result": {"compacted": True},
    }
