"""The compaction aggregate's port: compaction records, the row changes they apply, and their undo."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from sleepcompact.domain.records import CompactionRecord, MessageRecord
from sleepcompact.domain.steps import RowChange


class CompactionRepository(Protocol):
    """Compactions of conversations, inside one transaction."""

    def add(self, record: CompactionRecord, meta: dict[str, Any] | None = None) -> None:
        """Insert a compaction record (``meta``: prior row states, summary text, flags, batch request)."""
        ...

    def get(self, compaction_id: str) -> tuple[CompactionRecord, dict[str, Any]] | None:
        """A compaction record and its metadata."""
        ...

    def of(self, conversation_id: str) -> list[tuple[CompactionRecord, dict[str, Any]]]:
        """Compactions of a conversation with their metadata, oldest first, in one query."""
        ...

    def latest(self, conversation_id: str) -> CompactionRecord | None:
        """The newest compaction of a conversation (the last of ``of``), or None."""
        ...

    def with_status(self, status: str) -> list[tuple[CompactionRecord, dict[str, Any]]]:
        """Compactions in one status, with their metadata."""
        ...

    def update(self, compaction_id: str, **values: Any) -> None:
        """Update fields of a compaction record."""
        ...

    def applied_after(self, conversation_id: str, snapshot_epoch: int, compaction_id: str) -> list[str]:
        """Applied compactions newer than the given one, newest first."""
        ...

    def summary_depth(self, conversation_id: str) -> int:
        """How many applied compactions wrote a summary."""
        ...

    def apply_changes(
        self,
        compaction_id: str,
        changes: Sequence[RowChange],
        known: Sequence[MessageRecord] | None = None,
    ) -> list[dict[str, Any]]:
        """Write new live views; returns the prior state of each row (taken from ``known``, the rows as
        read under the epoch the caller's transaction has just checked, when given)."""
        ...

    def restore_rows(self, prior: Sequence[dict[str, Any]]) -> None:
        """Put rows back as they were."""
        ...

    def delete_summary_message(self, message_id: int) -> None:
        """Remove the summary row of a reverted compaction (its text stays in the record)."""
        ...
