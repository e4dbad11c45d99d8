"""Export every row of a conversation, and import conversations all-or-nothing.

Exports are lossless documents (``services.export_document``). An import reads any supported file:
a lossless export (``sleepcompact.export/2``) is restored row for row (``services.lossless_import``);
everything else, ``sleepcompact.export/1`` included, is replayed message by message through the
append path.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from sleepcompact.domain.errors import ImportFormatError, InvalidMessage, InvalidSetting
from sleepcompact.domain.formats import ParsedConversation, export_document, export_version, parse_import
from sleepcompact.domain.messages import MessageFormat, NormalizedMessage
from sleepcompact.domain.records import ConversationRecord
from sleepcompact.ports import Dependencies
from sleepcompact.services.clock import utcnow
from sleepcompact.services.conversations import (
    ConversationSpec,
    build_conversation,
    call_book,
    prepare,
    store_prepared,
)
from sleepcompact.services.export_document import (
    FORMAT_VERSION,
    AgentExport,
    ConversationExport,
    ExportStore,
    export_agent,
    export_conversation,
)
from sleepcompact.services.lossless_import import import_document

__all__ = [
    "AgentExport",
    "ConversationExport",
    "ImportSource",
    "export_agent",
    "export_conversation",
    "import_bytes",
    "import_conversations",
    "read_source",
]


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
    store: ExportStore,
    fmt: MessageFormat = "auto",
    all_records: bool = False,
    record: int | None = None,
    conversation_id: str | None = None,
    model: str | None = None,
    context_window: int | None = None,
    plan: str | None = None,
    tenant_id: str | None = None,
    agent_id: str | None = None,
    new_ids: bool = False,
    tenant_map: Mapping[str, str] | None = None,
) -> list[str]:
    """Parse an import file's bytes (any supported format) and import each conversation; returns the ids.

    A lossless export is restored as it was (``services.lossless_import``). Other files are replayed,
    and settings given explicitly win over those the file carries (a version 1 export's model...)."""
    doc = export_document(raw)
    if doc is not None and export_version(doc, source=source) == FORMAT_VERSION:
        _refuse_replay_options(
            {
                "a message format": fmt != "auto",
                "a record": record is not None,  # all_records is what it does anyway
                "a model": model is not None,
                "a context window": context_window is not None,
                "a plan": plan is not None,
            }
        )
        return import_document(
            store,
            doc,
            source=source,
            new_ids=new_ids,
            conversation_id=conversation_id,
            tenant_id=tenant_id,
            agent_id=agent_id,
            tenant_map=tenant_map,
        )
    if tenant_map:
        raise InvalidSetting("a tenant map applies to lossless exports only; give the tenant to import into")
    parsed = parse_import(raw, source=source, all_records=all_records, record=record)
    spec, explicit = _replay_spec(model, context_window, plan, tenant_id, agent_id, conversation_id)
    return import_conversations(deps, parsed, spec, fmt=fmt, source=source, explicit=explicit)


def _replay_spec(
    model: str | None,
    context_window: int | None,
    plan: str | None,
    tenant_id: str | None,
    agent_id: str | None,
    conversation_id: str | None,
) -> tuple[ConversationSpec, frozenset[str]]:
    """The settings of a replayed import, and the names of those given explicitly (they win over what
    the file carries)."""
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
    return spec, frozenset(k for k, v in given.items() if v is not None)


def _refuse_replay_options(given: Mapping[str, bool]) -> None:
    """Options that shape a replayed import make no sense for a lossless export: it brings its own."""
    refused = [name for name, is_given in given.items() if is_given]
    if refused:
        raise InvalidSetting(
            f"{', '.join(refused)} cannot be given for a lossless export: it restores its own settings "
            "and rows (import it with new ids for a copy)"
        )
