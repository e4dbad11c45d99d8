"""A sleep tick for one conversation: rescore and consolidate the journal into memory, compact, then
rescore and consolidate what that compaction extracted.

Facts are safe in memory before anything is folded into a summary (DESIGN section 5), and what the
tick's own compaction journals (every folded statement, dated) is memory by the end of the same tick,
not the next one. A tick is keyed
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
from collections.abc import Mapping
from dataclasses import asdict, dataclass, replace
from typing import Any

from sleepcompact.domain.budget import entry_count_due
from sleepcompact.domain.errors import ConversationBusy, ConversationNotFound, InvalidSetting
from sleepcompact.domain.records import ConversationRecord
from sleepcompact.logs import bound_context
from sleepcompact.ports import BatchSummarizer, Dependencies, Rescorer, UnitOfWork
from sleepcompact.services import batches, leases
from sleepcompact.services.budgets import budget_for
from sleepcompact.services.clock import utcnow
from sleepcompact.services.compaction import CompactRequest, compact
from sleepcompact.services.journal import RescoringReport, rescore_pending
from sleepcompact.services.memories import ConsolidationReport, consolidate_agent
from sleepcompact.telemetry import emit


def lease_owner(tick_key: str) -> str:
    """The lease owner of a tick: the same for every delivery of that tick, different for any other."""
    return f"tick:{tick_key}"[:64]


@dataclass(frozen=True)
class TickCompaction:
    """What a tick's compaction step did (``status``: not needed, auto-compaction off, batched, or a
    compaction's own status); the figures are there when a compaction ran."""

    status: str
    compaction_id: str | None = None
    tokens_before: int | None = None
    tokens_after: int | None = None
    summary_tokens: int | None = None
    steps: tuple[str, ...] | None = None
    reason: str | None = None
    batch_id: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready, without the figures that do not apply."""
        return {k: (list(v) if isinstance(v, tuple) else v) for k, v in asdict(self).items() if v is not None}


@dataclass(frozen=True)
class TickResult:
    """What one sleep tick did: rescoring (when on), consolidation, and the compaction step."""

    tick_key: str
    consolidation: ConsolidationReport
    compaction: TickCompaction
    trigger: str | None = None  # soft threshold, entry count, or None
    rescoring: RescoringReport | None = None
    already_done: bool = False  # a repeat of a finished tick: its stored result

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready (what the worker's task returns and what the tick row keeps)."""
        out: dict[str, Any] = {"tick_key": self.tick_key}
        if self.rescoring is not None:
            out["rescoring"] = self.rescoring.to_dict()
        out.update(
            consolidation=self.consolidation.to_dict(),
            compaction=self.compaction.to_dict(),
            trigger=self.trigger,
        )
        if self.already_done:
            out["already_done"] = True
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> TickResult:
        """A stored result read back."""
        compaction = dict(data.get("compaction") or {"status": "not needed"})
        if compaction.get("steps") is not None:
            compaction["steps"] = tuple(compaction["steps"])
        rescoring = data.get("rescoring")
        return cls(
            tick_key=str(data.get("tick_key", "")),
            consolidation=ConsolidationReport(**(data.get("consolidation") or {})),
            compaction=TickCompaction(**compaction),
            trigger=data.get("trigger"),
            rescoring=RescoringReport.from_dict(rescoring) if rescoring else None,
            already_done=bool(data.get("already_done", False)),
        )


@dataclass(frozen=True)
class TickHelpers:
    """The optional LLM helpers of a tick: summaries through a Message Batch, LLM journal rescoring."""

    batch_summarizer: BatchSummarizer | None = None
    rescorer: Rescorer | None = None


def helpers(deps: Dependencies, *, batch: bool) -> TickHelpers:
    """The helpers the settings turn on: batches for the worker's nightly ticks, rescoring when the
    summarizer can (the offline one cannot)."""
    settings, summarizer = deps.settings, deps.summarizer
    batch_summarizer = batch_summarizer_of(deps) if batch and settings.nightly_batches else None
    rescorer: Rescorer | None = None
    if settings.llm_rescoring and hasattr(summarizer, "rescore"):
        rescorer = summarizer  # type: ignore[assignment]  # it has rescore()
    return TickHelpers(batch_summarizer, rescorer)


def batch_summarizer_of(deps: Dependencies) -> BatchSummarizer:
    """The summarizer, when it has a batch API; a typed error otherwise."""
    summarizer = deps.summarizer
    if not hasattr(summarizer, "submit_batch"):
        raise InvalidSetting(f"the {summarizer.provider} summarizer has no batch API; use compact()")
    return summarizer  # type: ignore[return-value]  # it has the batch methods


def sleep_tick(
    deps: Dependencies, conversation_id: str, tick_key: str, tick_helpers: TickHelpers | None = None
) -> TickResult:
    """Run (or recognise as already run) one keyed tick; returns what it did.

    Raises ``ConversationBusy`` when another owner holds the lease (the worker retries later), and
    ``TransientLLMError`` from the LLM helpers, so the task is retried.
    """
    owner = lease_owner(tick_key)
    started = time.monotonic()
    with deps.uow() as uow:
        conv = uow.conversations.get(conversation_id)
        if conv is None:
            raise ConversationNotFound(conversation_id)
        tenant_id = conv.tenant_id
        done = uow.ticks.get(conversation_id, tick_key)
        if done is not None and done.status == "done":
            _emit(conversation_id, tenant_id, tick_key, "already_done", None, started)
            return replace(TickResult.from_dict(done.result), already_done=True)
        if not uow.ticks.acquire_lease(conversation_id, owner, utcnow(), deps.settings.lease_seconds):
            _emit(conversation_id, tenant_id, tick_key, "busy", None, started)
            raise ConversationBusy(conversation_id)
        now = utcnow()
        # Queue lag: from being queued (or re-queued by a sweep) to its first start; a redelivered tick
        # (already running once) or one run directly, never queued, has none.
        lag = max(0.0, (now - done.queued_at).total_seconds()) if done and done.status == "queued" else None
        if not uow.ticks.start(conversation_id, tick_key, now):
            # Another delivery finished it between our read and our start: its result is the answer.
            uow.ticks.release_lease(conversation_id, owner)
            recorded = _recorded(uow, conversation_id, tick_key)
            uow.commit()
            _emit(conversation_id, tenant_id, tick_key, "already_done", None, started)
            return recorded
        uow.commit()
    try:
        with bound_context(conversation_id=conversation_id, tenant_id=tenant_id):
            result = _work(deps, conv, tick_key, tick_helpers or TickHelpers())
    except BaseException as exc:
        # Let the guard or a retry in at once rather than after the lease expires.
        leases.release(deps, conversation_id, owner)
        _emit(conversation_id, tenant_id, tick_key, "error", lag, started, error=type(exc).__name__)
        raise
    with deps.uow() as uow:
        if not uow.ticks.finish(conversation_id, tick_key, result.to_dict(), utcnow()):
            # A redelivery running beside us finished first: its result stays the tick's one answer.
            result = _recorded(uow, conversation_id, tick_key)
        uow.ticks.release_lease(conversation_id, owner)
        uow.commit()
    _emit(
        conversation_id,
        tenant_id,
        tick_key,
        "done",
        lag,
        started,
        compaction=result.compaction.status,
        memories_created=result.consolidation.created,
    )
    return result


def _recorded(uow: UnitOfWork, conversation_id: str, tick_key: str) -> TickResult:
    """The result another delivery of this tick recorded, as a repeat sees it."""
    done = uow.ticks.get(conversation_id, tick_key)
    assert done is not None and done.status == "done"
    return replace(TickResult.from_dict(done.result), already_done=True)


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
    deps: Dependencies, conv: ConversationRecord, tick_key: str, tick_helpers: TickHelpers
) -> TickResult:
    """Scores first (consolidation decides by importance what becomes a memory), then memories, then
    the compaction the conversation's size (or entry count) calls for, then the entries it journaled."""
    rescoring, consolidation = _remember(deps, conv, tick_helpers.rescorer)
    compaction, trigger = _compaction_step(deps, conv, tick_helpers)
    if compaction.status == "applied":  # applied now (not batched): the entries it journaled are pending
        again, more = _remember(deps, conv, tick_helpers.rescorer)
        rescoring = _both(rescoring, again)
        consolidation = consolidation + more
    return TickResult(tick_key, consolidation, compaction, trigger, rescoring)


def _remember(
    deps: Dependencies, conv: ConversationRecord, rescorer: Rescorer | None
) -> tuple[RescoringReport | None, ConsolidationReport]:
    """Rescore (when on) and consolidate the agent's pending journal entries."""
    rescoring = rescore_pending(deps, rescorer, conv.tenant_id, conv.agent_id) if rescorer else None
    return rescoring, consolidate_agent(deps, conv.tenant_id, conv.agent_id)


def _both(first: RescoringReport | None, second: RescoringReport | None) -> RescoringReport | None:
    """One tick's rescoring: both passes added up (the second's status and error win when it worked)."""
    if first is None or second is None:
        return first or second
    if second.status == "nothing pending":
        return first
    return RescoringReport(
        second.status if first.error is None else first.status,
        first.entries + second.entries,
        first.rescored + second.rescored,
        first.changed + second.changed,
        first.error or second.error,
    )


def _compaction_step(
    deps: Dependencies, conv: ConversationRecord, tick_helpers: TickHelpers
) -> tuple[TickCompaction, str | None]:
    """The compaction the conversation's size (or live message count) calls for, and its trigger."""
    settings = deps.settings
    with deps.read_uow() as uow:
        conv = uow.conversations.get(conv.id) or conv
        budget = budget_for(conv, settings.thresholds, uow.calibration.factors())
    over_soft = budget.effective(conv.live_tokens) > budget.soft
    too_many = entry_count_due(
        conv.live_messages,
        budget.effective(conv.live_tokens),
        budget,
        settings.entry_trigger,
        settings.entry_trigger_floor,
    )
    compaction = TickCompaction("not needed")
    if (over_soft or too_many) and (not settings.auto_compact or conv.auto_compact is False):
        compaction = TickCompaction("auto-compaction off")  # really off: the journal is still consolidated
    elif over_soft or too_many:
        compaction = _compact(deps, conv.id, tick_helpers, force=too_many and not over_soft)
    return compaction, "soft threshold" if over_soft else "entry count" if too_many else None


def _compact(
    deps: Dependencies, conversation_id: str, tick_helpers: TickHelpers, *, force: bool
) -> TickCompaction:
    """The tick's compaction: through a Message Batch when one is configured, else directly."""
    if tick_helpers.batch_summarizer is not None:
        report = batches.submit(deps, tick_helpers.batch_summarizer, [conversation_id])
        direct = report.applied_directly[0] if report.applied_directly else None
        status = direct.status if direct else "batched" if report.batch_id else "not needed"
        return TickCompaction(status, direct.compaction_id if direct else None, batch_id=report.batch_id)
    outcome = compact(deps, conversation_id, CompactRequest(trigger="sleep", force=force))
    return TickCompaction(
        status=outcome.status,
        compaction_id=outcome.compaction_id,
        tokens_before=outcome.tokens_before,
        tokens_after=outcome.tokens_after,
        summary_tokens=outcome.summary_tokens,
        steps=tuple(dict.fromkeys(s["step"] for s in outcome.steps)),
        reason=outcome.reason,
    )
