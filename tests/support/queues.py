"""A ``TaskQueue`` that records what a sweep enqueued instead of sending it (sweep logic tests only).

Tests of the real pipeline use the Celery broker and a worker process; this one isolates the
selection rules so each can be checked against a database directly.
"""

from __future__ import annotations

from collections.abc import Sequence


class RecordingQueue:
    """Keeps every (conversation_id, tick_key) enqueued, in order."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, str]] = []
        self.urgent: list[tuple[str, str]] = []

    def enqueue_tick(self, conversation_id: str, tick_key: str, *, urgent: bool = False) -> None:
        """Record one tick (urgent ones, the guard's, also in ``urgent``)."""
        self.sent.append((conversation_id, tick_key))
        if urgent:
            self.urgent.append((conversation_id, tick_key))

    def enqueue_ticks(self, ticks: Sequence[tuple[str, str]]) -> None:
        """Record a sweep's ticks, in order."""
        self.sent.extend(ticks)
