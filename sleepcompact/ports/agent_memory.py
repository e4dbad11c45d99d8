"""The agent's memory aggregate's port: its journal and its long-term memories."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Protocol

from sleepcompact.domain.journal import (
    JournalEntryRecord,
    MemoryDraft,
    MemoryRecord,
    NewJournalEntry,
    Reinforcement,
)


class AgentMemoryRepository(Protocol):
    """Journal entries and memories of (tenant, agent), inside one transaction."""

    def add_entries(self, entries: Sequence[NewJournalEntry], now: datetime) -> list[int]:
        """Insert journal entries (pending, scored by the heuristic)."""
        ...

    def entries(
        self,
        tenant_id: str,
        agent_id: str,
        statuses: Sequence[str] | None = None,
        limit: int = 10_000,
        *,
        lock: bool = False,
    ) -> list[JournalEntryRecord]:
        """Journal entries of one agent, oldest first; ``lock`` holds them until the transaction ends."""
        ...

    def set_entries(self, entry_ids: Sequence[int], *, status: str) -> None:
        """Move journal entries to a status (``link_entries`` links them to memories)."""
        ...

    def rescore_entries(self, scores: Sequence[tuple[int, int]]) -> list[int]:
        """Apply LLM scores ``(entry id, importance)`` to entries still pending with a heuristic score.

        Each becomes ``scored`` with method ``llm``; returns the ids that changed (the others moved on).
        """
        ...

    def memories(self, tenant_id: str, agent_id: str, *, include_invalid: bool = False) -> list[MemoryRecord]:
        """Memories of one agent, oldest first (superseded ones too with ``include_invalid``)."""
        ...

    def memory_version(self, tenant_id: str, agent_id: str) -> tuple[object, ...]:
        """What changes whenever the agent's memories do (one aggregate read, no rows)."""
        ...

    def memory(self, tenant_id: str, agent_id: str, memory_id: int) -> MemoryRecord | None:
        """One memory of the agent, valid or not; None when the id is another agent's or no one's."""
        ...

    def add_memories(
        self, tenant_id: str, agent_id: str, drafts: Sequence[MemoryDraft], now: datetime
    ) -> list[int]:
        """Insert memories; returns their ids, in the drafts' order."""
        ...

    def link_entries(self, links: Sequence[tuple[int, int]]) -> None:
        """Mark journal entries consolidated into memories: ``(entry id, memory id)`` pairs."""
        ...

    def reinforce_memories(self, reinforcements: Sequence[Reinforcement], now: datetime) -> None:
        """Write what merges left of existing memories (one statement for all of them)."""
        ...

    def invalidate_memory(
        self, memory_id: int, *, superseded_by: int | None, now: datetime, reason: str | None = None
    ) -> bool:
        """Mark a memory invalid (kept; ``reason`` when a user corrected or deleted it); False when it
        already was."""
        ...
