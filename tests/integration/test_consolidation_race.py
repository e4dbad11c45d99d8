"""Two consolidations of one agent at once: every journal entry becomes memory once.

A nightly sweep ticks every conversation of an agent together, so with two worker children two
conversations of one agent consolidate the same pending journal side by side. Each reads the pending
entries and the agent's memories, then writes its plan. If the second reads and writes while the first
holds a plan made from an older set of memories, both turn the same entries into memories: the agent
remembers every fact twice. On PostgreSQL (read committed) that window is real; SQLite's ``BEGIN
IMMEDIATE`` serializes the two transactions from their first statement.

The interleaving is forced: a statement hook parks the first consolidation right after it has read the
agent's memories, and lets it go on once the second has either finished or is waiting for a lock.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
from sqlalchemy import create_engine, text

from sleepcompact import Memory, Settings
from tests.support.threads import HANG_GUARD_S, InThread, StatementPark

FACTS = (
    ("the user wants every public function typed", "preference"),
    ("the team decided to ship the importer on Friday", "decision"),
    ("the user prefers tabs in Makefiles and spaces elsewhere", "preference"),
)


@pytest.fixture
def mem(database_url: str) -> Iterator[Memory]:
    if database_url.startswith("sqlite"):
        pytest.skip("SQLite's BEGIN IMMEDIATE serializes the two consolidations from their first statement")
    memory = Memory(Settings(database_url=database_url), auto_migrate=True)
    try:
        yield memory
    finally:
        memory.close()


def _waiting_for_a_lock(database_url: str) -> bool:
    engine = create_engine(database_url.replace("postgresql://", "postgresql+psycopg://", 1))
    try:
        with engine.connect() as conn:
            query = (
                "SELECT count(*) FROM pg_stat_activity"
                " WHERE wait_event_type = 'Lock' AND datname = current_database()"
            )
            return bool(conn.execute(text(query)).scalar_one())
    finally:
        engine.dispose()


def test_two_consolidations_of_one_agent_remember_each_entry_once(mem: Memory, database_url: str) -> None:
    first_cid = mem.create_conversation("claude-sonnet-4-5")
    second_cid = mem.create_conversation("claude-sonnet-4-5")  # the same (default) agent
    for i, (fact, tag) in enumerate(FACTS):
        mem.journal.add(first_cid if i % 2 else second_cid, fact, tags=[tag])
    first = InThread(lambda: mem.memories.consolidate(first_cid))
    second = InThread(lambda: mem.memories.consolidate(second_cid))
    memories_read = StatementPark(
        mem.admin.engine,
        first,
        lambda sql: sql.lstrip().startswith("SELECT") and "FROM memory" in sql,
        when="after",
    )
    with memories_read:
        first.start()
        memories_read.reached("its read of the memories")
        second.start()
        deadline = time.monotonic() + HANG_GUARD_S
        while second.is_alive() and not _waiting_for_a_lock(database_url) and time.monotonic() < deadline:
            time.sleep(0.05)
        memories_read.release()
        reports = [first.outcome(), second.outcome()]

    remembered = [m.content for m in mem.memories.list(first_cid)]
    assert sorted(remembered) == sorted(fact for fact, _tag in FACTS)
    # Each entry went into one memory, by one of the two consolidations.
    assert sum(r.entries for r in reports) == len(FACTS)
    assert sum(r.created for r in reports) == len(FACTS)
    assert {e.status for e in mem.journal.entries(first_cid)} == {"consolidated"}
