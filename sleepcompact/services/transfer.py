"""Export every message ever appended, and import conversations all-or-nothing."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import asdict, replace
from typing import Any

from sleepcompact.domain.errors import ConversationNotFound, ImportFormatError, InvalidMessage, InvalidSetting
from sleepcompact.domain.formats import ParsedConversation, parse_import
from sleepcompact.domain.messages import MessageFormat
from sleepcompact.domain.records import ConversationRecord, MessageRecord
from sleepcompact.services.conversations import (
    ConversationSpec,
    build_conversation,
    prepare,
    store_prepared,
    utcnow,
)
from sleepcompact.services.ports import TokenCounter, UnitOfWork

EXPORT_FORMAT = "sleepcompact.export/1"


def _iso(value: Any) -> Any:
    return value.isoformat() if hasattr(value, "isoformat") else value


def _row(m: MessageRecord) -> dict[str, Any]:
    return {
        "seq": m.seq,
        "part": m.part,
        "role": m.role,
        "kind": m.kind,
        "state": m.state,
        "content": m.content,
        "live_content": m.live_content,
        "tool_name": m.tool_name,
        "tool_call_id": m.tool_call_id,
        "token_count": m.token_count,
        "live_tokens": m.live_tokens,
        "tool_summary": m.tool_summary,
        "include_in_history": m.include_in_history,
        "compaction_id": m.compaction_id,
        "created_at": _iso(m.created_at),
        "metadata": m.metadata,
    }


def export_conversation(uow: UnitOfWork, conversation_id: str) -> dict[str, Any]:
    """Everything about a conversation: the originals as appended, every row with its state, compactions.

    ``appended`` holds each appended message exactly as it was received, in
    order; importing an export replays those.
    """
    with uow:
        conv = uow.repo.get_conversation(conversation_id)
        if conv is None:
            raise ConversationNotFound(conversation_id)
        rows = uow.repo.all_messages(conversation_id)
        compactions = uow.repo.compactions(conversation_id)
    conversation = {k: _iso(v) for k, v in asdict(conv).items()}
    return {
        "format": EXPORT_FORMAT,
        "conversation": conversation,
        "appended": [json.loads(m.raw) for m in rows if m.raw is not None],
        "messages": [_row(m) for m in rows],
        "compactions": [{k: _iso(v) for k, v in asdict(c).items()} for c in compactions],
    }


def import_conversations(
    uow_factory: Callable[[], UnitOfWork],
    counter: TokenCounter,
    parsed: list[ParsedConversation],
    spec: ConversationSpec,
    *,
    default_model: str,
    fmt: MessageFormat = "auto",
    max_bytes: int = 2 * 1024 * 1024,
    source: str = "<input>",
    explicit: frozenset[str] = frozenset(),
) -> list[str]:
    """Import each parsed conversation in its own transaction; returns the ids.

    With ``spec.conversation_id`` and one conversation, messages go to that
    conversation (created if it does not exist). A bad message anywhere in a
    conversation stores none of it.
    """
    if spec.conversation_id and len(parsed) > 1:
        raise InvalidSetting(
            f"--conversation names one conversation, but the import holds {len(parsed)}; "
            "pick one with --record, or drop --conversation"
        )
    ids: list[str] = []
    for conv_data in parsed:
        # Validate and count everything before opening the transaction.
        prepared = []
        for i, message in enumerate(conv_data.messages):
            try:
                prepared.append(prepare(message, counter, fmt=fmt, max_bytes=max_bytes))
            except InvalidMessage as exc:
                raise ImportFormatError(f"message {i + 1}: {exc}", source=source) from exc
        model = spec.model or conv_data.model or default_model
        this_spec = replace(
            spec,
            model=model,
            conversation_id=spec.conversation_id if len(parsed) == 1 else None,
            metadata={**conv_data.metadata, **dict(spec.metadata or {})},
        )
        uow = uow_factory()
        with uow:
            now = utcnow()
            existing = (
                uow.repo.get_conversation(this_spec.conversation_id) if this_spec.conversation_id else None
            )
            if existing is None:
                record = build_conversation(this_spec, now)
                uow.repo.add_conversation(record)
                cid = record.id
            else:
                _check_compatible(existing, spec, explicit)
                cid = existing.id
            for i, (normalized, tokens) in enumerate(prepared):
                try:
                    store_prepared(uow.repo, cid, normalized, tokens, now, counter.count)
                except InvalidMessage as exc:
                    raise ImportFormatError(f"message {i + 1}: {exc}", source=source) from exc
            uow.commit()
        ids.append(cid)
    return ids


def _check_compatible(existing: ConversationRecord, spec: ConversationSpec, explicit: frozenset[str]) -> None:
    """Options given for an import into an existing conversation must match it (never cross a tenant)."""
    wanted = {
        "tenant_id": spec.tenant_id,
        "agent_id": spec.agent_id,
        "model": spec.model,
        "context_window": spec.context_window,
        "plan": spec.plan,
    }
    for name in sorted(explicit):
        value = wanted.get(name)
        have = getattr(existing, name)
        if value is not None and value != have:
            raise InvalidSetting(
                f"conversation {existing.id!r} exists with {name} {have!r}; the import asked for {value!r} "
                "(options like this only apply to new conversations)"
            )


def import_bytes(
    uow_factory: Callable[[], UnitOfWork],
    counter: TokenCounter,
    raw: bytes,
    *,
    source: str,
    default_model: str,
    max_bytes: int,
    fmt: MessageFormat = "auto",
    all_records: bool = False,
    record: int | None = None,
    conversation_id: str | None = None,
    model: str | None = None,
    context_window: int | None = None,
    plan: str | None = None,
    tenant_id: str | None = None,
    agent_id: str | None = None,
) -> list[str]:
    """Parse an import file's bytes (any supported format) and import each conversation; returns the ids.

    Settings given explicitly win over those the file carries (an export's model, window, plan).
    """
    parsed = parse_import(raw, source=source, all_records=all_records, record=record)
    given = {
        "model": model,
        "context_window": context_window,
        "plan": plan,
        "tenant_id": tenant_id,
        "agent_id": agent_id,
    }
    spec = ConversationSpec(
        model=model or "",
        tenant_id=tenant_id or "default",
        agent_id=agent_id or "default",
        plan=plan,
        context_window=context_window,
        conversation_id=conversation_id,
    )
    return import_conversations(
        uow_factory,
        counter,
        parsed,
        spec,
        default_model=default_model,
        fmt=fmt,
        max_bytes=max_bytes,
        source=source,
        explicit=frozenset(k for k, v in given.items() if v is not None),
    )
