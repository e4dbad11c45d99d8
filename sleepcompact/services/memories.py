"""Long-term memory: consolidate an agent's journal, list and search what it remembers."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from sleepcompact.domain.consolidation import EntryIn, MemoryIn, consolidate
from sleepcompact.domain.memory_trust import merged_trust, new_memory_trust
from sleepcompact.services.conversations import utcnow
from sleepcompact.services.ports import UnitOfWork

PENDING = ("pending", "scored")


def consolidate_agent(
    uow_factory: Callable[[], UnitOfWork], tenant_id: str, agent_id: str, *, importance_floor: int = 5
) -> dict[str, Any]:
    """Promote the agent's pending journal entries into memories, in one transaction; returns the counts.

    Running it again finds nothing pending, so it is safe to repeat.
    """
    with uow_factory() as uow:
        entries = uow.repo.journal_entries(tenant_id, agent_id, PENDING)
        if not entries:
            return {"entries": 0, "created": 0, "merged": 0, "superseded": 0, "below_floor": 0}
        memories = uow.repo.memories(tenant_id, agent_id)
        plan = consolidate(
            [
                EntryIn(
                    e["id"],
                    e["content"],
                    e["source_type"],
                    e["source_trust"],
                    e["importance"],
                    tuple(e["tags"]),
                )
                for e in entries
            ],
            [
                MemoryIn(
                    m["id"],
                    m["kind"],
                    m["content"],
                    m["confidence"],
                    m["importance"],
                    tuple(m["source_journal_ids"]),
                )
                for m in memories
            ],
            importance_floor=importance_floor,
        )
        now = utcnow()
        trust_of = {e["id"]: e["source_trust"] for e in entries}
        old_trust = {m["id"]: m["source_trust"] for m in memories}
        created: dict[int, int] = {}  # index in plan.new -> memory id
        linked: set[int] = set()
        # Real memories first, so entries link to the fact they became rather than to the contradiction note.
        order = sorted(range(len(plan.new)), key=lambda i: plan.new[i].kind == "contradiction")
        for i in order:
            new = plan.new[i]
            mid = uow.repo.add_memory(
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
            created[i] = mid
            fresh = [e for e in new.source_journal_ids if e not in linked]
            uow.repo.set_entries(fresh, status="consolidated", memory_id=mid)
            linked.update(fresh)
        for merge in plan.merges:
            uow.repo.reinforce_memory(
                merge.memory_id,
                confidence=merge.confidence,
                importance=merge.importance,
                entry_ids=merge.entry_ids,
                source_trust=merged_trust(old_trust[merge.memory_id], merge, trust_of),
                now=now,
            )
            fresh = [e for e in merge.entry_ids if e not in linked]
            uow.repo.set_entries(fresh, status="consolidated", memory_id=merge.memory_id)
            linked.update(fresh)
        for old in plan.invalidate:
            by = next((created[i] for i, n in enumerate(plan.new) if n.supersedes == old), None)
            uow.repo.invalidate_memory(old, superseded_by=by, now=now)
        uow.repo.set_entries([e for e in plan.below_floor if e not in linked], status="pruned")
        uow.commit()
    return {
        "entries": len(entries),
        "created": sum(1 for n in plan.new if n.kind != "contradiction"),
        "merged": len(plan.merges),
        "superseded": len(plan.invalidate),
        "contradictions": sum(1 for n in plan.new if n.kind == "contradiction"),
        "below_floor": len(plan.below_floor),
    }


def list_memories(
    uow: UnitOfWork, tenant_id: str, agent_id: str, *, include_invalid: bool = False
) -> list[dict[str, Any]]:
    """What the agent remembers (invalidated memories too when asked: they are kept, never deleted)."""
    with uow:
        return uow.repo.memories(tenant_id, agent_id, include_invalid=include_invalid)


def search_memories(uow: UnitOfWork, tenant_id: str, agent_id: str, query: str) -> list[dict[str, Any]]:
    """Valid memories containing every word of the query, most important and confident first."""
    words = [w.lower() for w in re.findall(r"\w+", query)]
    with uow:
        rows = uow.repo.memories(tenant_id, agent_id)
    hits = [m for m in rows if all(w in m["content"].lower() for w in words)]
    return sorted(hits, key=lambda m: (-m["importance"], -m["confidence"], m["id"]))
