"""The conversation aggregate's port: conversations, their message rows, the archive search."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any, Protocol

from sleepcompact.domain.records import ConversationRecord, MessageRecord, NewMessage
from sleepcompact.domain.search_query import SearchFilters, SearchQuery


class ConversationRepository(Protocol):
    """Conversations and their rows, inside one transaction."""

    def add(self, record: ConversationRecord) -> None:
        """Insert a new conversation."""
        ...

    def get(self, conversation_id: str) -> ConversationRecord | None:
        """One conversation by id (a primary-key read), or None."""
        ...

    def recent(self, limit: int = 1000) -> list[ConversationRecord]:
        """Conversations, newest activity first."""
        ...

    def reserve_seqs(
        self,
        conversation_id: str,
        count: int,
        tokens: int,
        messages: int,
        now: datetime,
        *,
        activity: bool = True,
    ) -> int | None:
        """Atomically take ``count`` seqs and add to the running totals; the first seq, or None if unknown."""
        ...

    def bump_epoch(self, conversation_id: str, expected_epoch: int) -> bool:
        """Compare-and-set the compaction epoch; False when someone else moved it first."""
        ...

    def recount(self, conversation_id: str) -> tuple[int, int]:
        """Recompute and store live_tokens and live_messages."""
        ...

    def tool_calls(self, conversation_id: str, ids: Sequence[str]) -> dict[str, str | None]:
        """Of ``ids`` (call keys), those that name an existing tool call, mapped to the tool's name."""
        ...

    def calls_with_ref(self, conversation_id: str, ref: str) -> list[tuple[str, bool]]:
        """Keys of the calls made with the caller's id ``ref``, oldest first, each with whether it has
        its result (see ``domain.tool_ids``)."""
        ...

    def call_key_taken(self, conversation_id: str, key: str) -> bool:
        """Whether a call of the conversation is stored under ``key``."""
        ...

    def add_messages(self, conversation_id: str, messages: Sequence[NewMessage], now: datetime) -> list[int]:
        """Insert rows (and index them for search); returns their ids."""
        ...

    def live_messages(self, conversation_id: str, since: int = 0) -> list[MessageRecord]:
        """Rows the next LLM call carries, in seq order (with ``since``, those from that seq on)."""
        ...

    def all_messages(self, conversation_id: str) -> list[MessageRecord]:
        """Every row ever stored for the conversation, in seq order."""
        ...

    def message_by_seq(self, conversation_id: str, seq: int) -> MessageRecord | None:
        """One row by its seq."""
        ...

    def search(
        self, conversation_id: str, query: SearchQuery, filters: SearchFilters, limit: int
    ) -> list[tuple[MessageRecord, float]]:
        """Originals matching any term of the parsed query and the filters, best first, each with its
        engine score (higher is better; comparable within one result list)."""
        ...

    def timeline(self, conversation_id: str) -> list[tuple[int, int, str, int, datetime]]:
        """(id, seq, kind, original token_count, created_at) of every row, archived ones included,
        by seq and part; no content, so a report over a long conversation stays cheap."""
        ...

    def stats(self, conversation_id: str | None) -> dict[str, Any]:
        """Counts and token totals for one conversation or for all."""
        ...


class ConversationLookup(Protocol):
    """The guard's decision read: one conversation by primary key, or None; no unit of work around it."""

    def __call__(self, conversation_id: str) -> ConversationRecord | None: ...
