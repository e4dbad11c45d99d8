"""The compaction aggregate in SQL: compaction records, the row changes they apply, and their undo."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy import bindparam, delete, func, select, update
from sqlalchemy.orm import Session

from sleepcompact.domain.records import CompactionRecord, MessageRecord
from sleepcompact.domain.steps import RowChange
from sleepcompact.store.mapping import compaction_record, dump_content
from sleepcompact.store.models import Compaction, Message
from sleepcompact.store.search import unindex_message

_VIEW_COLUMNS = ("state", "live_content", "live_tokens", "compaction_id")
# One Core statement executed for many parameter sets (a DBAPI executemany): the ORM's bulk UPDATE by
# primary key did the same work at four times the cost (7.2 against 1.8 ms for 400 rows on SQLite),
# which in the guard's emergency path was a third of the apply. The bind names differ from the
# columns' because Core reserves those for the SET clause.
_SET_VIEW = (
    update(Message)
    .where(Message.id == bindparam("v_id"))
    .values({c: bindparam(f"v_{c}") for c in _VIEW_COLUMNS})
)


class SqlCompactions:
    """``CompactionRepository`` over one SQLAlchemy session."""

    def __init__(self, session: Session) -> None:
        self.session = session

    def add(self, record: CompactionRecord, meta: dict[str, Any] | None = None) -> None:
        """Insert a compaction record."""
        self.session.add(
            Compaction(
                id=record.id,
                conversation_id=record.conversation_id,
                trigger=record.trigger,
                status=record.status,
                steps=record.steps,
                first_seq=record.first_seq,
                last_seq=record.last_seq,
                messages_affected=record.messages_affected,
                tokens_before=record.tokens_before,
                tokens_after=record.tokens_after,
                summary_message_id=record.summary_message_id,
                previous_compaction_id=record.previous_compaction_id,
                summarizer_provider=record.summarizer_provider,
                summarizer_model=record.summarizer_model,
                llm_input_tokens=record.llm_input_tokens,
                llm_output_tokens=record.llm_output_tokens,
                llm_cost_usd=record.llm_cost_usd,
                llm_batch=record.llm_batch,
                duration_ms=record.duration_ms,
                error=record.error,
                input_hash=record.input_hash,
                snapshot_epoch=record.snapshot_epoch,
                created_at=record.created_at,
                meta=meta or {},
            )
        )
        self.session.flush()

    def get(self, compaction_id: str) -> tuple[CompactionRecord, dict[str, Any]] | None:
        """A compaction record and its metadata (prior states, summary text, flags)."""
        row = self.session.get(Compaction, compaction_id)
        return (compaction_record(row), dict(row.meta or {})) if row is not None else None

    def of(self, conversation_id: str) -> list[tuple[CompactionRecord, dict[str, Any]]]:
        """Compactions of the conversation with their metadata, oldest first, in one query."""
        rows = self.session.scalars(
            select(Compaction)
            .where(Compaction.conversation_id == conversation_id)
            # The epoch breaks ties of a coarse clock: it grows with every apply, restore and clear.
            .order_by(Compaction.created_at, Compaction.snapshot_epoch, Compaction.id)
        )
        return [(compaction_record(r), dict(r.meta or {})) for r in rows]

    def latest(self, conversation_id: str) -> CompactionRecord | None:
        """The newest compaction of the conversation, in ``of``'s order: one row, however long the history."""
        row = self.session.scalars(
            select(Compaction)
            .where(Compaction.conversation_id == conversation_id)
            .order_by(Compaction.created_at.desc(), Compaction.snapshot_epoch.desc(), Compaction.id.desc())
            .limit(1)
        ).first()
        return compaction_record(row) if row is not None else None

    def with_status(self, status: str) -> list[tuple[CompactionRecord, dict[str, Any]]]:
        """Compactions in one status, with their metadata (e.g. ``running`` batch requests)."""
        rows = self.session.scalars(
            select(Compaction).where(Compaction.status == status).order_by(Compaction.id)
        )
        return [(compaction_record(r), dict(r.meta or {})) for r in rows]

    def update(self, compaction_id: str, **values: Any) -> None:
        """Update fields of a compaction record (status, summary_message_id, ...)."""
        self.session.execute(update(Compaction).where(Compaction.id == compaction_id).values(**values))

    def applied_after(self, conversation_id: str, snapshot_epoch: int, compaction_id: str) -> list[str]:
        """Applied compactions later than the given one, newest first.

        Ordered by the epoch each one applied at, not by clock: every apply moves the epoch on, so the
        order is exact even when two compactions share a timestamp.
        """
        rows = self.session.execute(
            select(Compaction.id)
            .where(
                Compaction.conversation_id == conversation_id,
                Compaction.status == "applied",
                Compaction.id != compaction_id,
                Compaction.snapshot_epoch > snapshot_epoch,
            )
            .order_by(Compaction.snapshot_epoch.desc())
        ).all()
        return [str(r[0]) for r in rows]

    def summary_depth(self, conversation_id: str) -> int:
        """How many applied compactions of this conversation wrote a summary (the rolling depth)."""
        n = self.session.scalar(
            select(func.count())
            .select_from(Compaction)
            .where(
                Compaction.conversation_id == conversation_id,
                Compaction.status == "applied",
                Compaction.summary_message_id.is_not(None),
            )
        )
        return int(n or 0)

    def apply_changes(
        self,
        compaction_id: str,
        changes: Sequence[RowChange],
        known: Sequence[MessageRecord] | None = None,
    ) -> list[dict[str, Any]]:
        """Write new live views; returns each row's prior state so restore can put it back exactly.

        The prior state comes from ``known`` when the caller has the rows as it read them under the
        epoch its transaction has just checked (every write to a row's view moves the epoch, so they are
        what is stored); otherwise only the five columns a change touches are read (not the rows'
        content and raw payloads). The new views go out as one executemany by primary key, as
        ``restore_rows`` does: an emergency compaction in the request path masks thousands of rows, and
        a statement per ORM object made the write cost as much as the plan."""
        if not changes:
            return []
        by_id = {c.message_id: c for c in changes}
        prior = _prior_known(by_id, known) if known is not None else self._prior_read(by_id)
        if prior:
            views = [_new_view(by_id[p["id"]], compaction_id) for p in prior]
            self.session.connection().execute(_SET_VIEW, [_bound(v) for v in views])
        return prior

    def _prior_read(self, by_id: Mapping[int, RowChange]) -> list[dict[str, Any]]:
        columns = (
            Message.id,
            Message.state,
            Message.live_content,
            Message.live_tokens,
            Message.compaction_id,
        )
        found = self.session.execute(select(*columns).where(Message.id.in_(list(by_id)))).all()
        return sorted(
            (
                {
                    "id": r.id,
                    "state": r.state,
                    "live_content": r.live_content,
                    "live_tokens": r.live_tokens,
                    "compaction_id": r.compaction_id,
                }
                for r in found
            ),
            key=lambda p: int(p["id"]),
        )

    def restore_rows(self, prior: Sequence[dict[str, Any]]) -> None:
        """Put rows back exactly as ``apply_changes`` found them."""
        if not prior:
            return
        # One executemany, not a statement per row.
        self.session.connection().execute(_SET_VIEW, [_bound(p) for p in prior])

    def delete_summary_message(self, message_id: int) -> None:
        """Remove a summary row a reverted compaction wrote (its text stays in the compaction record)."""
        unindex_message(self.session, message_id)
        self.session.execute(delete(Message).where(Message.id == message_id, Message.kind == "summary"))


def _prior_known(by_id: Mapping[int, RowChange], known: Sequence[MessageRecord]) -> list[dict[str, Any]]:
    """The prior state of the changed rows among ``known``, as ``_prior_read`` reads it (the live view
    as stored: JSON text, as ``dump_content`` writes it)."""
    prior = [
        {
            "id": r.id,
            "state": r.state,
            "live_content": dump_content(r.live_content) if r.live_content is not None else None,
            "live_tokens": r.live_tokens,
            "compaction_id": r.compaction_id,
        }
        for r in known
        if r.id in by_id
    ]
    return sorted(prior, key=lambda p: int(p["id"]))


def _new_view(change: RowChange, compaction_id: str) -> dict[str, Any]:
    """One row's bulk-update parameters: its new state and live view, and the compaction that made it."""
    live = dump_content(change.live_content) if change.live_content is not None else None
    return {
        "id": change.message_id,
        "state": change.state,
        "live_content": live,
        "live_tokens": change.live_tokens,
        "compaction_id": compaction_id,
    }


def _bound(view: dict[str, Any]) -> dict[str, Any]:
    """A row's view as ``_SET_VIEW``'s parameters."""
    return {"v_id": view["id"], **{f"v_{c}": view[c] for c in _VIEW_COLUMNS}}
