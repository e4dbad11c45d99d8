"""The journal: what the agent noted, scored on arrival, consolidated into memory during sleep."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import structlog

from sleepcompact.domain.errors import (
    ConversationNotFound,
    EmptyContent,
    InvalidScores,
    InvalidSetting,
    PermanentLLMError,
)
from sleepcompact.domain.journal import ORIGINS, SOURCE_TRUST, TAG_BONUS, NewJournalEntry
from sleepcompact.domain.messages import without_nul
from sleepcompact.services.conversations import utcnow
from sleepcompact.services.ports import Rescorer, UnitOfWork

log = structlog.get_logger(__name__)

MAX_ENTRY_CHARS = 10_000

RESCORE_BATCH = 50
"""Entries judged by one LLM call."""

RESCORE_MAX_ENTRIES = 500
"""Most entries one tick rescores (the oldest first): a tick must end well within the task time limit.
The rest keep their heuristic score and are consolidated with it."""


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


def rescore_pending(
    uow_factory: Callable[[], UnitOfWork],
    rescorer: Rescorer,
    tenant_id: str,
    agent_id: str,
    *,
    batch_size: int = RESCORE_BATCH,
    max_entries: int = RESCORE_MAX_ENTRIES,
) -> dict[str, Any]:
    """Replace the heuristic importance of the agent's pending entries by the rescorer's; returns counts.

    The LLM is called outside any transaction (it takes seconds); each batch's scores are then written
    in one short transaction, only to entries that are still pending with a heuristic score, so a tick
    racing this one never has a score applied twice or applied to an entry it already consolidated.
    Only ``importance``, ``importance_method`` and ``status`` change. When the reply is unusable or the
    call fails for good, the remaining entries keep their heuristic scores (``status`` says so) and the
    tick goes on; a ``TransientLLMError`` propagates so the task is retried, and the batches already
    written are not sent again.
    """
    if batch_size < 1:
        raise InvalidSetting(f"batch_size must be at least 1, got {batch_size}")
    with uow_factory() as uow:
        entries = uow.repo.journal_entries(tenant_id, agent_id, ("pending",))
    todo = [e for e in entries if e["importance_method"] == "heuristic"][:max_entries]
    report: dict[str, Any] = {
        "status": "rescored" if todo else "nothing pending",
        "entries": len(todo),
        "rescored": 0,
        "changed": 0,
    }
    for start in range(0, len(todo), batch_size):
        batch = todo[start : start + batch_size]
        try:
            scores = rescorer.rescore([e["content"] for e in batch])
            if len(scores) != len(batch):  # a Rescorer without the domain parser's length check
                raise InvalidScores(f"expected {len(batch)} scores, got {len(scores)}")
        except (InvalidScores, PermanentLLMError) as exc:
            # The reason names the error kind and, for API errors, the status; never the entries' text.
            log.warning(
                "rescoring_failed",
                tenant_id=tenant_id,
                agent_id=agent_id,
                entries=len(batch),
                error=type(exc).__name__,
                reason=str(exc)[:200],
            )
            return {**report, "status": "heuristic kept", "error": type(exc).__name__}
        new = {e["id"]: max(1, min(10, int(s))) for e, s in zip(batch, scores, strict=True)}
        with uow_factory() as uow:
            applied = uow.repo.rescore_entries(list(new.items()))
            uow.commit()
        before = {e["id"]: e["importance"] for e in batch}
        report["rescored"] += len(applied)
        report["changed"] += sum(1 for i in applied if new[i] != before[i])
    if todo:
        log.info("rescored", tenant_id=tenant_id, agent_id=agent_id, **report)
    return report
