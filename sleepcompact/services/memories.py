"""Long-term memory: consolidate an agent's journal, list and search what it remembers, and let a user
correct or delete a memory (archived, never destroyed)."""

from __future__ import annotations

import re
from dataclasses import asdict, astuple, dataclass
from datetime import datetime
from typing import Any

from sleepcompact.domain.consolidation import FLAGGED, ConsolidationPlan, EntryIn, MemoryIn, consolidate
from sleepcompact.domain.errors import EmptyContent, InvalidSetting, MemoryNotFound
from sleepcompact.domain.journal import (
    CORRECTED_BY_USER,
    DELETED_BY_USER,
    SOURCE_TRUST,
    USER_REASONS,
    JournalEntryRecord,
    MemoryDraft,
    MemoryRecord,
    NewJournalEntry,
    Reinforcement,
)
from sleepcompact.domain.memory_trust import merged_trust, new_memory_trust
from sleepcompact.ports import AgentMemoryRepository, Dependencies, TextRedactor
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
    overruled: int = 0  # automatic entries a user's correction or deletion overrides
    flagged: int = 0  # new ``flagged`` memories: text aimed at the model, kept for audit, never recalled

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return asdict(self)

    def __add__(self, other: ConsolidationReport) -> ConsolidationReport:
        """Two consolidations of one tick, counted together."""
        return ConsolidationReport(*(a + b for a, b in zip(astuple(self), astuple(other), strict=True)))


def agent_scope(tenant_id: str, agent_id: str) -> str:
    """The redaction scope of what belongs to an agent rather than to one conversation (its memories)."""
    return f"agent:{tenant_id}/{agent_id}"


def consolidate_agent(deps: Dependencies, tenant_id: str, agent_id: str) -> ConsolidationReport:
    """Promote the agent's pending journal entries into memories, in one transaction; returns the counts.

    Running it again finds nothing pending, so it is safe to repeat.
    """
    redactor = deps.redactor(agent_scope(tenant_id, agent_id))  # before the transaction: it may read the key
    with deps.uow() as uow:
        # Locked: two conversations of one agent consolidating at once (a night's sweep ticks them
        # together) would otherwise both plan the same entries against the memories each read, and
        # remember every fact twice. The second waits here, then finds what is still pending.
        entries = uow.memories.entries(tenant_id, agent_id, PENDING, lock=True)
        if not entries:
            return ConsolidationReport()
        everything = uow.memories.memories(tenant_id, agent_id, include_invalid=True)
        memories = [m for m in everything if m.invalidated_at is None]
        plan = consolidate(
            [
                EntryIn(e.id, e.content, e.source_type, e.source_trust, e.importance, e.tags, e.origin)
                for e in entries
            ],
            [
                MemoryIn(m.id, m.kind, m.content, m.confidence, m.importance, m.source_journal_ids, m.pinned)
                for m in memories
            ],
            importance_floor=IMPORTANCE_FLOOR,
            retracted=[m.content for m in everything if m.invalidation_reason in USER_REASONS],
        )
        _write_plan(uow.memories, tenant_id, agent_id, plan, entries, memories, utcnow(), redactor)
        uow.commit()
    return ConsolidationReport(
        entries=len(entries),
        created=sum(1 for n in plan.new if n.kind not in ("contradiction", FLAGGED)),
        merged=len(plan.merges),
        superseded=len(plan.invalidate),
        contradictions=sum(1 for n in plan.new if n.kind == "contradiction"),
        below_floor=len(plan.below_floor),
        overruled=len(plan.overruled),
        flagged=sum(1 for n in plan.new if n.kind == FLAGGED),
    )


def _write_plan(
    repo: AgentMemoryRepository,
    tenant_id: str,
    agent_id: str,
    plan: ConsolidationPlan,
    entries: list[JournalEntryRecord],
    memories: list[MemoryRecord],
    now: datetime,
    redactor: TextRedactor,
) -> None:
    """Write a consolidation plan: new memories, merges, invalidations, and each entry's new status.

    A new memory's text is redacted once more: entries journaled before redaction reached the journal
    may still hold a secret, and memories are recalled into the agent's other conversations."""
    trust_of = {e.id: e.source_trust for e in entries}
    # Real memories first, so entries link to the fact they became rather than to the contradiction note.
    order = sorted(range(len(plan.new)), key=lambda i: plan.new[i].kind == "contradiction")
    drafts = [
        MemoryDraft(
            kind=new.kind,
            content=redactor.redact(new.content),
            confidence=new.confidence,
            importance=new.importance,
            source_journal_ids=tuple(new.source_journal_ids),
            source_trust=new_memory_trust(new, trust_of),
            flags=tuple(new.flags),
        )
        for new in (plan.new[i] for i in order)
    ]
    created = dict(zip(order, repo.add_memories(tenant_id, agent_id, drafts, now), strict=True))
    links: dict[int, int] = {}  # entry id -> the memory it went into (the first one that names it)
    for i in order:
        for entry_id in plan.new[i].source_journal_ids:
            links.setdefault(entry_id, created[i])
    by_id = {m.id: m for m in memories}  # read in this transaction, after the pending entries were locked
    repo.reinforce_memories(
        [
            Reinforcement(
                merge.memory_id,
                merge.confidence,
                merge.importance,
                tuple(sorted({*by_id[merge.memory_id].source_journal_ids, *merge.entry_ids})),
                merged_trust(by_id[merge.memory_id].source_trust, merge, trust_of),
            )
            for merge in plan.merges
        ],
        now,
    )
    for merge in plan.merges:
        for entry_id in merge.entry_ids:
            links.setdefault(entry_id, merge.memory_id)
    for old in plan.invalidate:
        by = next((created[i] for i, n in enumerate(plan.new) if n.supersedes == old), None)
        repo.invalidate_memory(old, superseded_by=by, now=now)
    repo.link_entries(sorted(links.items()))
    repo.set_entries([e for e in (*plan.below_floor, *plan.overruled) if e not in links], status="pruned")


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


CORRECTION_IMPORTANCE = 7
"""Least importance of a user's correction: someone cared enough to fix it."""

MAX_MEMORY_CHARS = 10_000
_CLAIM_KINDS = {"fact": "fact", "preference": "preference", "insight": "decision"}  # kind -> journal tag


def correct_memory(
    deps: Dependencies, tenant_id: str, agent_id: str, memory_id: int, content: str
) -> MemoryRecord:
    """Replace a valid memory by the user's corrected statement; returns the new memory.

    The old memory is invalidated (kept, ``corrected by user``, superseded by the new one); the new one
    is the user's word: a ``manual`` journal entry of ``direct`` trust, linked back through
    ``corrects``, that automatic consolidation never supersedes. Raises ``MemoryNotFound`` for an id of
    no memory of this tenant's agent, ``InvalidSetting`` for a memory no longer valid.
    """
    text = content.strip()
    if not text:
        raise EmptyContent("a corrected memory needs content")
    if len(text) > MAX_MEMORY_CHARS:
        raise InvalidSetting(f"a memory holds at most {MAX_MEMORY_CHARS} characters, got {len(text)}")
    text = deps.redactor(agent_scope(tenant_id, agent_id)).redact(text)  # recalled everywhere: no secret
    with deps.uow() as uow:
        old = _valid(uow.memories, tenant_id, agent_id, memory_id, "corrected")
        kind = old.kind if old.kind in _CLAIM_KINDS else "fact"
        now = utcnow()
        entry = NewJournalEntry(
            tenant_id, agent_id, None, text, "direct", "manual", (_CLAIM_KINDS[kind],), "user"
        )
        (entry_id,) = uow.memories.add_entries([entry], now)
        draft = MemoryDraft(
            kind=kind,
            content=text,
            confidence=SOURCE_TRUST["direct"],
            importance=max(old.importance, CORRECTION_IMPORTANCE),
            source_journal_ids=(entry_id,),
            source_trust=SOURCE_TRUST["direct"],
            corrects=old.id,
        )
        (new_id,) = uow.memories.add_memories(tenant_id, agent_id, [draft], now)
        uow.memories.link_entries([(entry_id, new_id)])
        if not uow.memories.invalidate_memory(
            old.id, superseded_by=new_id, now=now, reason=CORRECTED_BY_USER
        ):
            # Another correction, deletion or consolidation invalidated it since we read it: nothing lands.
            raise InvalidSetting(f"memory {memory_id} changed while it was being corrected; try again")
        created = _valid(uow.memories, tenant_id, agent_id, new_id, "read")
        uow.commit()
    return created


def delete_memory(deps: Dependencies, tenant_id: str, agent_id: str, memory_id: int) -> MemoryRecord:
    """Invalidate a memory at the user's request (``deleted by user``): never recalled or learned again,
    still listed with ``include_invalid``. Deleting it again changes nothing; returns it as stored."""
    with deps.uow() as uow:
        memory = uow.memories.memory(tenant_id, agent_id, memory_id)
        if memory is None:
            raise MemoryNotFound(memory_id)
        if memory.invalidated_at is None:
            uow.memories.invalidate_memory(
                memory.id, superseded_by=None, now=utcnow(), reason=DELETED_BY_USER
            )
            memory = uow.memories.memory(tenant_id, agent_id, memory_id) or memory
            uow.commit()
    return memory


def _valid(
    repo: AgentMemoryRepository, tenant_id: str, agent_id: str, memory_id: int, verb: str
) -> MemoryRecord:
    """The memory, when it is this agent's and still valid; a typed error otherwise."""
    memory = repo.memory(tenant_id, agent_id, memory_id)
    if memory is None:
        raise MemoryNotFound(memory_id)
    if memory.invalidated_at is not None:
        why = memory.invalidation_reason or f"superseded by memory {memory.superseded_by}"
        raise InvalidSetting(
            f"memory {memory_id} is no longer valid ({why}); only a valid memory can be {verb}"
        )
    return memory
