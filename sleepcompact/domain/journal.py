"""Journal entries: source trust and heuristic importance (DESIGN section 5)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

SOURCE_TRUST: dict[str, float] = {"direct": 0.9, "observation": 0.8, "inference": 0.6, "environmental": 0.3}
SOURCE_BONUS: dict[str, int] = {"direct": 2, "observation": 1, "inference": 0, "environmental": -1}
TAG_BONUS: dict[str, int] = {
    "decision": 2,
    "preference": 2,
    "deadline": 2,
    "error": 1,
    "identifier": 1,
    "fact": 1,
    "question": 0,
    "summary": 1,
}
ORIGINS = ("agent", "pre_compaction", "context_synthesis", "manual")


def heuristic_importance(source_type: str, tags: Iterable[str]) -> int:
    """Start at 5, add the source's bonus and the strongest tag bonus, clamp to 1..10."""
    bonus = max((TAG_BONUS.get(t, 0) for t in tags), default=0)
    return max(1, min(10, 5 + SOURCE_BONUS.get(source_type, 0) + bonus))


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

    @property
    def source_trust(self) -> float:
        """Trust of the entry's source."""
        return SOURCE_TRUST.get(self.source_type, 0.5)

    @property
    def importance(self) -> int:
        """Heuristic importance, 1..10."""
        return heuristic_importance(self.source_type, self.tags)
