"""The SQL unit of work: one session, one transaction, rolled back unless committed.

It hands out one repository per aggregate, all bound to the same session, so a service that touches
conversations and compactions in one ``with uow:`` block writes them in one transaction.

It is also where database failures become typed errors (``store.errors``): a lock held past the busy
timeout or a connection lost mid-transaction leaves the block as ``StoreBusy`` / ``StoreUnavailable``,
after the rollback, so the services never see a driver's exception and nothing half-written stays.
"""

from __future__ import annotations

from types import TracebackType

from sqlalchemy.orm import Session, sessionmaker

from sleepcompact.store.agent_memory import SqlAgentMemory
from sleepcompact.store.calibration import SqlCalibration
from sleepcompact.store.compactions import SqlCompactions
from sleepcompact.store.conversations import SqlConversations
from sleepcompact.store.errors import store_errors, translate
from sleepcompact.store.ticks import SqlTicks


class SqlUnitOfWork:
    """``UnitOfWork`` over a session factory. Use as ``with uow: ...; uow.commit()``."""

    conversations: SqlConversations
    compactions: SqlCompactions
    memories: SqlAgentMemory
    ticks: SqlTicks
    calibration: SqlCalibration

    def __init__(self, session_factory: sessionmaker[Session]) -> None:
        self._factory = session_factory
        self._session: Session | None = None

    def __enter__(self) -> SqlUnitOfWork:
        session = self._session = self._factory()
        self.conversations = SqlConversations(session)
        self.compactions = SqlCompactions(session)
        self.memories = SqlAgentMemory(session)
        self.ticks = SqlTicks(session)
        self.calibration = SqlCalibration(session)
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        assert self._session is not None
        session, self._session = self._session, None
        try:
            # Rollback by default: anything not explicitly committed never happened. On a lost
            # connection the rollback fails too; the server rolls an abandoned transaction back itself.
            with store_errors():
                try:
                    session.rollback()
                finally:
                    session.close()
        except Exception:
            if exc is None:
                raise  # the block succeeded; the failed rollback is the news
        typed = translate(exc) if exc is not None else None
        if typed is not None and typed is not exc:
            raise typed from exc

    def commit(self) -> None:
        """Commit the transaction."""
        assert self._session is not None, "commit() outside a with block"
        with store_errors(committing=True):
            self._session.commit()

    def rollback(self) -> None:
        """Roll the transaction back."""
        assert self._session is not None, "rollback() outside a with block"
        self._session.rollback()
