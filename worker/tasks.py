"""Thin tasks: they take ids, re-fetch through one service call, and are safe to run any number of times.

Retries: in the worker, Celery's autoretry is the one retry layer for transient LLM errors (429, 529,
5xx, timeouts): exponential backoff from ``task_retry_backoff_s`` up to ``task_retry_backoff_max_s``,
with jitter, at most ``task_max_retries`` times. The summarizer inside makes one attempt per task run
(``summarizer_attempts=1``), so a storm costs at most 1 + max_retries calls, never a product of two
layers. A conversation leased by someone else is retried after a pause. Anything else fails the task
and is logged.
"""

from __future__ import annotations

import gc
import os
from typing import Any

import structlog
from celery import Celery, Task
from celery.signals import worker_process_init

from sleepcompact.bootstrap import Container, bootstrap
from sleepcompact.config import Settings
from sleepcompact.domain.errors import (
    ConversationBusy,
    ConversationNotFound,
    StoreUnavailable,
    TransientLLMError,
)
from sleepcompact.logs import configure_logging, get_logger
from sleepcompact.services import batches, compaction, leases, rerun, sleep, sweeps
from sleepcompact.services.clock import utcnow
from sleepcompact.services.compaction import CompactRequest

log = get_logger(__name__)

BUSY_COUNTDOWN_S = 30


def retry_options(settings: Settings) -> dict[str, Any]:
    """Celery's autoretry for transient LLM errors and a database that is down or locked (nothing of the
    failed run was written): the worker's only retry layer."""
    return {
        "autoretry_for": (TransientLLMError, StoreUnavailable),
        "retry_backoff": settings.task_retry_backoff_s,
        "retry_backoff_max": settings.task_retry_backoff_max_s,
        "retry_jitter": True,
        "max_retries": settings.task_max_retries,
    }


class Resources:
    """This process's dependencies (engine, tokenizer, summarizer), built by ``bootstrap`` on first use
    after the fork; the tasks hand them to one service call each."""

    def __init__(self, settings: Settings, app: Celery) -> None:
        # One attempt per task run: Celery's autoretry is the worker's retry layer, never both.
        self.settings = settings.with_overrides(summarizer_attempts=1)
        self.app = app
        self._deps: Container | None = None
        self._pid = os.getpid()

    @property
    def deps(self) -> Container:
        """The process's dependencies; a forked child never reuses its parent's connections."""
        if self._deps is None or self._pid != os.getpid():
            self._deps = bootstrap(self.settings)
            self._pid = os.getpid()
            _freeze_the_heap()
        return self._deps

    def after_fork(self, **_: Any) -> None:
        """Prefork child: drop (without closing) any pool inherited from the parent."""
        if self._deps is not None:
            self._deps.engine.dispose(close=False)
            self._deps = None
        configure_logging(self.settings)

    def queue(self) -> Any:
        """A producer on this worker's own app, for the sweeps' ticks."""
        from sleepcompact.adapters.queue import CeleryQueue

        return CeleryQueue(self.settings, self.app)


def _freeze_the_heap() -> None:
    """Leave what the process holds for good (modules, the tokenizer, the engine) out of every later
    garbage collection: a full collection walked all of it, and those pauses were a tick's slowest runs
    (the 95th percentile outside the compaction went 100 -> 63 ms over 60 ticks in one process)."""
    gc.collect()  # what is garbage now is collected first: frozen, it would never be
    gc.freeze()


def register(app: Celery, settings: Settings) -> None:
    """Define every ``sleepcompact.*`` task on ``app``."""
    res = Resources(settings, app)
    worker_process_init.connect(res.after_fork, weak=False)
    retry = retry_options(settings)
    _register_ticks(app, res, retry)
    _register_admin(app, res, retry)


def _bound(task: Task, **ids: Any) -> Any:
    """Every line the task logs carries its task id (and the conversation's, when it has one)."""
    return structlog.contextvars.bound_contextvars(task_id=task.request.id, **ids)


def _register_ticks(app: Celery, res: Resources, retry: dict[str, Any]) -> None:
    @app.task(name="sleepcompact.sleep_tick", bind=True, **retry)  # type: ignore[untyped-decorator]
    def sleep_tick(self: Task, conversation_id: str, tick_key: str) -> dict[str, Any]:
        """Consolidate the agent's journal, then compact the conversation if it is still needed."""
        with _bound(self, conversation_id=conversation_id):
            try:
                deps = res.deps
                return sleep.sleep_tick(
                    deps, conversation_id, tick_key, sleep.helpers(deps, batch=True)
                ).to_dict()
            except ConversationBusy as exc:
                raise self.retry(exc=exc, countdown=BUSY_COUNTDOWN_S) from exc
            except ConversationNotFound:
                log.warning("tick for an unknown conversation dropped", tick_key=tick_key)
                return {"status": "conversation not found"}

    @app.task(name="sleepcompact.sweep_nightly", bind=True)  # type: ignore[untyped-decorator]
    def sweep_nightly(self: Task, conversation_id: str | None = None) -> dict[str, Any]:
        """Enqueue tonight's tick for every due conversation (a repeat for the same night enqueues none)."""
        with _bound(self):
            report = sweeps.sweep_nightly(
                res.deps, res.queue(), now=utcnow(), conversation_id=conversation_id
            )
            return report.to_dict()

    @app.task(name="sleepcompact.sweep_idle", bind=True)  # type: ignore[untyped-decorator]
    def sweep_idle(self: Task) -> dict[str, Any]:
        """Enqueue ticks for idle conversations over soft, those the guard asked for, and a missed night."""
        with _bound(self):
            return sweeps.sweep_idle(res.deps, res.queue(), now=utcnow()).to_dict()


def _register_admin(app: Celery, res: Resources, retry: dict[str, Any]) -> None:
    @app.task(name="sleepcompact.compact", bind=True, **retry)  # type: ignore[untyped-decorator]
    def compact(self: Task, conversation_id: str, trigger: str = "manual") -> dict[str, Any]:
        """Compact one conversation now (queue ``emergency`` for the guard, ``admin`` otherwise)."""
        deps = res.deps
        owner = f"task:{self.request.id}"[:64]
        request = CompactRequest(trigger=trigger)  # type: ignore[arg-type]  # the task's caller names it
        with _bound(self, conversation_id=conversation_id):
            try:
                with leases.held(deps, conversation_id, owner):
                    return compaction.compact(deps, conversation_id, request).to_dict()
            except ConversationBusy as exc:
                raise self.retry(exc=exc, countdown=BUSY_COUNTDOWN_S) from exc

    @app.task(name="sleepcompact.admin_rerun", bind=True, **retry)  # type: ignore[untyped-decorator]
    def admin_rerun(
        self: Task,
        conversation_id: str | None = None,
        compaction_id: str | None = None,
        dry_run: bool = False,
    ) -> dict[str, Any]:
        """Compact again from the archive (trigger admin_rerun); ``dry_run`` reports and writes nothing."""
        with _bound(self):
            try:
                if dry_run:
                    preview = rerun.preview(
                        res.deps, conversation_id=conversation_id, compaction_id=compaction_id
                    )
                    return preview.to_dict()
                return rerun.rerun(
                    res.deps, conversation_id=conversation_id, compaction_id=compaction_id
                ).to_dict()
            except ConversationBusy as exc:
                raise self.retry(exc=exc, countdown=BUSY_COUNTDOWN_S) from exc

    @app.task(name="sleepcompact.poll_batches", bind=True, **retry)  # type: ignore[untyped-decorator]
    def poll_batches(self: Task) -> dict[str, Any]:
        """Apply the results of ended Message Batches (each with the epoch check)."""
        with _bound(self):
            deps = res.deps
            report = batches.poll(deps, sleep.batch_summarizer_of(deps))
            return {
                "applied": [o.compaction_id for o in report.applied],
                "retried_directly": [o.compaction_id for o in report.retried_directly],
                "pending_batches": report.pending_batches,
            }
