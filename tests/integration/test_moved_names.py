"""The names that moved to ``Memory``'s namespaces keep working for one release, with a warning, and
return what they returned before (plain dicts where the new methods return typed records)."""

from __future__ import annotations

import warnings
from typing import Any

import pytest

from sleepcompact import Memory
from sleepcompact.facade.moved import Moved

MESSAGES: list[dict[str, Any]] = [
    {"role": "user", "content": "Please remember that I prefer metric units."},
    {"role": "assistant", "content": "Noted: metric units."},
]


def test_every_moved_name_warns_and_names_its_new_home() -> None:
    moved = {name: value for name, value in vars(Memory).items() if isinstance(value, Moved)}
    assert len(moved) >= 25
    for name, descriptor in moved.items():
        assert descriptor.name == name
        assert descriptor.path.split(".")[0] in ("compactions", "journal", "memories", "sleep", "admin")


def test_old_calls_still_work_and_return_the_old_shapes(sqlite_memory: Memory) -> None:
    mem = sqlite_memory
    cid = mem.create_conversation(context_window=4_000)
    mem.append_many(cid, MESSAGES)
    with pytest.warns(DeprecationWarning, match=r"Memory\.add_journal_entry .* mem\.journal\.add"):
        entry = mem.add_journal_entry(cid, "The user prefers metric units", tags=["preference"])
    assert isinstance(entry, int)
    with pytest.warns(DeprecationWarning):
        tick = mem.sleep_tick(cid, "night-1")
    assert isinstance(tick, dict) and tick["tick_key"] == "night-1"
    assert tick["consolidation"]["created"] == 1
    assert mem.sleep.tick(cid, "night-1").to_dict() == {**tick, "already_done": True}
    with pytest.warns(DeprecationWarning):
        memories = mem.memories(cid)
    assert [m["content"] for m in memories] == [m.content for m in mem.memories.list(cid)]
    with pytest.warns(DeprecationWarning):
        history = mem.history(cid)
    assert history == [h.to_dict() for h in mem.compactions.history(cid)]
    with pytest.warns(DeprecationWarning):
        assert mem.conversation(cid).id == cid
    with pytest.warns(DeprecationWarning):
        assert mem.engine is mem.admin.engine


def test_the_new_names_do_not_warn(sqlite_memory: Memory) -> None:
    mem = sqlite_memory
    cid = mem.create_conversation(context_window=4_000)
    mem.append_many(cid, MESSAGES)
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        mem.journal.add(cid, "The user prefers metric units", tags=["preference"])
        mem.sleep.tick(cid, "night-1")
        mem.memories.list(cid)
        mem.compactions.history(cid)
        mem.admin.conversation(cid)
