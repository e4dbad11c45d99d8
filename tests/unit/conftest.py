"""Fixtures of the unit tests that need a real database: a throwaway SQLite file, no server."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from sleepcompact import Memory


@pytest.fixture
def mem(sqlite_url: str) -> Iterator[Memory]:
    """A Memory on a fresh, migrated SQLite file (``sqlite_url``), closed after the test."""
    memory = Memory(database_url=sqlite_url, auto_migrate=True)
    try:
        yield memory
    finally:
        memory.close()
