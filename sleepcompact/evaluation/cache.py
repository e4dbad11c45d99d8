"""The provider's prompt cache, as the evaluation models it: which part of each call was already cached.

A provider caches request prefixes (Anthropic at its ``cache_control`` breakpoints, OpenAI on its own):
the part of a request that is byte-identical to the start of the previous request is read from the
cache, if that request was sent within the cache's time to live, and the rest is written to it. Each
request is compared block by block (the system prompt, then every content block of every message in
order), so a prefix match costs one comparison per block; a block's key is its serialized JSON with
its role and place in its message, so two requests share a prefix exactly when their bytes do up to
a block boundary. Text given as a string is read as the one text block it stands for, and
``cache_control`` markers are left out of the key: the provider does not count them as content, and a
breakpoint that moves to the newest message must not break the prefix.

A request that says where its breakpoints are (``Request.marks``: sleepcompact's, as ``ctx.request()``
sends them) is read as Anthropic reads it: the previous request wrote an entry at each of its
breakpoints, the cached part is the longest of those entries this request starts with that one of its
own breakpoints reaches (at most ``LOOKBACK`` blocks before it), and only what lies between that and
this request's last breakpoint is written; what follows the last breakpoint (the recalled snippets) is
plain input. A request without marks (a baseline's rows) is read as if it carried a breakpoint at its
end and any block boundary were an entry (OpenAI's automatic caching is close to that).

``CallLog`` follows one conversation call by call and keeps one ``CallRecord`` per call, in tokens;
``evaluation.cost`` prices them (the time to live is applied there, from each call's gap).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from sleepcompact.domain.records import MessageRecord

LOOKBACK = 20
"""Blocks before a breakpoint at which Anthropic still looks for an earlier cache entry."""


@dataclass(frozen=True)
class Request:
    """One call's request as blocks in send order: each block's key (a hash of its bytes) and tokens, and
    the indexes of the blocks that carry a cache breakpoint (None: the request does not say)."""

    keys: tuple[int, ...] = ()
    tokens: tuple[int, ...] = ()
    marks: tuple[int, ...] | None = None

    @property
    def total(self) -> int:
        """Every block's tokens."""
        return sum(self.tokens)

    @property
    def cacheable(self) -> int:
        """Tokens up to and including the last breakpoint (every token when the request does not say)."""
        if self.marks is None:
            return self.total
        return sum(self.tokens[: max(self.marks) + 1]) if self.marks else 0

    def shared_prefix(self, previous: Request | None) -> int:
        """Tokens of the leading blocks identical to ``previous``'s leading blocks (0 without one); when
        both say where their breakpoints are, only up to an entry ``previous`` wrote that one of this
        request's breakpoints reaches."""
        if previous is None:
            return 0
        same = 0
        for mine, theirs in zip(self.keys, previous.keys, strict=False):
            if mine != theirs:
                break
            same += 1
        if self.marks is not None and previous.marks is not None:
            ends = [m + 1 for m in previous.marks if m < same]  # entries: the prefix through a breakpoint
            reached = [e for e in ends if any(0 <= b - (e - 1) < LOOKBACK for b in self.marks)]
            same = max(reached, default=0)
        return sum(self.tokens[:same])


@dataclass(frozen=True)
class CallRecord:
    """One call of a replay, as the cache saw it (tokens in the policy's counted units).

    ``shared``: tokens of its prefix the cache holds from the previous sent request (0 on a
    conversation's first call); the time since that request is ``seconds`` (the log's clock) plus
    ``untimed`` gaps the log gives no time for (the pricing's call gap each); ``compacted``: a compaction
    was applied since that request; ``refused``: the call was over the usable budget, so the API refused
    it (not billed, not cached); ``cacheable``: tokens up to its last breakpoint, what it may write
    (None: all of them).
    """

    tokens: int
    shared: int
    seconds: float = 0.0
    untimed: int = 1
    compacted: bool = False
    refused: bool = False
    first: bool = False
    cacheable: int | None = None


class RequestBlocks:
    """Turns rendered requests or a baseline's rows into ``Request``s, counting each distinct block once
    (a block repeats in every later call, so the count is remembered by its key)."""

    def __init__(self, count: Callable[[str], int]) -> None:
        self._count = count
        self._tokens: dict[int, int] = {}

    def rendered(
        self, system: Any, messages: Sequence[Mapping[str, Any]], *, marked: bool = False
    ) -> Request:
        """A rendered request: the system prompt (text or blocks), then each message's content blocks.
        ``marked``: the request is sent as it is, breakpoints and all (``Request.marks``: the blocks that
        carry a ``cache_control``; none marked means nothing is cached)."""
        pieces: list[tuple[str, int, Any]] = []  # role, place in its message, block
        if system:
            pieces.extend(("system", i, b) for i, b in enumerate(_as_blocks(system)))
        for message in messages:
            role = str(message.get("role", ""))
            pieces.extend((role, i, b) for i, b in enumerate(_as_blocks(message.get("content"))))
            # OpenAI carries calls beside the content (tool_calls, tool_call_id): a block of their own.
            extra = {k: v for k, v in message.items() if k not in ("role", "content")}
            if extra:
                pieces.append((role, -1, extra))
        keys: list[int] = []
        tokens: list[int] = []
        for role, place, block in pieces:
            serialized = json.dumps([role, place, _unmarked(block)], ensure_ascii=False)
            key = hash(serialized)
            if key not in self._tokens:
                self._tokens[key] = self._count(_text(block))
            keys.append(key)
            tokens.append(self._tokens[key])
        if not marked:
            return Request(tuple(keys), tuple(tokens))
        marks = tuple(i for i, (_, _, block) in enumerate(pieces) if _is_marked(block))
        return Request(tuple(keys), tuple(tokens), marks)


def rows_request(rows: Iterable[MessageRecord]) -> Request:
    """A baseline's context as a request: one block per row (its role, kind, call id and live view),
    with the row's own live tokens."""
    keys: list[int] = []
    tokens: list[int] = []
    for r in rows:
        view = r.view if isinstance(r.view, str) else json.dumps(r.view, ensure_ascii=False)
        keys.append(hash((r.role, r.kind, r.tool_call_id, view)))
        tokens.append(r.live_tokens)
    return Request(tuple(keys), tuple(tokens))


def _as_blocks(content: Any) -> list[Any]:
    """Content as its blocks: a string is shorthand for one text block (the API reads it so), and a
    message rendered one call as a string and the next as that one text block is the same bytes to it."""
    if isinstance(content, list):
        return content
    return [{"type": "text", "text": content}] if content else []


def _is_marked(block: Any) -> bool:
    return isinstance(block, Mapping) and "cache_control" in block


def _unmarked(block: Any) -> Any:
    """The block without its ``cache_control`` marker (not content, for the provider's cache)."""
    if isinstance(block, Mapping) and "cache_control" in block:
        return {k: v for k, v in block.items() if k != "cache_control"}
    return block


def _text(block: Any) -> str:
    """Every string in a block (text, tool input, tool result), as the counted figures count it."""
    if isinstance(block, str):
        return block
    if isinstance(block, Mapping):
        skip = ("type", "id", "tool_use_id", "role", "cache_control")
        return "\n".join(_text(v) for k, v in block.items() if k not in skip)
    if isinstance(block, list):
        return "\n".join(_text(v) for v in block)
    return ""


@dataclass
class CallLog:
    """One conversation's calls in order: each request against the last one the API accepted."""

    calls: list[CallRecord] = field(default_factory=list)
    _previous: Request | None = None
    # Since the last request sent: seconds the log's clock gives, gaps it gives none for, compactions.
    _seconds: float = 0.0
    _untimed: int = 0
    _compacted: bool = False

    def call(
        self,
        request: Request,
        *,
        tokens: int | None = None,
        gap: float | None = None,
        compacted: bool = False,
        refused: bool = False,
    ) -> CallRecord:
        """Record one call. ``tokens``: the call's counted tokens when they differ from the blocks' sum
        (the shared prefix is scaled to them); ``gap``: seconds since the previous call (None: the log
        does not say); ``compacted``: a compaction was applied since the previous call."""
        total = request.total if tokens is None else tokens
        first = self._previous is None
        shared = request.shared_prefix(self._previous)
        cacheable = None if request.marks is None else request.cacheable
        if tokens is not None and request.total:
            shared = round(shared * tokens / request.total)
            cacheable = None if cacheable is None else round(cacheable * tokens / request.total)
        # A refused call is neither billed nor cached: the next call is compared with the last one sent,
        # and the time and the compactions since then add up.
        seconds = self._seconds + (gap or 0.0)
        untimed = self._untimed + int(gap is None)
        compacted_since = (self._compacted or compacted) and not first
        record = CallRecord(total, shared, seconds, untimed, compacted_since, refused, first, cacheable)
        self.calls.append(record)
        if refused:
            self._seconds, self._untimed, self._compacted = seconds, untimed, compacted_since
        else:
            self._previous, self._seconds, self._untimed, self._compacted = request, 0.0, 0, False
        return record
