"""Tool call ids scoped to their turn: what a reused id means, and the key each call is stored under.

Models behind OpenAI-compatible servers reuse tool call ids (``call_0`` in every turn), and replayed
trajectories do too. The rule, for the id a caller sends (its *ref*):

* a call may reuse a ref once every earlier call with that ref has its result; a ref repeated while a
  call with it is still unanswered (within one assistant turn or across turns) is ``DuplicateToolCall``;
* a result binds to the most recent unanswered call with its ref; a ref whose calls are all answered is
  ``DuplicateToolResult``, and one no call ever used is ``OrphanToolResult``.

Each call gets a *key* unique in its conversation: the ref itself the first time, then ``<ref>_2``,
``<ref>_3``... (skipping any key already taken by another call). Rows and renderings use the key, so a
rendered request never holds one id twice and the rewrite is the same on every call (a cached prefix
stays identical); the stored payload keeps the ref, and ``export`` returns it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from sleepcompact.domain.errors import DuplicateToolCall, DuplicateToolResult, OrphanToolResult
from sleepcompact.domain.parts import Part

Lookup = Callable[[str], list[tuple[str, bool]]]
"""``lookup(ref)``: the keys of the conversation's earlier calls with that ref, oldest first, each with
whether it has its result."""

IsTaken = Callable[[str], bool]
"""``is_taken(key)``: whether a call of the conversation is already stored under that key."""

LEGACY_PREFIX = "call_"
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")


def legacy_ref(name: str) -> str:
    """The ref of an OpenAI legacy ``function_call`` (it has no id: calls and results pair by name)."""
    return LEGACY_PREFIX + _UNSAFE.sub("_", name)[:200]


@dataclass
class _Call:
    key: str
    answered: bool


@dataclass
class CallBook:
    """The calls of one conversation seen through one transaction: binds refs to keys.

    What is already stored is asked for lazily (``lookup``, ``is_taken``), once per ref; what this
    transaction binds is kept here, so several messages appended together see each other.
    """

    lookup: Lookup = field(default=lambda ref: [])
    is_taken: IsTaken = field(default=lambda key: False)
    _calls: dict[str, list[_Call]] = field(default_factory=dict)
    _keys: set[str] = field(default_factory=set)

    def _known(self, ref: str) -> list[_Call]:
        if ref not in self._calls:
            self._calls[ref] = [_Call(key, answered) for key, answered in self.lookup(ref)]
        return self._calls[ref]

    def _free(self, key: str) -> bool:
        return key not in self._keys and not self.is_taken(key)

    def call(self, ref: str) -> str:
        """Bind a new call: its key (``DuplicateToolCall`` while a call with the same ref is open)."""
        calls = self._known(ref)
        if any(not c.answered for c in calls):
            raise DuplicateToolCall(ref)
        key, n = ref, len(calls) + 1
        while not self._free(key):
            key, n = f"{ref}_{n}", n + 1
        calls.append(_Call(key, answered=False))
        self._keys.add(key)
        return key

    def result(self, ref: str) -> str:
        """Bind a result to the most recent unanswered call with its ref; that call's key."""
        calls = self._known(ref)
        for call in reversed(calls):
            if not call.answered:
                call.answered = True
                return call.key
        if calls:
            raise DuplicateToolResult(ref)
        raise OrphanToolResult(ref)


def bind_parts(book: CallBook, parts: Sequence[Part]) -> tuple[str | None, ...]:
    """The key of each part of one message (None for parts that are neither a call nor a result)."""
    keys: list[str | None] = []
    for part in parts:
        if part.kind == "tool_call" and part.tool_call_id:
            keys.append(book.call(part.tool_call_id))
        elif part.kind == "tool_result" and part.tool_call_id:
            keys.append(book.result(part.tool_call_id))
        else:
            keys.append(None)
    return tuple(keys)
