"""The task queue's port: where sleep ticks are sent (the Celery broker in production)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol


class TaskQueue(Protocol):
    """Where sweeps and the guard send sleep ticks."""

    def enqueue_tick(self, conversation_id: str, tick_key: str, *, urgent: bool = False) -> None:
        """Send one ``sleepcompact.sleep_tick`` (on the ``emergency`` queue when ``urgent``)."""
        ...

    def enqueue_ticks(self, ticks: Sequence[tuple[str, str]]) -> None:
        """Send a sweep's ``(conversation_id, tick_key)`` ticks to the ``sleep`` queue, in as few round
        trips as the broker allows (new in 0.3: a queue without it gets ``enqueue_tick`` per tick)."""
        ...
