"""The idle sweep's selection and the sleep requests in SQL, where mutation testing found the suite blind
(docs/mutation.md, fourth session). On a throwaway SQLite file: no server.

* The idle sweep pages through the fleet: first every conversation that asked for sleep (by id), then
  every quiet one (last active within the day before the idle bound, with messages, nothing asked, work
  since its last sleep), in activity order, each exactly once whatever the batch size, conversations
  active at the same instant included.
* A sleep request keeps its first time; a debounced one counts again only after its whole interval, and
  only for its own conversation.
* A conversation's ticks read back oldest first, each naming its conversation.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from sqlalchemy import update

from sleepcompact import Memory
from sleepcompact.store.models import Conversation

IDLE_BEFORE = datetime(2026, 11, 24, 3, 0, tzinfo=UTC)
ACTIVE_AFTER = IDLE_BEFORE - timedelta(days=1)
HOUR = timedelta(hours=1)


def _conversation(mem: Memory, **columns: object) -> str:
    cid = mem.create_conversation("claude-sonnet-4-5")
    if not columns:
        return cid
    with mem.admin.uow() as uow:
        uow.ticks.session.execute(update(Conversation).where(Conversation.id == cid).values(**columns))
        uow.commit()
    return cid


def _set(mem: Memory, cid: str, **columns: object) -> None:
    with mem.admin.uow() as uow:
        uow.ticks.session.execute(update(Conversation).where(Conversation.id == cid).values(**columns))
        uow.commit()


def _pages(mem: Memory, limit: int) -> list[list[str]]:
    pages: list[list[str]] = []
    cursor: str | None = ""
    with mem.admin.uow() as uow:
        while cursor is not None:
            convs, cursor = uow.ticks.due_idle(IDLE_BEFORE, ACTIVE_AFTER, cursor, limit)
            pages.append([c.id for c in convs])
            assert len(pages) < 60, "the cursor never ends"
    return pages


def _quiet(mem: Memory, at: datetime, **columns: object) -> str:
    values: dict[str, object] = {"last_activity_at": at, "live_messages": 1, "last_sleep_at": None}
    values.update(columns)
    return _conversation(mem, **values)


def test_the_idle_sweep_pages_through_requests_then_quiet_conversations_once(mem: Memory) -> None:
    # Asked for sleep, whatever else: by id. Their request times run against their id order.
    # Two of them would be quiet too: they come once, as requests.
    asked = [_quiet(mem, ACTIVE_AFTER - 3 * HOUR, live_messages=0) for _ in range(2)]
    asked += [_quiet(mem, IDLE_BEFORE - 4 * HOUR) for _ in range(2)]
    for n, cid in enumerate(sorted(asked)):
        _set(mem, cid, sleep_requested_at=IDLE_BEFORE - n * HOUR)
    # Quiet and due: activity order differs from id order, and three share one instant.
    tied_at = IDLE_BEFORE - 5 * HOUR
    quiet = [
        _quiet(mem, IDLE_BEFORE - timedelta(microseconds=1)),  # just before the idle bound
        _quiet(mem, ACTIVE_AFTER),  # on the lower bound: still this sweep's
        _quiet(mem, tied_at),
        _quiet(mem, tied_at),
        _quiet(mem, tied_at),
        _quiet(mem, IDLE_BEFORE - 2 * HOUR, last_sleep_at=IDLE_BEFORE - 3 * HOUR),  # work since its sleep
        _quiet(mem, IDLE_BEFORE - 9 * HOUR, live_messages=1),
    ]
    quiet_in_scan_order = sorted(
        quiet,
        key=lambda cid: (mem.admin.conversation(cid).last_activity_at, cid),
    )
    # Not due.
    _quiet(mem, IDLE_BEFORE)  # active on the idle bound: not idle yet
    _quiet(mem, ACTIVE_AFTER - timedelta(microseconds=1))  # older: the nightly sweep's
    _quiet(mem, tied_at, live_messages=0)  # nothing to compact
    _quiet(mem, tied_at, last_sleep_at=tied_at)  # slept at its last activity
    _quiet(mem, tied_at, last_sleep_at=tied_at + HOUR)  # slept since
    expected = sorted(asked) + quiet_in_scan_order
    for limit in (1, 2, 3, 4, 5, 100):
        pages = _pages(mem, limit)
        assert all(len(page) <= limit for page in pages), limit
        assert [cid for page in pages for cid in page] == expected, limit


def test_an_idle_sweep_of_an_empty_fleet_is_one_empty_page_per_scan(mem: Memory) -> None:
    assert _pages(mem, 10) == [[], []]


def _requested_at(mem: Memory, cid: str) -> datetime | None:
    return mem.admin.conversation(cid).sleep_requested_at


def test_a_sleep_request_keeps_its_first_time(mem: Memory) -> None:
    a, b = _conversation(mem), _conversation(mem)
    with mem.admin.uow() as uow:
        uow.ticks.request_sleep(a, IDLE_BEFORE)
        uow.ticks.request_sleep(a, IDLE_BEFORE + HOUR)
        uow.commit()
    assert _requested_at(mem, a) == IDLE_BEFORE
    assert _requested_at(mem, b) is None


def _debounced(mem: Memory, cid: str, now: datetime, interval_s: int = 60) -> bool:
    with mem.admin.uow() as uow:
        fresh = uow.ticks.request_sleep_debounced(cid, now, interval_s)
        uow.commit()
    return fresh


def test_a_debounced_sleep_request_counts_again_only_after_its_whole_interval(mem: Memory) -> None:
    a, b = _conversation(mem), _conversation(mem)
    assert _debounced(mem, a, IDLE_BEFORE)
    assert _requested_at(mem, b) is None, "a request for one conversation marked another"
    assert not _debounced(mem, a, IDLE_BEFORE + timedelta(seconds=30))
    assert not _debounced(mem, a, IDLE_BEFORE + timedelta(seconds=60))  # on the interval: still debounced
    assert _requested_at(mem, a) == IDLE_BEFORE
    later = IDLE_BEFORE + timedelta(seconds=60, microseconds=1)
    assert _debounced(mem, a, later)
    assert _requested_at(mem, a) == later
    assert _debounced(mem, b, IDLE_BEFORE + timedelta(seconds=1))  # b's own interval, not a's


def test_a_conversations_ticks_read_back_oldest_first(mem: Memory) -> None:
    a, b = _conversation(mem), _conversation(mem)
    keys = ["night:2026-11-26", "night:2026-11-24", "req:2026-11-25T10:00", "idle:2026-11-25T09:00"]
    with mem.admin.uow() as uow:
        for n, key in enumerate(keys):
            uow.ticks.queue([(a, key)], IDLE_BEFORE + n * HOUR)
        uow.ticks.queue([(b, "night:2026-11-24")], IDLE_BEFORE)
        uow.commit()
    ticks = mem.sleep.ticks(a)
    assert [t.tick_key for t in ticks] == keys
    assert {t.conversation_id for t in ticks} == {a}
    with mem.admin.uow() as uow:
        one = uow.ticks.get(b, "night:2026-11-24")
    assert one is not None and (one.conversation_id, one.tick_key, one.status) == (
        b,
        "night:2026-11-24",
        "queued",
    )


def test_activity_without_a_message_touches_only_its_own_conversation(mem: Memory) -> None:
    a, b = _conversation(mem), _conversation(mem)
    b_before = mem.admin.conversation(b).last_activity_at
    with mem.admin.uow() as uow:
        uow.ticks.touch(a, IDLE_BEFORE + HOUR)
        uow.commit()
    assert mem.admin.conversation(a).last_activity_at == IDLE_BEFORE + HOUR
    assert mem.admin.conversation(b).last_activity_at == b_before
