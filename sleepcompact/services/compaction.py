"""Compact a conversation: snapshot, plan, summarize outside any transaction, apply if the epoch held.

The database is the truth. The snapshot fixes the live rows and the
``compaction_epoch``; the LLM call happens with no lock and no transaction
open; the apply is one transaction that first moves the epoch on with a
compare-and-set. If anyone else compacted, cleared or restored meanwhile, the
CAS fails and the result is discarded (and recorded). Messages appended
meanwhile have seqs above the snapshot and are never touched. Every call but a dry run emits exactly
one canonical ``compaction`` event, whatever its outcome (``OutcomeReporter``).
"""

from __future__ import annotations

import contextvars
import time
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FuturesTimeout
from dataclasses import asdict
from typing import Any, Literal

import structlog

from sleepcompact.domain.budget import Thresholds, model_family, model_spec
from sleepcompact.domain.errors import ConversationNotFound, SleepcompactError, TransientLLMError
from sleepcompact.domain.injection import flag_imperatives
from sleepcompact.domain.ladder import Policy, Snapshot, plan, with_summary_size
from sleepcompact.domain.messages import content_text, part_tokens
from sleepcompact.domain.prompt import SUMMARY_PREFIX, SummaryInput, SummaryPrompt, build_prompt
from sleepcompact.domain.records import CompactionRecord, NewMessage
from sleepcompact.domain.summary import offline_summary
from sleepcompact.services.compaction_records import (
    CompactionOutcome,
    OutcomeReporter,
    _bare_record,
    _input_hash,
    _journal,
    _plan_dict,
    _record_only,
    _with,
    conversation_policy,
    validate_summary,
)
from sleepcompact.services.context import budget_for
from sleepcompact.services.conversations import new_id, utcnow
from sleepcompact.services.ports import Summarizer, SummaryResult, TokenCounter, UnitOfWork

log = structlog.get_logger(__name__)

Trigger = Literal["sleep", "emergency", "manual", "admin_rerun"]
REPEAT_NOTE = "Note: earlier turns of this conversation have been summarized {n} times; details may be lost."


class CompactionNotFound(SleepcompactError):
    """The compaction id names no compaction."""


class NotRestorable(SleepcompactError):
    """Only applied compactions can be restored."""


def _summarize(
    summarizer: Summarizer,
    inp: SummaryInput,
    replaced: int,
    count: Callable[[str], int],
    instructions: str | None,
    fallback: bool,
    deadline_s: float | None = None,
) -> tuple[SummaryResult, str | None]:
    """The summarizer's result; on failure the offline summary (``fallback``) or the error, raised."""
    prompt = build_prompt(inp, instructions=instructions, count=count)
    try:
        result = _call_with_deadline(summarizer, inp, prompt, deadline_s)
        validate_summary(result.text, replaced, count)
        return result, None
    except DeferToBatch:
        raise
    except Exception as exc:
        reason = f"{type(exc).__name__}: {exc}"
        if not fallback:
            raise SummarizerFailed(reason, exc) from exc
        # The type only: an exception's message may quote the prompt (the record keeps the full reason).
        log.warning("summarizer_fallback", provider=summarizer.provider, error=type(exc).__name__)
        text = offline_summary(inp, count)
        return SummaryResult(text=text, provider="offline", model="offline"), reason


def _call_with_deadline(
    summarizer: Summarizer, inp: SummaryInput, prompt: SummaryPrompt, deadline_s: float | None
) -> SummaryResult:
    """Call the summarizer; with a deadline, in a thread we stop waiting for when it passes.

    The abandoned call finishes (or times out) on its own; its result is dropped, never applied.
    """
    if deadline_s is None:
        return summarizer.summarize(inp, prompt)
    pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="summarize")
    # In the caller's context, so what the summarizer logs keeps the bound ids (task, conversation).
    future = pool.submit(contextvars.copy_context().run, summarizer.summarize, inp, prompt)
    pool.shutdown(wait=False)
    try:
        return future.result(timeout=max(0.0, deadline_s))
    except FuturesTimeout as exc:
        raise TimeoutError(f"no summary within the {deadline_s:g} s deadline") from exc


class DeferToBatch(Exception):
    """Raised by a batch-collecting summarizer: record the request and apply the result later."""

    def __init__(self, params: dict[str, Any], seqs: list[int]) -> None:
        super().__init__("deferred to a message batch")
        self.params = params
        self.seqs = seqs


class SummarizerFailed(Exception):
    """Internal: the summarizer failed and no fallback was allowed."""

    def __init__(self, reason: str, cause: BaseException) -> None:
        super().__init__(reason)
        self.reason = reason
        self.cause = cause


def compact(
    uow_factory: Callable[[], UnitOfWork],
    counter: TokenCounter,
    summarizer: Summarizer,
    conversation_id: str,
    *,
    trigger: Trigger = "manual",
    defaults: Thresholds,
    policy: Policy | None = None,
    dry_run: bool = False,
    force: bool = False,
    fallback: bool | None = None,
    instructions: str | None = None,
    factors: Mapping[str, float] | None = None,
    reserved_tokens: int = 0,
    deadline_s: float | None = None,
) -> CompactionOutcome:
    """Run the ladder on one conversation; see the module docstring for the concurrency rules.

    ``reserved_tokens`` (model tokens the call carries besides the rows) shrink the budget planned
    against; ``deadline_s`` bounds the summarizer call (past it, the failure rules above apply).
    """
    policy = policy or Policy()
    started = time.monotonic()
    with uow_factory() as uow:
        conv = uow.repo.get_conversation(conversation_id)
        if conv is None:
            raise ConversationNotFound(conversation_id)
        rows = tuple(uow.repo.live_messages(conversation_id))
        depth = uow.repo.summary_depth(conversation_id)
        history = uow.repo.compactions(conversation_id)
        if factors is None:  # a batch result re-plans with the factors it was planned with
            factors = uow.repo.calibrations()
    budget = budget_for(conv, defaults, factors, reserved=reserved_tokens)
    policy = conversation_policy(conv, policy)
    snapshot = Snapshot(conversation_id, conv.compaction_epoch, conv.next_seq - 1, rows, depth)
    report = OutcomeReporter(conversation_id, conv.tenant_id, trigger, budget, started)

    last = history[-1] if history else None
    stalled = trigger == "sleep" and not force and last is not None and last.status == "stalled"
    if stalled and last is not None and conv.live_tokens < last.tokens_before * (1 + policy.stall_ratio):
        return report.done(
            status="backoff",
            tokens_before=conv.live_tokens,
            tokens_after=conv.live_tokens,
            reason="the last compaction stalled and the conversation has not grown since",
        )

    p = plan(snapshot, budget, policy, counter.count, force_summary=force)
    if dry_run:
        return report.outcome(
            status="dry_run",
            tokens_before=p.tokens_before,
            tokens_after=p.tokens_after,
            reason=p.reason,
            plan=_plan_dict(p),
        )
    if p.is_noop and not p.fits:
        # Nothing the ladder may do brings it under the target: that is a stall, recorded and backed off.
        record = _bare_record(conversation_id, trigger, conv, p.tokens_before, _input_hash(rows))
        _record_only(uow_factory, record, "stalled", p.reason)
        return report.done(
            status="stalled",
            compaction_id=record.id,
            tokens_before=p.tokens_before,
            tokens_after=p.tokens_before,
            reason=p.reason,
        )
    if p.is_noop:
        return report.done(
            status="noop",
            tokens_before=p.tokens_before,
            tokens_after=p.tokens_before,
            reason=p.reason,
        )

    result: SummaryResult | None = None
    fallback_reason: str | None = None
    summary_content: str | None = None
    summary_tokens = 0
    inp: SummaryInput | None = None
    if p.summary is not None:
        previous_body = None
        if p.summary.previous is not None:
            previous_body = content_text(p.summary.previous.content).removeprefix(SUMMARY_PREFIX).strip()
        note = REPEAT_NOTE.format(n=depth + 1) + "\n\n" if depth + 1 >= 3 else ""
        # The planner budgeted the whole summary message; the body gets what the prefix and note leave.
        body_budget = max(48, p.summary.max_tokens - counter.count(SUMMARY_PREFIX + note))
        inp = SummaryInput(p.summary.rows, previous_body, body_budget)
        # The guard must always fit its request, so emergencies fall back offline; elsewhere a failed
        # summary fails the compaction (history untouched) and transient errors go back to the retrier.
        allow = (trigger == "emergency") if fallback is None else fallback
        try:
            with report.llm():
                result, fallback_reason = _summarize(
                    summarizer, inp, p.summary.tokens_replaced, counter.count, instructions, allow, deadline_s
                )
        except DeferToBatch as deferred:
            record = _bare_record(conversation_id, trigger, conv, p.tokens_before, _input_hash(rows))
            record = _with(record, summarizer_provider=summarizer.provider, summarizer_model=summarizer.model)
            with uow_factory() as uow:
                pending = {
                    "batch": {
                        "params": deferred.params,
                        "seqs": deferred.seqs,
                        "factors": dict(factors),
                        "batch_id": None,
                    }
                }
                uow.repo.add_compaction(_with(record, status="running", llm_batch=True), meta=pending)
                uow.commit()
            return report.done(
                status="deferred",
                compaction_id=record.id,
                tokens_before=p.tokens_before,
                tokens_after=p.tokens_before,
                reason="summary requested through a message batch",
            )
        except SummarizerFailed as failed:
            record = _bare_record(conversation_id, trigger, conv, p.tokens_before, _input_hash(rows))
            record = _with(record, summarizer_provider=summarizer.provider, summarizer_model=summarizer.model)
            _record_only(uow_factory, record, "failed", failed.reason)
            outcome = report.done(
                status="failed",
                compaction_id=record.id,
                tokens_before=p.tokens_before,
                tokens_after=p.tokens_before,
                reason=failed.reason,
            )
            if isinstance(failed.cause, TransientLLMError):
                raise failed.cause from None  # the worker's retrier runs it again
            return outcome
        summary_content = f"{SUMMARY_PREFIX}{note}{result.text.strip()}"
        summary_tokens = part_tokens(summary_content, counter.count)
        p = with_summary_size(p, summary_tokens)

    saved = p.tokens_before - p.tokens_after
    compaction_id = new_id("cmp")
    steps = [asdict(s) for s in p.steps]
    if fallback_reason:
        step = {"step": "fallback", "section": "HISTORY", "messages": 0, "tokens_saved": 0}
        steps.append({**step, "reason": fallback_reason})
    record = CompactionRecord(
        id=compaction_id,
        conversation_id=conversation_id,
        trigger=trigger,
        status="applied",
        steps=steps,
        first_seq=min((c.seq for c in p.changes), default=None),
        last_seq=max((c.seq for c in p.changes), default=None),
        messages_affected=len(p.changes),
        tokens_before=p.tokens_before,
        tokens_after=p.tokens_after,
        created_at=utcnow(),
        previous_compaction_id=last.id if last is not None and last.status == "applied" else None,
        summarizer_provider=result.provider if result else None,
        summarizer_model=result.model if result else None,
        llm_input_tokens=result.input_tokens if result else 0,
        llm_output_tokens=result.output_tokens if result else 0,
        llm_cost_usd=result.cost_usd if result else 0.0,
        llm_batch=result.batch if result else False,
        duration_ms=int((time.monotonic() - started) * 1000),
        error=fallback_reason,
        input_hash=_input_hash(rows),
        snapshot_epoch=conv.compaction_epoch,
    )
    if saved < policy.stall_ratio * max(p.tokens_before, 1) and not force:
        _record_only(uow_factory, record, "stalled", f"saved {saved} of {p.tokens_before} tokens (< 5%)")
        return report.done(
            result=result,
            fallback_reason=fallback_reason,
            status="stalled",
            compaction_id=compaction_id,
            tokens_before=p.tokens_before,
            tokens_after=p.tokens_before,
            reason="the layout would save less than 5%; backing off",
            steps=steps,
        )

    flags = flag_imperatives(summary_content or "")
    with uow_factory() as uow:
        if not uow.repo.bump_epoch(conversation_id, conv.compaction_epoch):
            uow.rollback()
            lost = True
        else:
            lost = False
            now = utcnow()
            prior = uow.repo.apply_changes(compaction_id, p.changes)
            summary_id: int | None = None
            if summary_content is not None:
                seq = uow.repo.reserve_seqs(conversation_id, 1, 0, 0, now, activity=False)
                assert seq is not None
                meta: dict[str, Any] = {
                    "compaction_id": compaction_id,
                    "provider": record.summarizer_provider,
                    "model": record.summarizer_model,
                    "flagged": bool(flags),
                }
                (summary_id,) = uow.repo.add_messages(
                    conversation_id,
                    [
                        NewMessage(
                            seq,
                            0,
                            "user",
                            "summary",
                            summary_content,
                            None,
                            None,
                            None,
                            summary_tokens,
                            metadata=meta,
                        )
                    ],
                    now,
                )
            tokens_after, _ = uow.repo.recount(conversation_id)
            final = _with(record, summary_message_id=summary_id, tokens_after=tokens_after)
            uow.repo.add_compaction(
                final,
                meta={"prior": prior, "summary": summary_content, "flags": flags, "reason": p.reason},
            )
            uow.repo.add_journal_entries(_journal(conv, p, summary_content, compaction_id), now)
            if result is not None and result.counted_input_tokens and result.input_tokens:
                # Real usage calibrates the tokenizer factor of the summarizer's model family.
                uow.repo.record_calibration(
                    model_family(result.model),
                    result.counted_input_tokens,
                    result.input_tokens,
                    now,
                    model_spec(result.model).safety_factor,
                )
            uow.commit()
    if lost:
        _record_only(uow_factory, record, "discarded", "lost race: the conversation was compacted meanwhile")
        return report.done(
            result=result,
            fallback_reason=fallback_reason,
            status="discarded",
            compaction_id=compaction_id,
            tokens_before=p.tokens_before,
            tokens_after=p.tokens_before,
            reason="lost race: another compaction applied first; nothing written",
            steps=steps,
        )
    return report.done(
        result=result,
        fallback_reason=fallback_reason,
        status="applied",
        compaction_id=compaction_id,
        tokens_before=p.tokens_before,
        tokens_after=tokens_after,
        reason=p.reason,
        steps=steps,
        summary_tokens=summary_tokens,
        summary=summary_content,
        fallback=fallback_reason,
    )
