"""Sweeps: find due conversations in batches and enqueue one sleep tick each, after commit.

Each batch is its own short transaction: select due ids, record their ticks as ``queued`` (the unique
(conversation_id, tick_key) drops any a previous sweep already queued), commit, and only then
enqueue. A crash between commit and enqueue leaves a ``queued`` tick with no message; the next sweep
finds it stale and enqueues it again, and the tick itself is idempotent, so nothing runs twice.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

import structlog

from sleepcompact.domain.budget import Thresholds
from sleepcompact.domain.errors import ConversationNotFound
from sleepcompact.domain.schedule import Night, idle_key, night_of, request_key
from sleepcompact.services.context import budget_for
from sleepcompact.services.ports import TaskQueue, UnitOfWork

log = structlog.get_logger(__name__)


@dataclass(frozen=True)
class SweepConfig:
    """The schedule a sweep works to (from ``Settings``)."""

    timezone: str = "UTC"
    nightly_hour: int = 3
    nightly_minute: int = 0
    idle_minutes: int = 30
    batch_size: int = 500
    stale_after_s: int = 780
    entry_trigger: int = 100
    defaults: Thresholds = field(default_factory=Thresholds)


@dataclass
class SweepReport:
    """What one sweep enqueued."""

    kind: str
    tick_keys: dict[str, int] = field(default_factory=dict)
    enqueued: int = 0
    already_queued: int = 0
    requeued: int = 0
    examined: int = 0

    def as_dict(self) -> dict[str, object]:
        """JSON-ready (a Celery task result and the CLI's ``--json``)."""
        return {
            "kind": self.kind,
            "enqueued": self.enqueued,
            "already_queued": self.already_queued,
            "requeued": self.requeued,
            "examined": self.examined,
            "tick_keys": dict(self.tick_keys),
        }


def _send(
    uow_factory: Callable[[], UnitOfWork],
    queue: TaskQueue,
    orders: list[tuple[str, str]],
    now: datetime,
    report: SweepReport,
) -> None:
    with uow_factory() as uow:
        fresh = uow.repo.queue_ticks(orders, now)
        uow.commit()
    # Enqueue after commit: a worker that picks the message up at once must find the queued tick.
    for conversation_id, key in fresh:
        queue.enqueue_tick(conversation_id, key)
        report.tick_keys[key] = report.tick_keys.get(key, 0) + 1
    report.enqueued += len(fresh)
    report.already_queued += len(orders) - len(fresh)


def _requeue_stale(
    uow_factory: Callable[[], UnitOfWork],
    queue: TaskQueue,
    now: datetime,
    cfg: SweepConfig,
    report: SweepReport,
) -> None:
    with uow_factory() as uow:
        stale = uow.repo.stale_ticks(now - timedelta(seconds=cfg.stale_after_s), cfg.batch_size)
        uow.repo.requeue_ticks(stale, now)
        uow.commit()
    for conversation_id, key in stale:
        queue.enqueue_tick(conversation_id, key)
    report.requeued += len(stale)


def _nightly_batches(
    uow_factory: Callable[[], UnitOfWork],
    queue: TaskQueue,
    night: Night,
    now: datetime,
    cfg: SweepConfig,
    report: SweepReport,
    only: str | None = None,
) -> None:
    cursor: str | None = ""
    while cursor is not None:
        with uow_factory() as uow:
            ids, cursor = uow.repo.due_nightly(night.start, cursor, cfg.batch_size)
        report.examined += len(ids)
        selected = [i for i in ids if only is None or i == only]
        if selected:
            _send(uow_factory, queue, [(i, night.key) for i in selected], now, report)


def sweep_nightly(
    uow_factory: Callable[[], UnitOfWork],
    queue: TaskQueue,
    cfg: SweepConfig,
    *,
    now: datetime,
    conversation_id: str | None = None,
) -> SweepReport:
    """Enqueue tonight's tick for every conversation active since its last sleep before tonight.

    Safe to run any number of times for one night: the tick key is the night's date.
    """
    report = SweepReport("nightly")
    night = night_of(now, cfg.timezone, cfg.nightly_hour, cfg.nightly_minute)
    _requeue_stale(uow_factory, queue, now, cfg, report)
    _nightly_batches(uow_factory, queue, night, now, cfg, report, conversation_id)
    log.info("sweep", **report.as_dict(), night=night.key)
    return report


def sweep_idle(
    uow_factory: Callable[[], UnitOfWork],
    queue: TaskQueue,
    cfg: SweepConfig,
    *,
    now: datetime,
    factors: dict[str, float] | None = None,
) -> SweepReport:
    """Enqueue ticks for conversations the guard asked about and idle ones over their soft threshold.

    It also catches up the night when the nightly sweep did not run (beat down at its time): the
    night's own key keeps this from ticking anything the nightly sweep already queued.
    """
    report = SweepReport("idle")
    _requeue_stale(uow_factory, queue, now, cfg, report)
    idle_before = now - timedelta(minutes=cfg.idle_minutes)
    # Quiet spells older than a day are the nightly sweep's (and its catch-up below).
    active_after = idle_before - timedelta(days=1)
    cursor: str | None = ""
    while cursor is not None:
        with uow_factory() as uow:
            convs, cursor = uow.repo.due_idle(idle_before, active_after, cursor, cfg.batch_size)
            if factors is None:
                factors = uow.repo.calibrations()
        report.examined += len(convs)
        orders: list[tuple[str, str]] = []
        for conv in convs:
            if conv.sleep_requested_at is not None:
                orders.append((conv.id, request_key(conv.sleep_requested_at)))
                continue
            budget = budget_for(conv, cfg.defaults, factors)
            too_many = cfg.entry_trigger > 0 and conv.live_messages > cfg.entry_trigger
            if budget.effective(conv.live_tokens) > budget.soft or too_many:
                orders.append((conv.id, idle_key(conv.last_activity_at)))
        if orders:
            _send(uow_factory, queue, orders, now, report)
    night = night_of(now, cfg.timezone, cfg.nightly_hour, cfg.nightly_minute)
    _nightly_batches(uow_factory, queue, night, now, cfg, report)
    log.info("sweep", **report.as_dict())
    return report


def tick_now(
    uow_factory: Callable[[], UnitOfWork],
    queue: TaskQueue,
    conversation_ids: list[str],
    tick_key: str,
    *,
    now: datetime,
) -> SweepReport:
    """Enqueue a tick with ``tick_key`` for each conversation, due or not (``sleep --now``)."""
    report = SweepReport("now")
    with uow_factory() as uow:
        missing = [c for c in conversation_ids if uow.repo.get_conversation(c) is None]
    if missing:
        raise ConversationNotFound(missing[0])
    report.examined = len(conversation_ids)
    _send(uow_factory, queue, [(c, tick_key) for c in conversation_ids], now, report)
    return report


def request_sleep(uow_factory: Callable[[], UnitOfWork], conversation_id: str, *, now: datetime) -> None:
    """Ask the idle sweep for a tick of this conversation (the guard does this above the soft threshold)."""
    with uow_factory() as uow:
        if uow.repo.get_conversation(conversation_id) is None:
            raise ConversationNotFound(conversation_id)
        uow.repo.request_sleep(conversation_id, now)
        uow.commit()


def list_ticks(uow: UnitOfWork, conversation_id: str) -> list[dict[str, Any]]:
    """The conversation's sleep ticks with what each did."""
    with uow:
        if uow.repo.get_conversation(conversation_id) is None:
            raise ConversationNotFound(conversation_id)
        return list(uow.repo.ticks(conversation_id))
