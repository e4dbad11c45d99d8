"""Restore compactions, list them, and search the archive."""

from __future__ import annotations

import re
from dataclasses import dataclass, fields
from typing import Any

from sleepcompact.domain.errors import CompactionNotFound, ConversationNotFound, NotRestorable
from sleepcompact.domain.json_shapes import json_ready
from sleepcompact.domain.messages import Content, content_text
from sleepcompact.domain.records import CompactionRecord, MessageRecord
from sleepcompact.ports import CompactionRepository, Dependencies

SEQ_QUERY = re.compile(r"^\s*seq:(\d+)\s*$")


@dataclass(frozen=True)
class CompactionInfo(CompactionRecord):
    """One compaction (or clear) as ``history`` shows it: its record, its summary and flags, the saving."""

    summary: str | None = None
    flags: tuple[str, ...] = ()

    @classmethod
    def of(cls, record: CompactionRecord, meta: dict[str, Any]) -> CompactionInfo:
        """The info of a stored record and its metadata."""
        values = {f.name: getattr(record, f.name) for f in fields(record)}
        return cls(**values, summary=meta.get("summary"), flags=tuple(meta.get("flags", ())))

    @property
    def flagged(self) -> bool:
        """Whether the summary carried imperative lines aimed at the model (kept, marked)."""
        return bool(self.flags)

    @property
    def tokens_saved(self) -> int:
        """Live tokens the compaction took off."""
        return self.tokens_before - self.tokens_after

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: the record's fields, ``summary``, ``flags``, ``flagged`` and ``tokens_saved``."""
        out: dict[str, Any] = json_ready(self)
        out.update(flagged=self.flagged, tokens_saved=self.tokens_saved)
        return out


@dataclass(frozen=True)
class SearchHit:
    """One original the archive search found, with a snippet around the first match."""

    seq: int
    message_id: int
    role: str
    kind: str
    state: str
    tool_name: str | None
    tool_call_id: str | None
    compaction_id: str | None
    snippet: str
    content: Content

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready (what ``sleepcompact search --json`` prints)."""
        return dict(json_ready(self))


def _undo(compactions: CompactionRepository, compaction_id: str) -> None:
    found = compactions.get(compaction_id)
    assert found is not None
    record, meta = found
    compactions.restore_rows(meta.get("prior", []))
    if record.summary_message_id is not None:
        compactions.delete_summary_message(record.summary_message_id)
    compactions.update(compaction_id, status="reverted")


def restore(deps: Dependencies, compaction_id: str) -> tuple[str, ...]:
    """Bring back the exact live state before a compaction (or clear); later ones are undone first.

    Returns the ids restored, newest first. The epoch moves on, so a
    compaction computed before the restore can no longer apply.
    """
    with deps.uow() as uow:
        found = uow.compactions.get(compaction_id)
        if found is None:
            raise CompactionNotFound(f"unknown compaction: {compaction_id!r}")
        record, _ = found
        if record.status != "applied":
            raise NotRestorable(
                f"compaction {compaction_id} is {record.status}; only applied compactions can be restored"
            )
        conv = uow.conversations.get(record.conversation_id)
        assert conv is not None
        order = (
            *uow.compactions.applied_after(record.conversation_id, record.snapshot_epoch, compaction_id),
            compaction_id,
        )
        for cid in order:
            _undo(uow.compactions, cid)
        uow.conversations.recount(record.conversation_id)
        if not uow.conversations.bump_epoch(record.conversation_id, conv.compaction_epoch):
            raise NotRestorable("the conversation changed during the restore; try again")
        uow.commit()
    return order


def history(deps: Dependencies, conversation_id: str) -> list[CompactionInfo]:
    """Every compaction of a conversation with its figures, summary and flags, oldest first."""
    with deps.read_uow() as uow:
        if uow.conversations.get(conversation_id) is None:
            raise ConversationNotFound(conversation_id)
        return [CompactionInfo.of(record, meta) for record, meta in uow.compactions.of(conversation_id)]


def _hit(row: MessageRecord, query: str) -> SearchHit:
    text = content_text(row.content)
    words = [w.lower() for w in re.findall(r"\w+", query)]
    lowered = text.lower()
    pos = min((lowered.find(w) for w in words if lowered.find(w) >= 0), default=0)
    start = max(0, pos - 120)
    snippet = ("…" if start else "") + text[start : start + 300].replace("\n", " ")
    return SearchHit(
        seq=row.seq,
        message_id=row.id,
        role=row.role,
        kind=row.kind,
        state=row.state,
        tool_name=row.tool_name,
        tool_call_id=row.tool_call_id,
        compaction_id=row.compaction_id,
        snippet=snippet,
        content=row.content,
    )


def search_history(deps: Dependencies, conversation_id: str, query: str, limit: int = 20) -> list[SearchHit]:
    """Full-text search over every original; ``seq:N`` fetches the row a placeholder points to."""
    with deps.read_uow() as uow:
        if uow.conversations.get(conversation_id) is None:
            raise ConversationNotFound(conversation_id)
        m = SEQ_QUERY.match(query)
        if m:
            row = uow.conversations.message_by_seq(conversation_id, int(m.group(1)))
            return [_hit(row, "")] if row is not None else []
        return [_hit(r, query) for r in uow.conversations.search(conversation_id, query, limit)]
