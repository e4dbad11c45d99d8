"""Restore undoes stacked compactions exactly, whatever order the restore calls come in.

Four manual compactions are stacked on one conversation, with messages appended between them. Restore's
promise (``services.history.restore``): restoring a compaction brings back the exact live state from
right before it, undoing the later ones first (newest first), and messages appended after it stay live;
restoring one that is already undone is refused with ``NotRestorable`` and changes nothing.

So, with the compactions C0..C3 and ``snapshot[k]`` the export taken right before Ck, the export after
the restores that leave C0..C(m-1) applied is exactly ``snapshot[m]`` followed by every message appended
after Cm, as live rows: byte for byte, every field of every row (seq, state, live view, live tokens).
Restored newest first, each restore lands on the export taken right before that compaction plus the
batches appended after it; once all are restored the conversation is what it was before the first
compaction plus everything appended since, all live, and its context is the context of a conversation
that was never compacted.

The stack is built once per database and copied for each example (SQLite's backup API, PostgreSQL's
``CREATE DATABASE ... TEMPLATE``), so hypothesis can try many orders of the restore calls cheaply.
"""

from __future__ import annotations

import json
import sqlite3
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from psycopg import sql

from sleepcompact import Memory
from sleepcompact.demo.synthetic import coding_agent
from sleepcompact.domain.errors import NotRestorable

DEPTH = 4
MODEL = "claude-sonnet-4-5"
Row = dict[str, Any]


def _dumps(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def _batch(seed: int) -> list[dict[str, Any]]:
    return coding_agent(seed=seed, turns=15, big_output_tokens=400).messages


@dataclass(frozen=True, repr=False)
class Stack:
    """A conversation with DEPTH applied compactions, and the exports the restores must bring back."""

    url: str
    cid: str
    fresh_cid: str  # the same messages appended to a conversation never compacted
    ids: tuple[str, ...]  # C0..C3, oldest first
    snapshots: tuple[tuple[Row, ...], ...]  # the export right before each compaction
    batches: tuple[tuple[Row, ...], ...]  # the rows appended after each compaction, as live rows
    final: tuple[Row, ...]  # the export with every compaction applied
    appended: tuple[dict[str, Any], ...]

    def __repr__(self) -> str:  # hypothesis prints the test's arguments: keep the rows out of it
        return f"Stack({self.cid}, {len(self.ids)} compactions)"

    def expected(self, applied: int) -> tuple[Row, ...]:
        """The export when exactly C0..C(applied-1) are applied."""
        if applied == DEPTH:
            return self.final
        later = [row for batch in self.batches[applied:] for row in batch]
        return (*self.snapshots[applied], *later)


def _build(url: str) -> Stack:
    with Memory(database_url=url, auto_migrate=True) as mem:
        conv = coding_agent(seed=0, turns=15, big_output_tokens=400)
        first = [{"role": "system", "content": conv.system}, *conv.messages]
        cid = mem.create_conversation(MODEL, context_window=8_000)
        mem.append_many(cid, first)
        appended = list(first)
        snapshots, ids, last_seqs = [], [], []
        for k in range(DEPTH):
            snapshots.append(tuple(mem.export(cid).messages))
            outcome = mem.compactions.compact(cid, force=True)
            assert outcome.status == "applied" and outcome.compaction_id, outcome.reason
            ids.append(outcome.compaction_id)
            last_seqs.append(max(r["seq"] for r in mem.export(cid).messages))
            batch = _batch(seed=10 + k)
            mem.append_many(cid, batch)
            appended += batch
        final = tuple(mem.export(cid).messages)
        # Each batch as it sat live right before the next compaction (the last one: now).
        batches = []
        for k in range(DEPTH):
            seen = snapshots[k + 1] if k + 1 < DEPTH else final
            batches.append(tuple(r for r in seen if r["seq"] > last_seqs[k]))
            assert len(batches[-1]) >= len(_batch(seed=10 + k))
            assert all(r["state"] == "live" and r["kind"] != "summary" for r in batches[-1])
        fresh_cid = mem.create_conversation(MODEL, context_window=8_000)
        mem.append_many(fresh_cid, appended)
    return Stack(url, cid, fresh_cid, tuple(ids), tuple(snapshots), tuple(batches), final, tuple(appended))


@contextmanager
def _copy(stack: Stack, request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Memory]:
    """A Memory on a copy of the stack's database, dropped afterwards."""
    if stack.url.startswith("sqlite"):
        target = tmp_path / f"copy-{uuid.uuid4().hex[:8]}.db"
        source = sqlite3.connect(stack.url.removeprefix("sqlite:///"))
        dest = sqlite3.connect(target)
        try:
            source.backup(dest)
        finally:
            source.close()
            dest.close()
        with Memory(database_url=f"sqlite:///{target}", auto_migrate=False) as mem:
            yield mem
        target.unlink()
        return
    server = request.getfixturevalue("postgres_server")
    name = f"sc_copy_{uuid.uuid4().hex[:12]}"
    template = stack.url.rsplit("/", 1)[1]
    with server.connect() as conn:
        conn.execute(
            sql.SQL("CREATE DATABASE {} TEMPLATE {}").format(sql.Identifier(name), sql.Identifier(template))
        )
    try:
        with Memory(database_url=server.url_for(name), auto_migrate=False) as mem:
            yield mem
    finally:
        server.drop_database(name)


@pytest.fixture
def stack(database_url: str) -> Stack:
    return _build(database_url)


def _assert_state(mem: Memory, stack: Stack, applied: int) -> None:
    """The export, the live figures and the compactions' statuses when C0..C(applied-1) are applied."""
    rows = mem.export(stack.cid).messages
    expected = stack.expected(applied)
    assert [r["seq"] for r in rows] == [r["seq"] for r in expected]
    assert _dumps(rows) == _dumps(list(expected))
    live = [r for r in expected if r["state"] != "archived"]
    conv = mem.admin.conversation(stack.cid)
    assert conv.live_tokens == sum(r["live_tokens"] for r in live)
    assert conv.live_messages == len(live)
    statuses = {h.id: h.status for h in mem.compactions.history(stack.cid)}
    assert [statuses[c] for c in stack.ids] == ["applied"] * applied + ["reverted"] * (DEPTH - applied)


def _assert_never_compacted(mem: Memory, stack: Stack) -> None:
    """Everything restored: every message ever appended, live, in order, and the context of a
    conversation that was never compacted."""
    exported = mem.export(stack.cid)
    assert list(exported.appended) == list(stack.appended)
    assert all(r["state"] == "live" and r["kind"] != "summary" for r in exported.messages)
    assert mem.stats(stack.cid).live_tokens == mem.stats(stack.fresh_cid).live_tokens
    restored, fresh = mem.context(stack.cid), mem.context(stack.fresh_cid)
    assert _dumps(restored.messages) == _dumps(fresh.messages)
    assert restored.tokens == fresh.tokens


@settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(order=st.permutations(range(DEPTH)))
@example(order=[3, 2, 1, 0])  # newest first: each restore lands right before its own compaction
@example(order=[0, 1, 2, 3])  # oldest first: one call undoes all four, the other three are refused
def test_any_order_of_restore_calls_ends_exactly_where_it_started(
    stack: Stack, request: pytest.FixtureRequest, tmp_path: Path, order: list[int]
) -> None:
    with _copy(stack, request, tmp_path) as mem:
        applied = DEPTH
        for k in order:
            before = mem.export(stack.cid)
            if k >= applied:  # already undone by the restore of an older one
                with pytest.raises(NotRestorable, match="reverted"):
                    mem.compactions.restore(stack.ids[k])
                assert mem.export(stack.cid) == before
                continue
            undone = mem.compactions.restore(stack.ids[k])
            assert list(undone) == [stack.ids[j] for j in reversed(range(k, applied))]
            applied = k
            _assert_state(mem, stack, applied)
        assert applied == 0
        _assert_never_compacted(mem, stack)
