"""The ports services talk through. ``store`` and ``adapters`` implement them.

Services import only these protocols and the domain, so they run unchanged
on SQLite or PostgreSQL, and tests can see exactly what a service may do.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from types import TracebackType
from typing import Any, Protocol, Self

from sleepcompact.domain.journal import NewJournalEntry
from sleepcompact.domain.prompt import SummaryInput, SummaryPrompt
from sleepcompact.domain.records import CompactionRecord, ConversationRecord, MessageRecord, NewMessage
from sleepcompact.domain.steps import RowChange


class TokenCounter(Protocol):
    """Counts tokens of text (cl100k_base, or bytes/4 when tiktoken cannot load)."""

    name: str

    def count(self, text: str) -> int:
        """Tokens in ``text``."""
        ...


@dataclass(frozen=True)
class SummaryResult:
    """A summary and what producing it cost."""

    text: str
    provider: str
    model: str
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    batch: bool = False
    counted_input_tokens: int | None = (
        None  # our cl100k count of what was sent, to calibrate against input_tokens
    )


class Summarizer(Protocol):
    """Turns a prompt about some messages into a summary body (LLM, offline, or a custom callable)."""

    provider: str
    model: str

    def summarize(self, request: SummaryInput, prompt: SummaryPrompt) -> SummaryResult:
        """Summarize; raise on failure (the caller falls back to the offline summary)."""
        ...


class Rescorer(Protocol):
    """Judges journal entries' long-term importance with an LLM (the summarizers that can)."""

    def rescore(self, texts: Sequence[str]) -> list[int]:
        """One score 1..10 per text, in order.

        Raises ``TransientLLMError`` or ``PermanentLLMError`` when the call fails and ``InvalidScores``
        when the reply is not one integer per text.
        """
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

    def compactions_with_meta(self, conversation_id: str) -> list[tuple[CompactionRecord, dict[str, Any]]]:
        """Compactions with their metadata, oldest first."""
        ...

    def add_compaction(self, record: CompactionRecord, meta: dict[str, Any] | None = None) -> None:
        """Insert a compaction record."""
        ...

    def bump_epoch(self, conversation_id: str, expected_epoch: int) -> bool:
        """Compare-and-set the compaction epoch; False when someone else moved it first."""
        ...

    def stats(self, conversation_id: str | None) -> dict[str, Any]:
        """Counts and token totals for one conversation or for all."""
        ...

    def search(self, conversation_id: str, query: str, limit: int = 20) -> list[MessageRecord]:
        """Originals matching every word of the query, best first."""
        ...

    def message_by_seq(self, conversation_id: str, seq: int) -> MessageRecord | None:
        """One row by its seq."""
        ...

    def apply_changes(self, compaction_id: str, changes: Sequence[RowChange]) -> list[dict[str, Any]]:
        """Write new live views; returns the prior state of each row."""
        ...

    def restore_rows(self, prior: Sequence[dict[str, Any]]) -> None:
        """Put rows back as they were."""
        ...

    def delete_derived_message(self, message_id: int) -> None:
        """Remove a summary row of a reverted compaction."""
        ...

    def recount(self, conversation_id: str) -> tuple[int, int]:
        """Recompute and store live_tokens and live_messages."""
        ...

    def get_compaction(self, compaction_id: str) -> tuple[CompactionRecord, dict[str, Any]] | None:
        """A compaction record and its metadata."""
        ...

    def compactions_with_status(self, status: str) -> list[tuple[CompactionRecord, dict[str, Any]]]:
        """Compactions in one status, with their metadata."""
        ...

    def set_compaction(self, compaction_id: str, **values: Any) -> None:
        """Update fields of a compaction record."""
        ...

    def applied_after(self, conversation_id: str, snapshot_epoch: int, compaction_id: str) -> list[str]:
        """Applied compactions newer than the given one, newest first."""
        ...

    def summary_depth(self, conversation_id: str) -> int:
        """How many applied compactions wrote a summary."""
        ...

    def add_journal_entries(self, entries: Sequence[NewJournalEntry], now: datetime) -> list[int]:
        """Insert journal entries."""
        ...

    def journal_entries(
        self, tenant_id: str, agent_id: str, statuses: Sequence[str] | None = None, limit: int = 10_000
    ) -> list[dict[str, Any]]:
        """Journal entries of one agent, oldest first."""
        ...

    def set_entries(self, entry_ids: Sequence[int], *, status: str, memory_id: int | None = None) -> None:
        """Move journal entries to a status."""
        ...

    def rescore_entries(self, scores: Sequence[tuple[int, int]]) -> list[int]:
        """Apply LLM scores ``(entry id, importance)`` to entries still pending with a heuristic score.

        Each becomes ``scored`` with method ``llm``; returns the ids that changed (the others moved on).
        """
        ...

    def memories(
        self, tenant_id: str, agent_id: str, *, include_invalid: bool = False
    ) -> list[dict[str, Any]]:
        """Memories of one agent (dicts with id, kind, content, confidence, importance, source_trust...)."""
        ...

    def add_memory(
        self,
        tenant_id: str,
        agent_id: str,
        *,
        kind: str,
        content: str,
        confidence: float,
        importance: int,
        source_journal_ids: Sequence[int],
        source_trust: float,
        now: datetime,
    ) -> int:
        """Insert a memory (``source_trust``: the highest trust among its journal entries)."""
        ...

    def reinforce_memory(
        self,
        memory_id: int,
        *,
        confidence: float,
        importance: int,
        entry_ids: Sequence[int],
        source_trust: float,
        now: datetime,
    ) -> None:
        """Raise a memory's confidence (and its trust, when ``source_trust`` is higher)."""
        ...

    def invalidate_memory(self, memory_id: int, *, superseded_by: int | None, now: datetime) -> None:
        """Mark a memory invalid (kept)."""
        ...

    def tick(self, conversation_id: str, tick_key: str) -> dict[str, Any] | None:
        """A sleep tick by key."""
        ...

    def start_tick(self, conversation_id: str, tick_key: str, now: datetime) -> bool:
        """Mark a tick running (creating it if needed); False when it is already done."""
        ...

    def ticks(self, conversation_id: str) -> list[dict[str, Any]]:
        """Every sleep tick of a conversation, oldest first."""
        ...

    def queue_ticks(self, orders: Sequence[tuple[str, str]], now: datetime) -> list[tuple[str, str]]:
        """Record ticks as queued; returns the (conversation_id, tick_key) pairs that were new."""
        ...

    def stale_ticks(self, older_than: datetime, limit: int) -> list[tuple[str, str]]:
        """Ticks queued or running since before ``older_than``."""
        ...

    def requeue_ticks(self, orders: Sequence[tuple[str, str]], now: datetime) -> None:
        """Restart the stale clock of ticks enqueued again."""
        ...

    def acquire_lease(self, conversation_id: str, owner: str, now: datetime, seconds: int) -> bool:
        """Take or extend the conversation's lease; False when another owner holds it."""
        ...

    def release_lease(self, conversation_id: str, owner: str) -> None:
        """Give the lease back if we hold it."""
        ...

    def request_sleep_debounced(self, conversation_id: str, now: datetime, interval_s: int) -> bool:
        """Record a sleep request unless one is newer than ``interval_s``; True when recorded."""
        ...

    def touch(self, conversation_id: str, now: datetime) -> None:
        """Record agent activity that added no message."""
        ...

    def request_sleep(self, conversation_id: str, now: datetime) -> None:
        """Ask the idle sweep for a tick."""
        ...

    def due_nightly(self, night_start: datetime, cursor: str, limit: int) -> tuple[list[str], str | None]:
        """A batch of ids due for tonight's tick (start with cursor ""), and the next cursor or None."""
        ...

    def due_idle(
        self, idle_before: datetime, active_after: datetime, cursor: str, limit: int
    ) -> tuple[list[ConversationRecord], str | None]:
        """A batch of conversations asking for sleep or gone quiet, and the next cursor or None."""
        ...

    def finish_tick(self, conversation_id: str, tick_key: str, result: dict[str, Any], now: datetime) -> None:
        """Record a finished tick."""
        ...

    def calibrations(self) -> dict[str, float]:
        """Learned tokenizer factors by model family."""
        ...

    def record_calibration(
        self, family: str, counted: int, observed: int, now: datetime, default: float
    ) -> float:
        """Fold one observation into a family's factor; returns the new factor."""
        ...

    def message_timeline(self, conversation_id: str) -> list[tuple[int, int, str, int, datetime]]:
        """(id, seq, kind, original token_count, created_at) of every row, archived ones included,
        by seq and part; no content, so a report over a long conversation stays cheap."""
        ...


class ConversationLookup(Protocol):
    """The guard's decision read: one conversation by primary key, or None; no unit of work around it."""

    def __call__(self, conversation_id: str) -> ConversationRecord | None: ...


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


class TaskQueue(Protocol):
    """Where sweeps send sleep ticks (the Celery broker in production)."""

    def enqueue_tick(self, conversation_id: str, tick_key: str, *, urgent: bool = False) -> None:
        """Send one ``sleepcompact.sleep_tick`` (on the ``emergency`` queue when ``urgent``)."""
        ...
