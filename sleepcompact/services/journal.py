"""The journal: what the agent noted, scored on arrival, consolidated into memory during sleep."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sleepcompact.domain.errors import ConversationNotFound, EmptyContent, InvalidSetting
from sleepcompact.domain.journal import ORIGINS, SOURCE_TRUST, TAG_BONUS, NewJournalEntry
from sleepcompact.domain.messages import without_nul
from sleepcompact.services.conversations import utcnow
from sleepcompact.services.ports import UnitOfWork

MAX_ENTRY_CHARS = 10_000


def add_entry(
    uow: UnitOfWork,
    conversation_id: str,
    content: str,
    *,
    source_type: str = "direct",
    tags: Sequence[str] = (),
    origin: str = "agent",
) -> int:
    """Write one journal entry for the conversation's tenant and agent; returns its id."""
    text = content.strip()
    if not text:
        raise EmptyContent("a journal entry needs content")
    if len(text) > MAX_ENTRY_CHARS:
        raise InvalidSetting(f"a journal entry holds at most {MAX_ENTRY_CHARS} characters, got {len(text)}")
    if source_type not in SOURCE_TRUST:
        raise InvalidSetting(
            f"unknown source_type {source_type!r}; expected one of {', '.join(SOURCE_TRUST)}"
        )
    if origin not in ORIGINS:
        raise InvalidSetting(f"unknown origin {origin!r}; expected one of {', '.join(ORIGINS)}")
    unknown = sorted(set(tags) - set(TAG_BONUS))
    if unknown:
        raise InvalidSetting(f"unknown tags {unknown}; known: {sorted(TAG_BONUS)}")
    with uow:
        conv = uow.repo.get_conversation(conversation_id)
        if conv is None:
            raise ConversationNotFound(conversation_id)
        entry = NewJournalEntry(
            conv.tenant_id, conv.agent_id, conv.id, without_nul(text), source_type, origin, tuple(tags)
        )
        now = utcnow()
        (entry_id,) = uow.repo.add_journal_entries([entry], now)
        uow.repo.touch(conversation_id, now)  # pending entries make the conversation due for sleep
        uow.commit()
    return entry_id


def list_entries(
    uow: UnitOfWork, conversation_id: str, statuses: Sequence[str] | None = None
) -> list[dict[str, Any]]:
    """Journal entries of the conversation's agent, oldest first."""
    with uow:
        conv = uow.repo.get_conversation(conversation_id)
        if conv is None:
            raise ConversationNotFound(conversation_id)
        return uow.repo.journal_entries(conv.tenant_id, conv.agent_id, statuses)
