"""The sleep aggregate in SQL: keyed ticks, the conversation lease, sleep requests and the sweeps' selections.

Every selection here is keyset-paginated (``id > after ORDER BY id``) so a sweep reads a fleet in
batches of bounded size and never holds one long transaction.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import and_, or_, select, tuple_, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.orm import InstrumentedAttribute, Session
from sqlalchemy.sql.elements import ColumnElement

from sleepcompact.domain.records import ConversationRecord
from sleepcompact.domain.schedule import TickRecord
from sleepcompact.store.mapping import aware, conversation_record
from sleepcompact.store.models import Conversation, SleepTick


def _after(column: InstrumentedAttribute[datetime | None], position: str) -> ColumnElement[bool]:
    """Keyset condition: rows after ``position`` ("<iso time>|<id>") in (column, id) order."""
    last_at, _, last_id = position.partition("|")
    at = datetime.fromisoformat(last_at)
    # A row-value bound: both SQLite and PostgreSQL seek the (column, id) index to it. The OR form
    # (column > at OR column = at AND id > last) is not an index bound on PostgreSQL, so batch k re-read
    # k batches: 18 minutes to select among 1,000,000 conversations.
    return tuple_(column, Conversation.id) > tuple_(at, last_id)


def _tick(row: SleepTick) -> TickRecord:
    return TickRecord(
        conversation_id=row.conversation_id,
        tick_key=row.tick_key,
        status=row.status,
        queued_at=aware(row.created_at),
        started_at=aware(row.started_at) if row.started_at else None,
        finished_at=aware(row.finished_at) if row.finished_at else None,
        result=dict(row.result or {}),
    )


class SqlTicks:
    """``TickRepository`` over one SQLAlchemy session."""

    def __init__(self, session: Session) -> None:
        self.session = session

    def get(self, conversation_id: str, tick_key: str) -> TickRecord | None:
        """A sleep tick by its key, if it was ever queued or started (``queued_at``: when last enqueued)."""
        row = self.session.scalar(
            select(SleepTick).where(
                SleepTick.conversation_id == conversation_id, SleepTick.tick_key == tick_key
            )
        )
        return _tick(row) if row is not None else None

    def of(self, conversation_id: str) -> list[TickRecord]:
        """Every sleep tick of a conversation, oldest first."""
        rows = self.session.scalars(
            select(SleepTick).where(SleepTick.conversation_id == conversation_id).order_by(SleepTick.id)
        )
        return [_tick(r) for r in rows]

    def start(self, conversation_id: str, tick_key: str, now: datetime) -> bool:
        """Mark the tick running (creating it when it was not queued); False when it is already done."""
        self.queue([(conversation_id, tick_key)], now)
        result = self.session.execute(
            update(SleepTick)
            .where(
                SleepTick.conversation_id == conversation_id,
                SleepTick.tick_key == tick_key,
                SleepTick.status != "done",
            )
            .values(status="running", started_at=now)
        )
        return bool(getattr(result, "rowcount", 0))

    def finish(self, conversation_id: str, tick_key: str, result: dict[str, Any], now: datetime) -> bool:
        """Record what the tick did and that it is done; the conversation's last_sleep_at moves on.

        False, writing nothing, when the tick is already done: the first delivery to finish keeps the
        tick's one result (a redelivery that ran beside it must not overwrite it)."""
        finished = self.session.execute(
            update(SleepTick)
            .where(
                SleepTick.conversation_id == conversation_id,
                SleepTick.tick_key == tick_key,
                SleepTick.status != "done",
            )
            .values(status="done", result=result, finished_at=now)
        )
        if not getattr(finished, "rowcount", 0):
            return False
        self.session.execute(
            update(Conversation)
            .where(Conversation.id == conversation_id)
            .values(last_sleep_at=now, sleep_requested_at=None)
        )
        return True

    def queue(self, orders: Sequence[tuple[str, str]], now: datetime) -> list[tuple[str, str]]:
        """Record ``(conversation_id, tick_key)`` pairs as queued; returns only the pairs that were new.

        One INSERT ... ON CONFLICT DO NOTHING: a second sweep for the same night (two beats, a redelivered
        sweep) inserts nothing, so it enqueues nothing.
        """
        if not orders:
            return []
        values = [
            {"conversation_id": c, "tick_key": k, "status": "queued", "result": {}, "created_at": now}
            for c, k in dict.fromkeys(orders)
        ]
        dialect = self.session.get_bind().dialect.name
        insert = pg_insert if dialect == "postgresql" else sqlite_insert
        statement = (
            insert(SleepTick)
            .values(values)
            .on_conflict_do_nothing(index_elements=["conversation_id", "tick_key"])
            .returning(SleepTick.conversation_id, SleepTick.tick_key)
        )
        inserted = {(str(c), str(k)) for c, k in self.session.execute(statement)}
        return [pair for pair in dict.fromkeys(orders) if pair in inserted]

    def stale(self, queued_before: datetime, running_before: datetime, limit: int) -> list[tuple[str, str]]:
        """Ticks to enqueue again: queued (or re-sent) before ``queued_before``, whose message was lost;
        and running since before ``running_before`` and not re-sent since, whose worker died."""
        lost = and_(SleepTick.status == "queued", SleepTick.created_at < queued_before)
        dead = and_(
            SleepTick.status == "running",
            SleepTick.started_at < running_before,
            SleepTick.created_at < running_before,  # requeue() restarts this clock: one re-send per lease
        )
        rows = self.session.execute(
            select(SleepTick.conversation_id, SleepTick.tick_key)
            .where(or_(lost, dead))
            .order_by(SleepTick.created_at)
            .limit(limit)
        )
        return [(str(c), str(k)) for c, k in rows]

    def requeue(self, orders: Sequence[tuple[str, str]], now: datetime) -> None:
        """Restart the stale clock of ticks being enqueued again, so the next sweep leaves them be."""
        for conversation_id, tick_key in orders:
            self.session.execute(
                update(SleepTick)
                .where(SleepTick.conversation_id == conversation_id, SleepTick.tick_key == tick_key)
                .values(created_at=now)
            )

    def acquire_lease(self, conversation_id: str, owner: str, now: datetime, seconds: int) -> bool:
        """Take (or extend) the conversation's lease with one conditional UPDATE; False if someone holds it.

        The lease only saves a second, paid LLM call; the compaction epoch is what keeps data correct.
        """
        result = self.session.execute(
            update(Conversation)
            .where(
                Conversation.id == conversation_id,
                or_(
                    Conversation.lease_owner.is_(None),
                    Conversation.lease_owner == owner,
                    Conversation.lease_expires_at < now,
                ),
            )
            .values(lease_owner=owner, lease_expires_at=now + timedelta(seconds=seconds))
        )
        return bool(getattr(result, "rowcount", 0))

    def release_lease(self, conversation_id: str, owner: str) -> None:
        """Give the lease back, if we still hold it."""
        self.session.execute(
            update(Conversation)
            .where(Conversation.id == conversation_id, Conversation.lease_owner == owner)
            .values(lease_owner=None, lease_expires_at=None)
        )

    def request_sleep(self, conversation_id: str, now: datetime) -> None:
        """The guard saw the conversation over soft: ask the idle sweep for a tick (first request wins)."""
        self.session.execute(
            update(Conversation)
            .where(Conversation.id == conversation_id, Conversation.sleep_requested_at.is_(None))
            .values(sleep_requested_at=now)
        )

    def request_sleep_debounced(self, conversation_id: str, now: datetime, interval_s: int) -> bool:
        """Record a sleep request unless one was made within ``interval_s``; True when this one counts."""
        result = self.session.execute(
            update(Conversation)
            .where(
                Conversation.id == conversation_id,
                or_(
                    Conversation.sleep_requested_at.is_(None),
                    Conversation.sleep_requested_at < now - timedelta(seconds=interval_s),
                ),
            )
            .values(sleep_requested_at=now)
        )
        return bool(getattr(result, "rowcount", 0))

    def touch(self, conversation_id: str, now: datetime) -> None:
        """Record agent activity that added no message (a journal entry): the nightly sweep is then due."""
        self.session.execute(
            update(Conversation).where(Conversation.id == conversation_id).values(last_activity_at=now)
        )

    def due_nightly(self, night_start: datetime, cursor: str, limit: int) -> tuple[list[str], str | None]:
        """One batch of conversations due tonight, and the cursor of the next batch (None when done).

        Due: active since its last sleep, which was before this night's sweep time; or never slept and
        created before it. A night missed (beat or worker down) leaves ``last_sleep_at`` old, so the
        next sweep selects the conversation again: nights are caught up, never skipped. Two keyset
        scans over ``ix_conversation_sleep`` (last_sleep_at, id): the never-slept first, then the rest.
        """
        phase, _, position = cursor.partition(":")
        if phase in ("", "never"):
            never = self.session.execute(
                select(Conversation.id)
                .where(
                    Conversation.last_sleep_at.is_(None),
                    Conversation.id > position,
                    Conversation.created_at < night_start,
                )
                .order_by(Conversation.id)
                .limit(limit)
            ).all()
            ids = [str(r.id) for r in never]
            return ids, (f"never:{ids[-1]}" if len(never) == limit else "slept:")
        # The due condition in SQL: only due rows travel, a batch is a batch of due conversations.
        query = select(Conversation.id, Conversation.last_sleep_at).where(
            Conversation.last_sleep_at < night_start,
            Conversation.last_activity_at > Conversation.last_sleep_at,
        )
        if position:
            query = query.where(_after(Conversation.last_sleep_at, position))
        rows = self.session.execute(
            query.order_by(Conversation.last_sleep_at, Conversation.id).limit(limit)
        ).all()
        ids = [str(r.id) for r in rows]
        if len(rows) < limit:
            return ids, None
        return ids, f"slept:{rows[-1].last_sleep_at.isoformat()}|{rows[-1].id}"

    def due_idle(
        self, idle_before: datetime, active_after: datetime, cursor: str, limit: int
    ) -> tuple[list[ConversationRecord], str | None]:
        """One batch of conversations that asked for sleep or went quiet, and the next cursor.

        Quiet: last active between ``active_after`` and ``idle_before`` with work since its last sleep
        (a keyset scan over ``ix_conversation_activity``). Whether it is over its own soft threshold
        depends on its budget, so the caller decides. Older quiet spells are the nightly sweep's.
        """
        phase, _, position = cursor.partition(":")
        if phase in ("", "requested"):
            rows = list(
                self.session.scalars(
                    select(Conversation)
                    .where(Conversation.sleep_requested_at.is_not(None), Conversation.id > position)
                    .order_by(Conversation.id)
                    .limit(limit)
                )
            )
            nxt = f"requested:{rows[-1].id}" if len(rows) == limit else "quiet:"
            return [conversation_record(r) for r in rows], nxt
        query = select(Conversation).where(
            Conversation.last_activity_at < idle_before,
            Conversation.last_activity_at >= active_after,
            Conversation.sleep_requested_at.is_(None),
            Conversation.live_messages > 0,
            or_(
                Conversation.last_sleep_at.is_(None),
                Conversation.last_sleep_at < Conversation.last_activity_at,
            ),
        )
        if position:
            query = query.where(_after(Conversation.last_activity_at, position))
        rows = list(
            self.session.scalars(query.order_by(Conversation.last_activity_at, Conversation.id).limit(limit))
        )
        convs = [conversation_record(r) for r in rows]
        if len(rows) < limit:
            return convs, None
        return convs, f"quiet:{rows[-1].last_activity_at.isoformat()}|{rows[-1].id}"
