"""The journal's numbers, exactly: how important an entry is and how far its source is trusted.

Consolidation promotes an entry only at importance 5 or more, and a memory inherits its sources'
trust; these cases pin the arithmetic (DESIGN section 5) so a changed bonus, clamp or ceiling shows as
a different number, not as a different memory three modules later.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from sleepcompact.domain.journal import (
    JournalEntryRecord,
    MemoryRecord,
    NewJournalEntry,
    heuristic_importance,
)


@pytest.mark.parametrize(
    ("source", "tags", "expected"),
    [
        ("direct", (), 7),  # 5 + 2 for what the user said
        ("observation", (), 6),
        ("inference", (), 5),
        ("environmental", (), 4),
        ("unknown source", (), 5),  # no bonus, no penalty
        ("inference", ("decision",), 7),
        ("inference", ("error",), 6),
        ("inference", ("question",), 5),
        ("inference", ("remark",), 4),
        ("inference", ("no such tag",), 5),
        ("inference", ("remark", "decision"), 7),  # the strongest kind counts, not the sum
        ("inference", ("fact", "error"), 6),
        ("inference", ("named",), 6),
        ("inference", ("named", "dated"), 7),
        ("inference", ("named", "dated", "numeric"), 7),  # details add two at most
        ("direct", ("decision", "named", "dated", "numeric"), 10),  # 5 + 2 + 2 + 2 = 11, clamped
        ("environmental", ("remark",), 3),
        ("direct", ("decision", "asked"), 3),  # a ceiling wins over every bonus
        ("direct", ("decision", "hedged", "chat"), 2),  # the lowest ceiling among the tags
        ("environmental", ("remark", "chat"), 2),
        ("inference", ("remark", "vague"), 4),
    ],
)
def test_heuristic_importance_is_the_documented_sum(
    source: str, tags: tuple[str, ...], expected: int
) -> None:
    assert heuristic_importance(source, tags) == expected


def test_heuristic_importance_never_goes_under_one() -> None:
    # Nothing in the tables goes that low today; the clamp is what keeps a future penalty in range.
    assert heuristic_importance("environmental", ("remark",)) >= 1
    assert heuristic_importance("environmental", iter(["remark", "vague"])) == 3  # any iterable, read once


def entry(source: str, tags: tuple[str, ...] = ()) -> NewJournalEntry:
    return NewJournalEntry("t", "a", None, "text", source, "agent", tags)


def test_a_new_entry_knows_its_trust_and_importance() -> None:
    assert [entry(s).source_trust for s in ("direct", "observation", "inference", "environmental")] == [
        0.9,
        0.8,
        0.6,
        0.3,
    ]
    assert entry("something else").source_trust == 0.5
    assert entry("direct", ("decision", "named")).importance == 10
    assert entry("environmental", ("asked",)).importance == 3


NOW = datetime(2026, 12, 3, 12, 0, tzinfo=UTC)


def memory(corrects: int | None) -> MemoryRecord:
    return MemoryRecord(
        7, "t", "a", "fact", "x", 0.8, 6, 0.9, (1, 2), None, None, NOW, NOW, corrects=corrects
    )


def test_only_a_users_correction_is_pinned() -> None:
    assert memory(corrects=3).pinned is True
    assert memory(corrects=None).pinned is False


def test_records_print_as_json_ready_dicts() -> None:
    record = JournalEntryRecord(
        5, "t", "a", None, "text", "direct", 0.9, 7, "heuristic", ("fact",), "agent", "pending", None, NOW
    )
    assert record.to_dict() == {
        "id": 5,
        "tenant_id": "t",
        "agent_id": "a",
        "conversation_id": None,
        "content": "text",
        "source_type": "direct",
        "source_trust": 0.9,
        "importance": 7,
        "importance_method": "heuristic",
        "tags": ["fact"],
        "origin": "agent",
        "status": "pending",
        "memory_id": None,
        "created_at": "2026-12-03T12:00:00+00:00",
        "provenance": None,
    }
    printed = memory(corrects=3).to_dict()
    assert printed["source_journal_ids"] == [1, 2]
    assert printed["corrects"] == 3
    assert printed["created_at"] == "2026-12-03T12:00:00+00:00"
    assert printed["flags"] == []
