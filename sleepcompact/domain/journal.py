"""Journal entries: source trust and heuristic importance (DESIGN section 5)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sleepcompact.domain.json_shapes import json_ready

SOURCE_TRUST: dict[str, float] = {"direct": 0.9, "observation": 0.8, "inference": 0.6, "environmental": 0.3}
SOURCE_BONUS: dict[str, int] = {"direct": 2, "observation": 1, "inference": 0, "environmental": -1}
TAG_BONUS: dict[str, int] = {
    "decision": 2,
    "preference": 2,
    "deadline": 2,
    "event": 2,
    "plan": 2,
    "recommendation": 2,
    "error": 1,
    "identifier": 1,
    "fact": 1,
    "question": 0,
    "summary": 1,
    "remark": -1,
    "flagged": 2,  # instructions aimed at the model: kept for audit as a ``flagged`` memory, never a fact
}
"""What an entry is: the strongest of its kinds adds this much."""

DETAIL_BONUS: dict[str, int] = {"named": 1, "dated": 1, "numeric": 1}
"""What makes it concrete: each adds one, two at most."""

MAX_DETAIL_BONUS = 2

TAG_CEILING: dict[str, int] = {"chat": 2, "asked": 3, "hedged": 4, "hypothetical": 4, "vague": 4}
"""What keeps it out of memory whatever else it is: acknowledgements, greetings and pleasantries,
questions, hedged or hypothetical statements and statements with no content of their own score at most
this (under the consolidation floor of 5)."""

KNOWN_TAGS = frozenset(TAG_BONUS) | frozenset(DETAIL_BONUS) | frozenset(TAG_CEILING)
ORIGINS = ("agent", "pre_compaction", "context_synthesis", "manual")
DELETED_BY_USER = "deleted by user"
CORRECTED_BY_USER = "corrected by user"
USER_REASONS = (DELETED_BY_USER, CORRECTED_BY_USER)
"""Why a user invalidated a memory; a memory invalidated so is retracted: never learned again."""


def heuristic_importance(source_type: str, tags: Iterable[str]) -> int:
    """Start at 5, add the source's bonus, the strongest kind's bonus and the details' (two at most),
    clamp to 1..10, then to the lowest ceiling among the tags (see ``TAG_CEILING``)."""
    tags = tuple(tags)
    bonus = max((TAG_BONUS[t] for t in tags if t in TAG_BONUS), default=0)
    details = min(MAX_DETAIL_BONUS, sum(DETAIL_BONUS.get(t, 0) for t in tags))
    score = max(1, min(10, 5 + SOURCE_BONUS.get(source_type, 0) + bonus + details))
    return min([score, *(TAG_CEILING[t] for t in tags if t in TAG_CEILING)])


@dataclass(frozen=True)
class NewJournalEntry:
    """A journal entry about to be written."""

    tenant_id: str
    agent_id: str
    conversation_id: str | None
    content: str
    source_type: str
    origin: str
    tags: tuple[str, ...] = field(default_factory=tuple)
    provenance: str | None = None  # user, assistant, tool, fetched, environment, agent (domain.provenance)

    @property
    def source_trust(self) -> float:
        """Trust of the entry's source."""
        return SOURCE_TRUST.get(self.source_type, 0.5)

    @property
    def importance(self) -> int:
        """Heuristic importance, 1..10."""
        return heuristic_importance(self.source_type, self.tags)


@dataclass(frozen=True)
class JournalEntryRecord:
    """A stored journal entry: what the agent (or a compaction) noted, and where it went."""

    id: int
    tenant_id: str
    agent_id: str
    conversation_id: str | None
    content: str
    source_type: str
    source_trust: float
    importance: int
    importance_method: str  # heuristic, llm, manual
    tags: tuple[str, ...]
    origin: str
    status: str  # pending, scored, consolidated, pruned
    memory_id: int | None
    created_at: datetime
    provenance: str | None = None  # where the text came from (domain.provenance); None: written before 0009

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready (what ``sleepcompact journal list --json`` prints)."""
        return dict(json_ready(self))


@dataclass(frozen=True)
class MemoryDraft:
    """A memory to insert. ``source_trust``: its sources' trust (``domain.memory_trust``); ``corrects``:
    the memory a user's correction replaces; ``flags``: why a ``flagged`` memory was flagged."""

    kind: str
    content: str
    confidence: float
    importance: int
    source_journal_ids: tuple[int, ...]
    source_trust: float
    corrects: int | None = None
    flags: tuple[str, ...] = ()


@dataclass(frozen=True)
class Reinforcement:
    """What a merge leaves of an existing memory: its new confidence and importance, every source entry
    (the old ones and the merged ones) and its source trust (never lower than it was)."""

    memory_id: int
    confidence: float
    importance: int
    source_journal_ids: tuple[int, ...]
    source_trust: float


@dataclass(frozen=True)
class MemoryRecord:
    """A long-term memory of one agent. Invalidated memories are kept, with what superseded them and, when
    a user corrected or deleted one, why."""

    id: int
    tenant_id: str
    agent_id: str
    kind: str  # fact, preference, insight, knowledge_gap, contradiction, flagged (never recalled)
    content: str
    confidence: float
    importance: int
    source_trust: float
    source_journal_ids: tuple[int, ...]
    superseded_by: int | None
    invalidated_at: datetime | None
    created_at: datetime
    updated_at: datetime
    invalidation_reason: str | None = None  # "deleted by user", "corrected by user"; None when superseded
    corrects: int | None = None  # the memory this user correction replaced
    flags: tuple[str, ...] = ()  # a ``flagged`` memory: why its text looks like instructions to the model

    @property
    def pinned(self) -> bool:
        """A user's correction: automatic consolidation never supersedes it."""
        return self.corrects is not None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready (what ``sleepcompact memories list --json`` prints)."""
        return dict(json_ready(self))
