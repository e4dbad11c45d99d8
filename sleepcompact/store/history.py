"""Repository operations that change history: apply and undo compactions, search the archive, journal."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import delete, func, select, text, update
from sqlalchemy.orm import Session

from sleepcompact.domain.budget import calibrated
from sleepcompact.domain.journal import NewJournalEntry
from sleepcompact.domain.messages import without_nul
from sleepcompact.domain.records import CompactionRecord, MessageRecord
from sleepcompact.domain.steps import RowChange
from sleepcompact.store.mapping import compaction_record, message_record
from sleepcompact.store.models import Compaction, Conversation, JournalEntry, Message, ModelCalibration

WORD = re.compile(r"\w+", re.UNICODE)


def search_body(text_: str) -> str:
    """Words only, so both engines split identifiers the same way (src/a_b.py -> src a_b py)."""
    return " ".join(WORD.findall(text_))


class HistoryOperations:
    """Mixed into ``SqlRepository``; needs ``self.session``."""

    session: Session

    # -- search index ---------------------------------------------------------------------------------

    def _sqlite(self) -> bool:
        bind = self.session.get_bind()
        return bind.dialect.name == "sqlite"

    def index_messages(self, conversation_id: str, rows: Sequence[tuple[int, str]]) -> None:
        """Add (message id, plain text) pairs to the full-text index."""
        if not rows:
            return
        if self._sqlite():
            sql = "INSERT INTO message_search(rowid, body, conversation_id) VALUES (:id, :body, :cid)"
        else:
            sql = "INSERT INTO message_search(message_id, body, conversation_id) VALUES (:id, :body, :cid)"
        self.session.execute(
            text(sql), [{"id": mid, "body": search_body(body), "cid": conversation_id} for mid, body in rows]
        )

    def search(self, conversation_id: str, query: str, limit: int = 20) -> list[MessageRecord]:
        """Originals matching every word of ``query``, best first (bm25 / ts_rank)."""
        words = [w.lower() for w in WORD.findall(query)]
        if not words:
            return []
        if self._sqlite():
            match = " ".join('"' + w.replace('"', "") + '"' for w in words)
            ids = (
                self.session.execute(
                    text(
                        "SELECT rowid FROM message_search WHERE message_search MATCH :q "
                        "AND conversation_id = :cid ORDER BY bm25(message_search) LIMIT :n"
                    ),
                    {"q": match, "cid": conversation_id, "n": limit},
                )
                .scalars()
                .all()
            )
        else:
            ids = (
                self.session.execute(
                    text(
                        "SELECT message_id FROM message_search WHERE conversation_id = :cid AND "
                        "to_tsvector('simple', body) @@ to_tsquery('simple', :q) "
                        "ORDER BY ts_rank(to_tsvector('simple', body), to_tsquery('simple', :q)) DESC, "
                        "message_id LIMIT :n"
                    ),
                    {"q": " & ".join(words), "cid": conversation_id, "n": limit},
                )
                .scalars()
                .all()
            )
        if not ids:
            return []
        rows = {r.id: r for r in self.session.scalars(select(Message).where(Message.id.in_(list(ids))))}
        return [message_record(rows[i]) for i in ids if i in rows]

    def message_by_seq(self, conversation_id: str, seq: int) -> MessageRecord | None:
        """One row by its seq."""
        row = self.session.scalar(
            select(Message).where(Message.conversation_id == conversation_id, Message.seq == seq)
        )
        return message_record(row) if row is not None else None

    # -- compactions ------------------------------------------------------------------------------------

    def apply_changes(self, compaction_id: str, changes: Sequence[RowChange]) -> list[dict[str, Any]]:
        """Write new live views; returns each row's prior state so restore can put it back exactly."""
        if not changes:
            return []
        by_id = {c.message_id: c for c in changes}
        rows = self.session.scalars(select(Message).where(Message.id.in_(list(by_id)))).all()
        prior: list[dict[str, Any]] = []
        for row in rows:
            change = by_id[row.id]
            prior.append(
                {
                    "id": row.id,
                    "state": row.state,
                    "live_content": row.live_content,
                    "live_tokens": row.live_tokens,
                    "compaction_id": row.compaction_id,
                }
            )
            row.state = change.state
            row.live_content = (
                json.dumps(change.live_content, ensure_ascii=False)
                if change.live_content is not None
                else None
            )
            row.live_tokens = change.live_tokens
            row.compaction_id = compaction_id
        self.session.flush()
        prior.sort(key=lambda p: int(p["id"]))
        return prior

    def restore_rows(self, prior: Sequence[dict[str, Any]]) -> None:
        """Put rows back exactly as ``apply_changes`` found them."""
        if not prior:
            return
        # One executemany (ORM bulk UPDATE by primary key), not a statement per row.
        self.session.execute(
            update(Message),
            [
                {
                    "id": p["id"],
                    "state": p["state"],
                    "live_content": p["live_content"],
                    "live_tokens": p["live_tokens"],
                    "compaction_id": p["compaction_id"],
                }
                for p in prior
            ],
        )

    def delete_derived_message(self, message_id: int) -> None:
        """Remove a summary row a reverted compaction wrote (its text stays in the compaction record)."""
        if self._sqlite():
            self.session.execute(text("DELETE FROM message_search WHERE rowid = :id"), {"id": message_id})
        self.session.execute(delete(Message).where(Message.id == message_id, Message.kind == "summary"))

    def recount(self, conversation_id: str) -> tuple[int, int]:
        """Recompute live_tokens and live_messages from the rows (appends made meanwhile included)."""
        tokens, count = self.session.execute(
            select(func.coalesce(func.sum(Message.live_tokens), 0), func.count()).where(
                Message.conversation_id == conversation_id, Message.state != "archived"
            )
        ).one()
        self.session.execute(
            update(Conversation)
            .where(Conversation.id == conversation_id)
            .values(live_tokens=int(tokens), live_messages=int(count))
        )
        return int(tokens), int(count)

    def get_compaction(self, compaction_id: str) -> tuple[CompactionRecord, dict[str, Any]] | None:
        """A compaction record and its metadata (prior states, summary text, flags)."""
        row = self.session.get(Compaction, compaction_id)
        return (compaction_record(row), dict(row.meta or {})) if row is not None else None

    def compactions_with_status(self, status: str) -> list[tuple[CompactionRecord, dict[str, Any]]]:
        """Compactions in one status, with their metadata (e.g. ``running`` batch requests)."""
        rows = self.session.scalars(
            select(Compaction).where(Compaction.status == status).order_by(Compaction.id)
        )
        return [(compaction_record(r), dict(r.meta or {})) for r in rows]

    def set_compaction(self, compaction_id: str, **values: Any) -> None:
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

    def add_journal_entries(self, entries: Sequence[NewJournalEntry], now: datetime) -> list[int]:
        """Insert journal entries (status pending), scored by the heuristic."""
        rows = [
            JournalEntry(
                tenant_id=e.tenant_id,
                agent_id=e.agent_id,
                conversation_id=e.conversation_id,
                content=without_nul(e.content),
                source_type=e.source_type,
                source_trust=e.source_trust,
                importance=e.importance,
                importance_method="heuristic",
                tags=list(e.tags),
                origin=e.origin,
                status="pending",
                created_at=now,
            )
            for e in entries
        ]
        self.session.add_all(rows)
        self.session.flush()
        return [r.id for r in rows]

    # -- tokenizer calibration --------------------------------------------------------------------------

    def calibrations(self) -> dict[str, float]:
        """The learned tokenizer factor of every model family seen so far."""
        return {r.family: r.factor for r in self.session.scalars(select(ModelCalibration))}

    def record_calibration(
        self, family: str, counted: int, observed: int, now: datetime, default: float
    ) -> float:
        """Fold one observation (our count vs the API's input_tokens) into the family's factor."""
        row = self.session.get(ModelCalibration, family, with_for_update=True)
        if row is None:
            row = ModelCalibration(family=family, factor=default, samples=0, updated_at=now)
            self.session.add(row)
        row.factor = calibrated(row.factor, row.samples, counted, observed)
        row.samples += 1
        row.updated_at = now
        self.session.flush()
        return row.factor

    # -- reports ----------------------------------------------------------------------------------------

    def message_timeline(self, conversation_id: str) -> list[tuple[int, int, str, int, datetime]]:
        """(id, seq, kind, original token_count, created_at) of every row, archived ones included.

        Only these columns are read (no content, no live view): a report over a long conversation
        with large tool outputs must not load them all.
        """
        rows = self.session.execute(
            select(Message.id, Message.seq, Message.kind, Message.token_count, Message.created_at)
            .where(Message.conversation_id == conversation_id)
            .order_by(Message.seq, Message.part)
        ).all()
        # SQLite hands back naive datetimes; everything we store is UTC (as in store.mapping).
        return [
            (int(i), int(seq), str(kind), int(tokens), at if at.tzinfo else at.replace(tzinfo=UTC))
            for i, seq, kind, tokens, at in rows
        ]
