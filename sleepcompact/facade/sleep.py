"""``mem.sleep``: sleep ticks and the sweeps that send them."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime

from sleepcompact.bootstrap import Container
from sleepcompact.domain.schedule import TickRecord
from sleepcompact.ports import TaskQueue
from sleepcompact.services import sleep, sweeps
from sleepcompact.services.clock import utcnow
from sleepcompact.services.sleep import TickResult
from sleepcompact.services.sweeps import SweepReport


def manual_key(now: datetime | None = None) -> str:
    """A fresh tick key for a tick asked for by hand (every call runs)."""
    return f"manual-{(now or utcnow()):%Y%m%dT%H%M%S%f}"


class Sleep:
    """Sleep ticks and sweeps (reached as ``mem.sleep``)."""

    def __init__(self, deps: Container) -> None:
        self._deps = deps

    def tick(self, conversation_id: str, tick_key: str | None = None) -> TickResult:
        """Consolidate the journal, then compact if over the soft threshold or the entry-count trigger.

        The same ``tick_key`` runs once (sweeps pass the night's date); without one, every call runs.
        """
        deps = self._deps
        key = tick_key or manual_key()
        return sleep.sleep_tick(deps, conversation_id, key, sleep.helpers(deps, batch=False))

    def run_tick(self, conversation_id: str, tick_key: str) -> TickResult:
        """What the worker's ``sleepcompact.sleep_tick`` does (via batches when nightly batches are on)."""
        deps = self._deps
        return sleep.sleep_tick(deps, conversation_id, tick_key, sleep.helpers(deps, batch=True))

    def sweep_nightly(
        self,
        *,
        now: datetime | None = None,
        conversation_id: str | None = None,
        queue: TaskQueue | None = None,
    ) -> SweepReport:
        """Enqueue tonight's tick for every due conversation (once per night, however often it runs)."""
        deps = self._deps
        return sweeps.sweep_nightly(
            deps, queue or deps.queue, now=now or utcnow(), conversation_id=conversation_id
        )

    def sweep_idle(self, *, now: datetime | None = None, queue: TaskQueue | None = None) -> SweepReport:
        """Enqueue ticks for idle conversations over soft, those the guard asked for, and a missed night."""
        deps = self._deps
        return sweeps.sweep_idle(deps, queue or deps.queue, now=now or utcnow())

    def tick_now(
        self, conversation_ids: list[str], tick_key: str | None = None, *, queue: TaskQueue | None = None
    ) -> SweepReport:
        """Enqueue a tick for each conversation now, due or not (a fresh key unless one is given)."""
        now = utcnow()
        deps = self._deps
        return sweeps.tick_now(
            deps, queue or deps.queue, conversation_ids, tick_key or manual_key(now), now=now
        )

    def request(self, conversation_id: str) -> None:
        """Ask for a sleep tick soon: the next idle sweep enqueues it (the guard does this over soft)."""
        sweeps.request_sleep(self._deps, conversation_id, now=utcnow())

    def ticks(self, conversation_id: str) -> list[TickRecord]:
        """The conversation's sleep ticks (key, status, what each did), oldest first."""
        return sweeps.list_ticks(self._deps, conversation_id)


class InlineQueue:
    """A ``TaskQueue`` that runs each tick at once in this process (``sleepcompact sleep --inline``)."""

    def __init__(self, run: Callable[[str, str], TickResult]) -> None:
        self._run = run
        self.results: dict[str, TickResult] = {}

    def enqueue_tick(self, conversation_id: str, tick_key: str, *, urgent: bool = False) -> None:
        """Run the tick now and keep its result."""
        self.results[conversation_id] = self._run(conversation_id, tick_key)

    def enqueue_ticks(self, ticks: Sequence[tuple[str, str]]) -> None:
        """Run each tick now, in order."""
        for conversation_id, tick_key in ticks:
            self.enqueue_tick(conversation_id, tick_key)
