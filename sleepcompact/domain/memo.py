"""A bounded memo of results computed from a text: the identifiers scanner's and the injection
detector's. A compaction reads most rows several times (the summary's screening, the offline summary,
the journal drafts and their screening), so every read after the first is a lookup.
"""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")

_MEMOS: weakref.WeakSet[TextMemo[object]] = weakref.WeakSet()
_OTHERS: list[Callable[[], None]] = []


def forgets(clear: Callable[[], None]) -> Callable[[], None]:
    """Register how to empty a cache that is not a ``TextMemo`` (an ``lru_cache``'s ``cache_clear``),
    so ``forget_all`` empties it too."""
    _OTHERS.append(clear)
    return clear


def forget_all() -> None:
    """Empty every memo of the process. Results are the same with or without them; the test suite calls
    this at the start of each session, so mutation testing (each mutant's tests a new session in a
    process forked after the memos filled) sees the mutated scanners run rather than their results
    looked up."""
    for memo in list(_MEMOS):
        memo.clear()
    for clear in _OTHERS:
        clear()


class TextMemo(Generic[T]):
    """Results of recently seen texts, the least recently used dropped first.

    Bounded by entries and by characters of text held: one message may be megabytes, and a worker lives
    long. A text longer than the whole budget is never kept. Safe to share between threads.
    """

    def __init__(self, entries: int, chars: int) -> None:
        self._entries, self._chars, self._held = entries, chars, 0
        self._data: OrderedDict[str, T] = OrderedDict()
        self._lock = threading.Lock()
        _MEMOS.add(self)  # type: ignore[arg-type]  # a set of memos of any result type

    def clear(self) -> None:
        """Forget every result."""
        with self._lock:
            self._data.clear()
            self._held = 0

    def get(self, text: str) -> T | None:
        """The result kept for ``text``, if any."""
        with self._lock:
            found = self._data.get(text)
            if found is not None:
                self._data.move_to_end(text)
            return found

    def put(self, text: str, found: T) -> None:
        """Keep ``found`` for ``text`` (dropping the oldest results past the bounds)."""
        if len(text) > self._chars:
            return
        with self._lock:
            if text in self._data:
                return
            self._data[text] = found
            self._held += len(text)
            while len(self._data) > self._entries or self._held > self._chars:
                old, _found = self._data.popitem(last=False)
                self._held -= len(old)
