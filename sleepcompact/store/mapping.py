"""Mapping between table rows and the domain's records (shared by every repository module)."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from sleepcompact.domain.messages import Content
from sleepcompact.domain.records import CompactionRecord, ConversationRecord, MessageRecord
from sleepcompact.store.models import Compaction, Conversation, Message


def _aware(value: datetime | None) -> datetime | None:
    # SQLite hands back naive datetimes; everything we store is UTC.
    if value is not None and value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    return value


def aware(value: datetime) -> datetime:
    """A stored time as an aware UTC datetime (SQLite hands them back naive)."""
    return value if value.tzinfo is not None else value.replace(tzinfo=UTC)


def _load(text: str | None) -> Content | None:
    if text is None:
        return None
    value = json.loads(text)
    return value if isinstance(value, str | list) else str(value)


def dump_content(content: Content) -> str:
    """Content as stored: JSON text, non-ASCII kept as is."""
    return json.dumps(content, ensure_ascii=False)


def conversation_record(row: Conversation) -> ConversationRecord:
    """Map a row to its record."""
    return ConversationRecord(
        id=row.id,
        tenant_id=row.tenant_id,
        agent_id=row.agent_id,
        model=row.model,
        plan=row.plan,
        context_window=row.context_window,
        output_reserve=row.output_reserve,
        live_tokens=row.live_tokens,
        live_messages=row.live_messages,
        next_seq=row.next_seq,
        compaction_epoch=row.compaction_epoch,
        created_at=_aware(row.created_at) or row.created_at,
        last_activity_at=_aware(row.last_activity_at) or row.last_activity_at,
        soft_threshold=row.soft_threshold,
        hard_threshold=row.hard_threshold,
        target_ratio=row.target_ratio,
        auto_compact=row.auto_compact,
        lease_owner=row.lease_owner,
        lease_expires_at=_aware(row.lease_expires_at),
        last_sleep_at=_aware(row.last_sleep_at),
        sleep_requested_at=_aware(row.sleep_requested_at),
        metadata=dict(row.meta or {}),
    )


def message_record(row: Message) -> MessageRecord:
    """Map a row to its record."""
    content = _load(row.content)
    return MessageRecord(
        id=row.id,
        conversation_id=row.conversation_id,
        seq=row.seq,
        part=row.part,
        role=row.role,
        kind=row.kind,
        content=content if content is not None else "",
        raw=row.raw,
        tool_name=row.tool_name,
        tool_call_id=row.tool_call_id,
        token_count=row.token_count,
        state=row.state,
        live_content=_load(row.live_content),
        live_tokens=row.live_tokens,
        created_at=_aware(row.created_at) or row.created_at,
        tool_summary=row.tool_summary,
        tool_summary_tokens=row.tool_summary_tokens,
        include_in_history=row.include_in_history,
        compaction_id=row.compaction_id,
        metadata=dict(row.meta or {}),
        call_ref=row.call_ref,
    )


def compaction_record(row: Compaction) -> CompactionRecord:
    """Map a row to its record."""
    return CompactionRecord(
        id=row.id,
        conversation_id=row.conversation_id,
        trigger=row.trigger,
        status=row.status,
        steps=list(row.steps or []),
        first_seq=row.first_seq,
        last_seq=row.last_seq,
        messages_affected=row.messages_affected,
        tokens_before=row.tokens_before,
        tokens_after=row.tokens_after,
        created_at=_aware(row.created_at) or row.created_at,
        summary_message_id=row.summary_message_id,
        previous_compaction_id=row.previous_compaction_id,
        summarizer_provider=row.summarizer_provider,
        summarizer_model=row.summarizer_model,
        llm_input_tokens=row.llm_input_tokens,
        llm_output_tokens=row.llm_output_tokens,
        llm_cost_usd=row.llm_cost_usd,
        llm_batch=row.llm_batch,
        duration_ms=row.duration_ms,
        error=row.error,
        input_hash=row.input_hash,
        snapshot_epoch=row.snapshot_epoch,
    )
