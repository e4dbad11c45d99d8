"""Journal, memory consolidation and the (inline) sleep tick on real databases."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

import pytest

from sleepcompact import ConversationNotFound, EmptyContent, InvalidSetting, Memory, Settings
from sleepcompact.demo.synthetic import coding_agent, personal_assistant

Snap = Callable[[Memory], dict[str, list[tuple[Any, ...]]]]


def _assistant(memory: Memory, seed: int = 0) -> str:
    return memory.create_conversation("claude-sonnet-4-5", tenant_id="t1", agent_id=f"assistant-{seed}")


@pytest.mark.parametrize(
    ("kwargs", "error", "says"),
    [
        ({"content": "   "}, EmptyContent, "needs content"),
        ({"content": "x", "source_type": "rumour"}, InvalidSetting, "source_type"),
        ({"content": "x", "tags": ["gossip"]}, InvalidSetting, "unknown tags"),
    ],
)
def test_bad_journal_entries_are_refused_and_write_nothing(
    memory: Memory, db_snapshot: Snap, kwargs: dict[str, Any], error: type[Exception], says: str
) -> None:
    cid = _assistant(memory)
    before = db_snapshot(memory)
    with pytest.raises(error, match=says):
        memory.journal.add(cid, **kwargs)
    with pytest.raises(ConversationNotFound):
        memory.journal.add("conv_missing", "a fact")
    assert db_snapshot(memory) == before


def test_entries_are_scored_by_source_and_tags(memory: Memory) -> None:
    cid = _assistant(memory)
    memory.journal.add(cid, "Alice prefers metric units", source_type="direct", tags=["preference"])
    memory.journal.add(cid, "the weather API returned 503 once", source_type="environmental")
    strong, weak = memory.journal.entries(cid)
    assert (strong.importance, strong.source_trust) == (9, 0.9)
    assert (weak.importance, weak.source_trust) == (4, 0.3)
    assert strong.status == weak.status == "pending"


def test_consolidation_promotes_merges_and_supersedes(memory: Memory) -> None:
    conv = personal_assistant(seed=0)
    cid = _assistant(memory)
    (old, new), *_ = conv.contradicted
    facts = [f for f in conv.facts if f != new]
    for fact in facts:
        memory.journal.add(cid, fact, tags=["fact"])
    first = memory.memories.consolidate(cid)
    assert first.created >= 3
    remembered = [m.content for m in memory.memories.list(cid)]
    assert any(old in m or m in old for m in remembered)
    # The same fact again raises confidence instead of adding a memory.
    target = next(m for m in memory.memories.list(cid) if m.content in old or old in m.content)
    memory.journal.add(cid, old, tags=["fact"])
    again = memory.memories.consolidate(cid)
    assert again.merged == 1 and again.created == 0
    assert next(m for m in memory.memories.list(cid) if m.id == target.id).confidence > target.confidence
    # The contradiction supersedes: the old memory is invalidated but kept, and the change is recorded.
    memory.journal.add(cid, new, tags=["fact"])
    third = memory.memories.consolidate(cid)
    assert third.superseded == 1
    everything = memory.memories.list(cid, include_invalid=True)
    invalid = [m for m in everything if m.invalidated_at]
    assert [m.id for m in invalid] == [target.id]
    assert invalid[0].superseded_by is not None
    assert any(m.kind == "contradiction" for m in everything)
    assert all(m.id != target.id for m in memory.memories.list(cid))
    # Nothing pending is left, so consolidating again changes nothing.
    assert memory.memories.consolidate(cid).entries == 0


def test_entries_below_the_importance_floor_stay_in_the_journal(memory: Memory) -> None:
    cid = _assistant(memory)
    memory.journal.add(cid, "the office printer hummed", source_type="environmental")
    result = memory.memories.consolidate(cid)
    assert result.created == 0 and result.below_floor == 1
    (entry,) = memory.journal.entries(cid)
    assert entry.status == "pruned"
    assert memory.memories.list(cid) == []


def test_memories_are_per_tenant_and_agent(memory: Memory) -> None:
    mine = memory.create_conversation("claude-sonnet-4-5", tenant_id="t1", agent_id="a")
    theirs = memory.create_conversation("claude-sonnet-4-5", tenant_id="t2", agent_id="a")
    memory.journal.add(mine, "the launch code word is PELICAN-42", tags=["fact"])
    memory.memories.consolidate(mine)
    memory.memories.consolidate(theirs)
    assert memory.memories.search(mine, "pelican")
    assert memory.memories.search(theirs, "pelican") == []
    assert memory.memories.list(theirs) == []


def test_a_sleep_tick_consolidates_then_compacts(memory: Memory) -> None:
    conv = coding_agent(seed=0)
    cid = memory.create_conversation("claude-sonnet-4-5", context_window=16_000)
    memory.append_many(cid, [{"role": "system", "content": conv.system}, *conv.messages])
    memory.journal.add(cid, "the user prefers type hints everywhere", tags=["preference"])
    result = memory.sleep.tick(cid, "night-2026-11-22")
    assert result.consolidation.created == 1
    assert result.compaction.status == "applied"
    assert result.trigger == "soft threshold"
    stats = memory.stats(cid)
    assert stats.tokens <= stats.target
    assert memory.admin.conversation(cid).last_sleep_at is not None
    assert memory.compactions.history(cid)[0].trigger == "sleep"


def test_the_same_tick_run_five_times_changes_the_database_once(memory: Memory, db_snapshot: Snap) -> None:
    conv = coding_agent(seed=1)
    cid = memory.create_conversation("claude-sonnet-4-5", context_window=16_000)
    memory.append_many(cid, [{"role": "system", "content": conv.system}, *conv.messages])
    memory.journal.add(cid, "the deadline is Friday 18:00 UTC", tags=["deadline"])
    memory.sleep.tick(cid, "night-2026-11-22")
    once = db_snapshot(memory)
    for _ in range(4):
        assert memory.sleep.tick(cid, "night-2026-11-22").already_done is True
    assert db_snapshot(memory) == once


def test_the_entry_count_trigger_compacts_a_long_but_small_conversation(database_url: str) -> None:
    # Off by default; on, with its floor at 0, it compacts a conversation at a fraction of a percent.
    settings = Settings(database_url=database_url, entry_trigger=100, entry_trigger_floor=0.0)
    with Memory(settings, auto_migrate=True) as memory:
        cid = memory.create_conversation("claude-sonnet-4-5")
        for i in range(60):
            memory.append(cid, {"role": "user", "content": f"ping {i}"})
            memory.append(cid, {"role": "assistant", "content": f"pong {i}"})
        result = memory.sleep.tick(cid, "idle-1")
        assert result.trigger == "entry count"
        assert result.compaction.status == "applied"
        assert memory.admin.conversation(cid).live_messages < 100


def _diary(days: int = 12) -> dict[str, Any]:
    """A companion-chat history in MemoryBank's shape: one user, a few turns a day, each day dated."""
    history = {}
    for d in range(days):
        day = f"2024-03-{d + 2:02d}"
        history[day] = [
            {
                "query": f"Hi! On day {d} I started a pottery class number {d} on Thursdays. "
                "I totally agree!",
                "response": f"That sounds great! I recommend the potter Lucie Rie{d} to you. "
                "Thanks for sharing.",
            },
            {
                "query": f"I met my friend Noor{d} at the Louvre and we talked for {d + 2} hours. " * 6,
                "response": "Wonderful. " * 40,
            },
        ]
    return {"Dana": {"history": history, "personality": "curious"}}


def test_a_tick_consolidates_what_its_own_compaction_extracted(memory: Memory, db_snapshot: Snap) -> None:
    (cid,) = memory.import_(json.dumps(_diary()).encode(), context_window=4_000, model="gpt-4o")
    result = memory.sleep.tick(cid, "night-2024-03-14")
    assert result.compaction.status == "applied"
    # Everything the compaction journaled was scored and consolidated before the tick ended.
    journal = [e for e in memory.journal.entries(cid) if e.origin == "pre_compaction"]
    assert journal and {e.status for e in journal} <= {"consolidated", "pruned"}
    assert result.consolidation.entries == len(journal) + 1  # and the summary's context_synthesis entry
    remembered = [m.content for m in memory.memories.list(cid)]
    assert result.consolidation.created == len(remembered)
    # Dated third-person statements of both speakers; the acknowledgement stays in the journal, pruned.
    assert "[2024-03-02] On day 0 Dana started a pottery class number 0 on Thursdays." in remembered
    assert "[2024-03-02] The assistant recommended the potter Lucie Rie0 to Dana." in remembered
    assert not any("agree" in m or "The user said" in m for m in remembered)
    agreed = [e for e in journal if "totally agrees" in e.content]
    assert agreed and all(e.status == "pruned" and e.importance < 5 for e in agreed)
    # The same tick again writes nothing.
    once = db_snapshot(memory)
    again = memory.sleep.tick(cid, "night-2024-03-14")
    assert again.already_done and again.consolidation == result.consolidation
    assert db_snapshot(memory) == once


def test_with_llm_rescoring_a_tick_rescores_its_own_compactions_entries_too(database_url: str) -> None:
    """The rescorer sees the compaction's entries in the same tick; its scores decide what is promoted."""
    rescored: list[list[str]] = []

    def llm(prompt: str) -> str:
        if "</entry>" not in prompt:
            return "## Task and goals\nDana chats about her week.\n"
        entries = re.findall(r"<entry[^>]*>\s*(.*?)\s*</entry>", prompt, re.S)
        rescored.append(entries)
        return json.dumps([9 if "pottery" in e else 1 for e in entries])

    settings = Settings(database_url=database_url, llm_rescoring=True)
    with Memory(settings, summarizer=llm, auto_migrate=True) as mem:
        (cid,) = mem.import_(json.dumps(_diary()).encode(), context_window=4_000, model="gpt-4o")
        result = mem.sleep.tick(cid, "night-2024-03-14")
        assert result.compaction.status == "applied"
        assert len(rescored) >= 1 and any("pottery" in e for batch in rescored for e in batch)
        assert result.rescoring is not None and result.rescoring.rescored == sum(map(len, rescored))
        journal = [e for e in mem.journal.entries(cid) if e.origin == "pre_compaction"]
        assert journal and {e.importance_method for e in journal} == {"llm"}
        remembered = [m.content for m in mem.memories.list(cid)]
        assert remembered and all("pottery" in m for m in remembered)
