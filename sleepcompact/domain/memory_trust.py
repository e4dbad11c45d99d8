"""How much a memory's sources are trusted, derived from a consolidation plan.

Kept beside ``consolidation`` rather than in it: the plan already says which
entries each new memory and each merge came from, so trust follows from it
without touching the merge and contradiction rules.

The rule (``corroborate``), taking a memory's sources in journal order:

- a memory starts at its first source's trust;
- a memory at or above the recall floor (``TRUST_FLOOR``, 0.5) rises to the best source that
  repeats it: a fact the user stated (0.9) stays trusted when a web page repeats it (0.3);
- a memory under the floor (only environmental text said it: a tool's output, a fetched page,
  0.3) is corroborated only by a direct source (``CORROBORATION_TRUST``, 0.9: the user, or a user's
  correction). The assistant repeating it (0.6), or an application's observation (0.8), is no
  corroboration: an assistant that read a planted instruction repeats it readily.

Trust therefore never falls. A contradiction record is as trustworthy as the
claim that caused it, not as the claim it replaced.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from sleepcompact.domain.consolidation import Merge, NewMemory
from sleepcompact.domain.journal import SOURCE_TRUST
from sleepcompact.domain.recall import TRUST_FLOOR

CORROBORATION_TRUST = SOURCE_TRUST["direct"]
"""Least trust a source needs to lift a memory only environmental sources said over the recall floor."""


def corroborate(current: float, source: float) -> float:
    """A memory's trust after one more source of trust ``source`` repeated it (see the module)."""
    if current >= TRUST_FLOOR or source >= CORROBORATION_TRUST or source < TRUST_FLOOR:
        return max(current, source)
    return current


def _fold(first: float, rest: Iterable[float]) -> float:
    trust = first
    for source in rest:
        trust = corroborate(trust, source)
    return trust


def new_memory_trust(memory: NewMemory, trust_of: Mapping[int, float]) -> float:
    """The source trust of a memory the plan creates; ``trust_of`` maps entry id to its trust.

    A contradiction record's last source is always the superseding entry (the
    plan appends it after the sources it carried over), so that one decides.
    """
    if memory.kind == "contradiction":
        return trust_of[memory.source_journal_ids[-1]]
    first, *rest = sorted(memory.source_journal_ids)
    return _fold(trust_of[first], (trust_of[e] for e in rest))


def merged_trust(old: float, merge: Merge, trust_of: Mapping[int, float]) -> float:
    """The source trust of an existing memory after a merge: never lower than it was."""
    return _fold(old, (trust_of[e] for e in sorted(merge.entry_ids)))
