"""``python -m worker``: run the Celery worker on the emergency, sleep and admin queues."""

from __future__ import annotations

import socket
import sys

from celery import Celery

from sleepcompact.config import Settings
from sleepcompact.logs import configure_logging
from worker.app import create_app


def ping(app: Celery) -> int:
    """Exit status 0 when this host's worker answers a control ping (the container healthcheck)."""
    replies = app.control.ping(destination=[f"celery@{socket.gethostname()}"], timeout=5.0)
    return 0 if replies else 1


def main(argv: list[str] | None = None) -> None:
    """Start the worker; extra arguments go to ``celery worker`` (e.g. ``--concurrency 4``).

    ``python -m worker ping`` instead checks that the worker on this host is alive.
    """
    settings = Settings.from_env()
    configure_logging(settings)
    app = create_app(settings)
    extra = sys.argv[1:] if argv is None else argv
    if extra[:1] == ["ping"]:
        sys.exit(ping(app))
    args = [
        "worker",
        "--queues",
        "emergency,sleep,admin",
        "--loglevel",
        settings.log_level,
        "--without-gossip",
        "--without-mingle",
        *extra,
    ]
    app.worker_main(args)


if __name__ == "__main__":
    main()
