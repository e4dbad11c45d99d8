"""The worker's Celery app: the shared configuration plus the tasks, built per process."""

from __future__ import annotations

from celery import Celery

from sleepcompact.adapters.queue import make_celery
from sleepcompact.config import Settings
from worker.tasks import register


def create_app(settings: Settings | None = None) -> Celery:
    """A Celery app with every ``sleepcompact.*`` task registered (settings from the environment)."""
    settings = settings or Settings.from_env()
    app = make_celery(settings)
    register(app, settings)
    return app
