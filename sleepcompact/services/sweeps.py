"""Sweeps: find due conversations in batches and enqueue one sleep tick each, after commit.

Each batch is its own short transaction: select due ids, record their ticks as ``queued`` (the unique
(conversation_id, tick_key) drops any a previous sweep already queued), commit, and only then
enqueue. A crash between commit and enqueue leaves a ``queued`` tick with no message; the next sweep
finds it stale and enqueues it again, and the tick itself is idempotent, so nothing runs twice. A tick
left ``running`` by a worker that died whole (no child left to report it lost) is re-sent the same way
once its lease has run out (``_requeue_stale``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from sleepcompact.config import Settings, nightly_time
from sleepcompact.domain.budget import entry_count_due
from sleepcompact.domain.errors import ConversationNotFound
from sleepcompact.domain.schedule import Night, TickRecord, idle_key, night_of, not_due_tonight, request_key
from sleepcompact.logs import get_logger
from sleepcompact.ports import Dependencies, TaskQueue
from sleepcompact.services.budgets import budget_for

log = get_logger(__name__)


@dataclass
class _Tally:
    """What a sweep has enqueued so far (becomes its ``SweepReport``)."""

    kind: str
    tick_keys: dict[str, int] = field(default_factory=dict)
    enqueued: int = 0
    already_queued: int = 0
    requeued: int = 0
    examined: int = 0
    skipped: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class SweepReport:
    """What one sweep enqueued."""

    kind: str
    enqueued: int = 0
    already_queued: int = 0
    requeued: int = 0
    examined: int = 0
    tick_keys: dict[str, int] = field(default_factory=dict)
    tick_key: str | None = None  # ``tick_now``: the key every tick was sent with
    skipped: dict[str, str] = field(default_factory=dict)  # conversation id -> why it was not ticked

    @classmethod
    def of(cls, tally: _Tally, tick_key: str | None = None) -> SweepReport:
        """The frozen report of a finished sweep."""
        return cls(
            tally.kind,
            tally.enqueued,
            tally.already_queued,
            tally.requeued,
            tally.examined,
            dict(tally.tick_keys),
            tick_key,
            dict(tally.skipped),
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready (a Celery task result and the CLI's ``--json``)."""
        out: dict[str, Any] = {
            "kind": self.kind,
            "enqueued": self.enqueued,
            "already_queued": self.already_queued,
            "requeued": self.requeued,
            "examined": self.examined,
            "tick_keys": dict(self.tick_keys),
        }
        if self.tick_key is not None:
            out["tick_key"] = self.tick_key
        if self.skipped:
            out["skipped"] = dict(self.skipped)
        return out


def night_for(settings: Settings, now: datetime) -> Night:
    """The night (its sweep time and tick key) ``now`` belongs to, by the settings' schedule."""
    hour, minute = nightly_time(settings.nightly_cron)
    return night_of(now, settings.timezone, hour, minute)


def _send(
    deps: Dependencies,
    queue: TaskQueue,
    orders: list[tuple[str, str]],
    now: datetime,
    report: _Tally,
) -> None:
    with deps.uow() as uow:
        fresh = uow.ticks.queue(orders, now)
        uow.commit()
    # Enqueue after commit: a worker that picks the message up at once must find the queued tick.
    send_ticks(queue, fresh)
    for _, key in fresh:
        report.tick_keys[key] = report.tick_keys.get(key, 0) + 1
    report.enqueued += len(fresh)
    report.already_queued += len(orders) - len(fresh)


def send_ticks(queue: TaskQueue, ticks: list[tuple[str, str]]) -> None:
    """Send a sweep's ticks in one call (pipelined where the broker allows it). A queue written against
    0.2's port has only ``enqueue_tick``: it gets them one by one, so it keeps working."""
    if not ticks:
        return
    send_many = getattr(queue, "enqueue_ticks", None)
    if send_many is not None:
        send_many(ticks)
        return
    for conversation_id, key in ticks:
        queue.enqueue_tick(conversation_id, key)


def _requeue_stale(deps: Dependencies, queue: TaskQueue, now: datetime, report: _Tally) -> None:
    """Re-send ticks whose message was lost (queued past the broker's visibility timeout) and ticks
    whose worker died (running past the lease, which outlasts the hard time limit: no live run is
    that old). So a tick whose whole worker was killed runs again within ``lease_seconds`` plus one
    idle sweep interval of its start, even on a broker that never redelivers (Kombu's SQLAlchemy
    transport); the tick key makes a second delivery (Redis's own redelivery) a no-op."""
    settings = deps.settings
    queued_before = now - timedelta(seconds=settings.visibility_timeout)
    running_before = now - timedelta(seconds=settings.lease_seconds)
    with deps.uow() as uow:
        stale = uow.ticks.stale(queued_before, running_before, settings.sweep_batch_size)
        uow.ticks.requeue(stale, now)
        uow.commit()
    send_ticks(queue, stale)
    report.requeued += len(stale)


def _nightly_batches(
    deps: Dependencies, queue: TaskQueue, night: Night, now: datetime, report: _Tally, only: str | None = None
) -> None:
    if only is not None:
        _nightly_one(deps, queue, night, now, report, only)
        return
    cursor: str | None = ""
    while cursor is not None:
        with deps.read_uow() as uow:
            ids, cursor = uow.ticks.due_nightly(night.start, cursor, deps.settings.sweep_batch_size)
        report.examined += len(ids)
        if ids:
            _send(deps, queue, [(i, night.key) for i in ids], now, report)


def _nightly_one(
    deps: Dependencies, queue: TaskQueue, night: Night, now: datetime, report: _Tally, conversation_id: str
) -> None:
    """One conversation's night (``sleep --conversation``): one read, and why it is skipped if it is."""
    with deps.read_uow() as uow:
        conv = uow.conversations.get(conversation_id)
    if conv is None:
        raise ConversationNotFound(conversation_id)
    report.examined += 1
    why = not_due_tonight(conv.created_at, conv.last_activity_at, conv.last_sleep_at, night.start)
    if why is None:
        _send(deps, queue, [(conversation_id, night.key)], now, report)
    else:
        report.skipped[conversation_id] = why


def sweep_nightly(
    deps: Dependencies, queue: TaskQueue, *, now: datetime, conversation_id: str | None = None
) -> SweepReport:
    """Enqueue tonight's tick for every conversation active since its last sleep before tonight.

    Safe to run any number of times for one night: the tick key is the night's date.
    """
    report = _Tally("nightly")
    night = night_for(deps.settings, now)
    _requeue_stale(deps, queue, now, report)
    _nightly_batches(deps, queue, night, now, report, conversation_id)
    done = SweepReport.of(report)
    log.info("sweep", **done.to_dict(), night=night.key)
    return done


def sweep_idle(deps: Dependencies, queue: TaskQueue, *, now: datetime) -> SweepReport:
    """Enqueue ticks for conversations the guard asked about and idle ones over their soft threshold.

    It also catches up the night when the nightly sweep did not run (beat down at its time): the
    night's own key keeps this from ticking anything the nightly sweep already queued.
    """
    settings = deps.settings
    report = _Tally("idle")
    _requeue_stale(deps, queue, now, report)
    idle_before = now - timedelta(minutes=settings.idle_minutes)
    # Quiet spells older than a day are the nightly sweep's (and its catch-up below).
    active_after = idle_before - timedelta(days=1)
    factors = deps.factors()
    cursor: str | None = ""
    while cursor is not None:
        with deps.read_uow() as uow:
            convs, cursor = uow.ticks.due_idle(idle_before, active_after, cursor, settings.sweep_batch_size)
        report.examined += len(convs)
        orders: list[tuple[str, str]] = []
        for conv in convs:
            if conv.sleep_requested_at is not None:
                orders.append((conv.id, request_key(conv.sleep_requested_at)))
                continue
            budget = budget_for(conv, settings.thresholds, factors)
            tokens = budget.effective(conv.live_tokens)
            too_many = entry_count_due(
                conv.live_messages, tokens, budget, settings.entry_trigger, settings.entry_trigger_floor
            )
            if tokens > budget.soft or too_many:
                orders.append((conv.id, idle_key(conv.last_activity_at)))
        if orders:
            _send(deps, queue, orders, now, report)
    _nightly_batches(deps, queue, night_for(settings, now), now, report)
    done = SweepReport.of(report)
    log.info("sweep", **done.to_dict())
    return done


def tick_now(
    deps: Dependencies, queue: TaskQueue, conversation_ids: list[str], tick_key: str, *, now: datetime
) -> SweepReport:
    """Enqueue a tick with ``tick_key`` for each conversation, due or not (``sleep --now``)."""
    report = _Tally("now")
    with deps.read_uow() as uow:
        missing = [c for c in conversation_ids if uow.conversations.get(c) is None]
    if missing:
        raise ConversationNotFound(missing[0])
    report.examined = len(conversation_ids)
    _send(deps, queue, [(c, tick_key) for c in conversation_ids], now, report)
    return SweepReport.of(report, tick_key)


def request_sleep(deps: Dependencies, conversation_id: str, *, now: datetime) -> None:
    """Ask the idle sweep for a tick of this conversation (the guard does this above the soft threshold)."""
    with deps.uow() as uow:
        if uow.conversations.get(conversation_id) is None:
            raise ConversationNotFound(conversation_id)
        uow.ticks.request_sleep(conversation_id, now)
        uow.commit()


def list_ticks(deps: Dependencies, conversation_id: str) -> list[TickRecord]:
    """The conversation's sleep ticks with what each did."""
    with deps.read_uow() as uow:
        if uow.conversations.get(conversation_id) is None:
            raise ConversationNotFound(conversation_id)
        return uow.ticks.of(conversation_id)
