"""The agent's memories, indexed by what their statements say, so consolidation compares a new entry
with the few memories it may restate or contradict instead of with every memory the agent has.

Each lookup returns a superset of the items a test of ``claims`` can accept, in insertion order, so a
plan made with the index is the plan made by asking every memory (``tests/unit/test_statement_index.py``
checks both). What each test needs, and where the index looks for it:

* the same normalized text: the items with that text;
* ``duplicate_score`` above 0: word sets with a Jaccard similarity of at least ``DUPLICATE`` share an
  element of their prefixes (each set in one fixed order, ``len - ceil(DUPLICATE * len) + 1`` long);
  one text contained in the other, word for word, means every word of the shorter is in the longer:
  the items holding the new text's rarest word (the new text is the shorter), and the items filed under
  one of their own words (their longest) that the new text holds (the new text is the longer);
* ``contradicts``: the two share a subject word in some pair of clauses: the items filed under any
  subject word of the new statement.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Generic, TypeVar

from sleepcompact.domain.claims import Statement
from sleepcompact.domain.memo import forgets

DUPLICATE = 0.75
"""``duplicate_score``'s threshold, which the prefix length is derived from."""
CONTAINED_WORDS = 3
"""The fewest words of a contained text that ``duplicate_score`` counts as a restatement."""

T = TypeVar("T")


def _prefix(words: Iterable[str]) -> list[str]:
    ordered = sorted(words)
    # floor() rather than ceil(): one element longer at most, never shorter than the bound needs.
    return ordered[: len(ordered) - int(DUPLICATE * len(ordered)) + 1] if ordered else []


def _subjects(stmt: Statement) -> set[str]:
    return {word for clause in stmt.clauses for word in clause.subject}


@dataclass(frozen=True)
class _Keys:
    """What a statement is filed and looked up under."""

    prefix: tuple[str, ...]
    tokens: frozenset[str]
    longest: str | None  # texts of CONTAINED_WORDS or more
    subjects: frozenset[str]


# Consolidation files every memory of the agent again at each pass, and its statements come from
# ``claims.analyze``, which keeps them: their keys are worked out once, not at every pass (a third of a
# pass at 1,000 memories). By identity (a Statement holds sets: it has no hash); the weak reference
# tells a statement from a newer object at the same address.
_KEYS: dict[int, tuple[weakref.ref[Statement], _Keys]] = {}
_KEYS_HELD = 16_384
forgets(_KEYS.clear)


def _keys(stmt: Statement) -> _Keys:
    held = _KEYS.get(id(stmt))
    if held is not None and held[0]() is stmt:
        return held[1]
    tokens = frozenset(stmt.norm.split())
    longest = min(tokens, key=lambda t: (-len(t), t)) if len(tokens) >= CONTAINED_WORDS else None
    keys = _Keys(tuple(_prefix(stmt.words)), tokens, longest, frozenset(_subjects(stmt)))
    if len(_KEYS) >= _KEYS_HELD:
        _KEYS.clear()
    _KEYS[id(stmt)] = (weakref.ref(stmt), keys)
    return keys


class StatementIndex(Generic[T]):
    """Items (memories being planned), each with its statement; see the module docstring."""

    def __init__(self) -> None:
        self._order: dict[int, int] = {}  # id(item) -> insertion position
        self._items: list[T] = []
        self._by_norm: dict[str, list[T]] = {}
        self._by_prefix: dict[str, list[T]] = {}
        self._by_word: dict[str, list[T]] = {}  # every word of the normalized text
        self._by_longest: dict[str, list[T]] = {}  # texts of CONTAINED_WORDS or more, by one word
        self._by_subject: dict[str, list[T]] = {}

    def add(self, item: T, stmt: Statement) -> None:
        """File ``item`` under what ``stmt`` says."""
        keys = _keys(stmt)
        self._order[id(item)] = len(self._items)
        self._items.append(item)
        self._by_norm.setdefault(stmt.norm, []).append(item)
        for word in keys.prefix:
            self._by_prefix.setdefault(word, []).append(item)
        for token in keys.tokens:
            self._by_word.setdefault(token, []).append(item)
        if keys.longest is not None:
            self._by_longest.setdefault(keys.longest, []).append(item)
        for word in keys.subjects:
            self._by_subject.setdefault(word, []).append(item)

    def similar(self, stmt: Statement) -> list[T]:
        """Every item whose statement may be ``stmt``'s text or a duplicate of it, in insertion order."""
        keys = _keys(stmt)
        found: dict[int, T] = {id(t): t for t in self._by_norm.get(stmt.norm, ())}
        for word in keys.prefix:
            found.update((id(t), t) for t in self._by_prefix.get(word, ()))
        if keys.longest is not None:  # stmt the shorter: every item holding all its words
            rarest = min(keys.tokens, key=lambda t: (len(self._by_word.get(t, ())), t))
            found.update((id(t), t) for t in self._by_word.get(rarest, ()))
        for token in keys.tokens:  # stmt the longer: an item of CONTAINED_WORDS or more is filed under one
            found.update((id(t), t) for t in self._by_longest.get(token, ()))
        return self._in_order(found.values())

    def sharing_subject(self, stmt: Statement) -> list[T]:
        """Every item whose statement shares a subject word with ``stmt``, in insertion order."""
        found: dict[int, T] = {}
        for word in _keys(stmt).subjects:
            found.update((id(t), t) for t in self._by_subject.get(word, ()))
        return self._in_order(found.values())

    def _in_order(self, items: Iterable[T]) -> list[T]:
        return sorted(items, key=lambda t: self._order[id(t)])
