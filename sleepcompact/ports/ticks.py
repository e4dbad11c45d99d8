"""The sleep aggregate's port: keyed ticks, the conversation lease, sleep requests and due selections."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any, Protocol

from sleepcompact.domain.records import ConversationRecord
from sleepcompact.domain.schedule import TickRecord


class TickRepository(Protocol):
    """Ticks, leases and what the sweeps select, inside one transaction."""

    def get(self, conversation_id: str, tick_key: str) -> TickRecord | None:
        """A sleep tick by key."""
        ...

    def of(self, conversation_id: str) -> list[TickRecord]:
        """Every sleep tick of a conversation, oldest first."""
        ...

    def start(self, conversation_id: str, tick_key: str, now: datetime) -> bool:
        """Mark a tick running (creating it if needed); False when it is already done."""
        ...

    def finish(self, conversation_id: str, tick_key: str, result: dict[str, Any], now: datetime) -> bool:
        """Record a finished tick (the conversation's last sleep moves on); False, writing nothing, when
        another delivery already finished it."""
        ...

    def queue(self, orders: Sequence[tuple[str, str]], now: datetime) -> list[tuple[str, str]]:
        """Record ticks as queued; returns the (conversation_id, tick_key) pairs that were new."""
        ...

    def stale(self, queued_before: datetime, running_before: datetime, limit: int) -> list[tuple[str, str]]:
        """Ticks queued since before ``queued_before``, or running since before ``running_before``."""
        ...

    def requeue(self, orders: Sequence[tuple[str, str]], now: datetime) -> None:
        """Restart the stale clock of ticks enqueued again."""
        ...

    def acquire_lease(self, conversation_id: str, owner: str, now: datetime, seconds: int) -> bool:
        """Take or extend the conversation's lease; False when another owner holds it."""
        ...

    def release_lease(self, conversation_id: str, owner: str) -> None:
        """Give the lease back if we hold it."""
        ...

    def request_sleep(self, conversation_id: str, now: datetime) -> None:
        """Ask the idle sweep for a tick (the first request wins)."""
        ...

    def request_sleep_debounced(self, conversation_id: str, now: datetime, interval_s: int) -> bool:
        """Record a sleep request unless one is newer than ``interval_s``; True when recorded."""
        ...

    def touch(self, conversation_id: str, now: datetime) -> None:
        """Record agent activity that added no message."""
        ...

    def due_nightly(self, night_start: datetime, cursor: str, limit: int) -> tuple[list[str], str | None]:
        """A batch of ids due for tonight's tick (start with cursor ""), and the next cursor or None."""
        ...

    def due_idle(
        self, idle_before: datetime, active_after: datetime, cursor: str, limit: int
    ) -> tuple[list[ConversationRecord], str | None]:
        """A batch of conversations asking for sleep or gone quiet, and the next cursor or None."""
        ...
