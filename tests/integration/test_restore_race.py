"""A restore that another writer's commit overtakes: it fails with a typed error and writes nothing.

A restore undoes its compactions, recounts the conversation and moves the compaction epoch on, in one
transaction guarded by the epoch it read first. Under PostgreSQL's read committed another writer (a
compaction applying in another process) can commit an epoch change after that read; the restore must
then give up whole, saying why, rather than leave rows restored under an epoch that no longer says
which compaction they belong to. SQLite's ``BEGIN IMMEDIATE`` lets no other writer in, so the window
exists only on PostgreSQL.

The interleaving is forced: a statement hook parks the restore just before its recount, and the other
writer's commit (the epoch moved on, as any apply moves it) lands there.
"""

from __future__ import annotations

import pytest
from sqlalchemy import text

from sleepcompact import Memory, NotRestorable, Settings
from sleepcompact.demo.synthetic import coding_agent
from tests.support.threads import HANG_GUARD_S, InThread, StatementPark


def test_a_restore_overtaken_by_another_writer_fails_and_writes_nothing(database_url: str) -> None:
    if database_url.startswith("sqlite"):
        pytest.skip("SQLite's BEGIN IMMEDIATE lets no other writer commit inside a restore")
    with Memory(Settings(database_url=database_url), auto_migrate=True) as mem:
        cid = mem.create_conversation("claude-sonnet-4-5", context_window=8_000)
        mem.append_many(cid, coding_agent(seed=0).messages)
        compacted = mem.compactions.compact(cid)
        assert compacted.status == "applied" and compacted.compaction_id is not None
        before = mem.context(cid)
        restorer = InThread(lambda: mem.compactions.restore(str(compacted.compaction_id)))
        recount = StatementPark(mem.admin.engine, restorer, lambda sql: "sum(message.live_tokens)" in sql)
        with recount:
            restorer.start()
            recount.reached("its recount")
            with mem.admin.engine.begin() as other_writer:
                other_writer.execute(
                    text("UPDATE conversation SET compaction_epoch = compaction_epoch + 1 WHERE id = :id"),
                    {"id": cid},
                )
            recount.release()
            restorer.join(HANG_GUARD_S)

        assert isinstance(restorer.error, NotRestorable)
        assert str(restorer.error) == "the conversation changed during the restore; try again"
        # Nothing of the restore stayed: the compaction is applied, the call is the compacted one.
        assert [h.status for h in mem.compactions.history(cid)] == ["applied"]
        after = mem.context(cid)
        assert (after.messages, after.tokens) == (before.messages, before.tokens)
        # Tried again, it restores.
        assert mem.compactions.restore(compacted.compaction_id) == (compacted.compaction_id,)
        assert mem.context(cid).tokens > before.tokens
