"""Thin tasks: they take ids, re-fetch through one service call, and are safe to run any number of times.

Retries: transient LLM errors (429, 529, 5xx, timeouts) are retried by Celery with exponential backoff
and jitter; it is the only retry layer, the Anthropic client itself never retries. A conversation
leased by someone else is retried after a pause. Anything else fails the task and is logged.
"""

from __future__ import annotations

import os
from typing import Any

import structlog
from celery import Celery, Task
from celery.signals import worker_process_init

from sleepcompact.api import Memory
from sleepcompact.config import Settings
from sleepcompact.domain.errors import ConversationBusy, ConversationNotFound, TransientLLMError
from sleepcompact.logs import configure_logging
from sleepcompact.services import leases

log = structlog.get_logger(__name__)

RETRY = {
    "autoretry_for": (TransientLLMError,),
    "retry_backoff": 5,
    "retry_backoff_max": 600,
    "retry_jitter": True,
    "max_retries": 6,
}
BUSY_COUNTDOWN_S = 30


class Resources:
    """This process's ``Memory`` (engine, tokenizer, summarizer), built on first use after the fork."""

    def __init__(self, settings: Settings, app: Celery) -> None:
        self.settings = settings
        self.app = app
        self._memory: Memory | None = None
        self._pid = os.getpid()

    @property
    def memory(self) -> Memory:
        """The process's Memory; a forked child never reuses its parent's connections."""
        if self._memory is None or self._pid != os.getpid():
            self._memory = Memory(self.settings)
            self._pid = os.getpid()
        return self._memory

    def after_fork(self, **_: Any) -> None:
        """Prefork child: drop (without closing) any pool inherited from the parent."""
        if self._memory is not None:
            self._memory.engine.dispose(close=False)
            self._memory = None
        configure_logging(self.settings)


def register(app: Celery, settings: Settings) -> None:
    """Define every ``sleepcompact.*`` task on ``app``."""
    res = Resources(settings, app)
    worker_process_init.connect(res.after_fork, weak=False)

    @app.task(name="sleepcompact.sleep_tick", bind=True, **RETRY)  # type: ignore[untyped-decorator]
    def sleep_tick(self: Task, conversation_id: str, tick_key: str) -> dict[str, Any]:
        """Consolidate the agent's journal, then compact the conversation if it is still needed."""
        with structlog.contextvars.bound_contextvars(
            task_id=self.request.id, conversation_id=conversation_id
        ):
            try:
                return res.memory.run_tick(conversation_id, tick_key)
            except ConversationBusy as exc:
                raise self.retry(exc=exc, countdown=BUSY_COUNTDOWN_S) from exc
            except ConversationNotFound:
                log.warning("tick for an unknown conversation dropped", tick_key=tick_key)
                return {"status": "conversation not found"}

    @app.task(name="sleepcompact.compact", bind=True, **RETRY)  # type: ignore[untyped-decorator]
    def compact(self: Task, conversation_id: str, trigger: str = "manual") -> dict[str, Any]:
        """Compact one conversation now (queue ``emergency`` for the guard, ``admin`` otherwise)."""
        mem = res.memory
        owner = f"task:{self.request.id}"[:64]
        with structlog.contextvars.bound_contextvars(
            task_id=self.request.id, conversation_id=conversation_id
        ):
            try:
                with leases.held(mem.uow, conversation_id, owner, settings.lease_seconds):
                    return mem.compact(conversation_id, trigger=trigger).to_dict()  # type: ignore[arg-type]
            except ConversationBusy as exc:
                raise self.retry(exc=exc, countdown=BUSY_COUNTDOWN_S) from exc

    @app.task(name="sleepcompact.sweep_nightly", bind=True)  # type: ignore[untyped-decorator]
    def sweep_nightly(self: Task, conversation_id: str | None = None) -> dict[str, object]:
        """Enqueue tonight's tick for every due conversation (a repeat for the same night enqueues none)."""
        with structlog.contextvars.bound_contextvars(task_id=self.request.id):
            return res.memory.sweep_nightly(conversation_id=conversation_id, queue=_queue(res))

    @app.task(name="sleepcompact.sweep_idle", bind=True)  # type: ignore[untyped-decorator]
    def sweep_idle(self: Task) -> dict[str, object]:
        """Enqueue ticks for idle conversations over soft, those the guard asked for, and a missed night."""
        with structlog.contextvars.bound_contextvars(task_id=self.request.id):
            return res.memory.sweep_idle(queue=_queue(res))

    @app.task(name="sleepcompact.admin_rerun", bind=True, **RETRY)  # type: ignore[untyped-decorator]
    def admin_rerun(
        self: Task,
        conversation_id: str | None = None,
        compaction_id: str | None = None,
        dry_run: bool = False,
    ) -> dict[str, Any]:
        """Compact again from the archive (trigger admin_rerun); ``dry_run`` reports and writes nothing."""
        with structlog.contextvars.bound_contextvars(task_id=self.request.id):
            try:
                return res.memory.rerun(conversation_id, compaction_id=compaction_id, dry_run=dry_run)
            except ConversationBusy as exc:
                raise self.retry(exc=exc, countdown=BUSY_COUNTDOWN_S) from exc

    @app.task(name="sleepcompact.poll_batches", bind=True, **RETRY)  # type: ignore[untyped-decorator]
    def poll_batches(self: Task) -> dict[str, Any]:
        """Apply the results of ended Message Batches (each with the epoch check)."""
        with structlog.contextvars.bound_contextvars(task_id=self.request.id):
            report = res.memory.poll_batches()
            return {
                "applied": [o.compaction_id for o in report.applied],
                "retried_directly": [o.compaction_id for o in report.retried_directly],
                "pending_batches": report.pending_batches,
            }


def _queue(res: Resources) -> Any:
    from sleepcompact.adapters.queue import CeleryQueue

    return CeleryQueue(res.settings, res.app)
