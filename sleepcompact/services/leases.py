"""The conversation lease: one paid LLM call per conversation at a time.

A conditional UPDATE takes the lease (owner token + expiry). It is an efficiency measure only: two
holders could at worst both pay for a summary, and the compaction epoch check would still apply just
one of them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from sleepcompact.domain.errors import ConversationBusy, ConversationNotFound
from sleepcompact.services.conversations import utcnow
from sleepcompact.services.ports import UnitOfWork


def acquire(uow_factory: Callable[[], UnitOfWork], conversation_id: str, owner: str, seconds: int) -> None:
    """Take the lease or raise ``ConversationBusy`` (``ConversationNotFound`` for an unknown id)."""
    with uow_factory() as uow:
        if uow.repo.get_conversation(conversation_id) is None:
            raise ConversationNotFound(conversation_id)
        if not uow.repo.acquire_lease(conversation_id, owner, utcnow(), seconds):
            raise ConversationBusy(conversation_id)
        uow.commit()


def release(uow_factory: Callable[[], UnitOfWork], conversation_id: str, owner: str) -> None:
    """Give the lease back (a no-op when another owner took it over after it expired)."""
    with uow_factory() as uow:
        uow.repo.release_lease(conversation_id, owner)
        uow.commit()


@contextmanager
def held(
    uow_factory: Callable[[], UnitOfWork], conversation_id: str, owner: str, seconds: int
) -> Iterator[None]:
    """Hold the lease for the block; released however the block ends (a killed process lets it expire)."""
    acquire(uow_factory, conversation_id, owner, seconds)
    try:
        yield
    finally:
        release(uow_factory, conversation_id, owner)
