"""Users correct and delete memories, on real SQLite and PostgreSQL: archived, never destroyed; never
recalled again; the user's word wins over later automatic extraction; scoped to the tenant's agent."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from sleepcompact import EmptyContent, InvalidSetting, Memory, MemoryNotFound

Snap = Callable[[Memory], dict[str, list[tuple[Any, ...]]]]
HOME = "[2024-03-02] Dana lives in Paris."
FIXED = "Dana lives in Lyon."


def _agent(memory: Memory, tenant: str = "t1", agent: str = "a1") -> str:
    cid = memory.create_conversation("claude-sonnet-4-5", tenant_id=tenant, agent_id=agent)
    memory.append(cid, {"role": "user", "content": "Where does Dana live these days? Remind me of her city."})
    return cid


def _remembered(memory: Memory, cid: str, content: str = HOME) -> int:
    memory.journal.add(cid, content, tags=["fact"], origin="pre_compaction")
    memory.memories.consolidate(cid)
    (mem,) = [m for m in memory.memories.list(cid) if m.content == content]
    return mem.id


def _recalled(memory: Memory, cid: str) -> list[str]:
    return [m["content"] for m in memory.context(cid).memories]


def test_a_correction_replaces_the_memory_and_keeps_the_old_one_archived(memory: Memory) -> None:
    cid = _agent(memory)
    old_id = _remembered(memory, cid)
    assert _recalled(memory, cid) == [HOME]

    new = memory.memories.correct(old_id, FIXED, conversation_id=cid)
    assert (new.content, new.corrects, new.source_trust, new.invalidated_at) == (FIXED, old_id, 0.9, None)
    assert new.pinned and new.kind == "fact" and new.importance >= 7
    # The old memory is archived: invalid, superseded by the correction, with the reason.
    (old,) = [m for m in memory.memories.list(cid, include_invalid=True) if m.id == old_id]
    assert (old.superseded_by, old.invalidation_reason) == (new.id, "corrected by user")
    assert old.invalidated_at is not None and old.content == HOME
    # Only the correction is recalled, listed and found.
    assert _recalled(memory, cid) == [FIXED]
    assert [m.id for m in memory.memories.list(cid)] == [new.id]
    assert memory.memories.search(cid, "Paris") == [] and memory.memories.search(cid, "Lyon") == [new]
    # The correction is the user's word in the journal: a manual, direct entry that became this memory.
    (entry,) = [e for e in memory.journal.entries(cid) if e.memory_id == new.id]
    assert (entry.origin, entry.source_type, entry.status, entry.content) == (
        "manual",
        "direct",
        "consolidated",
        FIXED,
    )


def test_the_correction_wins_over_later_automatic_contradictions(memory: Memory) -> None:
    cid = _agent(memory)
    new = memory.memories.correct(_remembered(memory, cid), FIXED, conversation_id=cid)
    # A later compaction extracts the old claim again, and a different one: neither undoes the user.
    memory.journal.add(cid, "[2024-04-01] Dana lives in Paris.", tags=["fact"], origin="pre_compaction")
    memory.journal.add(cid, "[2024-04-02] Dana lives in Marseille.", tags=["fact"], origin="pre_compaction")
    report = memory.memories.consolidate(cid)
    assert (report.overruled, report.superseded, report.created) == (2, 0, 0)
    assert [m.content for m in memory.memories.list(cid)] == [FIXED]
    assert {e.status for e in memory.journal.entries(cid) if e.content.startswith("[2024-04")} == {"pruned"}
    # The user's own later word does change it.
    memory.journal.add(cid, "Dana moved from Lyon to Nantes.", tags=["fact"], origin="manual")
    assert memory.memories.consolidate(cid).superseded == 1
    assert new.id not in [m.id for m in memory.memories.list(cid)]


def test_a_deleted_memory_is_never_recalled_nor_learned_again_but_still_listed(memory: Memory) -> None:
    cid = _agent(memory)
    gone_id = _remembered(memory, cid)
    gone = memory.memories.delete(gone_id, conversation_id=cid)
    assert gone.invalidation_reason == "deleted by user" and gone.invalidated_at is not None
    assert gone.superseded_by is None and gone.content == HOME
    assert _recalled(memory, cid) == [] and memory.memories.list(cid) == []
    assert [m.id for m in memory.memories.list(cid, include_invalid=True)] == [gone_id]
    # Extracted again later, it stays out.
    memory.journal.add(cid, "[2024-05-01] Dana lives in Paris.", tags=["fact"], origin="pre_compaction")
    assert memory.memories.consolidate(cid).overruled == 1
    assert _recalled(memory, cid) == [] and memory.memories.list(cid) == []


def test_deleting_twice_changes_nothing_and_a_deleted_memory_cannot_be_corrected(
    memory: Memory, db_snapshot: Snap
) -> None:
    cid = _agent(memory)
    gone_id = _remembered(memory, cid)
    first = memory.memories.delete(gone_id, conversation_id=cid)
    once = db_snapshot(memory)
    assert memory.memories.delete(gone_id, conversation_id=cid) == first
    with pytest.raises(InvalidSetting, match="deleted by user"):
        memory.memories.correct(gone_id, FIXED, conversation_id=cid)
    assert db_snapshot(memory) == once
    cat = _remembered(memory, cid, "Dana has a cat.")
    with_cat = db_snapshot(memory)
    with pytest.raises(EmptyContent):
        memory.memories.correct(cat, "   ", conversation_id=cid)
    assert db_snapshot(memory) == with_cat


def test_memories_of_another_tenant_or_agent_are_not_found(memory: Memory, db_snapshot: Snap) -> None:
    mine = _agent(memory, "t1", "a1")
    same_agent_other_tenant = _agent(memory, "t2", "a1")
    other_agent = _agent(memory, "t1", "a2")
    memory_id = _remembered(memory, mine)
    before = db_snapshot(memory)
    for cid in (same_agent_other_tenant, other_agent):
        with pytest.raises(MemoryNotFound, match=str(memory_id)):
            memory.memories.correct(memory_id, FIXED, conversation_id=cid)
        with pytest.raises(MemoryNotFound):
            memory.memories.delete(memory_id, conversation_id=cid)
    with pytest.raises(MemoryNotFound):  # the default tenant's default agent holds nothing
        memory.memories.delete(memory_id)
    with pytest.raises(MemoryNotFound):
        memory.memories.delete(memory_id + 1000, tenant_id="t1", agent_id="a1")
    with pytest.raises(InvalidSetting, match="not both"):
        memory.memories.delete(memory_id, conversation_id=mine, tenant_id="t1")
    assert db_snapshot(memory) == before
    # Named by its tenant and agent, it is found.
    assert (
        memory.memories.delete(memory_id, tenant_id="t1", agent_id="a1").invalidation_reason
        == "deleted by user"
    )
