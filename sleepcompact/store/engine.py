"""Engines and sessions, built on demand (never at import time).

SQLite gets WAL, foreign keys, a busy timeout, and ``BEGIN IMMEDIATE`` for
every transaction: a reader that later writes would otherwise fail with
``database is locked`` instead of waiting its turn.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.engine import make_url
from sqlalchemy.orm import Session, sessionmaker


def normalize_url(url: str) -> str:
    """Let users write ``postgresql://``; we drive PostgreSQL with psycopg 3."""
    if url.startswith("postgresql://") or url.startswith("postgres://"):
        return "postgresql+psycopg://" + url.split("://", 1)[1]
    return url


def make_engine(url: str, *, busy_timeout_s: float = 30.0, **kwargs: Any) -> Engine:
    """An engine for ``url`` with the pragmas and pool settings this project relies on.

    ``busy_timeout_s``: how long a SQLite writer waits for another's lock before the driver gives up
    (the unit of work then raises ``StoreBusy``)."""
    url = normalize_url(url)
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        database = parsed.database
        if database and database != ":memory:" and not database.startswith("file:"):
            Path(database).expanduser().parent.mkdir(parents=True, exist_ok=True)
        timeout = max(0.0, busy_timeout_s)
        engine = create_engine(url, connect_args={"timeout": timeout, "check_same_thread": False}, **kwargs)
        _sqlite_pragmas(engine, int(timeout * 1000))
        return engine
    # No pre-ping: it is a round trip before every checkout, which doubled the guard's one-statement
    # decision. A connection the server dropped is found when it is used instead: SQLAlchemy invalidates
    # it and every pooled connection older than it, the unit of work raises StoreUnavailable (the
    # worker retries the task), and the guard's read retries once on a fresh connection
    # (``ConversationReader``). Recycling after 30 minutes keeps idle connections from going stale
    # behind a proxy's or the server's idle timeout.
    kwargs.setdefault("pool_pre_ping", False)
    kwargs.setdefault("pool_recycle", 1800)
    return create_engine(url, **kwargs)


def _sqlite_pragmas(engine: Engine, busy_timeout_ms: int) -> None:
    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn: Any, _record: Any) -> None:
        # Take transaction control from the driver so BEGIN IMMEDIATE below is the only BEGIN.
        dbapi_conn.isolation_level = None
        cur = dbapi_conn.cursor()
        cur.execute("PRAGMA journal_mode=WAL")
        cur.execute("PRAGMA foreign_keys=ON")
        cur.execute(f"PRAGMA busy_timeout={busy_timeout_ms:d}")
        cur.execute("PRAGMA synchronous=NORMAL")
        cur.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Any) -> None:
        # Readers (the guard's check, exports) take no write lock: WAL lets them run beside a writer.
        if conn.get_execution_options().get(READONLY_OPTION):
            conn.exec_driver_sql("BEGIN")
        else:
            conn.exec_driver_sql("BEGIN IMMEDIATE")


READONLY_OPTION = "sleepcompact_readonly"


def make_session_factory(engine: Engine, *, readonly: bool = False) -> sessionmaker[Session]:
    """Sessions that keep loaded values after commit; ``readonly`` ones never take SQLite's write lock."""
    if not readonly:
        return sessionmaker(bind=engine, expire_on_commit=False)
    options: dict[str, Any] = {READONLY_OPTION: True}
    if not is_sqlite(engine):
        # One snapshot for every statement of a read (SQLite's deferred BEGIN gives that already): the
        # guard reads the epoch, then the rows appended since its cached rendering, and they must agree.
        options["isolation_level"] = "REPEATABLE READ"
    bind = engine.execution_options(**options)
    return sessionmaker(bind=bind, expire_on_commit=False)


def is_sqlite(engine: Engine) -> bool:
    """Whether the engine talks to SQLite."""
    return engine.dialect.name == "sqlite"
