"""How much a memory's sources are trusted, derived from a consolidation plan.

Kept beside ``consolidation`` rather than in it: the plan already says which
entries each new memory and each merge came from, so trust follows from it
without touching the merge and contradiction rules.

A memory is as trustworthy as its best source: a fact the user stated directly
(0.9) stays trusted when a web page repeats it (0.3), and a claim only a web
page made stays untrusted until a better source confirms it. A contradiction
record is as trustworthy as the claim that caused it, not as the claim it
replaced.
"""

from __future__ import annotations

from collections.abc import Mapping

from sleepcompact.domain.consolidation import Merge, NewMemory


def new_memory_trust(memory: NewMemory, trust_of: Mapping[int, float]) -> float:
    """The source trust of a memory the plan creates; ``trust_of`` maps entry id to its trust.

    A contradiction record's last source is always the superseding entry (the
    plan appends it after the sources it carried over), so that one decides.
    """
    if memory.kind == "contradiction":
        return trust_of[memory.source_journal_ids[-1]]
    return max(trust_of[e] for e in memory.source_journal_ids)


def merged_trust(old: float, merge: Merge, trust_of: Mapping[int, float]) -> float:
    """The source trust of an existing memory after a merge: never lower than it was."""
    return max([old, *(trust_of[e] for e in merge.entry_ids)])
