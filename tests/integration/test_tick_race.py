"""Two deliveries of one keyed sleep tick racing: the tick's work is applied once, and every delivery
answers with the one result the tick recorded.

A tick key is meant to run once (``services.sleep``): a redelivered copy of a finished tick returns its
stored result. These tests make two deliveries of one key meet at the two places where they can:

* the second reads the tick as ``running`` while the first works, and starts only after the first has
  finished. The start (one conditional UPDATE) then says the tick is done, and that answer must be
  used: the second returns the recorded result and runs nothing (a journal entry added meanwhile waits
  for the next tick instead of being consolidated by a tick that was already done). Only PostgreSQL
  (read committed) has this window; SQLite's ``BEGIN IMMEDIATE`` serializes the whole tick start.
* the second runs whole while the first is still summarizing (same owner: a redelivery takes the lease
  over at once). The compaction epoch applies one of the two summaries; the tick's recorded result must
  be the one that applied, and the later finisher must not overwrite it.

The interleavings are forced, not hoped for: a summarizer hook runs the second delivery inside the
first one's summary call, and a statement hook parks the second delivery between its read of the tick
and its start.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest

from sleepcompact import Memory, Settings
from sleepcompact.adapters.tokenizer import load_counter
from sleepcompact.demo.synthetic import coding_agent
from sleepcompact.services.sleep import TickResult
from tests.support.events import recorded
from tests.support.faults import HookedSummarizer
from tests.support.threads import HANG_GUARD_S, InThread, StatementPark

KEY = "night-2026-11-22"


@pytest.fixture
def hooked(database_url: str) -> Iterator[tuple[Memory, HookedSummarizer]]:
    summarizer = HookedSummarizer(load_counter().count)
    mem = Memory(Settings(database_url=database_url), auto_migrate=True, summarizer=summarizer)
    try:
        yield mem, summarizer
    finally:
        mem.close()


def _over_soft(mem: Memory) -> str:
    conv = coding_agent(seed=2)
    cid = mem.create_conversation("claude-sonnet-4-5", context_window=8_000)  # needs a summary
    mem.append_many(cid, [{"role": "system", "content": conv.system}, *conv.messages])
    mem.journal.add(cid, "the user wants every public function typed", tags=["preference"])
    return cid


def _delivery(mem: Memory, cid: str) -> InThread[TickResult]:
    """One delivery of the tick, run in its own thread as a second worker would run it."""
    return InThread(lambda: mem.sleep.tick(cid, KEY))


def _recorded(mem: Memory, cid: str) -> dict[str, Any]:
    (tick,) = [t for t in mem.sleep.ticks(cid) if t.tick_key == KEY]
    assert tick.status == "done"
    return tick.result


def test_a_delivery_that_starts_after_the_first_finished_returns_its_recorded_result(
    hooked: tuple[Memory, HookedSummarizer], database_url: str
) -> None:
    if database_url.startswith("sqlite"):
        pytest.skip("SQLite's BEGIN IMMEDIATE serializes the tick start: a finish cannot get in between")
    mem, summarizer = hooked
    cid = _over_soft(mem)
    second = _delivery(mem, cid)
    # The second delivery has read the tick (running) and is about to take the lease and start it.
    lease = StatementPark(
        mem.admin.engine, second, lambda sql: "lease_owner" in sql and sql.startswith("UPDATE")
    )

    def second_arrives_mid_summary() -> None:
        second.start()
        lease.reached("its tick start")

    summarizer.before = second_arrives_mid_summary
    with recorded("sleep_tick") as events, lease:
        first = mem.sleep.tick(cid, KEY)  # finishes while the second is parked
        # Work for the next tick arrives; the finished tick must not pick it up a second time.
        mem.journal.add(cid, "the release is due on Friday at 18:00 UTC", tags=["deadline"])
        remembered = len(mem.memories.list(cid))
        lease.release()
        late = second.outcome()
    # Each delivery says what it did, in the canonical line of its conversation, tenant and key.
    said = [(e["conversation_id"], e["tenant_id"], e["tick_key"], e["outcome"]) for e in events]
    assert said == [(cid, "default", KEY, "done"), (cid, "default", KEY, "already_done")]

    assert first.compaction.status == "applied" and first.consolidation.created >= 1
    # The late delivery ran nothing: it answers with exactly what the first one recorded.
    assert late.already_done is True
    assert replace(late, already_done=False) == first
    assert _recorded(mem, cid) == first.to_dict()
    # It gave back the lease it took to start: the guard and the next tick need not wait it out.
    assert mem.admin.conversation(cid).lease_owner is None
    assert summarizer.calls == 1
    assert [(h.status, h.trigger) for h in mem.compactions.history(cid)] == [("applied", "sleep")]
    assert len(mem.memories.list(cid)) == remembered  # the new entry waits for the next tick
    (entry,) = [e for e in mem.journal.entries(cid) if "Friday at 18:00" in e.content]
    assert entry.status == "pending"
    # A third delivery, much later, gets the same recorded answer.
    assert replace(mem.sleep.tick(cid, KEY), already_done=False) == first


def test_a_delivery_that_runs_whole_inside_the_first_ones_summary_leaves_one_applied_result(
    hooked: tuple[Memory, HookedSummarizer],
) -> None:
    mem, summarizer = hooked
    cid = _over_soft(mem)
    second = _delivery(mem, cid)

    def second_runs_whole_meanwhile() -> None:
        second.start()
        second.join(HANG_GUARD_S)

    summarizer.before = second_runs_whole_meanwhile
    first = mem.sleep.tick(cid, KEY)
    inner = second.outcome()

    # The second delivery summarized after the first and applied first; the first's summary lost the
    # epoch race and was only recorded as discarded.
    history = mem.compactions.history(cid)
    applied = [h for h in history if h.status == "applied"]
    assert len(applied) == 1 and sorted(h.status for h in history) == ["applied", "discarded"]
    assert inner.compaction.status == "applied" and inner.compaction.compaction_id == applied[0].id
    # The tick's one result is the delivery that applied: the later finisher neither overwrites it nor
    # reports its own lost race as the tick's outcome.
    assert _recorded(mem, cid) == inner.to_dict()
    assert first.already_done is True
    assert replace(first, already_done=False) == inner
    # Nothing was remembered twice by the two consolidations.
    remembered = [m.content for m in mem.memories.list(cid)]
    assert remembered and len(remembered) == len(set(remembered))
    assert replace(mem.sleep.tick(cid, KEY), already_done=False) == inner
