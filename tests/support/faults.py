"""Faults injected into a real ``Memory`` for reliability tests: a crash between two SQL statements, a race.

* :class:`StatementCrasher` - while armed, raises :class:`InjectedCrash` from SQLAlchemy's
  ``before_cursor_execute`` event at the N-th statement sent through an engine, as if the process died
  right there: the statement never reaches the database and the open transaction is never committed.
* :class:`HookedSummarizer` - the offline summarizer, with an optional one-shot hook that runs while it
  "summarizes" (after the compaction's snapshot, before its apply): where another writer can get in.
* :class:`BackendTerminator` - while armed, terminates the PostgreSQL backend behind the connection
  about to send the N-th statement (``pg_terminate_backend`` from another connection, as an operator,
  a failover or a server restart would), then lets the statement go: it meets a dead connection.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any

from sqlalchemy import Engine, event

from sleepcompact.adapters.summarizers import OfflineSummarizer
from sleepcompact.domain.prompt import SummaryInput, SummaryPrompt
from sleepcompact.ports import SummaryResult

__all__ = ["BackendTerminator", "HookedSummarizer", "InjectedCrash", "StatementCrasher"]


class InjectedCrash(Exception):
    """The process "died" before a SQL statement (raised by :class:`StatementCrasher`)."""


class StatementCrasher:
    """Counts the statements an engine sends while armed and raises at the N-th one, once.

    ``arm(n)`` starts counting (the next statement is number 1); the crash disarms it, so whatever the
    code does while unwinding (a rollback, releasing a lease) runs normally. ``fired`` is the statement
    that was refused, ``seen`` how many statements were counted since the last ``arm``.
    """

    def __init__(self, engine: Engine) -> None:
        self._engine = engine
        self._left: int | None = None
        self.fired: str | None = None
        self.seen = 0
        event.listen(engine, "before_cursor_execute", self._before)

    def arm(self, n: int) -> None:
        """Crash at the ``n``-th statement from now (``n`` >= 1)."""
        if n < 1:
            raise ValueError("n counts statements from 1")
        self._left, self.fired, self.seen = n, None, 0

    def disarm(self) -> None:
        """Stop counting (a no-op after the crash fired)."""
        self._left = None

    def remove(self) -> None:
        """Detach from the engine."""
        self.disarm()
        event.remove(self._engine, "before_cursor_execute", self._before)

    def _before(
        self, conn: Any, cursor: Any, statement: str, parameters: Any, context: Any, executemany: bool
    ) -> None:
        if self._left is None:
            return
        self.seen += 1
        self._left -= 1
        if self._left == 0:
            self._left = None
            self.fired = statement
            raise InjectedCrash(f"injected crash before statement {self.seen}: {statement[:80]}")


class HookedSummarizer:
    """The offline summarizer; ``before`` (one-shot) runs inside the next ``summarize`` call first."""

    provider = "offline"
    model = "offline"

    def __init__(self, count: Callable[[str], int]) -> None:
        self._offline = OfflineSummarizer(count)
        self.before: Callable[[], None] | None = None
        self.calls = 0

    def summarize(
        self, request: SummaryInput, prompt: SummaryPrompt, *, deadline: float | None = None
    ) -> SummaryResult:
        """Run the pending hook (if any), then summarize offline."""
        self.calls += 1
        hook, self.before = self.before, None
        if hook is not None:
            hook()
        return self._offline.summarize(request, prompt)


class BackendTerminator:
    """Kills the PostgreSQL backend of the connection about to send the ``n``-th statement, once.

    ``admin`` opens a separate superuser connection (``PostgresServer.connect``). The termination waits
    until the backend is gone, so the statement that follows always meets a closed connection. Nothing
    in the code under test is replaced: its driver sees exactly what a lost server looks like.
    """

    def __init__(self, engine: Engine, admin: Callable[[], AbstractContextManager[Any]]) -> None:
        self._engine = engine
        self._admin = admin
        self._left: int | None = None
        self.fired: str | None = None
        event.listen(engine, "before_cursor_execute", self._before)

    def arm(self, n: int) -> None:
        """Terminate before the ``n``-th statement from now (``n`` >= 1)."""
        if n < 1:
            raise ValueError("n counts statements from 1")
        self._left, self.fired = n, None

    def remove(self) -> None:
        """Detach from the engine."""
        self._left = None
        event.remove(self._engine, "before_cursor_execute", self._before)

    def _before(
        self, conn: Any, cursor: Any, statement: str, parameters: Any, context: Any, executemany: bool
    ) -> None:
        if self._left is None:
            return
        self._left -= 1
        if self._left:
            return
        self._left = None
        self.fired = statement
        pid = conn.connection.dbapi_connection.info.backend_pid
        with self._admin() as admin:
            # The timeout form (PostgreSQL 14+) returns once the backend has exited.
            admin.execute("SELECT pg_terminate_backend(%s, 10000)", (pid,))
