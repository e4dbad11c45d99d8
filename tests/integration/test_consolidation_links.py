"""A consolidation writes its whole plan at once (memories in one flush, links in one executemany), on
real SQLite and PostgreSQL: every journal entry names the memory it became, a duplicate the memory it
restated, a superseding claim the new fact (not the note that records the contradiction), and an entry
below the floor none."""

from __future__ import annotations

from sleepcompact import Memory

PARIS = "[2024-03-02] Dana lives in Paris."
TEA = "[2024-03-02] Dana's favourite tea is oolong."
LYON = "[2024-03-09] Actually, Dana lives in Lyon now."


def _agent(memory: Memory) -> str:
    cid = memory.create_conversation("claude-sonnet-4-5", tenant_id="t1", agent_id="a1")
    memory.append(cid, {"role": "user", "content": "Tell me about Dana."})
    return cid


def _links(memory: Memory, cid: str) -> dict[str, tuple[str, int | None]]:
    return {e.content: (e.status, e.memory_id) for e in memory.journal.entries(cid)}


def test_each_entry_of_a_batch_links_to_the_memory_it_became(memory: Memory) -> None:
    cid = _agent(memory)
    for text in (PARIS, TEA, PARIS, "ok"):
        tags = ["fact"] if text != "ok" else ["chat"]  # an acknowledgement: under the floor
        memory.journal.add(cid, text, tags=tags, origin="pre_compaction")
    memory.memories.consolidate(cid)

    by_content = {m.content: m for m in memory.memories.list(cid)}
    assert set(by_content) == {PARIS, TEA}
    entries = memory.journal.entries(cid)
    assert [(e.status, e.memory_id) for e in entries if e.content == PARIS] == [
        ("consolidated", by_content[PARIS].id),
        ("consolidated", by_content[PARIS].id),
    ]
    assert _links(memory, cid)[TEA] == ("consolidated", by_content[TEA].id)
    assert _links(memory, cid)["ok"] == ("pruned", None)
    # Ids follow the plan's order, and each memory lists exactly the entries that name it.
    assert by_content[PARIS].id < by_content[TEA].id
    for m in by_content.values():
        assert sorted(m.source_journal_ids) == sorted(e.id for e in entries if e.memory_id == m.id)


def test_a_superseding_claim_links_to_the_new_fact_and_a_restatement_to_the_old_memory(
    memory: Memory,
) -> None:
    cid = _agent(memory)
    for text in (PARIS, TEA):
        memory.journal.add(cid, text, tags=["fact"], origin="pre_compaction")
    memory.memories.consolidate(cid)
    tea_id = next(m.id for m in memory.memories.list(cid) if m.content == TEA)

    memory.journal.add(cid, LYON, tags=["fact"], source_type="direct", origin="pre_compaction")
    memory.journal.add(cid, TEA, tags=["fact"], origin="pre_compaction")
    memory.memories.consolidate(cid)

    everything = memory.memories.list(cid, include_invalid=True)
    (lyon,) = [m for m in everything if m.content == LYON]
    (paris,) = [m for m in everything if m.content == PARIS]
    (note,) = [m for m in everything if m.kind == "contradiction"]
    assert paris.superseded_by == lyon.id and paris.invalidated_at is not None
    assert lyon.id < note.id  # the fact is written before the note, in the same flush
    links = [(e.content, e.status, e.memory_id) for e in memory.journal.entries(cid)][2:]
    assert links == [(LYON, "consolidated", lyon.id), (TEA, "consolidated", tea_id)]
    (tea,) = [m for m in everything if m.id == tea_id]
    assert len(tea.source_journal_ids) == 2  # the restatement reinforced the memory it restated
