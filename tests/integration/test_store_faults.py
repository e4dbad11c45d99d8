"""Database faults and hostile shapes end in a typed error, never a driver traceback, and write nothing.

Each case snapshots every table before and after: equal snapshots mean nothing was written. The
faults are real: a second process holds SQLite's write lock, a PostgreSQL backend is terminated from
another connection in the middle of a transaction, a server is not there at all.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import pytest

from sleepcompact import (
    ImportFormatError,
    InvalidSetting,
    MalformedContent,
    Memory,
    Settings,
    SleepcompactError,
    StoreBusy,
    StoreUnavailable,
)
from tests.support.faults import BackendTerminator
from tests.support.locks import sqlite_write_lock
from tests.support.servers import PostgresServer, free_port

Snap = Callable[[Memory], dict[str, list[tuple[Any, ...]]]]
BUSY_TIMEOUT_S = 0.5


def _nested(depth: int, leaf: Any = "x") -> Any:
    value = leaf
    for _ in range(depth):
        value = {"a": [value]}
    return value


def test_a_sqlite_lock_held_past_the_busy_timeout_is_store_busy_and_writes_nothing(
    sqlite_url: str, db_snapshot: Snap
) -> None:
    mem = Memory(Settings(database_url=sqlite_url, sqlite_busy_timeout_s=BUSY_TIMEOUT_S), auto_migrate=True)
    cid = mem.create_conversation("claude-sonnet-4-5")
    mem.append(cid, {"role": "user", "content": "hello"})
    before = db_snapshot(mem)
    with sqlite_write_lock(sqlite_url):
        with pytest.raises(StoreBusy) as busy:
            mem.append(cid, {"role": "assistant", "content": "hi there"})
        assert isinstance(busy.value, StoreUnavailable | SleepcompactError)
        assert "locked" in str(busy.value) and "nothing was written" in str(busy.value)
        with pytest.raises(StoreBusy):
            mem.create_conversation("claude-sonnet-4-5")
        with pytest.raises(StoreBusy):
            mem.journal.add(cid, "The user prefers short answers.")
        # Readers run beside the writer (WAL): the guard's read, the context and an export still work,
        # and a process that starts now starts (its schema check is a read).
        assert mem.prepare_context(cid).action == "none"
        assert len(mem.export(cid).appended) == 1
        Memory(Settings(database_url=sqlite_url, sqlite_busy_timeout_s=BUSY_TIMEOUT_S)).close()
    assert db_snapshot(mem) == before
    # Once the other writer is done, writing works again on the same Memory.
    assert mem.append(cid, {"role": "assistant", "content": "hi there"}).seqs
    mem.close()


@pytest.mark.postgres
def test_a_postgres_connection_lost_mid_transaction_is_store_unavailable_and_writes_nothing(
    postgres_server: PostgresServer, db_snapshot: Snap
) -> None:
    url = postgres_server.create_database()
    mem = Memory(Settings(database_url=url), auto_migrate=True)
    try:
        cid = mem.create_conversation("claude-sonnet-4-5")
        mem.append(cid, {"role": "user", "content": "hello"})
        terminator = BackendTerminator(mem.admin.engine, postgres_server.connect)
        message = {"role": "assistant", "content": "I will look at the failing test first."}
        # Terminate the backend before each statement of the append in turn (its first read, each
        # write, the counters' update): every one ends the same way, and the next append succeeds.
        fired = 0
        for n in range(1, 50):
            before = db_snapshot(mem)
            terminator.arm(n)
            try:
                mem.append(cid, message)
            except StoreUnavailable as exc:
                assert "terminat" in str(exc) or "closed" in str(exc), exc
                assert db_snapshot(mem) == before
                fired += 1
                continue
            assert terminator.fired is None  # past the append's last statement: it went through
            break
        terminator.remove()
        assert fired >= 3  # the read, the insert and the update at least
        assert len(mem.export(cid).appended) == 2
    finally:
        mem.close()
        postgres_server.drop_database(url.rsplit("/", 1)[1])


def test_a_database_server_that_is_not_there_is_store_unavailable() -> None:
    url = f"postgresql://nobody@127.0.0.1:{free_port()}/sleepcompact"
    with pytest.raises(StoreUnavailable) as down:
        Memory(Settings(database_url=url))
    assert "unavailable" in str(down.value) and "127.0.0.1" in str(down.value)


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        ({"role": "user", "content": [{"type": "text", "text": "x", "extra": _nested(2_000)}]}, "deeper"),
        ({"role": "user", "content": _nested(200_000)}, "deeper"),
        (
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": "t1", "name": "f", "input": _nested(70)}],
            },
            "deeper",
        ),
        (
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": "t1", "name": "f", "input": {"x": math.nan}}],
            },
            "finite",
        ),
        ({"role": "user", "content": "hi", "metadata": {"score": math.inf}}, "finite"),
        (
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {"id": "c1", "type": "function", "function": {"name": "f", "arguments": '{"x": NaN}'}}
                ],
            },
            "finite",
        ),
        (
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "[" * 50_000}}
                ],
            },
            "deep",
        ),
    ],
    ids=[
        "deep-block",
        "deep-200k",
        "deep-tool-input",
        "nan-tool-input",
        "inf-metadata",
        "nan-arguments",
        "deep-arguments",
    ],
)
def test_deep_nesting_and_non_finite_numbers_in_an_append_are_typed_and_write_nothing(
    memory: Memory, db_snapshot: Snap, message: dict[str, Any], expected: str
) -> None:
    cid = memory.create_conversation("claude-sonnet-4-5")
    memory.append(cid, {"role": "user", "content": "hello"})
    before = db_snapshot(memory)
    with pytest.raises(MalformedContent) as bad:
        memory.append(cid, message)
    assert expected in str(bad.value)
    assert db_snapshot(memory) == before


@pytest.mark.parametrize(
    "data",
    [
        [{"role": "user", "content": _nested(200_000)}],
        [
            {"role": "user", "content": "hi"},
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": "t", "name": "f", "input": {"x": math.inf}}],
            },
        ],
        "[" * 200_000 + "]" * 200_000,
        b'[{"role": "user", "content": "hi"}, {"role": "user", "content": [{"type": "text", "text": NaN}]}]',
    ],
    ids=["deep-python", "inf-python", "deep-text", "nan-bytes"],
)
def test_deep_nesting_and_non_finite_numbers_in_an_import_are_typed_and_write_nothing(
    memory: Memory, db_snapshot: Snap, data: Any
) -> None:
    before = db_snapshot(memory)
    with pytest.raises(ImportFormatError):
        memory.import_(data)
    assert db_snapshot(memory) == before


def test_conversation_metadata_and_tools_must_be_sendable_json(memory: Memory, db_snapshot: Snap) -> None:
    before = db_snapshot(memory)
    with pytest.raises(InvalidSetting, match="finite"):
        memory.create_conversation("claude-sonnet-4-5", metadata={"weight": math.nan})
    with pytest.raises(InvalidSetting, match="deeper"):
        memory.create_conversation("claude-sonnet-4-5", metadata=_nested(100_000))
    assert db_snapshot(memory) == before
    cid = memory.create_conversation("claude-sonnet-4-5")
    before = db_snapshot(memory)
    for tools in ([{"name": "f", "input_schema": _nested(100_000)}], [{"name": "f", "x": math.inf}]):
        with pytest.raises(MalformedContent, match="tools"):
            memory.prepare_context(cid, tools=tools)
    assert db_snapshot(memory) == before


@pytest.mark.postgres
def test_the_guard_read_survives_a_server_that_dropped_every_pooled_connection(
    postgres_server: PostgresServer,
) -> None:
    # No pre-ping (one round trip per decision): a dropped connection is found when used, and the
    # guard's read retries once on a fresh pool instead of failing the caller's LLM call.
    url = postgres_server.create_database()
    name = url.rsplit("/", 1)[1]
    mem = Memory(Settings(database_url=url), auto_migrate=True)
    try:
        cid = mem.create_conversation("claude-sonnet-4-5")
        mem.append(cid, {"role": "user", "content": "hello"})
        before = mem.check(cid)
        with postgres_server.connect() as admin:
            admin.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                " WHERE datname = %s AND pid <> pg_backend_pid()",
                (name,),
            )
        assert mem.check(cid) == before
        assert mem.append(cid, {"role": "assistant", "content": "hi"}).seqs  # the pool was replaced
    finally:
        mem.close()
        postgres_server.drop_database(name)
