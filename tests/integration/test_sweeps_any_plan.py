"""The sweeps page in their keys' order whatever plan PostgreSQL picks.

Each sweep reads in batches, a keyset scan that takes up where the last batch ended, and the stale-tick
scan re-sends the oldest first: both are right only if the rows come in key order. An index in that
order gives it whether or not the query asks; a sequential scan (the planner's choice once statistics
favour it) gives rows in the order the heap holds them, which is neither the ids' (random) nor the
times' once a row has been updated. These tests turn index scans off for their connections, so only
the queries' own ORDER BY keeps the order. PostgreSQL only: SQLite has no such switch.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta

import pytest
from sqlalchemy import make_url, text

from sleepcompact import Memory, Settings
from sleepcompact.services.clock import utcnow
from tests.support.nights import night_after
from tests.support.queues import RecordingQueue

NO_INDEX_SCANS = "-c enable_indexscan=off -c enable_indexonlyscan=off -c enable_bitmapscan=off"


@pytest.fixture
def heap_ordered(database_url: str) -> Iterator[Memory]:
    """A Memory whose connections never scan an index, reading two rows a batch."""
    if database_url.startswith("sqlite"):
        pytest.skip("SQLite's planner has no switch for index scans")
    url = make_url(database_url).update_query_dict({"options": NO_INDEX_SCANS})
    settings = Settings(database_url=url.render_as_string(hide_password=False), sweep_batch_size=2)
    mem = Memory(settings, auto_migrate=True)
    try:
        yield mem
    finally:
        mem.close()


def _conversations(mem: Memory, n: int) -> list[str]:
    """``n`` conversations with a message each, in the heap in the order made (their ids are random)."""
    ids = [mem.create_conversation("claude-sonnet-4-5") for _ in range(n)]
    for cid in ids:
        mem.append(cid, {"role": "user", "content": "hello"})
    return ids


def _sql(mem: Memory, statement: str, **params: object) -> None:
    with mem.admin.engine.begin() as conn:
        conn.execute(text(statement), params)


def test_the_nightly_sweep_pages_through_never_slept_conversations_in_id_order(heap_ordered: Memory) -> None:
    ids = _conversations(heap_ordered, 7)
    queue = RecordingQueue()
    report = heap_ordered.sleep.sweep_nightly(now=night_after(1), queue=queue)
    assert sorted(c for c, _ in queue.sent) == sorted(ids) and report.enqueued == 7


def test_the_nightly_sweep_pages_through_conversations_that_slept_at_the_same_instant(
    heap_ordered: Memory,
) -> None:
    """Conversations last slept at one instant (one night's batch) are told apart by id."""
    ids = _conversations(heap_ordered, 7)
    slept = utcnow() - timedelta(days=3)
    for cid in ids:
        _sql(
            heap_ordered,
            "UPDATE conversation SET last_sleep_at = :slept, last_activity_at = :active WHERE id = :id",
            slept=slept,
            active=slept + timedelta(hours=1),
            id=cid,
        )
    queue = RecordingQueue()
    heap_ordered.sleep.sweep_nightly(now=night_after(1), queue=queue)
    assert sorted(c for c, _ in queue.sent) == sorted(ids)


def test_the_idle_sweep_pages_through_the_conversations_that_asked_for_sleep(heap_ordered: Memory) -> None:
    ids = _conversations(heap_ordered, 7)
    for cid in ids:
        heap_ordered.sleep.request(cid)
    queue = RecordingQueue()
    heap_ordered.sleep.sweep_idle(now=utcnow() + timedelta(minutes=1), queue=queue)
    assert sorted(c for c, _ in queue.sent) == sorted(ids)


def test_lost_ticks_are_sent_again_oldest_first(heap_ordered: Memory) -> None:
    """Three ticks lost by the broker; the oldest was written last (its row moved to the heap's end)."""
    oldest, middle, newest = _conversations(heap_ordered, 3)
    now = night_after(1)
    lost = RecordingQueue()
    heap_ordered.sleep.sweep_nightly(now=now, queue=lost)
    assert len(lost.sent) == 3
    for cid, minutes in ((newest, 2), (middle, 1), (oldest, 0)):
        _sql(
            heap_ordered,
            "UPDATE sleep_tick SET created_at = :at WHERE conversation_id = :id",
            at=now + timedelta(minutes=minutes),
            id=cid,
        )
    queue = RecordingQueue()
    later = now + timedelta(seconds=heap_ordered.settings.visibility_timeout + 600)
    report = heap_ordered.sleep.sweep_nightly(now=later, queue=queue)
    assert report.requeued == 2 and [c for c, _ in queue.sent] == [oldest, middle]
