"""The worker's Prometheus endpoint, when ``SLEEPCOMPACT_METRICS_PORT`` is set (0, the default: off).

Celery's prefork pool runs tasks in child processes, whose counters a server in the main process cannot
read from memory. So ``enable`` runs in the main process before the pool forks: it points
``PROMETHEUS_MULTIPROC_DIR`` at a fresh temporary directory (before prometheus_client is first
imported: it picks its value storage at import), subscribes the metrics observer (the children inherit
the subscription through the fork, each writing its own files there), and serves the sum of every
process's files on ``0.0.0.0:PORT/metrics``. ``disable`` removes the directory when the worker exits.

With ``--pool solo`` or ``threads`` the tasks run in the main process and the same files serve them.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from typing import Any

import structlog
from celery.signals import worker_process_shutdown

from sleepcompact import telemetry
from sleepcompact.config import Settings

log = structlog.get_logger(__name__)

MULTIPROC_ENV = "PROMETHEUS_MULTIPROC_DIR"


def enable(settings: Settings) -> str | None:
    """Start the endpoint when ``settings.metrics_port`` > 0; returns the directory to remove at exit.

    Raises ``RuntimeError`` when prometheus_client was imported before this call (its values would stay
    per process and the children's would never reach the scrape), and ``OSError`` when the port is taken.
    """
    if settings.metrics_port <= 0:
        return None
    # Always a fresh directory: files left by an earlier run would be summed into this one's counters.
    path = tempfile.mkdtemp(prefix="sleepcompact-metrics-")
    os.environ[MULTIPROC_ENV] = path
    from sleepcompact.adapters import metrics  # prometheus_client is first imported here, on purpose

    try:
        if not metrics.multiprocess_enabled():
            raise RuntimeError(f"prometheus_client was imported before the worker set {MULTIPROC_ENV}")
        metrics.start_metrics_server(settings.metrics_port, metrics.multiprocess_registry(path))
    except BaseException:
        shutil.rmtree(path, ignore_errors=True)
        raise
    telemetry.subscribe(metrics.Metrics().observe)
    worker_process_shutdown.connect(_process_shutdown, weak=False)
    log.info("metrics_server", addr="0.0.0.0", port=settings.metrics_port, multiproc_dir=path)
    return path


def disable(path: str | None) -> None:
    """Remove the multiprocess directory (the worker has stopped; nothing reads it any more)."""
    if path:
        shutil.rmtree(path, ignore_errors=True)


def _process_shutdown(pid: int | None = None, **_: Any) -> None:
    """A pool child is exiting: let prometheus_client drop its per-process files that must not outlive it.

    Only live gauges are dropped; counters and histograms of dead children keep counting in the sum,
    as they should. A child killed outright never gets here, which costs nothing while we keep no gauges.
    """
    from prometheus_client import multiprocess

    multiprocess.mark_process_dead(pid or os.getpid())  # type: ignore[no-untyped-call]
