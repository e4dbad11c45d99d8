"""The unit of work: one transaction, and a repository per aggregate bound to it."""

from __future__ import annotations

from types import TracebackType
from typing import Protocol, Self

from sleepcompact.ports.agent_memory import AgentMemoryRepository
from sleepcompact.ports.calibration import CalibrationRepository
from sleepcompact.ports.compactions import CompactionRepository
from sleepcompact.ports.conversations import ConversationRepository
from sleepcompact.ports.ticks import TickRepository


class UnitOfWork(Protocol):
    """One transaction. Leaving the ``with`` block without ``commit()`` rolls back."""

    @property
    def conversations(self) -> ConversationRepository:
        """Conversations and their message rows."""
        ...

    @property
    def compactions(self) -> CompactionRepository:
        """Compaction records and the row changes they apply."""
        ...

    @property
    def memories(self) -> AgentMemoryRepository:
        """Agents' journals and long-term memories."""
        ...

    @property
    def ticks(self) -> TickRepository:
        """Sleep ticks, leases and sweep selections."""
        ...

    @property
    def calibration(self) -> CalibrationRepository:
        """Learned tokenizer factors."""
        ...

    def __enter__(self) -> Self: ...

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None: ...

    def commit(self) -> None:
        """Make the transaction's writes durable."""
        ...

    def rollback(self) -> None:
        """Discard the transaction's writes."""
        ...
