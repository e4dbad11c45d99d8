"""Long-term memory: consolidate an agent's journal, list and search what it remembers."""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Any

from sleepcompact.domain.consolidation import ConsolidationPlan, EntryIn, MemoryIn, consolidate
from sleepcompact.domain.journal import JournalEntryRecord, MemoryRecord
from sleepcompact.domain.memory_trust import merged_trust, new_memory_trust
from sleepcompact.ports import AgentMemoryRepository, Dependencies
from sleepcompact.services.clock import utcnow

PENDING = ("pending", "scored")
IMPORTANCE_FLOOR = 5


@dataclass(frozen=True)
class ConsolidationReport:
    """What one consolidation did with an agent's pending journal entries."""

    entries: int = 0
    created: int = 0
    merged: int = 0
    superseded: int = 0
    contradictions: int = 0
    below_floor: int = 0

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return asdict(self)


def consolidate_agent(deps: Dependencies, tenant_id: str, agent_id: str) -> ConsolidationReport:
    """Promote the agent's pending journal entries into memories, in one transaction; returns the counts.

    Running it again finds nothing pending, so it is safe to repeat.
    """
    with deps.uow() as uow:
        entries = uow.memories.entries(tenant_id, agent_id, PENDING)
        if not entries:
            return ConsolidationReport()
        memories = uow.memories.memories(tenant_id, agent_id)
        plan = consolidate(
            [EntryIn(e.id, e.content, e.source_type, e.source_trust, e.importance, e.tags) for e in entries],
            [
                MemoryIn(m.id, m.kind, m.content, m.confidence, m.importance, m.source_journal_ids)
                for m in memories
            ],
            importance_floor=IMPORTANCE_FLOOR,
        )
        _write_plan(uow.memories, tenant_id, agent_id, plan, entries, memories, utcnow())
        uow.commit()
    return ConsolidationReport(
        entries=len(entries),
        created=sum(1 for n in plan.new if n.kind != "contradiction"),
        merged=len(plan.merges),
        superseded=len(plan.invalidate),
        contradictions=sum(1 for n in plan.new if n.kind == "contradiction"),
        below_floor=len(plan.below_floor),
    )


def _write_plan(
    repo: AgentMemoryRepository,
    tenant_id: str,
    agent_id: str,
    plan: ConsolidationPlan,
    entries: list[JournalEntryRecord],
    memories: list[MemoryRecord],
    now: datetime,
) -> None:
    """Write a consolidation plan: new memories, merges, invalidations, and each entry's new status."""
    trust_of = {e.id: e.source_trust for e in entries}
    old_trust = {m.id: m.source_trust for m in memories}
    created: dict[int, int] = {}  # index in plan.new -> memory id
    linked: set[int] = set()

    def link(entry_ids: tuple[int, ...] | list[int], memory_id: int) -> None:
        fresh = [e for e in entry_ids if e not in linked]
        repo.set_entries(fresh, status="consolidated", memory_id=memory_id)
        linked.update(fresh)

    # Real memories first, so entries link to the fact they became rather than to the contradiction note.
    for i in sorted(range(len(plan.new)), key=lambda i: plan.new[i].kind == "contradiction"):
        new = plan.new[i]
        created[i] = repo.add_memory(
            tenant_id,
            agent_id,
            kind=new.kind,
            content=new.content,
            confidence=new.confidence,
            importance=new.importance,
            source_journal_ids=new.source_journal_ids,
            source_trust=new_memory_trust(new, trust_of),
            now=now,
        )
        link(new.source_journal_ids, created[i])
    for merge in plan.merges:
        repo.reinforce_memory(
            merge.memory_id,
            confidence=merge.confidence,
            importance=merge.importance,
            entry_ids=merge.entry_ids,
            source_trust=merged_trust(old_trust[merge.memory_id], merge, trust_of),
            now=now,
        )
        link(merge.entry_ids, merge.memory_id)
    for old in plan.invalidate:
        by = next((created[i] for i, n in enumerate(plan.new) if n.supersedes == old), None)
        repo.invalidate_memory(old, superseded_by=by, now=now)
    repo.set_entries([e for e in plan.below_floor if e not in linked], status="pruned")


def list_memories(
    deps: Dependencies, tenant_id: str, agent_id: str, *, include_invalid: bool = False
) -> list[MemoryRecord]:
    """What the agent remembers (invalidated memories too when asked: they are kept, never deleted)."""
    with deps.read_uow() as uow:
        return uow.memories.memories(tenant_id, agent_id, include_invalid=include_invalid)


def search_memories(deps: Dependencies, tenant_id: str, agent_id: str, query: str) -> list[MemoryRecord]:
    """Valid memories containing every word of the query, most important and confident first."""
    words = [w.lower() for w in re.findall(r"\w+", query)]
    with deps.read_uow() as uow:
        rows = uow.memories.memories(tenant_id, agent_id)
    hits = [m for m in rows if all(w in m.content.lower() for w in words)]
    return sorted(hits, key=lambda m: (-m.importance, -m.confidence, m.id))
