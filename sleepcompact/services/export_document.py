"""The lossless export document, ``sleepcompact.export/2``: its fields, and how stored rows become it.

A document holds one conversation (``scope: conversation``) or every conversation of one agent
(``scope: agent``), each with every column of its conversation row (but the lease), every message row
and every compaction record; with the agent's memory, also its journal and memories. Importing it
(``services.lossless_import``) writes exactly those rows back. The fields below are the schema
``docs/export.md`` describes; a test checks they cover every column of the tables.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, replace
from types import TracebackType
from typing import Any, Literal, Protocol, Self

from sleepcompact.domain.errors import ConversationNotFound, InvalidSetting
from sleepcompact.ports import Dependencies
from sleepcompact.services.memories import agent_scope

FORMAT = "sleepcompact.export/2"
FORMAT_VERSION = 2
SHAREABLE = "+shareable"

FieldKind = Literal["str", "int", "float", "bool", "time", "object", "list", "content"]
Field = tuple[str, FieldKind, bool]
"""A document field: its name (the column's), its JSON kind, and whether it may be null."""

CONVERSATION_FIELDS: tuple[Field, ...] = (
    ("id", "str", False),
    ("tenant_id", "str", False),
    ("agent_id", "str", False),
    ("model", "str", False),
    ("plan", "str", True),
    ("context_window", "int", False),
    ("output_reserve", "int", False),
    ("soft_threshold", "float", True),
    ("hard_threshold", "float", True),
    ("target_ratio", "float", True),
    ("auto_compact", "bool", True),
    ("live_tokens", "int", False),
    ("live_messages", "int", False),
    ("next_seq", "int", False),
    ("compaction_epoch", "int", False),
    ("last_activity_at", "time", False),
    ("last_sleep_at", "time", True),
    ("sleep_requested_at", "time", True),
    ("created_at", "time", False),
    ("metadata", "object", False),
)
NOT_EXPORTED = ("lease_owner", "lease_expires_at")
"""Conversation columns left out: a lease belongs to a worker of the exporting deployment."""

MESSAGE_FIELDS: tuple[Field, ...] = (
    ("id", "int", False),
    ("seq", "int", False),
    ("part", "int", False),
    ("role", "str", False),
    ("kind", "str", False),
    ("state", "str", False),
    ("content", "content", False),
    ("live_content", "content", True),
    ("tool_name", "str", True),
    ("tool_call_id", "str", True),
    ("call_ref", "str", True),
    ("token_count", "int", False),
    ("live_tokens", "int", False),
    ("tool_summary", "str", True),
    ("tool_summary_tokens", "int", True),
    ("include_in_history", "bool", False),
    ("compaction_id", "str", True),
    ("created_at", "time", False),
    ("metadata", "object", False),
    ("appended_index", "int", True),
)
"""``appended_index``: where the row's ``raw`` column (the message exactly as appended, on a message's
first part) sits in the document's ``appended``; null when the row has none. ``raw_text`` may follow,
the stored text itself, when re-serializing ``appended`` would not give it back byte for byte."""

COMPACTION_FIELDS: tuple[Field, ...] = (
    ("id", "str", False),
    ("trigger", "str", False),
    ("status", "str", False),
    ("steps", "list", False),
    ("first_seq", "int", True),
    ("last_seq", "int", True),
    ("messages_affected", "int", False),
    ("tokens_before", "int", False),
    ("tokens_after", "int", False),
    ("summary_message_id", "int", True),
    ("previous_compaction_id", "str", True),
    ("summarizer_provider", "str", True),
    ("summarizer_model", "str", True),
    ("llm_input_tokens", "int", False),
    ("llm_output_tokens", "int", False),
    ("llm_cost_usd", "float", False),
    ("llm_batch", "bool", False),
    ("duration_ms", "int", False),
    ("error", "str", True),
    ("input_hash", "str", True),
    ("snapshot_epoch", "int", False),
    ("created_at", "time", False),
    ("metadata", "object", False),
)

JOURNAL_FIELDS: tuple[Field, ...] = (
    ("id", "int", False),
    ("tenant_id", "str", False),
    ("agent_id", "str", False),
    ("conversation_id", "str", True),
    ("content", "str", False),
    ("source_type", "str", False),
    ("source_trust", "float", False),
    ("importance", "int", False),
    ("importance_method", "str", False),
    ("tags", "list", False),
    ("origin", "str", False),
    ("status", "str", False),
    ("memory_id", "int", True),
    ("created_at", "time", False),
    ("provenance", "str", True),
)

MEMORY_FIELDS: tuple[Field, ...] = (
    ("id", "int", False),
    ("tenant_id", "str", False),
    ("agent_id", "str", False),
    ("kind", "str", False),
    ("content", "str", False),
    ("confidence", "float", False),
    ("importance", "int", False),
    ("source_trust", "float", False),
    ("source_journal_ids", "list", False),
    ("superseded_by", "int", True),
    ("invalidated_at", "time", True),
    ("invalidation_reason", "str", True),
    ("corrects", "int", True),
    ("flags", "list", True),
    ("created_at", "time", False),
    ("updated_at", "time", False),
    ("last_used_at", "time", True),
)


class ExportRows(Protocol):
    """One transaction over whole rows (``store.export_rows.SqlExportRows``): dicts by column name,
    times aware UTC, message content as its JSON value. Leaving ``with`` without ``commit()`` rolls
    back."""

    def __enter__(self) -> Self: ...

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None: ...

    def commit(self) -> None:
        """Make the writes durable."""
        ...

    def conversation(self, conversation_id: str) -> dict[str, Any] | None:
        """The conversation row, or None."""
        ...

    def conversation_ids(self, tenant_id: str, agent_id: str) -> list[str]:
        """The agent's conversations, oldest first."""
        ...

    def messages(self, conversation_id: str) -> list[dict[str, Any]]:
        """Every message row, by seq."""
        ...

    def compactions(self, conversation_id: str) -> list[dict[str, Any]]:
        """Every compaction record, oldest first."""
        ...

    def journal(self, tenant_id: str, agent_id: str) -> list[dict[str, Any]]:
        """Every journal entry of the agent, by id."""
        ...

    def memories(self, tenant_id: str, agent_id: str) -> list[dict[str, Any]]:
        """Every memory of the agent, by id."""
        ...

    def taken(self, table: str, ids: Collection[Any]) -> list[Any]:
        """Of ``ids``, those already used in ``table``."""
        ...

    def insert(self, table: str, rows: Sequence[dict[str, Any]]) -> list[Any]:
        """Insert rows; their ids in order (assigned by the database for rows without ``id``)."""
        ...

    def update(self, table: str, rows: Sequence[dict[str, Any]]) -> None:
        """Set columns of rows by ``id``."""
        ...

    def index_messages(self, conversation_id: str, rows: Sequence[tuple[int, str]]) -> None:
        """Add (message id, plain text) pairs to the archive search index."""
        ...


class ExportStore(Protocol):
    """Where whole-row transactions come from (``store.export_rows.SqlExportStore``)."""

    def reader(self) -> ExportRows:
        """A read transaction."""
        ...

    def writer(self) -> ExportRows:
        """A write transaction."""
        ...


Rows = tuple[dict[str, Any], ...]


@dataclass(frozen=True)
class ConversationExport:
    """A conversation's lossless export: its settings and counters, the originals as appended
    (``appended``, in order), every row with its state, every compaction, and with the agent's memory
    its ``journal`` and ``memories`` (None without). ``to_dict()`` is the export document."""

    conversation: dict[str, Any]
    appended: tuple[Any, ...]
    messages: Rows
    compactions: Rows
    journal: Rows | None = None
    memories: Rows | None = None
    format: str = FORMAT

    def body(self) -> dict[str, Any]:
        """The conversation's part of a document (an agent document lists one per conversation)."""
        return {
            "conversation": self.conversation,
            "appended": list(self.appended),
            "messages": list(self.messages),
            "compactions": list(self.compactions),
        }

    def to_dict(self) -> dict[str, Any]:
        """The export document, JSON-ready."""
        out: dict[str, Any] = {"format": self.format, "format_version": FORMAT_VERSION}
        out.update(scope="conversation", **self.body())
        if self.journal is not None and self.memories is not None:
            out.update(journal=list(self.journal), memories=list(self.memories))
        return out


@dataclass(frozen=True)
class AgentExport:
    """Every conversation of one agent (each as in ``ConversationExport``), its journal and memories.
    ``to_dict()`` is the export document."""

    tenant_id: str
    agent_id: str
    conversations: tuple[ConversationExport, ...]
    journal: Rows
    memories: Rows
    format: str = FORMAT

    def to_dict(self) -> dict[str, Any]:
        """The export document, JSON-ready."""
        return {
            "format": self.format,
            "format_version": FORMAT_VERSION,
            "scope": "agent",
            "tenant_id": self.tenant_id,
            "agent_id": self.agent_id,
            "conversations": [c.body() for c in self.conversations],
            "journal": list(self.journal),
            "memories": list(self.memories),
        }


def canonical_raw(value: Any) -> str:
    """A message as ``domain.messages`` stores it (``raw``): compact JSON, non-ASCII kept."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def _entry(fields: tuple[Field, ...], row: dict[str, Any]) -> dict[str, Any]:
    return {
        name: row[name].isoformat() if kind == "time" and row[name] is not None else row[name]
        for name, kind, _ in fields
        if name in row
    }


def _conversation(rows: ExportRows, conv: dict[str, Any]) -> ConversationExport:
    """One conversation's rows as the document holds them."""
    appended: list[Any] = []
    messages: list[dict[str, Any]] = []
    for row in rows.messages(conv["id"]):
        entry = _entry(MESSAGE_FIELDS, row)
        raw = row["raw"]
        entry["appended_index"] = len(appended) if raw is not None else None
        if raw is not None:
            value = json.loads(raw)
            appended.append(value)
            if canonical_raw(value) != raw:  # not written by this version's append: keep the bytes
                entry["raw_text"] = raw
        messages.append(entry)
    return ConversationExport(
        conversation=_entry(CONVERSATION_FIELDS, conv),
        appended=tuple(appended),
        messages=tuple(messages),
        compactions=tuple(_entry(COMPACTION_FIELDS, c) for c in rows.compactions(conv["id"])),
    )


def _memory(rows: ExportRows, tenant_id: str, agent_id: str) -> tuple[Rows, Rows]:
    journal = tuple(_entry(JOURNAL_FIELDS, r) for r in rows.journal(tenant_id, agent_id))
    return journal, tuple(_entry(MEMORY_FIELDS, r) for r in rows.memories(tenant_id, agent_id))


def export_conversation(
    deps: Dependencies,
    conversation_id: str,
    *,
    store: ExportStore,
    shareable: bool = False,
    with_memory: bool = False,
) -> ConversationExport:
    """Everything about a conversation, read in one snapshot; importing it restores it exactly.

    ``with_memory`` adds the journal and memories of the conversation's agent. ``shareable`` redacts
    every string in it, at any depth, with the conversation's placeholders: for sharing outside the
    deployment, not for restoring (the import refuses it)."""
    with store.reader() as rows:
        conv = rows.conversation(conversation_id)
        if conv is None:
            raise ConversationNotFound(conversation_id)
        exported = _conversation(rows, conv)
        if with_memory:
            journal, memories = _memory(rows, conv["tenant_id"], conv["agent_id"])
            exported = replace(exported, journal=journal, memories=memories)
    if not shareable:
        return exported
    return _redacted(exported, deps.redactor(conversation_id).redact_value)


def export_agent(
    deps: Dependencies, tenant_id: str, agent_id: str, *, store: ExportStore, shareable: bool = False
) -> AgentExport:
    """Every conversation of one agent, its journal and its memories, read in one snapshot."""
    with store.reader() as rows:
        convs = [rows.conversation(cid) for cid in rows.conversation_ids(tenant_id, agent_id)]
        conversations = tuple(_conversation(rows, c) for c in convs if c is not None)
        journal, memories = _memory(rows, tenant_id, agent_id)
    if not (conversations or journal or memories):
        raise InvalidSetting(f"agent {agent_id!r} of tenant {tenant_id!r} has no conversation and no memory")
    exported = AgentExport(tenant_id, agent_id, conversations, journal, memories)
    if not shareable:
        return exported
    redact = deps.redactor(agent_scope(tenant_id, agent_id)).redact_value
    return AgentExport(
        tenant_id,
        agent_id,
        tuple(_redacted(c, redact) for c in conversations),
        tuple(redact(list(journal))),
        tuple(redact(list(memories))),
        format=FORMAT + SHAREABLE,
    )


def _redacted(exported: ConversationExport, redact: Callable[[Any], Any]) -> ConversationExport:
    """Every string of the export redacted (a shareable document)."""

    def each(rows: Rows | None) -> Rows | None:
        return None if rows is None else tuple(redact(list(rows)))

    return ConversationExport(
        conversation=redact(exported.conversation),
        appended=tuple(redact(list(exported.appended))),
        messages=tuple(redact(list(exported.messages))),
        compactions=tuple(redact(list(exported.compactions))),
        journal=each(exported.journal),
        memories=each(exported.memories),
        format=FORMAT + SHAREABLE,
    )
