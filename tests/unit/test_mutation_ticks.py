"""The sweeps' selections in SQL, where mutation testing found the suite blind (docs/mutation.md). On a
throwaway SQLite file: no server.

A nightly sweep pages through the fleet: every due conversation exactly once, in its scan's order, none
that is not due, whatever the batch size. The stale scan re-sends a lost message and a dead worker's tick,
and a re-send restarts only that tick's clock.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import select, update

from sleepcompact import Memory
from sleepcompact.store.models import Conversation, SleepTick

NIGHT = datetime(2026, 11, 24, 3, 0, tzinfo=UTC)
DAY = timedelta(days=1)


def _conversation(mem: Memory, **times: datetime | None) -> str:
    cid = mem.create_conversation("claude-sonnet-4-5")
    if not times:
        return cid
    with mem.admin.uow() as uow:
        uow.ticks.session.execute(update(Conversation).where(Conversation.id == cid).values(**times))
        uow.commit()
    return cid


def _pages(mem: Memory, limit: int) -> list[list[str]]:
    pages: list[list[str]] = []
    cursor: str | None = ""
    with mem.admin.uow() as uow:
        while cursor is not None:
            ids, cursor = uow.ticks.due_nightly(NIGHT, cursor, limit)
            pages.append(ids)
            assert len(pages) < 50, "the cursor never ends"
    return pages


def test_the_nightly_sweep_pages_through_every_due_conversation_once(mem: Memory) -> None:
    created = NIGHT - 10 * DAY
    never = sorted(_conversation(mem, created_at=created, last_sleep_at=None) for _ in range(5))
    # Slept conversations: the one created first slept last, so id order and sleep order differ.
    slept_at = [NIGHT - timedelta(hours=h) for h in (5, 9, 13, 17, 21)]
    slept = [
        _conversation(mem, created_at=created, last_sleep_at=at, last_activity_at=at + timedelta(minutes=1))
        for at in slept_at
    ]
    slept_in_scan_order = [cid for _, cid in sorted(zip(slept_at, slept, strict=True))]
    # Not due: created on the sweep time, slept on it, and no activity since the last sleep.
    _conversation(mem, created_at=NIGHT, last_sleep_at=None)
    _conversation(mem, created_at=created, last_sleep_at=NIGHT, last_activity_at=NIGHT + timedelta(minutes=1))
    _conversation(mem, created_at=created, last_sleep_at=NIGHT - DAY, last_activity_at=NIGHT - DAY)
    for limit in (1, 2, 3, 5, 100):
        pages = _pages(mem, limit)
        assert all(len(page) <= limit for page in pages), limit
        assert [cid for page in pages for cid in page] == never + slept_in_scan_order, limit


def test_an_empty_fleet_is_one_empty_page_per_scan(mem: Memory) -> None:
    assert _pages(mem, 10) == [[], []]


def _tick_clocks(mem: Memory) -> dict[tuple[str, str], tuple[str, Any]]:
    with mem.admin.uow() as uow:
        rows = uow.ticks.session.execute(
            select(SleepTick.conversation_id, SleepTick.tick_key, SleepTick.status, SleepTick.created_at)
        ).all()
    return {(str(c), str(k)): (str(s), t) for c, k, s, t in rows}


def test_the_stale_scan_resends_lost_and_dead_ticks_and_nothing_else(mem: Memory) -> None:
    a, b, c = (_conversation(mem) for _ in range(3))
    queued_before, running_before = NIGHT, NIGHT - timedelta(hours=1)
    with mem.admin.uow() as uow:
        ticks = uow.ticks
        ticks.queue([(a, "on-its-way")], NIGHT)  # queued just now: not yet stale
        ticks.start(b, "dead", NIGHT - timedelta(hours=2))  # running since long before: worker died
        ticks.queue([(a, "lost")], NIGHT - timedelta(hours=3))  # queued earlier, its message lost
        ticks.queue([(b, "busy")], NIGHT - timedelta(hours=3))
        ticks.start(b, "busy", running_before)  # started on the bound: still within its lease
        ticks.start(c, "resent", NIGHT - timedelta(hours=2))
        ticks.requeue([(c, "resent")], running_before)  # re-sent on the bound: not again
        ticks.start(c, "done", NIGHT - timedelta(hours=4))
        ticks.finish(c, "done", {}, NIGHT - timedelta(hours=4))
        uow.commit()
    with mem.admin.uow() as uow:
        # Oldest first (by when each was last sent), not in the order the rows were written.
        assert uow.ticks.stale(queued_before, running_before, 10) == [(a, "lost"), (b, "dead")]
        assert uow.ticks.stale(queued_before, running_before, 1) == [(a, "lost")]


def test_a_resend_restarts_the_clock_of_that_tick_only(mem: Memory) -> None:
    a, b = _conversation(mem), _conversation(mem)
    with mem.admin.uow() as uow:
        uow.ticks.queue([(a, "night-1"), (b, "night-1"), (a, "night-2")], NIGHT - DAY)
        uow.commit()
    before = _tick_clocks(mem)
    with mem.admin.uow() as uow:
        uow.ticks.requeue([(a, "night-1")], NIGHT)
        uow.commit()
    after = _tick_clocks(mem)
    assert after[(a, "night-1")] != before[(a, "night-1")]
    assert after[(b, "night-1")] == before[(b, "night-1")]
    assert after[(a, "night-2")] == before[(a, "night-2")]


def _statuses(mem: Memory, pairs: list[tuple[str, str]]) -> list[str]:
    with mem.admin.uow() as uow:
        ticks = [uow.ticks.get(c, k) for c, k in pairs]
    return [t.status if t is not None else "missing" for t in ticks]


def test_start_and_finish_touch_only_their_own_tick_and_a_done_tick_stays_done(mem: Memory) -> None:
    a, b = _conversation(mem), _conversation(mem)
    started, finished = NIGHT, NIGHT + timedelta(minutes=3)
    others = [(b, "night-1"), (a, "night-2")]
    with mem.admin.uow() as uow:
        uow.ticks.queue([(a, "night-1"), *others], NIGHT - DAY)
        assert uow.ticks.start(a, "night-1", started)
        uow.commit()
    assert _statuses(mem, [(a, "night-1"), *others]) == ["running", "queued", "queued"]
    with mem.admin.uow() as uow:
        assert uow.ticks.finish(a, "night-1", {"compaction": "applied"}, finished)
        uow.commit()
    assert _statuses(mem, [(a, "night-1"), *others]) == ["done", "queued", "queued"]
    with mem.admin.uow() as uow:
        done = uow.ticks.get(a, "night-1")
        assert done is not None
        assert (done.started_at, done.finished_at, done.result) == (
            started,
            finished,
            {"compaction": "applied"},
        )
        # A redelivery of the done tick neither restarts it nor overwrites its result.
        assert uow.ticks.start(a, "night-1", finished + timedelta(minutes=1)) is False
        assert (
            uow.ticks.finish(a, "night-1", {"compaction": "again"}, finished + timedelta(minutes=2)) is False
        )
        uow.commit()
    with mem.admin.uow() as uow:
        again = uow.ticks.get(a, "night-1")
        assert again is not None and (again.status, again.result) == ("done", {"compaction": "applied"})
        assert again.finished_at == finished


def _lease(mem: Memory, cid: str, owner: str, now: datetime, seconds: int = 600) -> bool:
    with mem.admin.uow() as uow:
        got = uow.ticks.acquire_lease(cid, owner, now, seconds)
        uow.commit()
    return got


def test_a_lease_is_taken_and_given_back_on_its_own_conversation_only(mem: Memory) -> None:
    a, b = _conversation(mem), _conversation(mem)
    # One night's ticks share an owner name across conversations.
    assert _lease(mem, a, "tick:night-1", NIGHT)
    assert _lease(mem, b, "guard:other", NIGHT), "taking a's lease took b's too"
    assert _lease(mem, b, "guard:other", NIGHT + timedelta(seconds=1))  # the holder extends it
    c = _conversation(mem)
    assert _lease(mem, c, "tick:night-1", NIGHT)
    with mem.admin.uow() as uow:
        uow.ticks.release_lease(a, "guard:other")  # not its holder: nothing happens
        uow.ticks.release_lease(c, "tick:night-1")
        uow.commit()
    assert not _lease(mem, a, "guard:third", NIGHT), "a lease was given back by someone who did not hold it"
    released = mem.admin.conversation(c)
    assert (released.lease_owner, released.lease_expires_at) == (None, None)
    assert mem.admin.conversation(a).lease_owner == "tick:night-1"  # same owner name, other conversation


def test_a_lease_is_held_until_the_instant_it_expires(mem: Memory) -> None:
    a = _conversation(mem)
    assert _lease(mem, a, "tick:night-1", NIGHT, seconds=60)
    expiry = NIGHT + timedelta(seconds=60)
    assert not _lease(mem, a, "guard:x", expiry)
    assert _lease(mem, a, "guard:x", expiry + timedelta(microseconds=1))
