"""``python -m worker``: run the Celery worker on the emergency, sleep and admin queues."""

from __future__ import annotations

import json
import os
import socket
import sys
from datetime import UTC, datetime
from typing import Any

import celery.apps.worker
from celery import Celery

from sleepcompact.config import Settings
from sleepcompact.logs import configure_logging, is_json
from worker import metrics
from worker.app import create_app


def ping(app: Celery) -> int:
    """Exit status 0 when this host's worker answers a control ping (the container healthcheck)."""
    replies = app.control.ping(destination=[f"celery@{socket.gethostname()}"], timeout=5.0)
    return 0 if replies else 1


def json_say(msg: str, f: Any = None) -> None:
    """Celery's signal-handler notices ("worker: Warm shutdown (MainProcess)") as one JSON line.

    Celery prints them with ``safe_say``, a bare write from inside the signal handler that bypasses
    logging (a handler interrupted mid-write could deadlock on its lock). This keeps that property (one
    ``os.write``, no lock, no logging) and only changes the format, so off a terminal the worker's whole
    output stays one JSON object a line.
    """
    timestamp = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    line = {"event": msg.strip(), "level": "warning", "logger": "celery.apps.worker", "timestamp": timestamp}
    os.write(sys.__stderr__.fileno() if sys.__stderr__ else 2, (json.dumps(line) + "\n").encode())


def main(argv: list[str] | None = None) -> None:
    """Start the worker; extra arguments go to ``celery worker`` (e.g. ``--concurrency 4``).

    ``python -m worker ping`` instead checks that the worker on this host is alive. With
    ``SLEEPCOMPACT_METRICS_PORT`` set, Prometheus metrics are served on that port (``worker.metrics``).
    """
    settings = Settings.from_env()
    configure_logging(settings)
    app = create_app(settings)
    extra = sys.argv[1:] if argv is None else argv
    if extra[:1] == ["ping"]:
        sys.exit(ping(app))
    args = [
        *(["--quiet"] if is_json(settings) else []),  # the banner is not a JSON line
        "worker",
        "--queues",
        "emergency,sleep,admin",
        "--loglevel",
        settings.log_level,
        "--without-gossip",
        "--without-mingle",
        *extra,
    ]
    if is_json(settings):
        celery.apps.worker.safe_say = json_say  # looked up at call time by Celery's signal handlers
    # Before worker_main: the pool forks its children there, and they must inherit the metrics setup.
    multiproc_dir = metrics.enable(settings)
    try:
        app.worker_main(args)
    finally:
        metrics.disable(multiproc_dir)


if __name__ == "__main__":
    main()
