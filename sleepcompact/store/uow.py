"""The SQL unit of work: one session, one transaction, rolled back unless committed.

It hands out one repository per aggregate, all bound to the same session, so a service that touches
conversations and compactions in one ``with uow:`` block writes them in one transaction.
"""

from __future__ import annotations

from types import TracebackType

from sqlalchemy.orm import Session, sessionmaker

from sleepcompact.store.agent_memory import SqlAgentMemory
from sleepcompact.store.calibration import SqlCalibration
from sleepcompact.store.compactions import SqlCompactions
from sleepcompact.store.conversations import SqlConversations
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
        try:
            # Rollback by default: anything not explicitly committed never happened.
            self._session.rollback()
        finally:
            self._session.close()
            self._session = None

    def commit(self) -> None:
        """Commit the transaction."""
        assert self._session is not None, "commit() outside a with block"
        self._session.commit()

    def rollback(self) -> None:
        """Roll the transaction back."""
        assert self._session is not None, "rollback() outside a with block"
        self._session.rollback()
