"""Database failures as typed errors, translated once, where the store meets its callers.

The unit of work (``uow.py``), the guard's raw read (``conversation_reader.py``) and startup
(``bootstrap``) wrap their database calls in :func:`store_errors`; nothing else catches driver errors.
A failure of the connection or the lock becomes ``StoreBusy`` or ``StoreUnavailable`` with one line
that names the cause; a programming error (a constraint, bad SQL) stays what it is, since retrying
would not help. The message never carries SQLAlchemy's text, which quotes the statement's parameters
(message content, possibly secrets): only the first line of the driver's own message.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy.exc import DBAPIError, InterfaceError, OperationalError

from sleepcompact.domain.errors import StoreBusy, StoreUnavailable

# SQLite reports a writer's lock held past the busy timeout as "database is locked" (or "busy").
_SQLITE_BUSY = ("database is locked", "database table is locked", "database is busy")
# PostgreSQL: class 40 (serialization failure, deadlock) and lock_not_available ask for a retry.
_PG_BUSY_PREFIXES = ("40", "55P03")
_DETAIL_CHARS = 200


def translate(exc: BaseException, *, committing: bool = False) -> StoreUnavailable | None:
    """The typed error for a database failure, or None when ``exc`` is not one (let it through)."""
    if isinstance(exc, StoreUnavailable):
        return exc
    orig: BaseException = exc.orig if isinstance(exc, DBAPIError) and exc.orig is not None else exc
    connection_lost = isinstance(exc, DBAPIError) and exc.connection_invalidated
    if not (isinstance(exc, OperationalError | InterfaceError) or connection_lost or _driver_error(orig)):
        return None
    detail = (str(orig).strip().splitlines() or [type(orig).__name__])[0][:_DETAIL_CHARS]
    sqlstate = str(getattr(orig, "sqlstate", None) or getattr(orig, "pgcode", None) or "")
    if any(m in detail.lower() for m in _SQLITE_BUSY) or sqlstate.startswith(_PG_BUSY_PREFIXES):
        return StoreBusy(f"the database is busy (another writer holds it): {detail}; nothing was written")
    if committing:
        # The COMMIT itself may have reached the server before the connection dropped.
        return StoreUnavailable(f"the database connection failed while committing: {detail}")
    return StoreUnavailable(f"the database is unavailable: {detail}; nothing was written")


def _driver_error(exc: BaseException) -> bool:
    """A raw DBAPI operational or interface error (the guard's read runs on a raw connection)."""
    names = {cls.__name__ for cls in type(exc).__mro__}
    return bool(names & {"OperationalError", "InterfaceError"}) and type(exc).__module__.startswith(
        ("sqlite3", "psycopg")
    )


@contextmanager
def store_errors(*, committing: bool = False) -> Iterator[None]:
    """Run the block; a database failure in it leaves as ``StoreBusy`` or ``StoreUnavailable``."""
    try:
        yield
    except Exception as exc:
        typed = translate(exc, committing=committing)
        if typed is None or typed is exc:
            raise
        raise typed from exc
