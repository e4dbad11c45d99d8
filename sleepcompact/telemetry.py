"""The canonical events: one structlog line each, and the same figures handed to in-process observers.

Services and adapters call ``emit("compaction", ...)`` (or ``"guard"``, ``"sleep_tick"``,
``"llm_call"``) once per thing that happened. The line is logged at ``info`` (``warning`` when the
caller says so), and every subscribed observer gets ``(event, fields)``, whatever the log level:
metrics must not disappear because an operator turned logging down. Observers run inline, in the
caller's thread, so they must be quick (a counter increment); one that raises never breaks the caller:
its exception is swallowed and logged once per observer.

The library stays free of any metrics library: ``sleepcompact.adapters.metrics`` subscribes its
Prometheus observer when a process (the worker) turns metrics on.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from typing import Any, Literal

from sleepcompact.logs import get_logger

log = get_logger("sleepcompact.telemetry")

Observer = Callable[[str, Mapping[str, Any]], None]
"""Called as ``observer(event, fields)``; ``fields`` must be treated as read-only."""

Level = Literal["debug", "info", "warning", "error"]

_lock = threading.Lock()
# A tuple replaced under the lock: ``emit`` iterates a snapshot without taking the lock.
_observers: tuple[Observer, ...] = ()
_failed: list[Observer] = []  # compared by equality: bound methods are re-created on access


def subscribe(observer: Observer) -> None:
    """Call ``observer`` for every event from now on (subscribing the same one twice is a no-op)."""
    global _observers
    with _lock:
        if observer not in _observers:
            _observers = (*_observers, observer)


def unsubscribe(observer: Observer) -> None:
    """Stop calling ``observer`` (unknown observers are ignored)."""
    global _observers
    with _lock:
        _observers = tuple(o for o in _observers if o != observer)
        _failed[:] = [o for o in _failed if o != observer]


def observers() -> tuple[Observer, ...]:
    """The observers currently subscribed."""
    return _observers


def emit(event: str, *, level: Level = "info", **fields: Any) -> None:
    """Log the canonical line ``event`` with ``fields`` and pass both to every observer."""
    getattr(log, level)(event, **fields)
    for observer in _observers:
        try:
            observer(event, fields)
        except Exception as exc:
            # A broken observer must not fail a compaction or a request; one line says so, not one per event.
            with _lock:
                first = observer not in _failed
                if first:
                    _failed.append(observer)
            if first:
                log.warning(
                    "telemetry_observer_failed",
                    observer=getattr(observer, "__qualname__", repr(observer)),
                    failed_event=event,
                    error=type(exc).__name__,
                )


__all__ = ["Observer", "emit", "observers", "subscribe", "unsubscribe"]
