"""``python -m worker``: run the Celery worker on the emergency, sleep and admin queues."""

from __future__ import annotations

import sys

from sleepcompact.config import Settings
from sleepcompact.logs import configure_logging
from worker.app import create_app


def main(argv: list[str] | None = None) -> None:
    """Start the worker; extra arguments go to ``celery worker`` (e.g. ``--concurrency 4``)."""
    settings = Settings.from_env()
    configure_logging(settings)
    app = create_app(settings)
    args = [
        "worker",
        "--queues",
        "emergency,sleep,admin",
        "--loglevel",
        settings.log_level,
        "--without-gossip",
        "--without-mingle",
        *(sys.argv[1:] if argv is None else argv),
    ]
    app.worker_main(args)


if __name__ == "__main__":
    main()
