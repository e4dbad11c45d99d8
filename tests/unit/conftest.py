"""Fixtures of the unit tests: a real database (a throwaway SQLite file, no server), a host time zone."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from sleepcompact import Memory


@pytest.fixture
def mem(sqlite_memory: Memory) -> Memory:
    """The shared ``sqlite_memory`` (tests/conftest.py) under the short name these tests use."""
    return sqlite_memory


@pytest.fixture
def host_in_tokyo(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The process's local time zone set to UTC+9 (a worker on a host not set to UTC)."""
    monkeypatch.setenv("TZ", "Asia/Tokyo")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()
