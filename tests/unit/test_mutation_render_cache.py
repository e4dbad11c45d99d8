"""The guard's render cache, where mutation testing found the suite blind (docs/mutation.md, fourth
session): a cache of one entry keeps the last one put, the least recently used entry goes first; an
entry of an older snapshot (a slower thread's) never replaces a newer one; a cache of no entries keeps
nothing.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, cast

from sleepcompact.domain.render_cache import CachedRendering, RenderCache

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
