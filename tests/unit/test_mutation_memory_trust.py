"""Trust at the recall floor, where mutation testing found the suite blind (docs/mutation.md).

A memory exactly at the floor is recalled, so it rises with any source that repeats it; a memory under
the floor is lifted only by a direct source, and a source of exactly floor trust is no corroboration.
"""

from __future__ import annotations

from sleepcompact.domain.consolidation import NewMemory
from sleepcompact.domain.journal import SOURCE_TRUST
from sleepcompact.domain.memory_trust import corroborate, new_memory_trust
from sleepcompact.domain.recall import TRUST_FLOOR


def test_a_memory_at_the_floor_rises_with_the_assistant_repeating_it() -> None:
    assert corroborate(TRUST_FLOOR, SOURCE_TRUST["inference"]) == SOURCE_TRUST["inference"]


def test_a_source_of_exactly_floor_trust_does_not_lift_an_environmental_memory() -> None:
    environmental = SOURCE_TRUST["environmental"]
    assert corroborate(environmental, TRUST_FLOOR) == environmental
    assert corroborate(environmental, SOURCE_TRUST["direct"]) == SOURCE_TRUST["direct"]


def test_a_contradiction_record_is_as_trusted_as_the_claim_that_caused_it() -> None:
    trust_of = {1: SOURCE_TRUST["direct"], 2: SOURCE_TRUST["environmental"]}
    contradiction = NewMemory("contradiction", "the port is 8080, not 80", 0.9, 5, (1, 2))
    assert new_memory_trust(contradiction, trust_of) == SOURCE_TRUST["environmental"]
    fact = NewMemory("fact", "the port is 8080", 0.9, 5, (1, 2))
    assert new_memory_trust(fact, trust_of) == SOURCE_TRUST["direct"]
