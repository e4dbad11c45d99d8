"""The guard's per-process cache of renderings, so ``prepare_context`` costs what was appended since the
last call, not the whole history (issue: a request path that does not grow with history).

Live rows change in only two ways: rows are appended (higher seqs, nothing before them changes), or a
compaction, clear, restore or pop rewrites them, and each of those bumps the conversation's
``compaction_epoch`` in the same transaction. So a rendering made at epoch E from the rows below seq S
is still right for any snapshot with epoch E, once the live rows from S on are added to it. The epoch,
the rows and the conversation's creation time (a conversation deleted and imported again under the
same id starts over) are read in one snapshot (``read_uow``), which makes this hold across processes.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from sleepcompact.domain.records import ConversationRecord
from sleepcompact.domain.rendering import RenderedHistory

if TYPE_CHECKING:  # recall pulls in the injection detector, which `sleepcompact check` never loads
    from sleepcompact.domain.recall import Recalled


@dataclass(frozen=True)
class CachedRendering:
    """One conversation's rendering in one format, and the snapshot it is valid for."""

    epoch: int
    created_at: datetime
    next_seq: int  # rows from this seq on are not in it yet
    history: RenderedHistory
    anchor: str  # the memories' ranking text (``context.anchor_text``)
    anchor_final: bool  # whether appends can no longer change it

    def valid_for(self, conv: ConversationRecord) -> bool:
        """Whether the conversation, as just read, only had rows appended since this was rendered."""
        return (
            conv.compaction_epoch == self.epoch
            and conv.created_at == self.created_at
            and conv.next_seq >= self.next_seq
        )


@dataclass(frozen=True)
class MemoryChoice:
    """The memories recalled into one conversation's calls, and what they were chosen from: chosen again
    only when the agent's memories (``version``), the ranking text or the allowance change."""

    version: tuple[object, ...]
    anchor: str
    allowance: int
    chosen: tuple[Recalled, ...]
    block: str
    tokens: int  # counted tokens of the block as a message (0 when empty)


class RenderCache:
    """Least recently used renderings by (conversation, format), at most ``capacity`` of them.

    Entries are immutable and replaced whole, so threads (``AsyncMemory``'s pool) share it under one
    short lock; two threads extending the same entry at once both get a right answer, and the newer
    snapshot's entry wins or is dropped at the next epoch check."""

    def __init__(self, capacity: int) -> None:
        self._capacity = capacity
        self._entries: OrderedDict[tuple[str, bool], CachedRendering] = OrderedDict()
        self._choices: OrderedDict[str, MemoryChoice] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, conversation_id: str, openai: bool) -> CachedRendering | None:
        """The entry, if there is one (it still has to be checked with ``valid_for``)."""
        with self._lock:
            entry = self._entries.get((conversation_id, openai))
            if entry is not None:
                self._entries.move_to_end((conversation_id, openai))
            return entry

    def put(self, conversation_id: str, openai: bool, entry: CachedRendering) -> None:
        """Keep ``entry`` unless an entry of a newer snapshot is already there."""
        if self._capacity <= 0:
            return
        key = (conversation_id, openai)
        with self._lock:
            held = self._entries.get(key)
            if held is not None and (held.epoch, held.next_seq) > (entry.epoch, entry.next_seq):
                return
            self._entries[key] = entry
            self._entries.move_to_end(key)
            while len(self._entries) > self._capacity:
                self._entries.popitem(last=False)

    def choice(self, conversation_id: str) -> MemoryChoice | None:
        """The memories last recalled into the conversation's calls (still to be checked)."""
        with self._lock:
            held = self._choices.get(conversation_id)
            if held is not None:
                self._choices.move_to_end(conversation_id)
            return held

    def keep_choice(self, conversation_id: str, choice: MemoryChoice) -> None:
        """Keep the memories recalled into the conversation's calls."""
        if self._capacity <= 0:
            return
        with self._lock:
            self._choices[conversation_id] = choice
            self._choices.move_to_end(conversation_id)
            while len(self._choices) > self._capacity:
                self._choices.popitem(last=False)

    def clear(self) -> None:
        """Drop every entry."""
        with self._lock:
            self._entries.clear()
            self._choices.clear()
