"""Import a ``sleepcompact.export/2`` document: its rows written back as they were, in one transaction.

Rows are inserted directly, not replayed through the append path, so masked, truncated and archived
rows, summaries, compaction records with their lineage and undo data, counters and settings come back
exactly. Ids are kept by default (a document restores into an empty database as it was); ``new_ids``
imports a copy beside the original: a new conversation id and new compaction ids are drawn, the
database numbers the messages, journal entries and memories, and every reference to any of them is
rewritten (``docs/export.md`` lists them).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any, TypeVar

from sleepcompact.domain.errors import InvalidSetting
from sleepcompact.domain.messages import content_text
from sleepcompact.services.clock import new_id
from sleepcompact.services.export_document import ExportRows, ExportStore
from sleepcompact.services.import_document import ImportDocument, ImportedConversation, Row, read_document

K = TypeVar("K")
_RETRY = "import with new_ids=True (sleepcompact import --new-ids) to add a copy under new ids"


def import_document(
    store: ExportStore,
    doc: Mapping[str, Any],
    *,
    source: str = "<input>",
    new_ids: bool = False,
    conversation_id: str | None = None,
    tenant_id: str | None = None,
    agent_id: str | None = None,
    tenant_map: Mapping[str, str] | None = None,
) -> list[str]:
    """Restore a lossless export in one transaction (all or nothing); returns the conversation ids.

    ``conversation_id`` imports a one-conversation document as a copy under that id (new ids for the
    rest; never into an existing conversation). ``tenant_id`` moves everything in the document to that
    tenant, ``tenant_map`` ({old: new}) renames its tenant, ``agent_id`` moves everything to that
    agent. With ids kept, an id already in the database raises ``InvalidSetting``; nothing is written."""
    document = with_owner(read_document(doc, source=source), tenant_id, agent_id, tenant_map)
    with store.writer() as rows:
        ids = _Writer(rows, new_ids, conversation_id).write(document)
        rows.commit()
    return ids


def with_owner(
    doc: ImportDocument,
    tenant_id: str | None,
    agent_id: str | None,
    tenant_map: Mapping[str, str] | None,
) -> ImportDocument:
    """The document moved to another tenant and/or agent (conversations, journal and memories alike)."""
    if tenant_id is not None and tenant_map:
        raise InvalidSetting("give a tenant or a tenant map, not both")
    if tenant_map and doc.tenant_id not in tenant_map:
        raise InvalidSetting(
            f"the tenant map names {sorted(tenant_map)}, but the document's tenant is {doc.tenant_id!r}"
        )
    tenant = tenant_id or (tenant_map or {}).get(doc.tenant_id, doc.tenant_id)
    agent = agent_id or doc.agent_id
    if (tenant, agent) == (doc.tenant_id, doc.agent_id):
        return doc

    def moved(row: Row) -> Row:
        return {**row, "tenant_id": tenant, "agent_id": agent}

    def each(rows: tuple[Row, ...] | None) -> tuple[Row, ...] | None:
        return None if rows is None else tuple(moved(r) for r in rows)

    conversations = tuple(replace(c, conversation=moved(c.conversation)) for c in doc.conversations)
    return ImportDocument(tenant, agent, conversations, each(doc.journal), each(doc.memories))


class _Writer:
    """Writes one document's rows and keeps the map from its ids to the ids written."""

    def __init__(self, rows: ExportRows, new_ids: bool, conversation_id: str | None = None) -> None:
        self.rows = rows
        self.new_ids = new_ids or conversation_id is not None  # a named copy renumbers all the rest
        self.named = conversation_id
        self.conversations: dict[str, str] = {}
        self.compactions: dict[str, str] = {}
        self.messages: dict[int, int] = {}
        self.journal: dict[int, int] = {}
        self.memories: dict[int, int] = {}

    def write(self, doc: ImportDocument) -> list[str]:
        if self.named is not None:
            self._check_named(doc, self.named)
        elif not self.new_ids:
            self._check_free(doc)
        for conv in doc.conversations:
            old = conv.conversation["id"]
            self.conversations[old] = self.named or (new_id("conv") if self.new_ids else old)
            for k in conv.compactions:
                self.compactions[k["id"]] = new_id("cmp") if self.new_ids else k["id"]
        for conv in doc.conversations:
            self._conversation(conv)
        if doc.journal is not None and doc.memories is not None:
            self._memory(doc.journal, doc.memories)
        return [self.conversations[c.conversation["id"]] for c in doc.conversations]

    def _check_named(self, doc: ImportDocument, conversation_id: str) -> None:
        """A copy under a given id: one conversation, and a new one."""
        if len(doc.conversations) != 1:
            raise InvalidSetting(
                f"a conversation id names one conversation, but the document holds {len(doc.conversations)}"
            )
        if self.rows.taken("conversation", [conversation_id]):
            raise InvalidSetting(
                f"conversation {conversation_id!r} already exists; a lossless export is imported as a new "
                "conversation, never into an existing one"
            )

    def _check_free(self, doc: ImportDocument) -> None:
        """With ids kept, none of the document's ids may be in use (checked before any write)."""
        for conv in doc.conversations:
            if self.rows.taken("conversation", [conv.conversation["id"]]):
                raise InvalidSetting(
                    f"conversation {conv.conversation['id']!r} already exists in this database; {_RETRY}"
                )
        wanted: list[tuple[str, str, list[Any]]] = [
            ("message", "message ids", [m["id"] for c in doc.conversations for m in c.messages]),
            ("compaction", "compaction ids", [k["id"] for c in doc.conversations for k in c.compactions]),
            ("journal_entry", "journal entry ids", [e["id"] for e in doc.journal or ()]),
            ("memory", "memory ids", [m["id"] for m in doc.memories or ()]),
        ]
        for table, what, ids in wanted:
            taken = self.rows.taken(table, ids) if ids else []
            if taken:
                shown = ", ".join(map(str, taken[:5])) + (", ..." if len(taken) > 5 else "")
                raise InvalidSetting(
                    f"the document's {what} {shown} are already used in this database; {_RETRY}"
                )

    def _fresh(self, row: Row) -> Row:
        """The row to insert: without its id when the database numbers it anew."""
        return {k: v for k, v in row.items() if k != "id"} if self.new_ids else row

    def _conversation(self, conv: ImportedConversation) -> None:
        cid = self.conversations[conv.conversation["id"]]
        self.rows.insert("conversation", [{**conv.conversation, "id": cid}])
        ids = self.rows.insert("message", [self._fresh(self._message(cid, m)) for m in conv.messages])
        self.messages.update(zip((m["id"] for m in conv.messages), ids, strict=True))
        # Searchable exactly as appended rows are: every original but the summaries (derived text).
        searchable = zip(ids, conv.messages, strict=True)
        self.rows.index_messages(
            cid, [(i, content_text(m["content"])) for i, m in searchable if m["kind"] != "summary"]
        )
        self.rows.insert("compaction", [self._compaction(cid, k) for k in conv.compactions])

    def _message(self, cid: str, m: Row) -> Row:
        meta = m["metadata"]
        if m["kind"] == "summary" and isinstance(meta.get("compaction_id"), str):
            meta = {**meta, "compaction_id": self._compaction_id(meta["compaction_id"])}
        return {
            **m,
            "conversation_id": cid,
            "compaction_id": self._compaction_id(m["compaction_id"]),
            "metadata": meta,
        }

    def _compaction(self, cid: str, k: Row) -> Row:
        meta = dict(k["metadata"])
        if isinstance(meta.get("prior"), list):
            meta["prior"] = [
                {
                    **p,
                    "id": self._message_id(p["id"]),
                    "compaction_id": self._compaction_id(p.get("compaction_id")),
                }
                for p in meta["prior"]
            ]
        batch = meta.get("batch")
        if isinstance(batch, dict) and isinstance(batch.get("applied_as"), str):
            meta["batch"] = {**batch, "applied_as": self._compaction_id(batch["applied_as"])}
        return {
            **k,
            "id": self.compactions[k["id"]],
            "conversation_id": cid,
            "previous_compaction_id": self._compaction_id(k["previous_compaction_id"]),
            "summary_message_id": self._message_id(k["summary_message_id"]),
            "metadata": meta,
        }

    def _compaction_id(self, value: str | None) -> str | None:
        return None if value is None else self.compactions.get(value, value)

    def _message_id(self, value: int | None) -> int | None:
        """A message reference rewritten. One the document lacks (a summary row a restore deleted,
        named by a reverted compaction) stays as is with ids kept, and becomes null with new ids,
        where its old number could name an unrelated row."""
        if value is None:
            return None
        return self.messages.get(value, None if self.new_ids else value)

    def _memory(self, journal: tuple[Row, ...], memories: tuple[Row, ...]) -> None:
        """The journal, then the memories; the links between them once both have their ids."""
        outside = {e["conversation_id"] for e in journal} - set(self.conversations) - {None}
        existing = set(self.rows.taken("conversation", outside)) if outside else set()

        def conversation(value: str | None) -> str | None:
            # An entry written in a conversation the document does not hold keeps its link only when
            # that conversation is in this database too.
            if value is None:
                return None
            return self.conversations.get(value) or (value if value in existing else None)

        entries = [
            {**e, "conversation_id": conversation(e["conversation_id"]), "memory_id": None} for e in journal
        ]
        ids = self.rows.insert("journal_entry", [self._fresh(e) for e in entries])
        self.journal = dict(zip((e["id"] for e in journal), ids, strict=True))
        kept = [
            {**m, "source_journal_ids": [self.journal[j] for j in m["source_journal_ids"]]}
            | {"superseded_by": None, "corrects": None}
            for m in memories
        ]
        ids = self.rows.insert("memory", [self._fresh(m) for m in kept])
        self.memories = dict(zip((m["id"] for m in memories), ids, strict=True))
        links = [m for m in memories if m["superseded_by"] is not None or m["corrects"] is not None]
        self.rows.update(
            "memory",
            [
                {
                    "id": self.memories[m["id"]],
                    "superseded_by": _get(self.memories, m["superseded_by"]),
                    "corrects": _get(self.memories, m["corrects"]),
                }
                for m in links
            ],
        )
        linked = [e for e in journal if e["memory_id"] is not None]
        self.rows.update(
            "journal_entry",
            [{"id": self.journal[e["id"]], "memory_id": self.memories[e["memory_id"]]} for e in linked],
        )


def _get(ids: Mapping[K, K], value: K | None) -> K | None:
    return None if value is None else ids[value]
