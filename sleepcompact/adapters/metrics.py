"""Prometheus metrics, fed by the canonical events of ``sleepcompact.telemetry``.

``Metrics`` owns its counters and histograms in a registry of its own (never prometheus_client's global
default, so two instances, or a test and a worker, never share state); ``Metrics.observe`` is a
telemetry observer that turns each ``compaction``, ``llm_call``, ``guard`` and ``sleep_tick`` event
into increments and observations. Nothing here runs unless a process subscribes it: the worker does
when ``SLEEPCOMPACT_METRICS_PORT`` is set (see ``worker.metrics``), and an application can for its
guard calls with ``telemetry.subscribe(Metrics(prometheus_client.REGISTRY).observe)``.

Celery's prefork pool runs tasks in child processes, so the worker uses prometheus_client's
multiprocess mode: every process writes its values to files in ``PROMETHEUS_MULTIPROC_DIR`` and the
scrape (``multiprocess_registry``) sums them. That variable must be set before prometheus_client is
first imported, which ``multiprocess_enabled`` lets the caller verify.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any
from wsgiref.simple_server import WSGIServer

from prometheus_client import CollectorRegistry, Counter, Histogram, start_http_server, values
from prometheus_client.multiprocess import MultiProcessCollector

LLM_BUCKETS = (0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 20.0, 40.0, 60.0, 120.0)
"""Seconds: one summary takes seconds; the guard's deadline is 20 s, a worker's call may take minutes."""

COMPACTION_BUCKETS = (0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 20.0, 40.0, 60.0, 120.0, 300.0)
"""Seconds: LLM-free compactions take milliseconds, those with a summary take the LLM's time."""

QUEUE_LAG_BUCKETS = (0.1, 0.5, 1.0, 5.0, 15.0, 60.0, 300.0, 900.0, 1800.0, 3600.0, 3 * 3600.0, 8 * 3600.0)
"""Seconds: an emergency tick should start within a second, a night's sweep may queue for hours."""


def multiprocess_enabled() -> bool:
    """Whether prometheus_client chose multiprocess values (``PROMETHEUS_MULTIPROC_DIR`` set at import)."""
    return values.ValueClass is not values.MutexValue


class Metrics:
    """The counters and histograms, and the telemetry observer that updates them."""

    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry if registry is not None else CollectorRegistry()
        self._compaction_metrics(self.registry)
        self._llm_metrics(self.registry)
        self._pipeline_metrics(self.registry)

    def _compaction_metrics(self, r: CollectorRegistry) -> None:
        self.compactions = Counter(
            "sleepcompact_compactions",
            "Compactions by trigger and outcome (applied, discarded, failed, stalled, noop, backoff, "
            "deferred).",
            ["trigger", "outcome"],
            registry=r,
        )
        self.tokens_saved = Counter(
            "sleepcompact_tokens_saved",
            "Tokens taken out of live contexts by applied compactions, by trigger and ladder step.",
            ["trigger", "step"],
            registry=r,
        )
        self.compaction_seconds = Histogram(
            "sleepcompact_compaction_seconds",
            "Wall time of one compaction, LLM call included.",
            ["trigger"],
            buckets=COMPACTION_BUCKETS,
            registry=r,
        )

    def _llm_metrics(self, r: CollectorRegistry) -> None:
        self.llm_calls = Counter(
            "sleepcompact_llm_calls",
            "LLM requests by model, purpose (summary, rescore) and outcome (ok, invalid, *_error).",
            ["model", "purpose", "outcome"],
            registry=r,
        )
        self.llm_seconds = Histogram(
            "sleepcompact_llm_seconds",
            "Latency of one LLM request (batch results have none).",
            ["model"],
            buckets=LLM_BUCKETS,
            registry=r,
        )
        self.llm_cost = Counter(
            "sleepcompact_llm_cost_usd",
            "Estimated LLM spend in USD, at list prices (batches at half).",
            ["model"],
            registry=r,
        )
        self.llm_tokens = Counter(
            "sleepcompact_llm_tokens",
            "LLM tokens billed, by model and direction (input, output).",
            ["model", "direction"],
            registry=r,
        )

    def _pipeline_metrics(self, r: CollectorRegistry) -> None:
        self.guard_decisions = Counter(
            "sleepcompact_guard_decisions",
            "prepare_context calls by what the guard did (none, sleep_requested, emergency_compacted, "
            "fallback_compacted, overflow).",
            ["action"],
            registry=r,
        )
        self.queue_lag = Histogram(
            "sleepcompact_queue_lag_seconds",
            "How long a sleep tick waited between being queued and a worker starting it.",
            buckets=QUEUE_LAG_BUCKETS,
            registry=r,
        )
        self.sleep_ticks = Counter(
            "sleepcompact_sleep_ticks",
            "Sleep ticks by outcome (done, already_done, busy, error).",
            ["outcome"],
            registry=r,
        )

    def observe(self, event: str, fields: Mapping[str, Any]) -> None:
        """The telemetry observer: one event in, its counters and histograms updated."""
        if event == "compaction":
            trigger = str(fields.get("trigger"))
            self.compactions.labels(trigger, str(fields.get("outcome"))).inc()
            for step, saved in (fields.get("steps_saved") or {}).items():
                if saved > 0:
                    self.tokens_saved.labels(trigger, str(step)).inc(saved)
            if fields.get("duration_ms") is not None:
                self.compaction_seconds.labels(trigger).observe(fields["duration_ms"] / 1000)
        elif event == "llm_call":
            model = str(fields.get("model"))
            self.llm_calls.labels(model, str(fields.get("purpose")), str(fields.get("outcome"))).inc()
            if fields.get("ms") is not None:
                self.llm_seconds.labels(model).observe(fields["ms"] / 1000)
            self.llm_cost.labels(model).inc(max(0.0, float(fields.get("cost_usd") or 0.0)))
            self.llm_tokens.labels(model, "input").inc(max(0, int(fields.get("input_tokens") or 0)))
            self.llm_tokens.labels(model, "output").inc(max(0, int(fields.get("output_tokens") or 0)))
        elif event == "guard":
            self.guard_decisions.labels(str(fields.get("action"))).inc()
        elif event == "sleep_tick":
            self.sleep_ticks.labels(str(fields.get("outcome"))).inc()
            if fields.get("queue_lag_s") is not None:
                self.queue_lag.observe(float(fields["queue_lag_s"]))


def multiprocess_registry(path: str) -> CollectorRegistry:
    """A registry that, when scraped, sums the values every process wrote under ``path``."""
    registry = CollectorRegistry()
    MultiProcessCollector(registry, path=path)  # type: ignore[no-untyped-call]
    return registry


def start_metrics_server(
    port: int, registry: CollectorRegistry, addr: str = "0.0.0.0"
) -> tuple[WSGIServer, threading.Thread]:
    """Serve ``registry`` at ``http://addr:port/metrics`` from a daemon thread; returns the server.

    All interfaces by default, so Prometheus can scrape a container from outside; the endpoint has no
    authentication and only figures (no content, no ids), but keep the port off public networks.
    """
    server, thread = start_http_server(port, addr=addr, registry=registry)
    return server, thread


__all__ = ["Metrics", "multiprocess_enabled", "multiprocess_registry", "start_metrics_server"]
