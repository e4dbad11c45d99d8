"""The guard's decision read: one conversation row by primary key, on a pooled DBAPI connection.

``Memory.check`` runs before every LLM call, so its one read is the request path's fixed cost. Through a
``Session`` that read cost about 0.4 ms on SQLite, nine tenths of it in the ORM and Core machinery
around a statement that SQLite itself answers in microseconds (``bench/guard.py``). This reader compiles
the statement once per engine, runs it on a raw connection from the engine's pool (so pool settings,
``pool_pre_ping`` and the SQLite pragmas still apply) and converts each column with the dialect's own
result processors, so the record is exactly what the repository would map.

A single ``SELECT`` needs no explicit transaction to be consistent: on SQLite (whose connections run
in autocommit, see ``engine.py``) it reads one WAL snapshot and takes no write lock; on PostgreSQL it
runs in autocommit too, one round trip, and the connection goes back to the pool as it came.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import nullcontext, suppress
from types import SimpleNamespace
from typing import Any, cast

from sqlalchemy import Engine, bindparam, select

from sleepcompact.domain.records import ConversationRecord
from sleepcompact.store.errors import store_errors
from sleepcompact.store.mapping import conversation_record
from sleepcompact.store.models import Conversation

_Processor = Callable[[Any], Any] | None


class _Disconnected(Exception):
    """The pooled connection was dead (invalidated already): read again on a fresh one."""


class ConversationReader:
    """``read(conversation_id)``: the conversation's record, or None; one indexed read, no session."""

    def __init__(self, engine: Engine) -> None:
        dialect = engine.dialect
        attrs = list(Conversation.__mapper__.column_attrs)
        columns = [attr.columns[0] for attr in attrs]
        statement = select(*columns).where(Conversation.__table__.c.id == bindparam("conversation_id"))
        compiled = statement.compile(dialect=dialect)
        self._engine = engine
        self._sql = str(compiled)
        self._positional = bool(compiled.positional)
        self._keys = [attr.key for attr in attrs]
        self._types = [col.type.dialect_impl(dialect) for col in columns]
        self._processors: list[_Processor] | None = None  # known after the first execution
        self._autocommit = dialect.name == "postgresql"

    def _result_processors(self, description: Any) -> list[_Processor]:
        """The same conversions a Core result applies (ISO text to datetime and 0/1 to bool on SQLite,
        JSON text to dict, numerics by their PostgreSQL type code), asked of each type's dialect
        implementation with the driver's type code from the cursor, as SQLAlchemy itself does."""
        dialect = self._engine.dialect
        return [t.result_processor(dialect, d[1]) for t, d in zip(self._types, description, strict=True)]

    def read(self, conversation_id: str) -> ConversationRecord | None:
        """The conversation's record by primary key, or None when there is no such conversation.

        A database that cannot be reached raises ``StoreUnavailable`` (``store.errors``)."""
        with store_errors():
            row = self._fetch(conversation_id)
        if row is None or self._processors is None:
            return None
        return self._record(row)

    def _fetch(self, conversation_id: str) -> Any:
        """The raw row (driver values), or None. The pool does not ping before a checkout (``engine.py``):
        a connection the server dropped fails here once, is invalidated with the pool's older ones, and
        the read runs again on a fresh connection."""
        try:
            return self._fetch_once(conversation_id)
        except _Disconnected:
            # The server dropped it (a restart, an idle timeout): the pool's other connections are as
            # old, so the pool is replaced (checked-out ones finish their work and are dropped after).
            self._engine.dispose(close=False)
            return self._fetch_once(conversation_id)

    def _fetch_once(self, conversation_id: str) -> Any:
        params: Any = (conversation_id,) if self._positional else {"conversation_id": conversation_id}
        connection = self._engine.raw_connection()
        driver: Any = connection.driver_connection
        try:
            if self._autocommit:
                # psycopg would wrap the SELECT in BEGIN ... ROLLBACK: two more round trips for nothing.
                driver.autocommit = True
            cursor = connection.cursor()
            try:
                try:
                    cursor.execute(self._sql, params)
                    row = cursor.fetchone()
                except self._engine.dialect.loaded_dbapi.Error as exc:
                    if not self._engine.dialect.is_disconnect(exc, driver, cursor):
                        raise
                    connection.invalidate(exc)
                    raise _Disconnected from exc
                if self._processors is None:
                    self._processors = self._result_processors(cursor.description)
            finally:
                with suppress(Exception) if not connection.is_valid else nullcontext():
                    cursor.close()
        finally:
            try:
                if self._autocommit and connection.is_valid:
                    driver.autocommit = False  # as every session on this pool expects it
            finally:
                connection.close()  # back to the pool, which rolls back whatever the driver began
        return row

    def _record(self, row: Any) -> ConversationRecord:
        """The row converted as the ORM would."""
        assert self._processors is not None
        values = {
            key: (process(value) if process is not None and value is not None else value)
            for key, process, value in zip(self._keys, self._processors, row, strict=True)
        }
        return conversation_record(cast(Conversation, SimpleNamespace(**values)))
