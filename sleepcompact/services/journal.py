"""The journal: what the agent noted, scored on arrival, consolidated into memory during sleep."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from sleepcompact.domain.errors import (
    ConversationNotFound,
    EmptyContent,
    InvalidScores,
    InvalidSetting,
    PermanentLLMError,
)
from sleepcompact.domain.journal import KNOWN_TAGS, ORIGINS, SOURCE_TRUST, JournalEntryRecord, NewJournalEntry
from sleepcompact.domain.messages import without_nul
from sleepcompact.domain.provenance import PROVENANCES, capped_source_type
from sleepcompact.logs import get_logger
from sleepcompact.ports import Dependencies, Rescorer
from sleepcompact.services.clock import utcnow

log = get_logger(__name__)

MAX_ENTRY_CHARS = 10_000

RESCORE_BATCH = 50
"""Entries judged by one LLM call."""

RESCORE_MAX_ENTRIES = 500
"""Most entries one tick rescores (the oldest first): a tick must end well within the task time limit.
The rest keep their heuristic score and are consolidated with it."""


def add_entry(
    deps: Dependencies,
    conversation_id: str,
    content: str,
    *,
    source_type: str = "direct",
    tags: Sequence[str] = (),
    origin: str = "agent",
    provenance: str = "agent",
) -> int:
    """Write one journal entry for the conversation's tenant and agent; returns its id.

    ``provenance`` says where the text came from (``domain.provenance``): text from a ``tool``,
    ``fetched`` content or the ``environment`` is stored ``environmental`` whatever ``source_type``
    says, and text the ``assistant`` wrote at most ``inference``.
    """
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
    if provenance not in PROVENANCES:
        raise InvalidSetting(f"unknown provenance {provenance!r}; expected one of {', '.join(PROVENANCES)}")
    source_type = capped_source_type(provenance, source_type)
    unknown = sorted(set(tags) - KNOWN_TAGS)
    if unknown:
        raise InvalidSetting(f"unknown tags {unknown}; known: {sorted(KNOWN_TAGS)}")
    # The journal becomes memory recalled into other conversations and is sent to rescoring: no
    # secret gets in (placeholders are the conversation's own, as in its summaries).
    text = deps.redactor(conversation_id).redact(text)
    with deps.uow() as uow:
        conv = uow.conversations.get(conversation_id)
        if conv is None:
            raise ConversationNotFound(conversation_id)
        entry = NewJournalEntry(
            conv.tenant_id,
            conv.agent_id,
            conv.id,
            without_nul(text),
            source_type,
            origin,
            tuple(tags),
            provenance,
        )
        now = utcnow()
        (entry_id,) = uow.memories.add_entries([entry], now)
        uow.ticks.touch(conversation_id, now)  # pending entries make the conversation due for sleep
        uow.commit()
    return entry_id


def list_entries(
    deps: Dependencies, conversation_id: str, statuses: Sequence[str] | None = None
) -> list[JournalEntryRecord]:
    """Journal entries of the conversation's agent, oldest first."""
    with deps.read_uow() as uow:
        conv = uow.conversations.get(conversation_id)
        if conv is None:
            raise ConversationNotFound(conversation_id)
        return uow.memories.entries(conv.tenant_id, conv.agent_id, statuses)


@dataclass(frozen=True)
class RescoringReport:
    """What LLM rescoring did to an agent's pending journal entries in one tick."""

    status: str  # rescored, nothing pending, heuristic kept
    entries: int = 0
    rescored: int = 0
    changed: int = 0
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready (``error`` only when there was one)."""
        out = asdict(self)
        if self.error is None:
            del out["error"]
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RescoringReport:
        """The report from its JSON form (a stored tick result)."""
        return cls(**{k: data[k] for k in ("status", "entries", "rescored", "changed", "error") if k in data})


def rescore_pending(
    deps: Dependencies,
    rescorer: Rescorer,
    tenant_id: str,
    agent_id: str,
    *,
    batch_size: int = RESCORE_BATCH,
    max_entries: int = RESCORE_MAX_ENTRIES,
) -> RescoringReport:
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
    with deps.read_uow() as uow:
        entries = uow.memories.entries(tenant_id, agent_id, ("pending",))
    todo = [e for e in entries if e.importance_method == "heuristic"][:max_entries]
    rescored = changed = 0
    for start in range(0, len(todo), batch_size):
        batch = todo[start : start + batch_size]
        try:
            scores = rescorer.rescore([e.content for e in batch])
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
            return RescoringReport("heuristic kept", len(todo), rescored, changed, type(exc).__name__)
        new = {e.id: max(1, min(10, int(s))) for e, s in zip(batch, scores, strict=True)}
        with deps.uow() as uow:
            applied = uow.memories.rescore_entries(list(new.items()))
            uow.commit()
        before = {e.id: e.importance for e in batch}
        rescored += len(applied)
        changed += sum(1 for i in applied if new[i] != before[i])
    report = RescoringReport("rescored" if todo else "nothing pending", len(todo), rescored, changed)
    if todo:
        log.info("rescored", tenant_id=tenant_id, agent_id=agent_id, **report.to_dict())
    return report
