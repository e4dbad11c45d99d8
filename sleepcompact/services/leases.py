"""The conversation lease: one paid LLM call per conversation at a time.

A conditional UPDATE takes the lease (owner token + expiry). It is an efficiency measure only: two
holders could at worst both pay for a summary, and the compaction epoch check would still apply just
one of them.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from sleepcompact.domain.errors import ConversationBusy, ConversationNotFound
from sleepcompact.ports import Dependencies
from sleepcompact.services.clock import utcnow


def acquire(deps: Dependencies, conversation_id: str, owner: str) -> None:
    """Take the lease (for ``settings.lease_seconds``) or raise ``ConversationBusy``."""
    with deps.uow() as uow:
        if uow.conversations.get(conversation_id) is None:
            raise ConversationNotFound(conversation_id)
        if not uow.ticks.acquire_lease(conversation_id, owner, utcnow(), deps.settings.lease_seconds):
            raise ConversationBusy(conversation_id)
        uow.commit()


def release(deps: Dependencies, conversation_id: str, owner: str) -> None:
    """Give the lease back (a no-op when another owner took it over after it expired)."""
    with deps.uow() as uow:
        uow.ticks.release_lease(conversation_id, owner)
        uow.commit()


@contextmanager
def held(deps: Dependencies, conversation_id: str, owner: str) -> Iterator[None]:
    """Hold the lease for the block; released however the block ends (a killed process lets it expire)."""
    acquire(deps, conversation_id, owner)
    try:
        yield
    finally:
        release(deps, conversation_id, owner)
