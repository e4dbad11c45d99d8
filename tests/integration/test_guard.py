"""The inline guard (``check``, ``prepare_context``) on real SQLite and PostgreSQL.

The worker side is replaced here by what the guard sees of it (a lease held, a compaction applied
meanwhile); ``test_guard_worker.py`` races the guard against a real worker process.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from sleepcompact import ContextOverflow, ConversationNotFound, Memory, Settings, Thresholds
from sleepcompact.demo.synthetic import coding_agent
from sleepcompact.domain.validation import anthropic_problems
from sleepcompact.services.clock import utcnow
from sleepcompact.store.conversation_reader import ConversationReader
from sleepcompact.store.engine import is_sqlite
from tests.support.fake_anthropic import FakeAnthropic, Scripted
from tests.support.queues import RecordingQueue

Snap = Callable[[Memory], dict[str, list[tuple[Any, ...]]]]
TOOLS = [
    {
        "name": "bash",
        "description": "Run a shell command in the repository and return its output.",
        "input_schema": {"type": "object", "properties": {"command": {"type": "string"}}},
    }
]
SYSTEM = "You are a careful coding agent. Keep answers short."


@pytest.fixture
def queue() -> RecordingQueue:
    """Where the guard's ticks go (the broker is exercised in the worker tests)."""
    return RecordingQueue()


@pytest.fixture
def guard_memory(database_url: str, queue: RecordingQueue) -> Iterator[Memory]:
    """A Memory whose guard enqueues into ``queue``."""
    mem = Memory(Settings(database_url=database_url), auto_migrate=True, queue=queue)
    try:
        yield mem
    finally:
        mem.close()


def _coding(mem: Memory, **create: Any) -> str:
    conv = coding_agent(seed=0)
    cid = mem.create_conversation("claude-sonnet-4-5", **create)
    mem.append_many(cid, conv.messages)
    return cid


def _between(mem: Memory) -> str:
    """43k tokens against 52.5k usable: over soft (36.7k), under hard (44.6k)."""
    return _coding(mem, context_window=70_000)


def test_check_is_the_decision_alone(guard_memory: Memory) -> None:
    small = _coding(guard_memory)  # 43k tokens against 168k usable
    over = _coding(guard_memory, plan="free")
    between = _between(guard_memory)
    assert guard_memory.check(small).decision == "none"
    assert guard_memory.check(between).decision == "request_sleep"
    decision = guard_memory.check(over)
    assert decision.decision == "compact_now"
    assert (decision.usable, decision.soft, decision.hard, decision.target) == (12_000, 8_400, 10_200, 7_800)
    assert decision.tokens > decision.hard and decision.percent_of_usable > 100
    with pytest.raises(ConversationNotFound):
        guard_memory.check("conv_missing")


def test_below_soft_the_guard_reads_renders_and_writes_nothing(
    guard_memory: Memory, db_snapshot: Snap, queue: RecordingQueue
) -> None:
    cid = _coding(guard_memory)
    before = db_snapshot(guard_memory)
    ctx = guard_memory.prepare_context(cid, system=SYSTEM, tools=TOOLS)
    assert ctx.action == "none" and ctx.compaction_id is None
    assert db_snapshot(guard_memory) == before and queue.sent == []
    # The system prompt and the tool definitions count against the budget.
    bare = guard_memory.prepare_context(cid)
    assert ctx.tokens > bare.tokens
    request = ctx.request()  # with its prompt-cache breakpoints (the default)
    assert request["system"] == [{"type": "text", "text": SYSTEM, "cache_control": {"type": "ephemeral"}}]
    assert request["tools"] == TOOLS and len(request["messages"]) == len(ctx.messages)
    assert anthropic_problems(ctx.messages) == []
    openai = guard_memory.prepare_context(cid, system=SYSTEM, fmt="openai")
    assert openai.messages[0] == {"role": "system", "content": SYSTEM} and "system" not in openai.request()


def test_between_soft_and_hard_the_guard_asks_for_sleep_once_per_interval(
    guard_memory: Memory, queue: RecordingQueue
) -> None:
    cid = _between(guard_memory)
    ctx = guard_memory.prepare_context(cid)
    assert ctx.action == "sleep_requested"
    assert guard_memory.compactions.history(cid) == []  # the request does not wait for anything
    assert guard_memory.admin.conversation(cid).sleep_requested_at is not None
    (sent,) = queue.urgent  # on the emergency queue
    assert sent[0] == cid and sent[1].startswith("request-")
    assert [t.status for t in guard_memory.sleep.ticks(cid)] == ["queued"]
    # Debounced: the next calls within the interval record and enqueue nothing more.
    for _ in range(3):
        assert guard_memory.prepare_context(cid).action == "sleep_requested"
    assert len(queue.sent) == 1
    # The idle sweep sees the request but the tick is already queued under the same key.
    assert guard_memory.sleep.sweep_idle(queue=queue).enqueued == 0
    # The worker runs it; the request is answered.
    guard_memory.sleep.run_tick(*sent)
    assert guard_memory.admin.conversation(cid).sleep_requested_at is None


def test_the_sleep_request_interval_is_configurable(database_url: str, queue: RecordingQueue) -> None:
    mem = Memory(
        Settings(database_url=database_url, sleep_request_interval_s=0), auto_migrate=True, queue=queue
    )
    cid = _between(mem)
    mem.prepare_context(cid)
    time.sleep(0.01)
    mem.prepare_context(cid)
    assert len(queue.sent) == 2
    mem.close()


def test_above_hard_the_guard_compacts_now_and_the_call_fits(guard_memory: Memory) -> None:
    cid = _coding(guard_memory, plan="free")
    ctx = guard_memory.prepare_context(cid, system=SYSTEM, tools=TOOLS)
    assert ctx.action == "emergency_compacted" and ctx.compaction_id
    assert ctx.tokens <= ctx.usable
    assert anthropic_problems(ctx.messages) == []
    (record,) = guard_memory.compactions.history(cid)
    assert record.id == ctx.compaction_id and record.trigger == "emergency"
    # Nothing lost: every original is still exported.
    assert len(guard_memory.export(cid).appended) == len(coding_agent(seed=0).messages)
    # Now under soft: the next call is a read.
    assert guard_memory.prepare_context(cid, system=SYSTEM, tools=TOOLS).action == "none"


def _llm_memory(database_url: str, fake: FakeAnthropic, **overrides: Any) -> Memory:
    settings = Settings(
        database_url=database_url,
        anthropic_api_key="sk-ant-test-key-not-a-secret",
        anthropic_base_url=fake.url,
        summarizer="anthropic",
        **overrides,
    )
    return Memory(settings, auto_migrate=True, queue=RecordingQueue())


def _needs_summary(mem: Memory) -> str:
    # At an 8k window the LLM-free steps are not enough: the guard needs a summary.
    return _coding(mem, context_window=8_000)


def test_with_the_llm_hanging_the_guard_falls_back_within_its_deadline(
    sqlite_url: str, fake_anthropic: FakeAnthropic
) -> None:
    fake_anthropic.set_default(Scripted(delay_s=30))
    mem = _llm_memory(sqlite_url, fake_anthropic, guard_deadline_s=1.0)
    cid = _needs_summary(mem)
    started = time.monotonic()
    ctx = mem.prepare_context(cid, system=SYSTEM)
    elapsed = time.monotonic() - started
    assert ctx.action == "fallback_compacted" and ctx.tokens <= ctx.usable
    # Bounded by the deadline, not by the 30 s hang (the margin covers loading and applying).
    assert elapsed < 1.0 + 10
    (record,) = mem.compactions.history(cid)
    assert record.summarizer_provider == "offline" and "deadline" in (record.error or "")
    assert anthropic_problems(ctx.messages) == []
    mem.close()


def test_with_the_llm_down_the_guard_falls_back(sqlite_url: str, fake_anthropic: FakeAnthropic) -> None:
    fake_anthropic.set_default(Scripted(status=500))
    mem = _llm_memory(sqlite_url, fake_anthropic, summarizer_attempts=2)
    cid = _needs_summary(mem)
    ctx = mem.prepare_context(cid)
    assert ctx.action == "fallback_compacted" and ctx.tokens <= ctx.usable
    assert len(fake_anthropic.message_requests()) == 2
    mem.close()


def test_with_the_llm_up_the_guard_uses_its_summary(sqlite_url: str, fake_anthropic: FakeAnthropic) -> None:
    mem = _llm_memory(sqlite_url, fake_anthropic)
    cid = _needs_summary(mem)
    ctx = mem.prepare_context(cid, system=SYSTEM, tools=TOOLS)
    assert ctx.action == "emergency_compacted" and ctx.tokens <= ctx.usable
    assert mem.compactions.history(cid)[0].summarizer_provider == "anthropic"
    mem.close()


def test_a_prompt_that_alone_exceeds_the_budget_is_a_typed_error_and_writes_nothing(
    guard_memory: Memory, db_snapshot: Snap
) -> None:
    cid = _coding(guard_memory, plan="free")
    before = db_snapshot(guard_memory)
    huge = "Follow every rule below exactly. " * 4_000  # ~28k tokens against 12k usable
    with pytest.raises(ContextOverflow) as caught:
        guard_memory.prepare_context(cid, system=huge)
    err = caught.value
    assert err.usable == 12_000 and err.system_tokens > err.usable and err.fixed_tokens >= err.system_tokens
    assert str(err.usable) in str(err) and str(err.system_tokens) in str(err)
    assert db_snapshot(guard_memory) == before


def test_auto_compaction_off_per_conversation_is_really_off(guard_memory: Memory, db_snapshot: Snap) -> None:
    over = _coding(guard_memory, plan="free", auto_compact=False)  # 43k against 12k usable
    before = db_snapshot(guard_memory)
    assert guard_memory.check(over).decision == "overflow"
    with pytest.raises(ContextOverflow):
        guard_memory.prepare_context(over)
    assert db_snapshot(guard_memory) == before
    # Over hard but still inside the usable budget: the call goes out as is.
    fits = _coding(guard_memory, context_window=60_000, auto_compact=False)  # 43k against 45k usable
    ctx = guard_memory.prepare_context(fits)
    assert ctx.action == "none" and ctx.tokens > ctx.view.budget.hard
    # A sleep tick consolidates but never compacts it either.
    assert guard_memory.sleep.run_tick(over, "night-1").compaction.status == "auto-compaction off"
    assert guard_memory.compactions.history(over) == []


def test_auto_compaction_off_globally(database_url: str, queue: RecordingQueue) -> None:
    mem = Memory(Settings(database_url=database_url, auto_compact=False), auto_migrate=True, queue=queue)
    between = _between(mem)
    assert mem.prepare_context(between).action == "none" and queue.sent == []
    over = _coding(mem, plan="free")
    with pytest.raises(ContextOverflow):
        mem.prepare_context(over)
    assert mem.compactions.history(over) == []
    mem.close()


def test_the_guard_reuses_a_compaction_a_worker_applies_while_it_waits(guard_memory: Memory) -> None:
    cid = _coding(guard_memory, plan="free")
    with guard_memory.admin.uow() as uow:  # a worker's tick holds the lease
        assert uow.ticks.acquire_lease(cid, "tick:night-1", utcnow(), 600)
        uow.commit()
    done: dict[str, Any] = {}

    def worker() -> None:
        time.sleep(0.5)
        done["outcome"] = guard_memory.compactions.compact(cid, trigger="sleep")
        with guard_memory.admin.uow() as uow:
            uow.ticks.release_lease(cid, "tick:night-1")
            uow.commit()

    thread = threading.Thread(target=worker)
    thread.start()
    ctx = guard_memory.prepare_context(cid)
    thread.join()
    assert ctx.action == "emergency_compacted" and ctx.compaction_id == done["outcome"].compaction_id
    assert [h.status for h in guard_memory.compactions.history(cid)] == [
        "applied"
    ]  # one compaction, paid once
    assert ctx.tokens <= ctx.usable


def test_guard_and_worker_compacting_at_once_apply_exactly_one(database_url: str) -> None:
    release = threading.Event()
    started = threading.Event()

    def slow_worker_summary(prompt: str) -> str:
        started.set()
        release.wait(30)  # the worker's LLM call is still running when the guard gives up waiting
        return "## Task and goals\n- fix PAY597 rounding (worker)"

    mem = Memory(
        Settings(database_url=database_url, guard_lease_wait_s=0.2), auto_migrate=True, queue=RecordingQueue()
    )
    worker_mem = Memory(Settings(database_url=database_url), summarizer=slow_worker_summary)
    cid = _coding(mem, context_window=8_000)
    result: dict[str, Any] = {}
    worker = threading.Thread(target=lambda: result.update(tick=worker_mem.sleep.run_tick(cid, "night-1")))
    worker.start()
    assert started.wait(30)
    ctx = mem.prepare_context(cid)  # the lease is the tick's: the guard waits 0.2 s, then compacts itself
    release.set()
    worker.join(60)
    assert ctx.tokens <= ctx.usable
    statuses = sorted(h.status for h in mem.compactions.history(cid))
    assert statuses == ["applied", "discarded"]  # the worker's result lost the epoch race: nothing written
    assert result["tick"].compaction.status == "discarded"
    assert len(mem.export(cid).appended) == len(coding_agent(seed=0).messages)
    summaries = [r for r in mem.export(cid).messages if r["kind"] == "summary"]
    assert len(summaries) == 1 and "(worker)" not in summaries[0]["content"]
    worker_mem.close()
    mem.close()


def test_appends_during_an_emergency_compaction_stay_live_and_in_order(database_url: str) -> None:
    other: list[Memory] = []

    def slow_summary(prompt: str) -> str:
        # The agent keeps talking while the guard's summary is being written.
        other[0].append(cid, {"role": "assistant", "content": "Still working on PAY597."})
        other[0].append(cid, {"role": "user", "content": "Any news on the rounding fix?"})
        return "## Task and goals\n- fix PAY597 rounding"

    mem = Memory(
        Settings(database_url=database_url, thresholds=Thresholds()),
        summarizer=slow_summary,
        auto_migrate=True,
        queue=RecordingQueue(),
    )
    other.append(Memory(Settings(database_url=database_url)))
    cid = _coding(mem, context_window=8_000)
    ctx = mem.prepare_context(cid)
    assert ctx.action in ("emergency_compacted", "fallback_compacted")
    live = mem.context(cid).messages
    assert live[-1]["role"] == "user" and "Any news" in str(live[-1]["content"])
    assert "Still working on PAY597." in str(live[-2]["content"])
    assert len(mem.export(cid).appended) == len(coding_agent(seed=0).messages) + 2
    seqs = [r["seq"] for r in mem.export(cid).messages]
    assert seqs == sorted(seqs)
    other[0].close()
    mem.close()


def _driver_statements(mem: Memory, action: Callable[[], object], tmp_path: Path) -> list[str]:
    """Every statement the driver sent while ``action`` ran, seen below SQLAlchemy (the guard's read
    bypasses its events): SQLite's trace callback, libpq's protocol trace on PostgreSQL."""
    from sqlalchemy import event

    statements: list[str] = []
    trace = tmp_path / "libpq.trace"
    sink = trace.open("w")
    traced: list[Any] = []

    def on_checkout(dbapi_conn: Any, _record: Any, _proxy: Any) -> None:
        if is_sqlite(mem.admin.engine):
            dbapi_conn.set_trace_callback(statements.append)
        else:
            dbapi_conn.pgconn.trace(sink.fileno())
        traced.append(dbapi_conn)

    event.listen(mem.admin.engine, "checkout", on_checkout)
    try:
        action()
    finally:
        event.remove(mem.admin.engine, "checkout", on_checkout)
        for conn in traced:
            if is_sqlite(mem.admin.engine):
                conn.set_trace_callback(None)
            else:
                conn.pgconn.untrace()
        sink.close()
    # One message per record; a statement's own newlines continue its record on the next lines.
    for record in re.split(r"\n(?=\d{4}-\d\d-\d\d )", trace.read_text()):
        fields = record.split("\t")
        if len(fields) > 4 and fields[1] == "F" and fields[3] in ("Query", "Parse"):
            statements.append(fields[4])  # frontend messages that carry SQL text
    return statements


def test_check_is_one_statement_on_one_connection(guard_memory: Memory, tmp_path: Path) -> None:
    cid = _coding(guard_memory)
    guard_memory.check(cid)  # warms the calibration cache
    statements = _driver_statements(guard_memory, lambda: guard_memory.check(cid), tmp_path)
    # No BEGIN, no ROLLBACK, no calibration read: the conversation row by its primary key, nothing else.
    assert len(statements) == 1, statements
    assert "FROM conversation" in statements[0] and "WHERE conversation.id" in statements[0]
    # The connection went back to the pool as transactional as every session expects it.
    with guard_memory.admin.engine.connect() as conn:
        assert conn.connection.driver_connection is not None
        if not is_sqlite(guard_memory.admin.engine):
            assert conn.connection.driver_connection.autocommit is False


def test_check_reads_exactly_what_the_repository_maps(guard_memory: Memory) -> None:
    """The decision's own read converts every column as the ORM would (dates, booleans, JSON, floats)."""
    cid = guard_memory.create_conversation(
        "claude-sonnet-4-5",
        tenant_id="t-1",
        thresholds=Thresholds(soft=0.6, hard=0.8, target=0.4),
        auto_compact=False,
        metadata={"team": "ünï", "n": 3},
    )
    guard_memory.append(cid, {"role": "user", "content": "hello"})
    between = _between(guard_memory)
    assert guard_memory.prepare_context(between).action == "sleep_requested"
    reader = ConversationReader(guard_memory.admin.engine)
    for conversation in (cid, between):
        assert reader.read(conversation) == guard_memory.admin.conversation(conversation)
    assert reader.read(between).sleep_requested_at is not None  # type: ignore[union-attr]
    assert reader.read("conv_missing") is None
    decision = guard_memory.check(cid)
    assert decision.auto_compact is False and decision.soft == int(decision.usable * 0.6)


def test_stale_sleep_requests_are_renewed_after_the_interval(guard_memory: Memory) -> None:
    cid = _between(guard_memory)
    with guard_memory.admin.uow() as uow:
        uow.ticks.request_sleep(cid, utcnow() - timedelta(hours=1))
        uow.commit()
    guard_memory.prepare_context(cid)
    assert guard_memory.admin.conversation(cid).sleep_requested_at > utcnow() - timedelta(minutes=1)  # type: ignore[operator]


def test_below_soft_the_guard_never_waits_for_a_writer(sqlite_url: str) -> None:
    # SQLite: a long write transaction elsewhere (a worker applying a compaction) must not block reads.
    mem = Memory(Settings(database_url=sqlite_url), queue=RecordingQueue())
    cid = _coding(mem)
    writer = mem.admin.engine.connect()
    held = writer.begin()  # BEGIN IMMEDIATE (the engine's rule for writers): the write lock is taken
    try:
        started = time.monotonic()
        ctx = mem.prepare_context(cid, system=SYSTEM)
        waited = time.monotonic() - started
    finally:
        held.rollback()
        writer.close()
    assert ctx.action == "none"
    assert waited < 5  # the busy timeout is 30 s: a writing transaction would have waited it out
    mem.close()
