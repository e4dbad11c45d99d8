"""The building blocks of the synthetic conversations: the result type, tool calls, a transcript writer.

Every generator draws from its own ``random.Random(seed)``: the same seed gives
byte-identical messages, a different seed gives different names, numbers and
identifiers. Messages are Anthropic-shaped dicts that ``normalize()`` accepts:
roles alternate starting with the user, tool_use blocks sit in assistant turns
and their tool_result blocks in the user turn right after.
"""

from __future__ import annotations

import copy
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

_T = TypeVar("_T")


@dataclass(frozen=True)
class SyntheticConversation:
    """A generated conversation plus the ground truth that compaction and memory tests check against."""

    name: str
    system: str
    messages: list[dict[str, Any]]
    facts: list[str]
    identifiers: list[str]
    contradicted: list[tuple[str, str]]


@dataclass(frozen=True)
class _Call:
    name: str
    input: dict[str, Any]
    output: str
    error: bool = False


def _bash(command: str, output: str, error: bool = False) -> _Call:
    return _Call("bash", {"command": command}, output, error)


def _tests(command: str, output: str) -> _Call:
    return _Call("run_tests", {"command": command}, output)


def _read(path: str, output: str) -> _Call:
    return _Call("read_file", {"path": path}, output)


def _grep(pattern: str, path: str, output: str) -> _Call:
    return _Call("grep", {"pattern": pattern, "path": path}, output)


def _interleave(rng: random.Random, items: list[_T], extra: list[_T], lo: int, hi: int | None = None) -> None:
    """Insert ``extra`` into ``items`` in order, at random positions between ``lo`` and ``hi``."""
    positions = sorted(rng.randint(lo, len(items) if hi is None else hi) for _ in extra)
    for pos, item in reversed(list(zip(positions, extra, strict=True))):
        items.insert(pos, item)


class _Transcript:
    """Appends messages with alternating roles; tool ids are ``toolu_{seed}_{n:04d}``."""

    def __init__(self, seed: int) -> None:
        self.seed = seed
        self.messages: list[dict[str, Any]] = []
        self._next = 1

    def user(self, text: str) -> None:
        self.messages.append({"role": "user", "content": text})

    def assistant(self, text: str, calls: Sequence[_Call] = ()) -> None:
        """One assistant turn; with calls, also the user turn that carries their results."""
        if not calls:
            self.messages.append({"role": "assistant", "content": text})
            return
        blocks: list[dict[str, Any]] = [{"type": "text", "text": text}]
        results: list[dict[str, Any]] = []
        for call in calls:
            call_id = f"toolu_{self.seed}_{self._next:04d}"
            self._next += 1
            blocks.append({"type": "tool_use", "id": call_id, "name": call.name, "input": dict(call.input)})
            result: dict[str, Any] = {"type": "tool_result", "tool_use_id": call_id, "content": call.output}
            if call.error:
                result["is_error"] = True
            results.append(result)
        self.messages.append({"role": "assistant", "content": blocks})
        self.messages.append({"role": "user", "content": results})


def _fill(lines: list[str], target: int, make: Callable[[int], str]) -> None:
    """Append ``make(i)`` lines until the joined text reaches ``target`` characters."""
    size, i = sum(len(s) + 1 for s in lines), 0
    while size < target:
        line = make(i)
        lines.append(line)
        size += len(line) + 1
        i += 1


# -- scaling ------------------------------------------------------------------------------------------


def scaled(conv: SyntheticConversation, target_messages: int) -> list[dict[str, Any]]:
    """Repeat the conversation until there are at least ``target_messages`` messages.

    Copy ``k`` (from 1) suffixes every tool id with ``_r{k}`` so ids stay unique and
    results stay paired, and marks its opening user text with ``[round k+1]``. The
    copies are whole, so roles keep alternating and every call keeps its result.
    """
    if not conv.messages:
        raise ValueError("cannot scale an empty conversation")
    out: list[dict[str, Any]] = []
    k = 0
    while len(out) < target_messages:
        for i, msg in enumerate(conv.messages):
            new = copy.deepcopy(msg)
            if k and isinstance(new["content"], list):
                for block in new["content"]:
                    for key in ("id", "tool_use_id"):
                        if key in block and block.get("type") in ("tool_use", "tool_result"):
                            block[key] = f"{block[key]}_r{k}"
            if k and i == 0 and isinstance(new["content"], str):
                new["content"] = f"[round {k + 1}] {new['content']}"
            out.append(new)
        k += 1
    return out
