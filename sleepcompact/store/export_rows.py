"""Whole rows for the lossless export and import: every column read and written as it is, ids included.

The repositories map rows to records and write rows the way the services make them (live, with fresh
ids). A lossless export needs every column, and its import writes rows in whatever state they were in,
under their own ids or fresh ones; this module does that and nothing else. Rows are plain dicts keyed
by column name (the export document's field names); times are aware UTC datetimes, a message's
``content`` and ``live_content`` their JSON value (they are stored as JSON text).

Rows written here stay what an append would have left: the archive search index gets every original
(``store.search``, as ``SqlConversations.add_messages`` does), and on PostgreSQL the id sequences are
moved past ids written explicitly, so the next append does not collide with them.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Sequence
from datetime import UTC, datetime
from types import TracebackType
from typing import Any

from sqlalchemy import Engine, Table, bindparam, insert, select, text, update
from sqlalchemy.exc import DataError, DBAPIError, IntegrityError
from sqlalchemy.orm import Session, sessionmaker

from sleepcompact.domain.errors import ImportFormatError, InvalidSetting
from sleepcompact.store.engine import make_session_factory
from sleepcompact.store.errors import store_errors, translate
from sleepcompact.store.mapping import dump_content
from sleepcompact.store.models import Compaction, Conversation, JournalEntry, MemoryItem, Message
from sleepcompact.store.search import index_messages, is_sqlite

TABLES: dict[str, Table] = {
    model.__tablename__: model.__table__  # type: ignore[misc]
    for model in (Conversation, Message, Compaction, JournalEntry, MemoryItem)
}
"""The tables an export holds, by name (what ``insert``, ``update`` and ``taken`` take)."""

_CONTENT_COLUMNS = ("content", "live_content")
_SERIAL_TABLES = ("message", "journal_entry", "memory")  # autoincrement ids


def _out(table: Table, row: Any) -> dict[str, Any]:
    """A selected row as a dict by column name: times aware UTC, message content decoded."""
    out: dict[str, Any] = {}
    for column in table.columns:
        value = row._mapping[column]
        if isinstance(value, datetime):
            # SQLite hands back naive datetimes (everything stored is UTC); PostgreSQL answers in the
            # session's time zone: both become UTC, so two databases export the same text.
            value = value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
        elif table.name == "message" and column.name in _CONTENT_COLUMNS and value is not None:
            value = json.loads(value)
        out[column.name] = value
    return out


def _in(table: Table, row: dict[str, Any]) -> dict[str, Any]:
    """A row to insert: message content back to its stored JSON text."""
    if table.name != "message":
        return row
    return {k: dump_content(v) if k in _CONTENT_COLUMNS and v is not None else v for k, v in row.items()}


class SqlExportRows:
    """One transaction over whole rows. Leaving the ``with`` block without ``commit()`` rolls back,
    and database failures leave it as the store's typed errors, as with ``SqlUnitOfWork``."""

    def __init__(self, session_factory: sessionmaker[Session]) -> None:
        self._factory = session_factory
        self._session: Session | None = None

    def __enter__(self) -> SqlExportRows:
        self._session = self._factory()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        session, self._session = self.session, None
        try:
            with store_errors():
                try:
                    session.rollback()  # anything not committed never happened
                finally:
                    session.close()
        except Exception:
            if exc is None:
                raise
        typed = translate(exc) if exc is not None else None
        if typed is not None and typed is not exc:
            raise typed from exc

    def commit(self) -> None:
        """Commit the transaction."""
        with store_errors(committing=True):
            self.session.commit()

    @property
    def session(self) -> Session:
        """The transaction's session."""
        assert self._session is not None, "used outside a with block"
        return self._session

    def _select(self, table: Table, *where: Any, order: Sequence[Any] = ()) -> list[dict[str, Any]]:
        rows = self.session.execute(select(table).where(*where).order_by(*order))
        return [_out(table, r) for r in rows]

    # -- reads ------------------------------------------------------------------------------------------

    def conversation(self, conversation_id: str) -> dict[str, Any] | None:
        """The conversation row, every column (the lease too), or None."""
        t = TABLES["conversation"]
        rows = self._select(t, t.c.id == conversation_id)
        return rows[0] if rows else None

    def conversation_ids(self, tenant_id: str, agent_id: str) -> list[str]:
        """Ids of the agent's conversations, oldest first."""
        t = TABLES["conversation"]
        query = select(t.c.id).where(t.c.tenant_id == tenant_id, t.c.agent_id == agent_id)
        return [str(i) for i in self.session.scalars(query.order_by(t.c.created_at, t.c.id))]

    def messages(self, conversation_id: str) -> list[dict[str, Any]]:
        """Every message row of the conversation (archived ones too), by seq."""
        t = TABLES["message"]
        return self._select(t, t.c.conversation_id == conversation_id, order=(t.c.seq, t.c.part))

    def compactions(self, conversation_id: str) -> list[dict[str, Any]]:
        """Every compaction record of the conversation, in the order ``SqlCompactions.of`` gives."""
        t = TABLES["compaction"]
        order = (t.c.created_at, t.c.snapshot_epoch, t.c.id)
        return self._select(t, t.c.conversation_id == conversation_id, order=order)

    def journal(self, tenant_id: str, agent_id: str) -> list[dict[str, Any]]:
        """Every journal entry of the agent, by id."""
        t = TABLES["journal_entry"]
        return self._select(t, t.c.tenant_id == tenant_id, t.c.agent_id == agent_id, order=(t.c.id,))

    def memories(self, tenant_id: str, agent_id: str) -> list[dict[str, Any]]:
        """Every memory of the agent, invalidated ones too, by id."""
        t = TABLES["memory"]
        return self._select(t, t.c.tenant_id == tenant_id, t.c.agent_id == agent_id, order=(t.c.id,))

    # -- writes -----------------------------------------------------------------------------------------

    def taken(self, table: str, ids: Collection[Any]) -> list[Any]:
        """Of ``ids``, those a row of ``table`` already has, sorted."""
        t = TABLES[table]
        found: set[Any] = set()
        wanted = sorted(ids)
        for start in range(0, len(wanted), 500):  # bounded IN lists
            chunk = wanted[start : start + 500]
            found.update(self.session.scalars(select(t.c.id).where(t.c.id.in_(chunk))))
        return sorted(found)

    def insert(self, table: str, rows: Sequence[dict[str, Any]]) -> list[Any]:
        """Insert rows (all with the same keys) and return their ids in order: the given ones, or, for
        rows without ``id``, the ones the database assigned. A row that clashes with one already stored
        raises ``InvalidSetting``."""
        if not rows:
            return []
        t = TABLES[table]
        if table in _SERIAL_TABLES and "id" in rows[0]:
            self._move_sequence(table, max(int(r["id"]) for r in rows))
        statement = insert(t).returning(t.c.id, sort_by_parameter_order=True)
        try:
            return list(self.session.scalars(statement, [_in(t, r) for r in rows]))
        except IntegrityError as exc:
            raise InvalidSetting(
                f"the import clashes with rows already in the database: {_detail(exc)}"
            ) from exc
        except DataError as exc:  # PostgreSQL: a number or a string too large for its column
            raise ImportFormatError(f"a {table} row does not fit its table: {_detail(exc)}") from exc

    def update(self, table: str, rows: Sequence[dict[str, Any]]) -> None:
        """Set columns of rows by id (each dict: ``id`` and the same other keys)."""
        if not rows:
            return
        t = TABLES[table]
        columns = [k for k in rows[0] if k != "id"]
        # Parameters named apart from the columns: SQLAlchemy reserves a column's own name in SET.
        values = {c: bindparam(f"v_{c}", type_=t.c[c].type) for c in columns}
        statement = update(t).where(t.c.id == bindparam("v_id")).values(values)
        self.session.execute(statement, [{f"v_{k}": v for k, v in r.items()} for r in rows])

    def index_messages(self, conversation_id: str, rows: Sequence[tuple[int, str]]) -> None:
        """Add (message id, plain text) pairs to the archive search index, as an append does."""
        index_messages(self.session, conversation_id, rows)

    def _move_sequence(self, table: str, top: int) -> None:
        """On PostgreSQL, make the id sequence hand out ids above ``top`` from now on (never lower it).

        Done before the insert: ``setval`` is not transactional, so concurrent appends stop being
        given ids in the imported range at once (SQLite takes max(id) + 1 by itself)."""
        if is_sqlite(self.session):
            return
        self.session.execute(
            text(
                "SELECT setval(CAST(s.name AS regclass), CAST(:top AS bigint)) "
                "FROM (SELECT pg_get_serial_sequence(:table, 'id') AS name) s "
                "WHERE CAST(:top AS bigint) > COALESCE(pg_sequence_last_value(CAST(s.name AS regclass)), 0)"
            ),
            {"table": table, "top": top},
        )


def _detail(exc: DBAPIError) -> str:
    """The driver's first line, short: what an error message can quote."""
    return (str(exc.orig).strip().splitlines() or [type(exc.orig).__name__])[0][:200]


class SqlExportStore:
    """Transactions over whole rows on one engine: ``reader()`` for an export, ``writer()`` for an
    import (``services.export_document.ExportStore``)."""

    def __init__(self, engine: Engine) -> None:
        self._writes: sessionmaker[Session] = make_session_factory(engine)
        self._reads: sessionmaker[Session] = make_session_factory(engine, readonly=True)

    def reader(self) -> SqlExportRows:
        """A read transaction (one snapshot; on SQLite it never waits for the write lock)."""
        return SqlExportRows(self._reads)

    def writer(self) -> SqlExportRows:
        """A write transaction."""
        return SqlExportRows(self._writes)
