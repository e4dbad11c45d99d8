"""The writes of a compaction: its record, the apply under the epoch check, and the records kept when
nothing changed (stalled, failed, deferred, discarded).

``apply`` is the one transaction that changes history: it moves the epoch on with a compare-and-set
(a lost race writes nothing), writes the rows' new live views and the summary message, records the
compaction with each row's prior state (what ``restore`` puts back), and journals the facts the
summary folds, so they are safe in the journal before they leave the live context.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Mapping
from dataclasses import asdict, dataclass, replace
from datetime import datetime
from typing import Any

from sleepcompact.domain.budget import Budget, model_family, model_spec
from sleepcompact.domain.extraction import extract_facts, user_name_of
from sleepcompact.domain.injection import flag_imperatives
from sleepcompact.domain.journal import NewJournalEntry
from sleepcompact.domain.ladder import Plan, Policy, Snapshot
from sleepcompact.domain.records import CompactionRecord, ConversationRecord, MessageRecord, NewMessage
from sleepcompact.domain.steps import rows_after
from sleepcompact.ports import Dependencies, SummaryResult, TextRedactor, UnitOfWork
from sleepcompact.services.clock import new_id, utcnow


@dataclass(frozen=True)
class Loaded:
    """What the snapshot read: the conversation, its live rows, its budget and policy, its history."""

    conv: ConversationRecord
    snapshot: Snapshot
    budget: Budget
    policy: Policy
    last: CompactionRecord | None
    factors: Mapping[str, float]
    input_hash: str


@dataclass(frozen=True)
class Summarized:
    """The summarize stage's result: the summary message's text and size, and what it cost."""

    result: SummaryResult
    content: str
    tokens: int
    fallback_reason: str | None
    # The folded rows' journal entries, when they were extracted while the model was asked (the guard's
    # emergency: the write after a deadline then has no extraction left to do); None: extract at apply.
    folded: list[NewJournalEntry] | None = None


@dataclass(frozen=True)
class Applied:
    """What an apply wrote: the live tokens after it, the epoch it moved the conversation to, and the
    summary row as stored (read back in the same transaction), if it wrote one."""

    tokens_after: int
    epoch: int
    summary: MessageRecord | None


@dataclass(frozen=True)
class LiveRows:
    """Live rows the caller already read (the guard's rendering), and the snapshot they belong to: used
    instead of reading them again when the conversation (the same one: ``created_at``) is still at that
    epoch and ``next_seq``."""

    epoch: int
    created_at: datetime
    next_seq: int
    rows: tuple[MessageRecord, ...]


def live_after(loaded: Loaded, p: Plan, compaction_id: str, applied: Applied) -> LiveRows | None:
    """The live rows as the apply left them, without reading them back: the snapshot's rows with the
    plan's changes, then the summary row. None when rows were appended between the snapshot and the
    apply and the summary's seq comes after them (the list would miss them): the caller reads instead.
    Without a summary, rows appended meanwhile have seqs from the snapshot's ``next_seq`` on, which is
    where a reader of the returned rows goes on from."""
    conv = loaded.conv
    rows = rows_after(loaded.snapshot.rows, p.changes, compaction_id)
    next_seq = conv.next_seq
    if applied.summary is not None:
        if applied.summary.seq != next_seq:
            return None
        rows.append(applied.summary)
        next_seq += 1
    return LiveRows(applied.epoch, conv.created_at, next_seq, tuple(rows))


def build_record(
    loaded: Loaded, p: Plan, trigger: str, summarized: Summarized | None, started: float
) -> CompactionRecord:
    """Stage 4: the compaction's record as it will be applied (or recorded as stalled or discarded)."""
    steps = [asdict(s) for s in p.steps]
    result = summarized.result if summarized else None
    fallback_reason = summarized.fallback_reason if summarized else None
    if fallback_reason:
        steps.append(
            {
                "step": "fallback",
                "section": "HISTORY",
                "messages": 0,
                "tokens_saved": 0,
                "reason": fallback_reason,
            }
        )
    last = loaded.last
    return CompactionRecord(
        id=new_id("cmp"),
        conversation_id=loaded.conv.id,
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
        input_hash=loaded.input_hash,
        snapshot_epoch=loaded.conv.compaction_epoch,
    )


def apply(
    deps: Dependencies,
    loaded: Loaded,
    p: Plan,
    record: CompactionRecord,
    summarized: Summarized | None,
    settings: dict[str, Any],
    started: float,
    lease_owner: str | None = None,
) -> Applied | None:
    """Stage 5: in one transaction, only if the epoch is still the snapshot's: the row changes, the
    summary message, the compaction record, the journal entries and the calibration. Returns what it
    wrote, or None when the race was lost (nothing written). ``settings``: what an admin re-run compares
    today's settings with. ``started``: the compaction's ``time.monotonic()`` start; the record's
    duration runs up to the record's own write. ``lease_owner``: a lease given back in the same
    transaction when it applies."""
    conversation_id = loaded.conv.id
    # Journaled facts are redacted before the transaction (CPU work on every folded row, no lock held).
    content = summarized.content if summarized else None
    folded = summarized.folded if summarized else None
    entries = journal_entries(loaded.conv, p, content, record.id, deps.redactor(conversation_id), folded)
    result = summarized.result if summarized else None
    # The record keeps what was taken out of the model's summary (its flags and lines); the live summary
    # is marked only when its own text still reads as instructions.
    live_flags = flag_imperatives(content or "")
    flags = list(dict.fromkeys([*(result.flags if result else ()), *live_flags]))
    quarantined = list(result.quarantined) if result else []
    with deps.uow() as uow:
        if not uow.conversations.bump_epoch(conversation_id, loaded.conv.compaction_epoch):
            uow.rollback()
            return None
        now = utcnow()
        prior = uow.compactions.apply_changes(record.id, p.changes, loaded.snapshot.rows)
        summary = _add_summary(uow, record, summarized, bool(live_flags), now) if summarized else None
        tokens_after, _ = uow.conversations.recount(conversation_id)
        meta: dict[str, Any] = {
            "prior": prior,
            "summary": content,
            "flags": flags,
            "quarantined": quarantined,
            "settings": settings,
        }
        # The extraction above and the row changes are the compaction's work, not what a tick adds to it.
        took = int((time.monotonic() - started) * 1000)
        summary_id = summary.id if summary else None
        uow.compactions.add(
            replace(record, summary_message_id=summary_id, tokens_after=tokens_after, duration_ms=took),
            meta={**meta, "reason": p.reason},
        )
        uow.memories.add_entries(entries, now)
        if result is not None and result.counted_input_tokens and result.input_tokens:
            # Real usage calibrates the tokenizer factor of the summarizer's model family.
            default = model_spec(result.model).safety_factor
            uow.calibration.record(
                model_family(result.model), result.counted_input_tokens, result.input_tokens, now, default
            )
        if lease_owner is not None:
            uow.ticks.release_lease(conversation_id, lease_owner)
        uow.commit()
    return Applied(tokens_after, loaded.conv.compaction_epoch + 1, summary)


def _add_summary(
    uow: UnitOfWork, record: CompactionRecord, summarized: Summarized, flagged: bool, now: datetime
) -> MessageRecord:
    """Write the summary message (a user-side ``summary`` row after every seq so far); the row as stored
    (one indexed read: the guard renders the compacted context from it without reloading the rest)."""
    conversation_id = record.conversation_id
    seq = uow.conversations.reserve_seqs(conversation_id, 1, 0, 0, now, activity=False)
    assert seq is not None
    meta: dict[str, Any] = {
        "compaction_id": record.id,
        "provider": record.summarizer_provider,
        "model": record.summarizer_model,
        "flagged": flagged,
        "quarantined": len(summarized.result.quarantined),
    }
    row = NewMessage(
        seq, 0, "user", "summary", summarized.content, None, None, None, summarized.tokens, metadata=meta
    )
    (summary_id,) = uow.conversations.add_messages(conversation_id, [row], now)
    return next(r for r in uow.conversations.live_messages(conversation_id, seq) if r.id == summary_id)


def input_hash(rows: tuple[MessageRecord, ...]) -> str:
    """A fingerprint of the live rows a compaction was planned on."""
    digest = hashlib.sha256()
    for r in rows:
        digest.update(f"{r.id}:{r.seq}:{r.state}:{r.live_tokens}\n".encode())
    return digest.hexdigest()


def bare_record(loaded: Loaded, trigger: str, tokens: int) -> CompactionRecord:
    """A record for a compaction that changes no row (stalled, failed, deferred)."""
    return CompactionRecord(
        id=new_id("cmp"),
        conversation_id=loaded.conv.id,
        trigger=trigger,
        status="stalled",
        steps=[],
        first_seq=None,
        last_seq=None,
        messages_affected=0,
        tokens_before=tokens,
        tokens_after=tokens,
        created_at=utcnow(),
        input_hash=loaded.input_hash,
        snapshot_epoch=loaded.conv.compaction_epoch,
    )


def record_only(deps: Dependencies, record: CompactionRecord, status: str, why: str) -> None:
    """Record a compaction that changed nothing (stalled, failed, or lost its race)."""
    with deps.uow() as uow:
        uow.compactions.add(replace(record, status=status, error=why, tokens_after=record.tokens_before))
        uow.commit()


def journal_entries(
    conv: ConversationRecord,
    p: Plan,
    summary: str | None,
    compaction_id: str,
    redactor: TextRedactor,
    folded: list[NewJournalEntry] | None = None,
) -> list[NewJournalEntry]:
    """Facts leave the live context only after they are safe in the journal, and secrets never get in.

    The folded rows are redacted before extraction: extraction keeps a tool call's argument values
    without their names (``{"password": "..."}`` becomes the bare value) and sentences without the
    line around them, which would leave nothing to recognise a secret by. Every entry is redacted
    again as written (the summary too), with the conversation's placeholders. ``folded``: the folded
    rows' entries, already extracted (``folded_entries``)."""
    if p.summary is None:
        return []
    entries = list(folded) if folded is not None else folded_entries(conv, p, redactor)
    if summary is not None:
        entries.append(
            NewJournalEntry(
                conv.tenant_id,
                conv.agent_id,
                conv.id,
                redactor.redact(f"[{compaction_id}] {summary}"),
                # The summarizer read tool output too: environmental, like any text of that provenance
                # (and never promoted: summaries are history, not facts).
                "environmental",
                "context_synthesis",
                ("summary",),
                "environment",
            )
        )
    return entries


def folded_entries(conv: ConversationRecord, p: Plan, redactor: TextRedactor) -> list[NewJournalEntry]:
    """The journal entries of the rows the summary folds (redacted before extraction, see
    ``journal_entries``): the CPU-heavy part of a compaction's write, done once per compaction."""
    if p.summary is None:
        return []
    rows = [replace(r, content=redactor.redact_value(r.content)) for r in p.summary.rows]
    return [
        NewJournalEntry(
            conv.tenant_id,
            conv.agent_id,
            conv.id,
            redactor.redact(d.content),
            d.source_type,
            "pre_compaction",
            d.tags,
            d.provenance,
        )
        for d in extract_facts(rows, user_name=user_name_of(conv.metadata))
    ]
