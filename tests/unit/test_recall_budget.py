"""Recall within a token budget (``domain.recall.recall``): exactly which memories are recalled, in which
order, at each budget around the frame and the lines; what a recalled memory carries; knowledge gaps with
no relevance left out without hiding the memories after them; and the whole block never over budget even
when counting the parts underestimates it.

``test_recall.py`` checks ranking and exclusion; this file pins the budget arithmetic to the token.
"""

from __future__ import annotations

import pytest

from sleepcompact.domain.recall import (
    CLOSE_TAG,
    HEADER,
    OPEN_TAG,
    Candidate,
    Recalled,
    memory_block,
    memory_line,
    recall,
    relevance,
    terms,
    weight,
)


def words(text: str) -> int:
    """One token per whitespace-separated word: the frame and every line add up exactly."""
    return len(text.split())


def quarter_chars_down(text: str) -> int:
    """A characters / 4 estimate rounded down: the whole block can count more than its parts."""
    return len(text) // 4


def memory_lines(text: str) -> int:
    """A budget counted in memories: the frame is free and every memory line costs one."""
    return sum(line.startswith("- (") for line in text.split("\n"))


FRAME = words("\n".join([HEADER, OPEN_TAG, CLOSE_TAG]))

# Nothing in common with the (empty) recent text: ranked by weight alone, A before B before C.
A = Candidate(1, "fact", "billing runs nightly", 0.9, 9, 0.9)  # 5 words as a line
B = Candidate(2, "fact", "the staging cluster lives in eu-west-1 since March", 0.9, 8, 0.9)  # 10 words
C = Candidate(3, "fact", "tabs not spaces", 0.9, 7, 0.9)  # 5 words


def ids(budget: int) -> list[int]:
    return [r.id for r in recall([C, B, A], "", budget, words)]


def test_the_example_lines_cost_what_the_budget_table_assumes() -> None:
    assert FRAME == 22
    assert [words(memory_line(c) + "\n") for c in (A, B, C)] == [5, 10, 5]
    assert ids(1000) == [1, 2, 3]


@pytest.mark.parametrize(
    ("room", "expected"),
    [
        (-FRAME, []),  # a budget of 0
        (1 - FRAME, []),  # a budget of 1
        (-1, []),  # one token under the frame
        (0, []),  # exactly the frame: no line fits
        (4, []),  # one token under the best line
        (5, [1]),  # exactly the best line
        (9, [1]),  # one under the best and a short one
        (10, [1, 3]),  # the long second memory is skipped, the short third one still fits
        (14, [1, 3]),
        (15, [1, 2]),  # the long one fits now and leaves no room for the third
        (19, [1, 2]),
        (20, [1, 2, 3]),
    ],
)
def test_which_memories_are_recalled_at_each_budget_around_the_frame(room: int, expected: list[int]) -> None:
    assert ids(FRAME + room) == expected


def test_a_line_that_does_not_fit_is_skipped_and_the_room_it_would_take_stays_free() -> None:
    chosen = recall([A, B, C], "", FRAME + 10, words)
    assert [r.id for r in chosen] == [1, 3]
    assert sum(r.tokens for r in chosen) == 10
    assert words(memory_block([r.line for r in chosen])) == FRAME + 10


def test_when_the_frame_is_free_a_budget_of_one_recalls_exactly_the_best_memory() -> None:
    cands = [C, B, A]
    assert recall(cands, "", 0, memory_lines) == []
    assert [r.id for r in recall(cands, "", 1, memory_lines)] == [1]
    assert [r.id for r in recall(cands, "", 2, memory_lines)] == [1, 2]
    assert [r.id for r in recall(cands, "", 3, memory_lines)] == [1, 2, 3]
    assert [r.tokens for r in recall(cands, "", 3, memory_lines)] == [1, 1, 1]


def test_a_budget_of_zero_does_not_even_ask_the_counter() -> None:
    priced: list[str] = []

    def count(text: str) -> int:
        priced.append(text)
        return words(text)

    assert recall([A, B, C], "billing", 0, count) == []
    assert recall([A, B, C], "billing", -3, count) == []
    assert priced == []


def test_once_the_budget_is_exactly_full_no_later_memory_is_priced() -> None:
    priced: list[str] = []

    def count(text: str) -> int:
        priced.append(text)
        return words(text)

    chosen = recall([A, B, C], "", FRAME + 5, count)
    assert [r.id for r in chosen] == [1]
    line = memory_line(A)
    assert priced == ["\n".join([HEADER, OPEN_TAG, CLOSE_TAG]), line + "\n", memory_block([line])]


def test_the_lowest_ranked_line_goes_when_the_whole_block_counts_more_than_its_parts() -> None:
    first = Candidate(1, "fact", "tax is due each April", 0.9, 9, 0.9)
    second = Candidate(2, "fact", "deploys happen on Fridays", 0.9, 8, 0.9)
    lines = [memory_line(first), memory_line(second)]
    frame = quarter_chars_down("\n".join([HEADER, OPEN_TAG, CLOSE_TAG]))
    parts = frame + sum(quarter_chars_down(line + "\n") for line in lines)
    whole = quarter_chars_down(memory_block(lines))
    assert (parts, whole) == (57, 58)  # rounding down each part loses a token the whole block pays

    chosen = recall([second, first], "", parts, quarter_chars_down)
    assert [r.id for r in chosen] == [1]
    assert quarter_chars_down(memory_block([r.line for r in chosen])) <= parts
    assert [r.id for r in recall([second, first], "", whole, quarter_chars_down)] == [1, 2]


def test_a_recalled_memory_carries_its_kind_its_stored_content_its_line_and_its_figures() -> None:
    decision = Candidate(7, "insight", "Dana moved\nto Lisbon", 0.8, 6, 1.0)
    aside = Candidate(9, "preference", "Alice prefers metric units", 0.9, 5, 0.9)
    recent = "Where does Dana live? Lisbon?"
    (rel_decision, rel_aside) = relevance([terms(decision.content), terms(aside.content)], terms(recent))
    assert rel_decision > 0 and rel_aside == 0
    line = "- (decision) Dana moved to Lisbon"
    assert recall([aside, decision], recent, 1000, words) == [
        Recalled(
            7, "insight", "Dana moved\nto Lisbon", line, 6, rel_decision, rel_decision * weight(decision)
        ),
        Recalled(9, "preference", "Alice prefers metric units", memory_line(aside), 6, 0.0, 0.0),
    ]


def test_an_irrelevant_knowledge_gap_is_left_out_without_hiding_the_memories_after_it() -> None:
    gap = Candidate(1, "knowledge_gap", "Which VAT rate applies to Norway is unknown", 0.9, 9, 0.9)
    note = Candidate(2, "fact", "billing runs nightly", 0.9, 5, 0.9)
    later_gap = Candidate(3, "knowledge_gap", "Whether billing retries failed cards is unknown", 0.9, 5, 0.9)
    assert [r.id for r in recall([gap, note], "the build is green", 1000, words)] == [2]
    assert [r.id for r in recall([gap, note, later_gap], "billing retries", 1000, words)] == [3, 2]


def test_equal_memories_tie_on_the_older_id_and_the_budget_takes_the_older_one() -> None:
    old = Candidate(4, "fact", "billing runs nightly", 0.9, 7, 0.9)
    new = Candidate(5, "fact", "billing runs nightly", 0.9, 7, 0.9)
    assert [r.id for r in recall([new, old], "billing", FRAME + 5, words)] == [4]
    assert [r.id for r in recall([new, old], "billing", FRAME + 10, words)] == [4, 5]
