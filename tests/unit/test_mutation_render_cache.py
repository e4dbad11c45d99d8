"""The guard's render cache, where mutation testing found the suite blind (docs/mutation.md, fourth
and twentieth sessions): a cache of one entry keeps the last one put, the least recently used entry goes
first; an entry of an older snapshot (a slower thread's) never replaces a newer one; a cache of no
entries keeps nothing; an entry is used only for the snapshot it extends; the memories chosen for a
conversation follow the same rules, apart from the renderings.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, cast

from sleepcompact.domain.records import ConversationRecord
from sleepcompact.domain.render_cache import CachedRendering, MemoryChoice, RenderCache

CREATED = datetime(2026, 11, 24, tzinfo=UTC)


def _entry(epoch: int, next_seq: int) -> CachedRendering:
    history = cast(Any, f"rendering at epoch {epoch}, below seq {next_seq}")  # put and get never read it
    return CachedRendering(epoch, CREATED, next_seq, history, "anchor", False)


def test_a_cache_of_one_keeps_the_last_entry_put() -> None:
    cache = RenderCache(1)
    first, second = _entry(0, 10), _entry(0, 12)
    cache.put("conv_a", False, first)
    assert cache.get("conv_a", False) is first
    cache.put("conv_b", False, second)
    assert cache.get("conv_a", False) is None and cache.get("conv_b", False) is second


def test_an_older_snapshot_never_replaces_a_newer_one() -> None:
    cache = RenderCache(8)
    newer, older, same_epoch_fewer_rows = _entry(2, 40), _entry(1, 90), _entry(2, 30)
    cache.put("conv_a", True, newer)
    cache.put("conv_a", True, older)
    cache.put("conv_a", True, same_epoch_fewer_rows)
    assert cache.get("conv_a", True) is newer
    assert cache.get("conv_a", False) is None  # the other format is its own entry
    newest = _entry(2, 41)
    cache.put("conv_a", True, newest)
    assert cache.get("conv_a", True) is newest
    again = _entry(2, 41)  # the same snapshot rendered again (its anchor may have become final)
    cache.put("conv_a", True, again)
    assert cache.get("conv_a", True) is again


def test_a_cache_of_no_entries_keeps_nothing() -> None:
    cache = RenderCache(0)
    cache.put("conv_a", False, _entry(0, 1))
    assert cache.get("conv_a", False) is None


def test_the_least_recently_used_entry_goes_first() -> None:
    cache = RenderCache(2)
    a, b, c = _entry(0, 1), _entry(0, 2), _entry(0, 3)
    cache.put("conv_a", False, a)
    cache.put("conv_b", False, b)
    assert cache.get("conv_a", False) is a  # conv_a is now the most recently used
    cache.put("conv_c", False, c)
    assert cache.get("conv_b", False) is None
    assert cache.get("conv_a", False) is a and cache.get("conv_c", False) is c


def test_an_entry_is_valid_only_for_the_same_epoch_and_creation_with_rows_only_appended() -> None:
    def conv(epoch: int, next_seq: int, created: datetime = CREATED) -> ConversationRecord:
        return ConversationRecord(
            "conv_a", "t", "a", "claude", None, 200_000, 8_000, 0, 0, next_seq, epoch, created, created
        )

    entry = _entry(2, 40)
    assert entry.valid_for(conv(2, 40)) and entry.valid_for(conv(2, 55))
    assert not entry.valid_for(conv(2, 39))  # rows popped under the same epoch would be a bug upstream
    assert not entry.valid_for(conv(3, 40))  # compacted, cleared, restored
    assert not entry.valid_for(conv(2, 40, datetime(2026, 11, 25, tzinfo=UTC)))  # deleted, imported again


def _choice(tag: str) -> MemoryChoice:
    return MemoryChoice((tag,), f"anchor {tag}", 100, (), f"block {tag}", 3)


def test_the_memories_chosen_are_kept_per_conversation_least_recently_used_first_out() -> None:
    cache = RenderCache(2)
    a, b, c = _choice("a"), _choice("b"), _choice("c")
    cache.keep_choice("conv_a", a)
    cache.keep_choice("conv_b", b)
    assert cache.choice("conv_a") is a  # conv_a is now the most recently used
    cache.keep_choice("conv_c", c)
    assert cache.choice("conv_b") is None
    assert cache.choice("conv_a") is a and cache.choice("conv_c") is c
    newer = _choice("a2")
    cache.keep_choice("conv_a", newer)  # a choice is replaced whole
    assert cache.choice("conv_a") is newer
    cache.keep_choice("conv_d", _choice("d"))  # conv_a was touched last: conv_c goes
    assert cache.choice("conv_c") is None and cache.choice("conv_a") is newer


def test_choices_and_renderings_are_separate_and_clear_drops_both() -> None:
    cache = RenderCache(1)
    cache.put("conv_a", False, _entry(0, 1))
    cache.keep_choice("conv_a", _choice("a"))
    assert cache.get("conv_a", False) is not None and cache.choice("conv_a") is not None
    cache.clear()
    assert cache.get("conv_a", False) is None and cache.choice("conv_a") is None


def test_a_cache_of_no_entries_keeps_no_choice() -> None:
    cache = RenderCache(0)
    cache.keep_choice("conv_a", _choice("a"))
    assert cache.choice("conv_a") is None
