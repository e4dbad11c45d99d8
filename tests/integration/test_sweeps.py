"""The sweeps' selection rules, ticks, catch-up and leases on real SQLite and PostgreSQL.

Time is passed in (``now``) so nights and idle spells can be stepped through without waiting.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from sleepcompact import ConversationBusy, ConversationNotFound, Memory, Settings
from sleepcompact.demo.synthetic import coding_agent
from sleepcompact.domain.schedule import night_of
from sleepcompact.services.clock import utcnow
from sleepcompact.services.sweeps import night_for
from tests.support.nights import night_after
from tests.support.queues import RecordingQueue


def _conversation(mem: Memory, *, plan: str | None = "free", big: bool = True) -> str:
    cid = mem.create_conversation("claude-sonnet-4-5", plan=plan)
    conv = coding_agent(seed=0)
    mem.append_many(cid, conv.messages if big else conv.messages[:2])
    return cid


def _tonight() -> datetime:
    """A moment after a night's sweep time, at least a day after anything the test created."""
    return night_after(1)


def test_the_nightly_sweep_enqueues_each_due_conversation_once_per_night(memory: Memory) -> None:
    ids = sorted(_conversation(memory, big=False) for _ in range(5))
    queue = RecordingQueue()
    now = _tonight()
    first = memory.sleep.sweep_nightly(now=now, queue=queue)
    key = night_for(memory.settings, now).key
    assert sorted(queue.sent) == [(c, key) for c in ids]
    assert first.enqueued == 5
    # A second beat, or the same sweep redelivered, finds every tick already queued and sends nothing.
    again = memory.sleep.sweep_nightly(now=now + timedelta(minutes=5), queue=queue)
    assert again.enqueued == 0 and again.already_queued == 5
    assert len(queue.sent) == 5


def test_sweeps_read_in_batches_without_missing_or_repeating_anyone(memory: Memory) -> None:
    ids = sorted(_conversation(memory, big=False) for _ in range(7))
    queue = RecordingQueue()
    small = Memory(memory.settings.with_overrides(sweep_batch_size=2))
    from sleepcompact.services import sweeps

    try:
        sweeps.sweep_nightly(small._deps, queue, now=_tonight())
    finally:
        small.close()
    assert sorted(c for c, _ in queue.sent) == ids


def test_a_conversation_created_today_waits_for_its_first_night(memory: Memory) -> None:
    cid = _conversation(memory, big=False)
    last_sweep_time = night_for(memory.settings, utcnow()).start
    queue = RecordingQueue()
    # Still the same night as when it was created: not due.
    memory.sleep.sweep_nightly(now=last_sweep_time + timedelta(days=1, minutes=-1), queue=queue)
    assert queue.sent == []
    # The next sweep time has come: due.
    memory.sleep.sweep_nightly(now=last_sweep_time + timedelta(days=1, minutes=1), queue=queue)
    assert [c for c, _ in queue.sent] == [cid]


def test_a_skipped_night_is_caught_up_and_a_quiet_conversation_is_left_alone(memory: Memory) -> None:
    active = _conversation(memory, big=False)
    quiet = _conversation(memory, big=False)
    for cid in (active, quiet):
        memory.sleep.run_tick(cid, "night-before")  # both slept today
    memory.append(active, {"role": "user", "content": "one more thing"})  # only one is active since
    queue = RecordingQueue()
    # No sweep ran for two nights (beat down); the next one still finds the active conversation.
    later = night_after(3)
    memory.sleep.sweep_nightly(now=later, queue=queue)
    assert [c for c, _ in queue.sent] == [active]
    # The idle sweep catches a missed night up too, with the night's own key, so nothing runs twice.
    idle = RecordingQueue()
    memory.sleep.sweep_idle(now=later + timedelta(minutes=10), queue=idle)
    assert idle.sent == []


def test_the_idle_sweep_picks_quiet_conversations_over_soft_and_guard_requests(database_url: str) -> None:
    # The idle sweep also catches up a missed night; with the nightly sweep time twelve hours from now,
    # the 36 minutes this test steps through never cross it, whatever the time of day it runs at.
    far = (utcnow().hour + 12) % 24
    memory = Memory(Settings(database_url=database_url, nightly_cron=f"0 {far} * * *"), auto_migrate=True)
    try:
        _idle_sweep_rules(memory)
    finally:
        memory.close()


def _idle_sweep_rules(memory: Memory) -> None:
    over = _conversation(memory)  # 37k tokens against a 16k plan: over soft
    under = _conversation(memory, plan=None, big=False)  # a short one against 200k: under soft
    asked = _conversation(memory, plan=None, big=False)
    memory.sleep.request(asked)
    queue = RecordingQueue()
    # Not yet quiet for long enough: only the guard's request is enqueued.
    memory.sleep.sweep_idle(now=utcnow() + timedelta(minutes=1), queue=queue)
    assert [c for c, _ in queue.sent] == [asked]
    assert queue.sent[0][1].startswith("request-")
    memory.sleep.run_tick(*queue.sent[0])  # the worker runs it; the request is answered
    memory.sleep.sweep_idle(now=utcnow() + timedelta(minutes=31), queue=queue)
    assert [c for c, _ in queue.sent] == [asked, over]
    assert under not in [c for c, _ in queue.sent]
    assert queue.sent[1][1].startswith("idle-")
    # The same quiet spell is ticked once, however many sweeps see it.
    memory.sleep.sweep_idle(now=utcnow() + timedelta(minutes=36), queue=queue)
    assert len(queue.sent) == 2


def test_a_tick_whose_message_was_lost_is_enqueued_again(memory: Memory) -> None:
    cid = _conversation(memory, big=False)
    lost = RecordingQueue()  # the sweep committed, then the broker lost the message
    now = _tonight()
    memory.sleep.sweep_nightly(now=now, queue=lost)
    assert len(lost.sent) == 1
    queue = RecordingQueue()
    stale_after = memory.settings.visibility_timeout
    memory.sleep.sweep_nightly(now=now + timedelta(seconds=stale_after - 60), queue=queue)
    assert queue.sent == []  # maybe still on its way
    report = memory.sleep.sweep_nightly(now=now + timedelta(seconds=stale_after + 60), queue=queue)
    assert queue.sent == lost.sent and report.requeued == 1
    # Run (twice, as a redelivery would): done once, then recognised as done.
    first = memory.sleep.run_tick(cid, lost.sent[0][1])
    second = memory.sleep.run_tick(cid, lost.sent[0][1])
    assert "already_done" not in first.to_dict() and second.already_done is True
    assert [t.status for t in memory.sleep.ticks(cid)] == ["done"]


def test_the_lease_keeps_a_second_worker_out_but_lets_the_same_tick_back_in(memory: Memory) -> None:
    cid = _conversation(memory)
    with memory.admin.uow() as uow:
        assert uow.ticks.acquire_lease(cid, "tick:night-a", utcnow(), 600)
        uow.commit()
    # Another tick backs off without touching anything...
    with pytest.raises(ConversationBusy):
        memory.sleep.run_tick(cid, "night-b")
    assert memory.compactions.history(cid) == []
    # ...while a redelivery of the tick holding the lease carries on and releases it when done.
    result = memory.sleep.run_tick(cid, "night-a")
    assert result.compaction.status == "applied"
    # The lease was released, so the other tick now runs.
    assert memory.sleep.run_tick(cid, "night-b").tick_key == "night-b"


def test_an_expired_lease_is_taken_over(memory: Memory) -> None:
    cid = _conversation(memory, big=False)
    with memory.admin.uow() as uow:
        assert uow.ticks.acquire_lease(cid, "task:crashed", utcnow() - timedelta(hours=1), 60)
        uow.commit()
    assert memory.sleep.run_tick(cid, "night-a").tick_key == "night-a"


def test_sleep_for_an_unknown_conversation_is_refused(memory: Memory) -> None:
    with pytest.raises(ConversationNotFound):
        memory.sleep.request("conv_missing")
    with pytest.raises(ConversationNotFound):
        memory.sleep.tick_now(["conv_missing"], queue=RecordingQueue())


def test_night_keys_follow_the_configured_time_zone() -> None:
    # 01:30 UTC on 2026-03-29 is 03:30 in Berlin (CEST, after the spring change): tonight's 03:00 passed.
    now = datetime(2026, 3, 29, 1, 30, tzinfo=UTC)
    berlin = night_of(now, "Europe/Berlin", 3, 0)
    assert berlin.key == "night-2026-03-29"
    assert berlin.start == datetime(2026, 3, 29, 1, 0, tzinfo=UTC)
    # In New York it is still the evening before, so the last sweep time is the previous morning.
    ny = night_of(now, "America/New_York", 3, 0)
    assert ny.key == "night-2026-03-28"
    assert ny.start == datetime(2026, 3, 28, 7, 0, tzinfo=UTC)
    # Exactly at the sweep time the new night has begun.
    assert night_of(datetime(2026, 1, 5, 3, 0, tzinfo=UTC), "UTC", 3, 0).key == "night-2026-01-05"
    assert night_of(datetime(2026, 1, 5, 2, 59, tzinfo=UTC), "UTC", 3, 0).key == "night-2026-01-04"
