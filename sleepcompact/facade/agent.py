"""``mem.journal`` and ``mem.memories``: what an agent notes, and what it remembers long-term.

Both are addressed by a conversation id: its tenant and agent own the journal and the memories, so
every conversation of one agent shares them. Correcting or deleting a memory names the memory's id, in
the agent of a conversation or of a tenant and agent id.
"""

from __future__ import annotations

import builtins
import warnings
from collections.abc import Sequence
from typing import Any

from sleepcompact.bootstrap import Container
from sleepcompact.domain.errors import InvalidSetting
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
        provenance: str = "agent",
    ) -> int:
        """Note something for the conversation's agent; returns the entry's id.

        ``provenance``: where the text came from (user, assistant, tool, fetched, environment, agent);
        text from a tool, fetched content or the environment is stored ``environmental`` (trust 0.3,
        never recalled unless the user says it too), whatever ``source_type`` says.
        """
        return journal.add_entry(
            self._deps,
            conversation_id,
            content,
            source_type=source_type,
            tags=tags,
            origin=origin,
            provenance=provenance,
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

    def correct(
        self,
        memory_id: int,
        new_content: str,
        *,
        conversation_id: str | None = None,
        tenant_id: str | None = None,
        agent_id: str | None = None,
    ) -> MemoryRecord:
        """Replace a memory by the user's corrected statement; returns the new memory.

        The old memory stays, invalidated ("corrected by user") and superseded by the new one, which is
        the user's word: automatic consolidation never supersedes it. The memory is looked up in the
        agent of ``conversation_id``, else of ``tenant_id``/``agent_id`` (both "default" when omitted);
        another agent's memory raises ``MemoryNotFound`` like an unknown id.
        """
        tenant, agent = self._principal(conversation_id, tenant_id, agent_id)
        return memories.correct_memory(self._deps, tenant, agent, memory_id, new_content)

    def delete(
        self,
        memory_id: int,
        *,
        conversation_id: str | None = None,
        tenant_id: str | None = None,
        agent_id: str | None = None,
    ) -> MemoryRecord:
        """Invalidate a memory ("deleted by user"): never recalled or learned again, still listed with
        ``include_invalid``. Scoped like ``correct``; returns the memory as stored."""
        tenant, agent = self._principal(conversation_id, tenant_id, agent_id)
        return memories.delete_memory(self._deps, tenant, agent, memory_id)

    def _principal(
        self, conversation_id: str | None, tenant_id: str | None, agent_id: str | None
    ) -> tuple[str, str]:
        """The (tenant, agent) whose memories a call may touch."""
        if conversation_id is not None:
            if tenant_id is not None or agent_id is not None:
                raise InvalidSetting("give a conversation id or a tenant and agent, not both")
            conv = get_conversation(self._deps, conversation_id)
            return conv.tenant_id, conv.agent_id
        return tenant_id or "default", agent_id or "default"

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
