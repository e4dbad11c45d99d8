"""Export every message ever appended, and import conversations all-or-nothing."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from sleepcompact.domain.errors import ConversationNotFound, ImportFormatError, InvalidMessage, InvalidSetting
from sleepcompact.domain.formats import ParsedConversation, parse_import
from sleepcompact.domain.messages import MessageFormat, NormalizedMessage
from sleepcompact.domain.records import ConversationRecord, MessageRecord
from sleepcompact.ports import Dependencies
from sleepcompact.services.clock import utcnow
from sleepcompact.services.conversations import (
    ConversationSpec,
    build_conversation,
    call_book,
    prepare,
    store_prepared,
)

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


@dataclass(frozen=True)
class ConversationExport:
    """A conversation's export: its settings and counters, every message exactly as it was appended
    (``appended``, in order: importing an export replays those), every row with its state, and every
    compaction. ``to_dict()`` is the export document (format ``sleepcompact.export/1``)."""

    conversation: dict[str, Any]
    appended: tuple[Any, ...]
    messages: tuple[dict[str, Any], ...]
    compactions: tuple[dict[str, Any], ...]
    format: str = EXPORT_FORMAT

    def to_dict(self) -> dict[str, Any]:
        """The export document, JSON-ready."""
        return {
            "format": self.format,
            "conversation": self.conversation,
            "appended": list(self.appended),
            "messages": list(self.messages),
            "compactions": list(self.compactions),
        }


def export_conversation(
    deps: Dependencies, conversation_id: str, *, shareable: bool = False
) -> ConversationExport:
    """Everything about a conversation: the originals as appended, every row with its state, compactions.

    By default the export is exact, byte for byte (importing it restores the conversation). With
    ``shareable`` every string in it, at any depth, is redacted with the conversation's placeholders:
    for sharing outside the deployment, not for restoring."""
    with deps.read_uow() as uow:
        conv = uow.conversations.get(conversation_id)
        if conv is None:
            raise ConversationNotFound(conversation_id)
        rows = uow.conversations.all_messages(conversation_id)
        compactions = [record for record, _ in uow.compactions.of(conversation_id)]
    exported = ConversationExport(
        conversation={k: _iso(v) for k, v in asdict(conv).items()},
        appended=tuple(json.loads(m.raw) for m in rows if m.raw is not None),
        messages=tuple(_row(m) for m in rows),
        compactions=tuple({k: _iso(v) for k, v in asdict(c).items()} for c in compactions),
    )
    if not shareable:
        return exported
    redact = deps.redactor(conversation_id).redact_value
    return ConversationExport(
        conversation=redact(exported.conversation),
        appended=tuple(redact(list(exported.appended))),
        messages=tuple(redact(list(exported.messages))),
        compactions=tuple(redact(list(exported.compactions))),
        format=f"{EXPORT_FORMAT}+shareable",
    )


def import_conversations(
    deps: Dependencies,
    parsed: list[ParsedConversation],
    spec: ConversationSpec,
    *,
    fmt: MessageFormat = "auto",
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
        prepared = _prepared(deps, conv_data, fmt, source)  # validated and counted before the transaction
        this_spec = replace(
            spec,
            model=spec.model or conv_data.model or deps.settings.default_model,
            conversation_id=spec.conversation_id if len(parsed) == 1 else None,
            metadata={**conv_data.metadata, **dict(spec.metadata or {})},
        )
        with deps.uow() as uow:
            now = utcnow()
            wanted = this_spec.conversation_id
            existing = uow.conversations.get(wanted) if wanted else None
            if existing is None:
                record = build_conversation(this_spec, now)
                uow.conversations.add(record)
                cid = record.id
            else:
                _check_compatible(existing, spec, explicit)
                cid = existing.id
            book = call_book(uow.conversations, cid)
            times = conv_data.sent_at or (None,) * len(prepared)
            for i, ((normalized, tokens), sent_at) in enumerate(zip(prepared, times, strict=True)):
                try:
                    store_prepared(
                        uow.conversations,
                        book,
                        cid,
                        normalized,
                        tokens,
                        now,
                        deps.counter.count,
                        sent_at=sent_at,
                    )
                except InvalidMessage as exc:
                    raise ImportFormatError(f"message {i + 1}: {exc}", source=source) from exc
            uow.commit()
        ids.append(cid)
    return ids


def _prepared(
    deps: Dependencies, conv_data: ParsedConversation, fmt: MessageFormat, source: str
) -> list[tuple[NormalizedMessage, list[int]]]:
    """Every message of one conversation validated and counted; the first bad one names its position."""
    out = []
    for i, message in enumerate(conv_data.messages):
        try:
            out.append(prepare(message, deps.counter, fmt=fmt, max_bytes=deps.settings.max_message_bytes))
        except InvalidMessage as exc:
            raise ImportFormatError(f"message {i + 1}: {exc}", source=source) from exc
    return out


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


ImportSource = bytes | str | Path | Mapping[str, Any] | list[Any]
"""What ``import`` reads: a file's path, its bytes or text, or already parsed JSON."""


def read_source(data: ImportSource) -> tuple[bytes, str]:
    """The bytes to parse and the name errors should give (the file's path, or ``<input>``)."""
    if isinstance(data, Path):
        try:
            return data.read_bytes(), str(data)
        except OSError as exc:
            raise ImportFormatError(f"cannot read the file: {exc.strerror}", source=str(data)) from exc
    if isinstance(data, str):
        return data.encode("utf-8", errors="surrogateescape"), "<input>"
    if isinstance(data, bytes):
        return data, "<input>"
    try:
        # NaN and Infinity are written as such: the parser then refuses them with the message's place.
        return json.dumps(data, ensure_ascii=False).encode("utf-8"), "<input>"
    except RecursionError:
        raise ImportFormatError("the JSON is nested too deeply", source="<input>") from None
    except (TypeError, ValueError) as exc:
        raise ImportFormatError(f"the data is not JSON: {exc}", source="<input>") from exc


def import_bytes(
    deps: Dependencies,
    raw: bytes,
    *,
    source: str,
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
        deps,
        parsed,
        spec,
        fmt=fmt,
        source=source,
        explicit=frozenset(k for k, v in given.items() if v is not None),
    )
