"""Compact a conversation: load a snapshot, plan, summarize outside any transaction, apply if the epoch held.

The database is the truth. The snapshot fixes the live rows and the ``compaction_epoch``; the LLM call
happens with no lock and no transaction open; the apply is one transaction that first moves the epoch
on with a compare-and-set. If anyone else compacted, cleared or restored meanwhile, the CAS fails and
the result is discarded (and recorded). Messages appended meanwhile have seqs above the snapshot and
are never touched. Every call but a dry run emits exactly one canonical ``compaction`` event, whatever
its outcome (``OutcomeReporter``).

``compact`` runs the stages in order, each its own function: ``load_snapshot``, ``plan`` (the
domain's ladder), ``summarize_stage`` (summarize or fall back), ``build_record`` and ``apply``
(under the epoch check, recording the compaction in the same transaction).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from functools import partial
from typing import Any, Literal

from sleepcompact.domain.errors import ConversationNotFound, TransientLLMError
from sleepcompact.domain.journal import NewJournalEntry
from sleepcompact.domain.ladder import Plan, Policy, Snapshot, conversation_policy, plan, with_summary_size
from sleepcompact.domain.messages import content_text, part_tokens
from sleepcompact.domain.prompt import SUMMARY_PREFIX, SummaryInput
from sleepcompact.domain.records import CompactionRecord
from sleepcompact.ports import Dependencies, Summarizer
from sleepcompact.services import compaction_hooks
from sleepcompact.services.budgets import budget_for
from sleepcompact.services.compaction_settings import settings_used
from sleepcompact.services.compaction_writes import (
    LiveRows,
    Loaded,
    Summarized,
    apply,
    bare_record,
    build_record,
    folded_entries,
    input_hash,
    live_after,
    record_only,
)
from sleepcompact.services.outcomes import CompactionOutcome, OutcomeReporter, plan_dict
from sleepcompact.services.summaries import DeferToBatch, SummarizerFailed, summarize

Trigger = Literal["sleep", "emergency", "manual", "admin_rerun"]
REPEAT_NOTE = "Note: earlier turns of this conversation have been summarized {n} times; details may be lost."


@dataclass(frozen=True)
class CompactRequest:
    """How one compaction runs.

    ``fallback``: on a failed summary use the offline one (default: only for ``emergency``, since the
    guard must fit its request). ``factors``: the calibration to plan with (a batch result re-plans with
    the factors it was planned with; default: read with the snapshot). ``reserved_tokens``: model tokens
    the call carries besides the rows (the guard's system prompt, tools, memories), which shrink the
    budget. ``deadline``: a ``time.monotonic()`` instant the summarizer call must end by (the guard's,
    set when it was called), else the fallback. ``summarizer``: default the dependencies' one.
    """

    trigger: Trigger = "manual"
    dry_run: bool = False
    force: bool = False
    fallback: bool | None = None
    instructions: str | None = None
    factors: Mapping[str, float] | None = None
    reserved_tokens: int = 0
    deadline: float | None = None
    summarizer: Summarizer | None = None
    live: LiveRows | None = None
    # Called after a successful apply with the live rows as it left them (the guard renders the
    # compacted call from them instead of reading them back); not called when they cannot be known
    # without a read (``compaction_writes.live_after``).
    on_applied: Callable[[LiveRows], None] | None = None
    # A lease (its owner) the apply gives back in its own transaction: the guard's, which otherwise
    # releases it in a transaction of its own after the compaction (one more commit in the request path).
    lease_owner: str | None = None


def compact(
    deps: Dependencies, conversation_id: str, request: CompactRequest | None = None
) -> CompactionOutcome:
    """Run the ladder on one conversation; see the module docstring for the stages and their rules.
    The application's hooks are asked before anything is written and told after (``compaction_hooks``)."""
    return compaction_hooks.told(deps, _compact(deps, conversation_id, request or CompactRequest()))


def _compact(deps: Dependencies, conversation_id: str, request: CompactRequest) -> CompactionOutcome:
    started = time.monotonic()
    loaded = load_snapshot(deps, conversation_id, request)
    report = OutcomeReporter(conversation_id, loaded.conv.tenant_id, request.trigger, loaded.budget, started)
    if (backoff := _backoff(loaded, request, report)) is not None:
        return backoff
    p = plan(loaded.snapshot, loaded.budget, loaded.policy, deps.counter.count, force_summary=request.force)
    if request.dry_run:
        return report.outcome(
            status="dry_run",
            tokens_before=p.tokens_before,
            tokens_after=p.tokens_after,
            reason=p.reason,
            plan=plan_dict(p),
        )
    if p.is_noop:
        return _nothing_to_do(deps, loaded, p, request.trigger, report)
    if deps.hooks:
        answer = compaction_hooks.consult(deps, loaded, p, request.trigger, request.deadline, report)
        if isinstance(answer, CompactionOutcome):
            return answer
        if answer:
            request = replace(request, instructions="\n\n".join(filter(None, [request.instructions, answer])))
    summarized: Summarized | None = None
    if p.summary is not None:
        outcome = summarize_stage(deps, loaded, p, request, report)
        if isinstance(outcome, CompactionOutcome):
            return outcome
        summarized = outcome
        p = with_summary_size(p, summarized.tokens)
    return _write(deps, loaded, p, request, summarized, report)


def _write(
    deps: Dependencies,
    loaded: Loaded,
    p: Plan,
    request: CompactRequest,
    summarized: Summarized | None,
    report: OutcomeReporter,
) -> CompactionOutcome:
    """Stages 4 and 5: the record, then the apply (or the record alone, when the layout saves too little
    or the race was lost)."""
    record = build_record(loaded, p, request.trigger, summarized, report.started)
    saved = p.tokens_before - p.tokens_after
    ratio = loaded.policy.stall_ratio
    # A layout chosen to fit the provider's request limits is applied even when it saves few tokens.
    if saved < ratio * max(p.tokens_before, 1) and not request.force and not p.over_limits:
        least = f"{ratio * 100:g}%"  # the conversation's own ratio (a policy may set it), 5% by default
        why = f"saved {saved} of {p.tokens_before} tokens (< {least})"
        record_only(deps, record, "stalled", why)
        return _done(
            report,
            record,
            summarized,
            status="stalled",
            tokens_after=p.tokens_before,
            reason=f"the layout would save less than {least}; backing off",
        )
    settings = _settings(deps, loaded, request)
    applied = apply(deps, loaded, p, record, summarized, settings, report.started, request.lease_owner)
    if applied is None:
        record_only(deps, record, "discarded", "lost race: the conversation was compacted meanwhile")
        return _done(
            report,
            record,
            summarized,
            status="discarded",
            tokens_after=p.tokens_before,
            reason="lost race: another compaction applied first; nothing written",
        )
    if request.on_applied is not None and (after := live_after(loaded, p, record.id, applied)) is not None:
        request.on_applied(after)
    return _done(
        report, record, summarized, status="applied", tokens_after=applied.tokens_after, reason=p.reason
    )


def _settings(deps: Dependencies, loaded: Loaded, request: CompactRequest) -> dict[str, Any]:
    """The settings this compaction runs with, kept in its record (an admin re-run compares them)."""
    instructions = instructions_for(deps, loaded.conv.tenant_id, loaded.policy, request.instructions)
    return settings_used(deps, loaded.conv, loaded.policy, instructions)


def load_snapshot(deps: Dependencies, conversation_id: str, request: CompactRequest) -> Loaded:
    """Stage 1: the conversation, its live rows and its last compaction, read in one snapshot (a read:
    the apply's epoch check is what makes the result safe to write). The caller's ``request.live`` rows
    are used when nothing changed since they were read."""
    with deps.read_uow() as uow:
        conv = uow.conversations.get(conversation_id)
        if conv is None:
            raise ConversationNotFound(conversation_id)
        live = request.live
        held = (conv.compaction_epoch, conv.created_at, conv.next_seq)
        if live is not None and (live.epoch, live.created_at, live.next_seq) == held:
            rows = live.rows
        else:
            rows = tuple(uow.conversations.live_messages(conversation_id))
        depth = uow.compactions.summary_depth(conversation_id)
        last = uow.compactions.latest(conversation_id)
        factors = request.factors if request.factors is not None else uow.calibration.factors()
    budget = budget_for(conv, deps.settings.thresholds, factors, reserved=request.reserved_tokens)
    snapshot = Snapshot(conversation_id, conv.compaction_epoch, conv.next_seq - 1, rows, depth)
    policy = conversation_policy(conv, deps.policy)
    return Loaded(conv, snapshot, budget, policy, last, factors, input_hash(rows))


def _backoff(loaded: Loaded, request: CompactRequest, report: OutcomeReporter) -> CompactionOutcome | None:
    """A sleep compaction after a stalled one waits until the conversation has grown by the stall ratio."""
    last, conv = loaded.last, loaded.conv
    if request.trigger != "sleep" or request.force or last is None or last.status != "stalled":
        return None
    if conv.live_tokens >= last.tokens_before * (1 + loaded.policy.stall_ratio):
        return None
    return report.done(
        status="backoff",
        tokens_before=conv.live_tokens,
        tokens_after=conv.live_tokens,
        reason="the last compaction stalled and the conversation has not grown since",
    )


def _nothing_to_do(
    deps: Dependencies, loaded: Loaded, p: Plan, trigger: str, report: OutcomeReporter
) -> CompactionOutcome:
    """The plan changes nothing: a no-op when it fits, a recorded stall (backed off) when it cannot."""
    if p.fits:
        return report.done(
            status="noop", tokens_before=p.tokens_before, tokens_after=p.tokens_before, reason=p.reason
        )
    record = bare_record(loaded, trigger, p.tokens_before)
    record_only(deps, record, "stalled", p.reason)
    return report.done(
        status="stalled",
        compaction_id=record.id,
        tokens_before=p.tokens_before,
        tokens_after=p.tokens_before,
        reason=p.reason,
    )


def summarize_stage(
    deps: Dependencies, loaded: Loaded, p: Plan, request: CompactRequest, report: OutcomeReporter
) -> Summarized | CompactionOutcome:
    """Stage 3: the summary message, or how the compaction ended without one (deferred, failed).

    The guard must always fit its request, so emergencies fall back to the offline summary; elsewhere a
    failed summary fails the compaction (history untouched) and transient errors go back to the caller's
    retrier (Celery's, in the worker).
    """
    assert p.summary is not None
    summarizer = request.summarizer or deps.summarizer
    count = deps.counter.count
    inp, note = summary_input(loaded.snapshot, p, count)
    allow = (request.trigger == "emergency") if request.fallback is None else request.fallback
    instructions = instructions_for(deps, loaded.conv.tenant_id, loaded.policy, request.instructions)
    # Under the guard's deadline the folded rows are journaled while the model is asked, so a model that
    # misses its time leaves only the transaction to do after the deadline.
    journaled = _Journaled()
    bounded = request.deadline is not None and allow
    meanwhile = partial(journaled.extract, deps, loaded, p) if bounded else None
    try:
        with report.llm():
            result, fallback_reason = summarize(
                summarizer,
                inp,
                p.summary.tokens_replaced,
                count,
                instructions=instructions,
                fallback=allow,
                deadline=request.deadline,
                meanwhile=meanwhile,
            )
    except DeferToBatch as deferred:
        return _deferred(deps, loaded, p, request.trigger, summarizer, deferred, report)
    except SummarizerFailed as failed:
        record = replace(
            bare_record(loaded, request.trigger, p.tokens_before),
            summarizer_provider=summarizer.provider,
            summarizer_model=summarizer.model,
        )
        record_only(deps, record, "failed", failed.reason)
        outcome = report.done(
            status="failed",
            compaction_id=record.id,
            tokens_before=p.tokens_before,
            tokens_after=p.tokens_before,
            reason=failed.reason,
        )
        if isinstance(failed.cause, TransientLLMError):
            raise failed.cause from None  # the caller's retrier runs it again
        return outcome
    content = f"{SUMMARY_PREFIX}{note}{result.text.strip()}"
    return Summarized(result, content, part_tokens(content, count), fallback_reason, journaled.entries)


def summary_input(snapshot: Snapshot, p: Plan, count: Callable[[str], int]) -> tuple[SummaryInput, str]:
    """What the summarizer is asked for (the folded rows, the previous summary's body, the rows after
    them, the body's budget) and the note the message opens with; the admin re-run's preview asks the
    same, so its summary is the one the re-run would write."""
    assert p.summary is not None
    depth = snapshot.summaries_so_far
    previous = p.summary.previous
    previous_body = content_text(previous.content).removeprefix(SUMMARY_PREFIX).strip() if previous else None
    note = REPEAT_NOTE.format(n=depth + 1) + "\n\n" if depth + 1 >= 3 else ""
    # The planner budgeted the whole summary message; the body gets what the prefix and note leave.
    body_budget = max(48, p.summary.max_tokens - count(SUMMARY_PREFIX + note))
    folded_to = max((r.seq for r in p.summary.rows), default=0)
    following = tuple(r for r in snapshot.rows if r.seq > folded_to and r.kind != "summary")
    return SummaryInput(p.summary.rows, previous_body, body_budget, following), note


@dataclass
class _Journaled:
    """The folded rows' journal entries, once extracted while the model was asked (None: not yet)."""

    entries: list[NewJournalEntry] | None = None

    def extract(self, deps: Dependencies, loaded: Loaded, p: Plan) -> None:
        """Extract them (``folded_entries``), with the conversation's redaction scope."""
        self.entries = folded_entries(loaded.conv, p, deps.redactor(loaded.conv.id))


def instructions_for(deps: Dependencies, tenant_id: str, policy: Policy, call: str | None) -> str | None:
    """The custom summary instructions of every automatic and manual path, broadest first: the
    deployment's, the tenant's, the conversation's (its policy) and this call's; None when there are none."""
    tenants = dict(deps.settings.tenant_summary_instructions)
    parts = [deps.settings.summary_instructions, tenants.get(tenant_id), policy.summary_instructions, call]
    text = "\n\n".join(p.strip() for p in parts if p and p.strip())
    return text or None


def _deferred(
    deps: Dependencies,
    loaded: Loaded,
    p: Plan,
    trigger: str,
    summarizer: Summarizer,
    deferred: DeferToBatch,
    report: OutcomeReporter,
) -> CompactionOutcome:
    """The summary goes into a Message Batch: record a ``running`` compaction holding the request."""
    record = replace(
        bare_record(loaded, trigger, p.tokens_before),
        status="running",
        llm_batch=True,
        summarizer_provider=summarizer.provider,
        summarizer_model=summarizer.model,
    )
    batch = {
        "params": deferred.params,
        "seqs": deferred.seqs,
        "factors": dict(loaded.factors),
        "batch_id": None,
    }
    with deps.uow() as uow:
        uow.compactions.add(record, meta={"batch": batch})
        uow.commit()
    return report.done(
        status="deferred",
        compaction_id=record.id,
        tokens_before=p.tokens_before,
        tokens_after=p.tokens_before,
        reason="summary requested through a message batch",
    )


def _done(
    report: OutcomeReporter,
    record: CompactionRecord,
    summarized: Summarized | None,
    *,
    status: str,
    tokens_after: int,
    reason: str,
) -> CompactionOutcome:
    """The outcome of a compaction that planned and (maybe) summarized, with its canonical line."""
    applied = status == "applied"
    fallback_reason = summarized.fallback_reason if summarized else None
    return report.done(
        result=summarized.result if summarized else None,
        fallback_reason=fallback_reason,
        status=status,
        compaction_id=record.id,
        tokens_before=record.tokens_before,
        tokens_after=tokens_after,
        reason=reason,
        steps=record.steps,
        **(
            {
                "summary_tokens": summarized.tokens if summarized else 0,
                "summary": summarized.content if summarized else None,
                "fallback": fallback_reason,
            }
            if applied
            else {}
        ),
    )
