"""A ``sleepcompact.export/2`` document read for import: every field typed, every reference resolved.

Nothing is written until the whole document has been read: a field of the wrong type, a field this
version does not know (it would be lost), or a reference to a row the document does not hold (a
message in a compaction it lacks, a memory built from a journal entry it lacks) raises
``ImportFormatError`` naming where it lies.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sleepcompact.domain.errors import ImportFormatError
from sleepcompact.domain.json_shapes import json_kind
from sleepcompact.domain.messages import KINDS, ROLES
from sleepcompact.domain.records import COMPACTION_STATUSES, COMPACTION_TRIGGERS, MESSAGE_STATES
from sleepcompact.services.export_document import (
    COMPACTION_FIELDS,
    CONVERSATION_FIELDS,
    JOURNAL_FIELDS,
    MEMORY_FIELDS,
    MESSAGE_FIELDS,
    Field,
    FieldKind,
    canonical_raw,
)

Row = dict[str, Any]
_BODY_KEYS = ("conversation", "appended", "messages", "compactions")
_HEAD_KEYS = ("format", "format_version", "scope")
_MEMORY_KEYS = ("journal", "memories")
_KIND_NAMES: dict[FieldKind, str] = {
    "str": "a string",
    "int": "an integer",
    "float": "a number",
    "bool": "true or false",
    "time": "an ISO 8601 time with its UTC offset",
    "object": "an object",
    "list": "a list",
    "content": "a string or a list of blocks",
}


@dataclass(frozen=True)
class ImportedConversation:
    """One conversation's rows by column name, times as datetimes, each message with its ``raw``."""

    conversation: Row
    messages: tuple[Row, ...]
    compactions: tuple[Row, ...]


@dataclass(frozen=True)
class ImportDocument:
    """What a document restores: its conversations, and its agent's journal and memories (None when it
    was exported without them). ``tenant_id`` and ``agent_id``: the agent it all belongs to."""

    tenant_id: str
    agent_id: str
    conversations: tuple[ImportedConversation, ...]
    journal: tuple[Row, ...] | None
    memories: tuple[Row, ...] | None


class _Reader:
    """Typed reading of the document's parts; every error names its place."""

    def __init__(self, source: str) -> None:
        self.source = source

    def fail(self, where: str, reason: str) -> ImportFormatError:
        return ImportFormatError(f"{where}: {reason}", source=self.source)

    def keys(self, part: Mapping[str, Any], where: str, known: Iterable[str]) -> None:
        unknown = sorted(set(part) - set(known))
        if unknown:
            raise self.fail(where, f"unknown field {unknown[0]!r} (this version would lose it)")

    def entry(self, value: Any, where: str, fields: Sequence[Field], extra: Sequence[str] = ()) -> Row:
        if not isinstance(value, dict):
            raise self.fail(where, f"must be an object, got a JSON {json_kind(value)}")
        self.keys(value, where, [*(name for name, _, _ in fields), *extra])
        missing = [name for name, _, _ in fields if name not in value]
        if missing:
            raise self.fail(where, f"the field {missing[0]!r} is missing")
        out = {
            name: self.value(value[name], kind, nullable, f"{where}.{name}")
            for name, kind, nullable in fields
        }
        out.update({k: value[k] for k in extra if k in value})
        return out

    def entries(
        self, value: Any, where: str, fields: Sequence[Field], extra: Sequence[str] = ()
    ) -> list[Row]:
        if not isinstance(value, list):
            raise self.fail(where, f"must be a list, got a JSON {json_kind(value)}")
        return [self.entry(v, f"{where}[{i}]", fields, extra) for i, v in enumerate(value)]

    def value(self, value: Any, kind: FieldKind, nullable: bool, where: str) -> Any:
        if value is None:
            if nullable:
                return None
            raise self.fail(where, "must not be null")
        ok = {
            "str": isinstance(value, str),
            "int": isinstance(value, int) and not isinstance(value, bool),
            "float": isinstance(value, int | float) and not isinstance(value, bool),
            "bool": isinstance(value, bool),
            "time": isinstance(value, str),
            "object": isinstance(value, dict),
            "list": isinstance(value, list),
            "content": isinstance(value, str | list),
        }[kind]
        if not ok:
            raise self.fail(where, f"must be {_KIND_NAMES[kind]}, got a JSON {json_kind(value)}")
        if kind == "int" and not -(2**63) <= value < 2**63:  # no column holds more than 64 bits
            raise self.fail(where, f"{value} does not fit in 64 bits")
        if kind == "float":
            return float(value)
        return self.time(value, where) if kind == "time" else value

    def time(self, value: str, where: str) -> datetime:
        try:
            parsed = datetime.fromisoformat(value)
        except ValueError:
            parsed = None
        if parsed is None or parsed.tzinfo is None:
            raise self.fail(where, f"must be {_KIND_NAMES['time']}, got {value!r}")
        return parsed.astimezone(UTC)

    def body(self, part: Any, where: str) -> ImportedConversation:
        """One conversation: its row, its messages with their ``raw`` resolved, its compactions."""
        if not isinstance(part, dict):
            raise self.fail(where or "document", f"must be an object, got a JSON {json_kind(part)}")
        conversation = self.entry(part.get("conversation"), f"{where}conversation", CONVERSATION_FIELDS)
        appended = part.get("appended")
        if not isinstance(appended, list):
            raise self.fail(f"{where}appended", f"must be a list, got a JSON {json_kind(appended)}")
        messages = self.entries(part.get("messages"), f"{where}messages", MESSAGE_FIELDS, ("raw_text",))
        compactions = self.entries(part.get("compactions"), f"{where}compactions", COMPACTION_FIELDS)
        rows = self.raw(messages, appended, f"{where}messages")
        return ImportedConversation(conversation, tuple(rows), tuple(compactions))

    def raw(self, messages: list[Row], appended: list[Any], where: str) -> list[Row]:
        """Each message with ``raw`` (the text as stored) in place of ``appended_index``/``raw_text``."""
        out: list[Row] = []
        used: list[int] = []
        for i, m in enumerate(messages):
            row = {k: v for k, v in m.items() if k not in ("appended_index", "raw_text")}
            index, text = m["appended_index"], m.get("raw_text")
            if index is None:
                if text is not None:
                    raise self.fail(f"{where}[{i}].raw_text", "is given without an appended_index")
                row["raw"] = None
            elif not 0 <= index < len(appended):
                raise self.fail(f"{where}[{i}].appended_index", f"{index} is outside 'appended'")
            elif text is not None and not isinstance(text, str):
                raise self.fail(f"{where}[{i}].raw_text", f"must be a string, got a JSON {json_kind(text)}")
            else:
                row["raw"] = text if text is not None else self.canonical(appended[index], f"{where}[{i}]")
                used.append(index)
            out.append(row)
        if sorted(used) != list(range(len(appended))):
            raise self.fail(where, "every entry of 'appended' must belong to exactly one message")
        return out

    def canonical(self, value: Any, where: str) -> str:
        try:
            return canonical_raw(value)
        except ValueError as exc:  # NaN or Infinity: never in a stored message
            raise self.fail(where, f"its appended message is not storable JSON: {exc}") from exc


def read_document(doc: Mapping[str, Any], *, source: str = "<input>") -> ImportDocument:
    """Read a ``sleepcompact.export/2`` document (its format already checked) for import."""
    r = _Reader(source)
    scope = doc.get("scope")
    if scope == "conversation":
        r.keys(doc, "document", (*_HEAD_KEYS, *_BODY_KEYS, *_MEMORY_KEYS))
        conversations: tuple[ImportedConversation, ...] = (r.body(doc, ""),)
        owner = conversations[0].conversation
        tenant_id, agent_id = owner["tenant_id"], owner["agent_id"]
        with_memory = any(k in doc for k in _MEMORY_KEYS)
    elif scope == "agent":
        r.keys(doc, "document", (*_HEAD_KEYS, "tenant_id", "agent_id", "conversations", *_MEMORY_KEYS))
        tenant_id = r.value(doc.get("tenant_id"), "str", False, "tenant_id")
        agent_id = r.value(doc.get("agent_id"), "str", False, "agent_id")
        parts = doc.get("conversations")
        if not isinstance(parts, list):
            raise r.fail("conversations", f"must be a list, got a JSON {json_kind(parts)}")
        conversations = tuple(r.body(p, f"conversations[{i}].") for i, p in enumerate(parts))
        with_memory = True
    else:
        raise r.fail("scope", f"unknown scope {scope!r}; expected 'conversation' or 'agent'")
    journal = memories = None
    if with_memory:
        journal = tuple(r.entries(doc.get("journal"), "journal", JOURNAL_FIELDS))
        memories = tuple(r.entries(doc.get("memories"), "memories", MEMORY_FIELDS))
    document = ImportDocument(tenant_id, agent_id, conversations, journal, memories)
    _References(r).check(document, "" if scope == "conversation" else "conversations")
    return document


class _References:
    """Every id unique, every reference resolved, every enumerated value known."""

    def __init__(self, reader: _Reader) -> None:
        self.fail = reader.fail

    def unique(self, values: Iterable[Any], where: str, what: str) -> None:
        repeated = [v for v, n in Counter(values).items() if n > 1]
        if repeated:
            raise self.fail(where, f"{what} {repeated[0]!r} appears more than once")

    def check(self, doc: ImportDocument, listed: str) -> None:
        convs = doc.conversations
        self.unique((c.conversation["id"] for c in convs), listed or "conversation", "conversation id")
        self.unique((m["id"] for c in convs for m in c.messages), "messages", "message id")
        self.unique((k["id"] for c in convs for k in c.compactions), "compactions", "compaction id")
        for i, conv in enumerate(convs):
            where = f"{listed}[{i}]." if listed else ""
            owner = (conv.conversation["tenant_id"], conv.conversation["agent_id"])
            if owner != (doc.tenant_id, doc.agent_id):
                raise self.fail(
                    f"{where}conversation", "belongs to another tenant or agent than the document"
                )
            self.conversation(conv, where)
        if doc.journal is not None and doc.memories is not None:
            self.memory(doc, doc.journal, doc.memories)

    def conversation(self, conv: ImportedConversation, where: str) -> None:
        seqs = [m["seq"] for m in conv.messages]
        self.unique(seqs, f"{where}messages", "seq")
        if seqs and conv.conversation["next_seq"] <= max(seqs):
            raise self.fail(f"{where}conversation.next_seq", f"must be above the highest seq, {max(seqs)}")
        compactions = {k["id"] for k in conv.compactions}
        messages = {m["id"] for m in conv.messages}
        for i, m in enumerate(conv.messages):
            at = f"{where}messages[{i}]"
            self.known(m["state"], MESSAGE_STATES, f"{at}.state")
            self.known(m["role"], ROLES, f"{at}.role")
            self.known(m["kind"], KINDS, f"{at}.kind")
            self.names(m["compaction_id"], compactions, f"{at}.compaction_id", "compaction")
        for i, k in enumerate(conv.compactions):
            at = f"{where}compactions[{i}]"
            self.known(k["trigger"], COMPACTION_TRIGGERS, f"{at}.trigger")
            self.known(k["status"], COMPACTION_STATUSES, f"{at}.status")
            self.names(k["previous_compaction_id"], compactions, f"{at}.previous_compaction_id", "compaction")
            self.prior(k, at, messages, compactions)

    def prior(self, record: Row, at: str, messages: set[int], compactions: set[str]) -> None:
        """An applied compaction can still be restored: its summary row and the rows it changed must be
        there. Older records may name a summary row a restore deleted since."""
        applied = record["status"] == "applied"
        if applied:
            self.names(record["summary_message_id"], messages, f"{at}.summary_message_id", "message")
        prior = record["metadata"].get("prior", [])
        if not isinstance(prior, list) or not all(
            isinstance(p, dict) and isinstance(p.get("id"), int) for p in prior
        ):
            raise self.fail(f"{at}.metadata.prior", "must be a list of objects with an integer 'id'")
        for j, p in enumerate(prior):
            if applied:
                self.names(p["id"], messages, f"{at}.metadata.prior[{j}].id", "message")
                self.names(p.get("compaction_id"), compactions, f"{at}.metadata.prior[{j}]", "compaction")

    def memory(self, doc: ImportDocument, journal: Sequence[Row], memories: Sequence[Row]) -> None:
        entries = {e["id"] for e in journal}
        kept = {m["id"] for m in memories}
        self.unique((e["id"] for e in journal), "journal", "journal entry id")
        self.unique((m["id"] for m in memories), "memories", "memory id")
        for name, rows in (("journal", journal), ("memories", memories)):
            for i, row in enumerate(rows):
                if (row["tenant_id"], row["agent_id"]) != (doc.tenant_id, doc.agent_id):
                    raise self.fail(f"{name}[{i}]", "belongs to another tenant or agent than the document")
        for i, e in enumerate(journal):
            self.names(e["memory_id"], kept, f"journal[{i}].memory_id", "memory")
        for i, m in enumerate(memories):
            sources = m["source_journal_ids"]
            if not all(isinstance(s, int) and not isinstance(s, bool) for s in sources):
                raise self.fail(f"memories[{i}].source_journal_ids", "must be a list of integers")
            for s in sources:
                self.names(s, entries, f"memories[{i}].source_journal_ids", "journal entry")
            self.names(m["superseded_by"], kept, f"memories[{i}].superseded_by", "memory")
            self.names(m["corrects"], kept, f"memories[{i}].corrects", "memory")

    def names(self, value: Any, held: set[Any], where: str, what: str) -> None:
        if value is not None and value not in held:
            raise self.fail(where, f"names {what} {value!r}, which the document does not hold")

    def known(self, value: str, allowed: Sequence[str], where: str) -> None:
        if value not in allowed:
            raise self.fail(where, f"unknown value {value!r}; expected one of {', '.join(allowed)}")
