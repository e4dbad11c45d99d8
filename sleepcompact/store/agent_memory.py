"""The agent's memory in SQL: its journal and its long-term memories."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import Row, bindparam, func, select, update
from sqlalchemy.orm import Session

from sleepcompact.domain.journal import (
    JournalEntryRecord,
    MemoryDraft,
    MemoryRecord,
    NewJournalEntry,
    Reinforcement,
)
from sleepcompact.domain.messages import without_nul
from sleepcompact.store.mapping import aware
from sleepcompact.store.models import JournalEntry, MemoryItem

# One Core statement for many parameter sets (bind names differ from the columns': Core reserves those).
_LINK = (
    update(JournalEntry)
    .where(JournalEntry.id == bindparam("l_id"))
    .values(status="consolidated", memory_id=bindparam("l_memory"))
)
_REINFORCE = (
    update(MemoryItem)
    .where(MemoryItem.id == bindparam("r_id"))
    .values(
        confidence=bindparam("r_confidence"),
        importance=bindparam("r_importance"),
        source_trust=bindparam("r_trust"),
        source_journal_ids=bindparam("r_sources", type_=MemoryItem.__table__.c.source_journal_ids.type),
        updated_at=bindparam("r_now", type_=MemoryItem.__table__.c.updated_at.type),
    )
)


def _entry(r: JournalEntry) -> JournalEntryRecord:
    return JournalEntryRecord(
        id=r.id,
        tenant_id=r.tenant_id,
        agent_id=r.agent_id,
        conversation_id=r.conversation_id,
        content=r.content,
        source_type=r.source_type,
        source_trust=r.source_trust,
        importance=r.importance,
        importance_method=r.importance_method,
        tags=tuple(r.tags or ()),
        origin=r.origin,
        status=r.status,
        memory_id=r.memory_id,
        created_at=aware(r.created_at),
        provenance=r.provenance,
    )


def _memory(r: MemoryItem | Row[Any]) -> MemoryRecord:
    return MemoryRecord(
        id=r.id,
        tenant_id=r.tenant_id,
        agent_id=r.agent_id,
        kind=r.kind,
        content=r.content,
        confidence=r.confidence,
        importance=r.importance,
        source_trust=r.source_trust,
        source_journal_ids=tuple(r.source_journal_ids or ()),
        superseded_by=r.superseded_by,
        invalidated_at=aware(r.invalidated_at) if r.invalidated_at else None,
        created_at=aware(r.created_at),
        updated_at=aware(r.updated_at),
        invalidation_reason=r.invalidation_reason,
        corrects=r.corrects,
        flags=tuple(r.flags or ()),
    )


class SqlAgentMemory:
    """``AgentMemoryRepository`` over one SQLAlchemy session."""

    def __init__(self, session: Session) -> None:
        self.session = session

    def add_entries(self, entries: Sequence[NewJournalEntry], now: datetime) -> list[int]:
        """Insert journal entries (status pending), scored by the heuristic."""
        rows = [
            JournalEntry(
                tenant_id=e.tenant_id,
                agent_id=e.agent_id,
                conversation_id=e.conversation_id,
                content=without_nul(e.content),
                source_type=e.source_type,
                source_trust=e.source_trust,
                importance=e.importance,
                importance_method="heuristic",
                tags=list(e.tags),
                origin=e.origin,
                status="pending",
                created_at=now,
                provenance=e.provenance,
            )
            for e in entries
        ]
        self.session.add_all(rows)
        self.session.flush()
        return [r.id for r in rows]

    def entries(
        self,
        tenant_id: str,
        agent_id: str,
        statuses: Sequence[str] | None = None,
        limit: int = 10_000,
        *,
        lock: bool = False,
    ) -> list[JournalEntryRecord]:
        """Journal entries of one agent (optionally by status), oldest first (ix_journal_agent_status).

        ``lock``: held until the transaction ends (``FOR UPDATE``; SQLite's ``BEGIN IMMEDIATE`` already
        holds the whole database), so a second reader of the same pending entries waits, then sees the
        ones still pending."""
        query = select(JournalEntry).where(
            JournalEntry.tenant_id == tenant_id, JournalEntry.agent_id == agent_id
        )
        if statuses:
            query = query.where(JournalEntry.status.in_(list(statuses)))
        if lock:
            query = query.with_for_update()
        return [_entry(r) for r in self.session.scalars(query.order_by(JournalEntry.id).limit(limit))]

    def set_entries(self, entry_ids: Sequence[int], *, status: str) -> None:
        """Move journal entries to a status (``link_entries`` links them to memories)."""
        if entry_ids:
            self.session.execute(
                update(JournalEntry).where(JournalEntry.id.in_(list(entry_ids))).values(status=status)
            )

    def rescore_entries(self, scores: Sequence[tuple[int, int]]) -> list[int]:
        """Apply LLM scores ``(entry id, importance)`` to entries still pending with a heuristic score.

        Each UPDATE is conditional on the entry still being pending and heuristic, so a score computed
        before another tick consolidated (or rescored) the entry is dropped instead of overwriting it.
        Returns the ids that changed.
        """
        changed: list[int] = []
        for entry_id, importance in scores:
            result = self.session.execute(
                update(JournalEntry)
                .where(
                    JournalEntry.id == entry_id,
                    JournalEntry.status == "pending",
                    JournalEntry.importance_method == "heuristic",
                )
                .values(importance=importance, importance_method="llm", status="scored")
            )
            if getattr(result, "rowcount", 0):
                changed.append(entry_id)
        return changed

    def memories(self, tenant_id: str, agent_id: str, *, include_invalid: bool = False) -> list[MemoryRecord]:
        """Memories of one agent, oldest first; invalidated ones only when asked (they are never deleted)."""
        # Rows, not ORM objects: consolidation reads every memory of the agent at each tick, and building
        # (and tracking) an object per row was two thirds of that read (21 against 7 ms at 1,300 memories).
        table = MemoryItem.__table__
        query = select(table).where(table.c.tenant_id == tenant_id, table.c.agent_id == agent_id)
        if not include_invalid:
            query = query.where(table.c.invalidated_at.is_(None))
        return [_memory(r) for r in self.session.execute(query.order_by(table.c.id))]

    def memory_version(self, tenant_id: str, agent_id: str) -> tuple[object, ...]:
        """(memories, invalidated ones, the newest id, the latest change) of one agent: one aggregate in
        the database, which reads the agent's rows but sends none back.

        A memory added, deleted, corrected or superseded changes the counts or the newest id; a merge
        that only raises a memory's confidence changes the latest ``updated_at`` (written with the
        writer's clock: a writer whose clock runs behind the last change leaves the ranking as it was
        until the next change)."""
        t = MemoryItem.__table__.c
        figures = (func.count(), func.count(t.invalidated_at), func.max(t.id), func.max(t.updated_at))
        query = select(*figures).where(t.tenant_id == tenant_id, t.agent_id == agent_id)
        return tuple(self.session.execute(query).one())

    def memory(self, tenant_id: str, agent_id: str, memory_id: int) -> MemoryRecord | None:
        """One memory of the agent, valid or not; None when the id is another agent's or no one's."""
        row = self.session.get(MemoryItem, memory_id)
        if row is None or (row.tenant_id, row.agent_id) != (tenant_id, agent_id):
            return None
        return _memory(row)

    def add_memories(
        self, tenant_id: str, agent_id: str, drafts: Sequence[MemoryDraft], now: datetime
    ) -> list[int]:
        """Insert memories; returns their ids, in the drafts' order. One flush for all of them (one
        INSERT ... RETURNING for many rows where the database allows it), not one per memory."""
        rows = [
            MemoryItem(
                tenant_id=tenant_id,
                agent_id=agent_id,
                kind=d.kind,
                content=d.content,
                confidence=d.confidence,
                importance=d.importance,
                source_trust=d.source_trust,
                source_journal_ids=list(d.source_journal_ids),
                corrects=d.corrects,
                flags=list(d.flags) or None,
                created_at=now,
                updated_at=now,
            )
            for d in drafts
        ]
        self.session.add_all(rows)
        self.session.flush()
        return [r.id for r in rows]

    def link_entries(self, links: Sequence[tuple[int, int]]) -> None:
        """Mark journal entries consolidated into memories: ``(entry id, memory id)`` pairs, as one
        executemany."""
        if links:
            params = [{"l_id": entry_id, "l_memory": memory_id} for entry_id, memory_id in links]
            self.session.connection().execute(_LINK, params)

    def reinforce_memories(self, reinforcements: Sequence[Reinforcement], now: datetime) -> None:
        """Write what merges left of existing memories, as one executemany."""
        if reinforcements:
            params = [
                {
                    "r_id": r.memory_id,
                    "r_confidence": r.confidence,
                    "r_importance": r.importance,
                    "r_trust": r.source_trust,
                    "r_sources": list(r.source_journal_ids),
                    "r_now": now,
                }
                for r in reinforcements
            ]
            self.session.connection().execute(_REINFORCE, params)

    def invalidate_memory(
        self, memory_id: int, *, superseded_by: int | None, now: datetime, reason: str | None = None
    ) -> bool:
        """Mark a memory invalid (kept, with what superseded it and why, when a user did it); False when
        it already was (another transaction got there first)."""
        result = self.session.execute(
            update(MemoryItem)
            .where(MemoryItem.id == memory_id, MemoryItem.invalidated_at.is_(None))
            .values(
                invalidated_at=now, superseded_by=superseded_by, invalidation_reason=reason, updated_at=now
            )
        )
        return bool(getattr(result, "rowcount", 0))
