"""The SQL unit of work: one session, one transaction, rolled back unless committed."""

from __future__ import annotations

from types import TracebackType

from sqlalchemy.orm import Session, sessionmaker

from sleepcompact.store.repository import SqlRepository


class SqlUnitOfWork:
    """``UnitOfWork`` over a session factory. Use as ``with uow: ...; uow.commit()``."""

    repo: SqlRepository

    def __init__(self, session_factory: sessionmaker[Session]) -> None:
        self._factory = session_factory
        self._session: Session | None = None

    def __enter__(self) -> SqlUnitOfWork:
        self._session = self._factory()
        self.repo = SqlRepository(self._session)
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
