"""Fixtures that give a migrated database behind the ``Memory`` facade."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from sqlalchemy import select

from sleepcompact import Memory
from sleepcompact.store.models import Base


@pytest.fixture
def memory(database_url: str) -> Iterator[Memory]:
    """A Memory on a fresh, migrated database (SQLite and PostgreSQL)."""
    mem = Memory(database_url=database_url, auto_migrate=True)
    try:
        yield mem
    finally:
        mem.close()


def snapshot(mem: Memory) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of every table, sorted: two equal snapshots mean nothing was written."""
    out: dict[str, list[tuple[Any, ...]]] = {}
    with mem.admin.engine.connect() as conn:
        for table in Base.metadata.sorted_tables:
            rows = conn.execute(select(table)).all()
            out[table.name] = sorted(tuple(repr(v) for v in r) for r in rows)
    return out


@pytest.fixture
def db_snapshot() -> Callable[[Memory], dict[str, list[tuple[Any, ...]]]]:
    """A function that snapshots the whole database of a Memory."""
    return snapshot
