"""A sleep tick for one conversation: rescore and consolidate the journal into memory, then compact.

Facts are safe in memory before anything is folded into a summary (DESIGN section 5). A tick is keyed
(the night's date, an idle spell, a request): the unique (conversation_id, tick_key) row makes running
the same tick again a no-op once it is done, and a tick that died half-way (a killed worker) is simply
run again: consolidation finds nothing pending twice, and the compaction's epoch check applies once.

The tick holds the conversation's lease while it works, with an owner named after the tick, so a
redelivered copy of the same tick takes the lease over at once while any other worker backs off.
Every call emits one canonical ``sleep_tick`` event: its outcome (done, already_done, busy, error), how
long it waited in the queue, and what it did.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import structlog

from sleepcompact.domain.budget import Thresholds
from sleepcompact.domain.errors import ConversationBusy, ConversationNotFound
from sleepcompact.domain.ladder import Policy
from sleepcompact.services import batches, leases
from sleepcompact.services.batches import BatchSummarizer
from sleepcompact.services.compaction import compact
from sleepcompact.services.context import budget_for
from sleepcompact.services.conversations import utcnow
from sleepcompact.services.journal import rescore_pending
from sleepcompact.services.memories import consolidate_agent
from sleepcompact.services.ports import Rescorer, Summarizer, TokenCounter, UnitOfWork
from sleepcompact.telemetry import emit

ENTRY_TRIGGER = 100
"""Live messages that trigger a compaction whatever the tokens (memory-manager seed; 0 turns it off)."""

LEASE_SECONDS = 420
"""Default lease: longer than a task may run (the worker's hard time limit), so it never lapses early."""


def lease_owner(tick_key: str) -> str:
    """The lease owner of a tick: the same for every delivery of that tick, different for any other."""
    return f"tick:{tick_key}"[:64]


@dataclass(frozen=True)
class TickOptions:
    """How a tick runs (from ``Settings``): thresholds, ladder policy, triggers and optional LLM helpers.

    ``batch_summarizer``: request the compaction's summary through the Message Batches API (applied
    later by ``poll_batches``). ``rescorer``: score pending journal entries with the LLM before
    consolidating. ``auto_compact`` off: consolidate only, never compact.
    """

    defaults: Thresholds = field(default_factory=Thresholds)
    policy: Policy = field(default_factory=Policy)
    entry_trigger: int = ENTRY_TRIGGER
    lease_seconds: int = LEASE_SECONDS
    batch_summarizer: BatchSummarizer | None = None
    rescorer: Rescorer | None = None
    auto_compact: bool = True


def sleep_tick(
    uow_factory: Callable[[], UnitOfWork],
    counter: TokenCounter,
    summarizer: Summarizer,
    conversation_id: str,
    tick_key: str,
    options: TickOptions,
) -> dict[str, Any]:
    """Run (or recognise as already run) one keyed tick; returns what it did.

    Raises ``ConversationBusy`` when another owner holds the lease (the worker retries later), and
    ``TransientLLMError`` from the LLM helpers, so the task is retried.
    """
    owner = lease_owner(tick_key)
    started = time.monotonic()
    with uow_factory() as uow:
        conv = uow.repo.get_conversation(conversation_id)
        if conv is None:
            raise ConversationNotFound(conversation_id)
        tenant_id = conv.tenant_id
        done = uow.repo.tick(conversation_id, tick_key)
        if done is not None and done["status"] == "done":
            _emit(conversation_id, tenant_id, tick_key, "already_done", None, started)
            return {**done["result"], "already_done": True}
        if not uow.repo.acquire_lease(conversation_id, owner, utcnow(), options.lease_seconds):
            _emit(conversation_id, tenant_id, tick_key, "busy", None, started)
            raise ConversationBusy(conversation_id)
        now = utcnow()
        # Queue lag: from being queued (or re-queued by a sweep) to its first start; a redelivered tick
        # (already running once) or one run directly, never queued, has none.
        lag = None
        if done is not None and done["status"] == "queued":
            lag = max(0.0, (now - done["queued_at"]).total_seconds())
        uow.repo.start_tick(conversation_id, tick_key, now)
        uow.commit()
    try:
        with structlog.contextvars.bound_contextvars(conversation_id=conversation_id, tenant_id=tenant_id):
            result = _work(uow_factory, counter, summarizer, conversation_id, tick_key, options)
    except BaseException as exc:
        # Let the guard or a retry in at once rather than after the lease expires.
        leases.release(uow_factory, conversation_id, owner)
        _emit(conversation_id, tenant_id, tick_key, "error", lag, started, error=type(exc).__name__)
        raise
    with uow_factory() as uow:
        uow.repo.finish_tick(conversation_id, tick_key, result, utcnow())
        uow.repo.release_lease(conversation_id, owner)
        uow.commit()
    _emit(
        conversation_id,
        tenant_id,
        tick_key,
        "done",
        lag,
        started,
        compaction=result["compaction"]["status"],
        memories_created=result["consolidation"].get("created", 0),
    )
    return result


def _emit(
    conversation_id: str,
    tenant_id: str | None,
    tick_key: str,
    outcome: str,
    queue_lag_s: float | None,
    started: float,
    **extra: Any,
) -> None:
    """The canonical ``sleep_tick`` line."""
    emit(
        "sleep_tick",
        conversation_id=conversation_id,
        tenant_id=tenant_id,
        tick_key=tick_key,
        outcome=outcome,
        queue_lag_s=None if queue_lag_s is None else round(queue_lag_s, 3),
        duration_ms=int((time.monotonic() - started) * 1000),
        **extra,
    )


def _work(
    uow_factory: Callable[[], UnitOfWork],
    counter: TokenCounter,
    summarizer: Summarizer,
    conversation_id: str,
    tick_key: str,
    options: TickOptions,
) -> dict[str, Any]:
    defaults, policy, batch_summarizer = options.defaults, options.policy, options.batch_summarizer
    rescorer, entry_trigger = options.rescorer, options.entry_trigger
    with uow_factory() as uow:
        conv = uow.repo.get_conversation(conversation_id)
        if conv is None:
            raise ConversationNotFound(conversation_id)
    # Scores first: consolidation decides by importance what becomes a memory.
    rescoring = (
        rescore_pending(uow_factory, rescorer, conv.tenant_id, conv.agent_id)
        if rescorer is not None
        else None
    )
    consolidation = consolidate_agent(uow_factory, conv.tenant_id, conv.agent_id)
    with uow_factory() as uow:
        conv = uow.repo.get_conversation(conversation_id) or conv
        budget = budget_for(conv, defaults, uow.repo.calibrations())
    over_soft = budget.effective(conv.live_tokens) > budget.soft
    too_many = entry_trigger > 0 and conv.live_messages > entry_trigger
    compaction: dict[str, Any] = {"status": "not needed"}
    if (over_soft or too_many) and (not options.auto_compact or conv.auto_compact is False):
        compaction = {"status": "auto-compaction off"}  # really off: the journal is still consolidated
    elif (over_soft or too_many) and batch_summarizer is not None:
        report = batches.submit(
            uow_factory, counter, batch_summarizer, [conversation_id], defaults=defaults, policy=policy
        )
        direct = report.applied_directly[0] if report.applied_directly else None
        compaction = {
            "status": direct.status if direct else "batched" if report.batch_id else "not needed",
            "compaction_id": direct.compaction_id if direct else None,
            "batch_id": report.batch_id,
        }
    elif over_soft or too_many:
        outcome = compact(
            uow_factory,
            counter,
            summarizer,
            conversation_id,
            trigger="sleep",
            defaults=defaults,
            policy=policy,
            force=too_many and not over_soft,
        )
        compaction = {
            "status": outcome.status,
            "compaction_id": outcome.compaction_id,
            "tokens_before": outcome.tokens_before,
            "tokens_after": outcome.tokens_after,
            "summary_tokens": outcome.summary_tokens,
            "steps": list(dict.fromkeys(s["step"] for s in outcome.steps)),
            "reason": outcome.reason,
        }
    return {
        "tick_key": tick_key,
        **({"rescoring": rescoring} if rescoring is not None else {}),
        "consolidation": consolidation,
        "compaction": compaction,
        "trigger": "soft threshold" if over_soft else "entry count" if too_many else None,
    }
