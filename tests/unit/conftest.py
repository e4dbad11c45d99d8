"""Fixtures of the unit tests that need a real database: a throwaway SQLite file, no server."""

from __future__ import annotations

import pytest

from sleepcompact import Memory


@pytest.fixture
def mem(sqlite_memory: Memory) -> Memory:
    """The shared ``sqlite_memory`` (tests/conftest.py) under the short name these tests use."""
    return sqlite_memory
