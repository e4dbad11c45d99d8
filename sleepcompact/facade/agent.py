"""``mem.journal`` and ``mem.memories``: what an agent notes, and what it remembers long-term.

Both are addressed by a conversation id: its tenant and agent own the journal and the memories, so
every conversation of one agent shares them.
"""

from __future__ import annotations

import builtins
import warnings
from collections.abc import Sequence
from typing import Any

from sleepcompact.bootstrap import Container
from sleepcompact.domain.journal import JournalEntryRecord, MemoryRecord
from sleepcompact.services import journal, memories
from sleepcompact.services.conversations import get_conversation
from sleepcompact.services.memories import ConsolidationReport


class Journal:
    """The agent's journal (reached as ``mem.journal``): scored on arrival, consolidated during sleep."""

    def __init__(self, deps: Container) -> None:
        self._deps = deps

    def add(
        self,
        conversation_id: str,
        content: str,
        *,
        source_type: str = "direct",
        tags: Sequence[str] = (),
        origin: str = "agent",
    ) -> int:
        """Note something for the conversation's agent; returns the entry's id."""
        return journal.add_entry(
            self._deps, conversation_id, content, source_type=source_type, tags=tags, origin=origin
        )

    def entries(
        self, conversation_id: str, statuses: Sequence[str] | None = None, *, this_conversation: bool = False
    ) -> list[JournalEntryRecord]:
        """The journal of the conversation's agent, oldest first (only what this conversation wrote with
        ``this_conversation``)."""
        rows = journal.list_entries(self._deps, conversation_id, statuses)
        return [e for e in rows if e.conversation_id == conversation_id] if this_conversation else rows

    def __call__(self, conversation_id: str) -> list[dict[str, Any]]:
        """Deprecated: ``mem.journal(cid)`` is ``mem.journal.entries(cid, this_conversation=True)``."""
        warnings.warn(
            "Memory.journal(cid) is deprecated; use mem.journal.entries(cid, this_conversation=True)",
            DeprecationWarning,
            stacklevel=2,
        )
        return [e.to_dict() for e in self.entries(conversation_id, this_conversation=True)]


class Memories:
    """The agent's long-term memories (reached as ``mem.memories``)."""

    def __init__(self, deps: Container) -> None:
        self._deps = deps

    def list(self, conversation_id: str, *, include_invalid: bool = False) -> builtins.list[MemoryRecord]:
        """What the conversation's agent remembers (superseded memories too with ``include_invalid``)."""
        conv = get_conversation(self._deps, conversation_id)
        return memories.list_memories(
            self._deps, conv.tenant_id, conv.agent_id, include_invalid=include_invalid
        )

    def search(self, conversation_id: str, query: str) -> builtins.list[MemoryRecord]:
        """Valid memories of the agent containing every word of the query."""
        conv = get_conversation(self._deps, conversation_id)
        return memories.search_memories(self._deps, conv.tenant_id, conv.agent_id, query)

    def consolidate(self, conversation_id: str) -> ConsolidationReport:
        """Promote the agent's pending journal entries into long-term memories now."""
        conv = get_conversation(self._deps, conversation_id)
        return memories.consolidate_agent(self._deps, conv.tenant_id, conv.agent_id)

    def __call__(
        self, conversation_id: str, *, include_invalid: bool = False
    ) -> builtins.list[dict[str, Any]]:
        """Deprecated: ``mem.memories(cid)`` is ``mem.memories.list(cid)``."""
        warnings.warn(
            "Memory.memories(cid) is deprecated; use mem.memories.list(cid)", DeprecationWarning, stacklevel=2
        )
        return [m.to_dict() for m in self.list(conversation_id, include_invalid=include_invalid)]
