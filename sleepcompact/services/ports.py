"""The ports services talk through. ``store`` and ``adapters`` implement them.

Services import only these protocols and the domain, so they run unchanged
on SQLite or PostgreSQL, and tests can see exactly what a service may do.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from types import TracebackType
from typing import Any, Protocol, Self

from sleepcompact.domain.records import CompactionRecord, ConversationRecord, MessageRecord, NewMessage


class TokenCounter(Protocol):
    """Counts tokens of text (cl100k_base, or bytes/4 when tiktoken cannot load)."""

    name: str

    def count(self, text: str) -> int:
        """Tokens in ``text``."""
        ...


class Repository(Protocol):
    """Storage operations of one transaction."""

    def add_conversation(self, record: ConversationRecord) -> None:
        """Insert a new conversation."""
        ...

    def get_conversation(self, conversation_id: str) -> ConversationRecord | None:
        """One conversation by id (a primary-key read), or None."""
        ...

    def list_conversations(self, limit: int = 1000) -> list[ConversationRecord]:
        """Conversations, newest activity first."""
        ...

    def reserve_seqs(
        self, conversation_id: str, count: int, tokens: int, messages: int, now: datetime
    ) -> int | None:
        """Atomically take ``count`` seqs and add to the running totals; the first seq, or None if unknown."""
        ...

    def tool_calls(self, conversation_id: str, ids: Sequence[str]) -> dict[str, str | None]:
        """Of ``ids``, those that name an existing tool call, mapped to the tool's name."""
        ...

    def tool_results(self, conversation_id: str, ids: Sequence[str]) -> set[str]:
        """Of ``ids``, those that already have a tool result."""
        ...

    def add_messages(self, conversation_id: str, messages: Sequence[NewMessage], now: datetime) -> list[int]:
        """Insert rows; returns their ids."""
        ...

    def live_messages(self, conversation_id: str) -> list[MessageRecord]:
        """Rows the next LLM call carries, in seq order."""
        ...

    def all_messages(self, conversation_id: str) -> list[MessageRecord]:
        """Every row ever stored for the conversation, in seq order."""
        ...

    def compactions(self, conversation_id: str) -> list[CompactionRecord]:
        """Compactions of the conversation, oldest first."""
        ...

    def add_compaction(self, record: CompactionRecord, meta: dict[str, Any] | None = None) -> None:
        """Insert a compaction record."""
        ...

    def archive_live(self, conversation_id: str, compaction_id: str, up_to_seq: int) -> int:
        """Archive every live row with seq <= up_to_seq; returns how many."""
        ...

    def set_counters(self, conversation_id: str, *, live_tokens: int, live_messages: int, epoch: int) -> None:
        """Store recomputed running totals and the new compaction epoch."""
        ...

    def bump_epoch(self, conversation_id: str, expected_epoch: int) -> bool:
        """Compare-and-set the compaction epoch; False when someone else moved it first."""
        ...

    def stats(self, conversation_id: str | None) -> dict[str, Any]:
        """Counts and token totals for one conversation or for all."""
        ...


class UnitOfWork(Protocol):
    """One transaction. Leaving the ``with`` block without ``commit()`` rolls back."""

    @property
    def repo(self) -> Repository:
        """The repository bound to this transaction."""
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
