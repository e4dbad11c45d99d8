"""The beat app: the shared Celery configuration plus the schedule, built on demand."""

from __future__ import annotations

from celery import Celery

from sleepcompact.adapters.queue import beat_schedule, make_celery
from sleepcompact.config import Settings


def create_beat_app(settings: Settings | None = None) -> Celery:
    """A Celery app carrying the nightly sweep (cron, time zone), the idle sweep and the batch poll.

    Beat keeps its last run times in ``settings.beat_schedule_file``: after a restart it sends a nightly
    sweep it missed at once. If that file is lost, the idle sweep catches the night up within minutes.
    """
    settings = settings or Settings.from_env()
    app = make_celery(settings, "sleepcompact-beat")
    app.conf.beat_schedule = beat_schedule(settings)
    return app
