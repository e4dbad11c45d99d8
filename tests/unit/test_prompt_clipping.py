"""A summarization prompt over its input limit keeps every message it can whole and clips only the
largest ones, middle-out, to the largest common cap that fits; each clip says how much it took. When
even the smallest cap does not fit, a middle run of messages is left out and said to be left out."""

from __future__ import annotations

import re

import pytest

from sleepcompact.domain.prompt import SummaryInput, build_prompt
from sleepcompact.domain.records import MessageRecord
from tests.support.rows import record

# Counted in characters, so the sizes below are exact: "[seq 1] user: " + 1,490 is 1,504 characters and
# "[seq 2] tool result (bash): " + 9,000 is 9,028.
_SMALL = record(1, "user", "message", "a" * 1490)
_BIG = record(2, "tool", "tool_result", "b" * 9000, tool_name="bash", tool_call_id="c1")


def _transcript(rows: tuple[MessageRecord, ...], max_input_tokens: int) -> list[str]:
    prompt = build_prompt(SummaryInput(rows, None, 500), count=len, max_input_tokens=max_input_tokens)
    body = prompt.user.split("messages=")[1].split("\n", 1)[1]
    return body.split("\n</transcript>")[0].split("\n")


def _clipped(lines: list[str]) -> list[int]:
    return [int(m.group(1)) for line in lines if (m := re.search(r"about (\d+) tokens clipped", line))]


@pytest.mark.parametrize("budget", range(3009, 3019))
def test_the_large_message_is_clipped_to_the_largest_cap_that_fits(budget: int) -> None:
    # The transcript's budget is the input limit less 1,000 for the framing; the small message takes
    # 1,504 of it whole (the cap is above its size), so the large one is cut to what is left, exactly.
    lines = _transcript((_SMALL, _BIG), budget + 1000)
    assert lines[0] == f"[seq 1] user: {'a' * 1490}"
    assert _clipped(lines) == [9028 - (budget - 1504)]


def test_a_message_exactly_at_the_cap_stays_whole() -> None:
    # A budget of twice the small message puts the cap exactly at its size: it is within the cap.
    lines = _transcript((_SMALL, _BIG), 2 * 1504 + 1000)
    assert lines[0] == f"[seq 1] user: {'a' * 1490}"
    assert _clipped(lines) == [9028 - 1504]


@pytest.mark.parametrize(("max_input_tokens", "first", "last"), [(2000, 3, 3), (2047, 3, 4)])
def test_too_many_messages_for_the_smallest_cap_leave_a_middle_run_out(
    max_input_tokens: int, first: int, last: int
) -> None:
    rows = tuple(record(seq, "user", "message", "x" * 186) for seq in range(10, 30))  # 201 characters each
    lines = _transcript(rows, max_input_tokens)
    # Even at the smallest cap, 32 tokens a message, twenty clipped messages overrun the budget after
    # eight rounds of aiming lower (1,000 becomes 429, 1,047 becomes 448). What is left keeps a message
    # per 64 tokens of it, 6 or 7, clipped to 32, the older half either side of a note.
    assert _clipped(lines) == [201 - 32] * (first + last)
    kept = [*range(10, 10 + first), *range(30 - last, 30)]
    assert [line for line in lines if line.startswith("[seq ")] == [f"[seq {seq}] user:" for seq in kept]
    left_out = 20 - first - last
    note = f"[... {left_out} messages left out of the middle here; the originals are archived ...]"
    assert lines[3 * first] == note


def test_a_clip_that_fills_the_budget_exactly_is_kept() -> None:
    # Ten tokens a character: one 2,000-character message is 20,000 tokens; clipped to the budget of
    # 8,310, its head, tail and note come to exactly 8,310, which fits, so it is not cut again.
    rows = (record(1, "user", "message", "b" * 1986),)
    prompt = build_prompt(SummaryInput(rows, None, 500), count=lambda t: 10 * len(t), max_input_tokens=9310)
    body = prompt.user.split("messages=")[1].split("\n", 1)[1].split("\n</transcript>")[0]
    assert 10 * len(body) == 8310
    assert _clipped(body.split("\n")) == [20_000 - 8310]


def test_six_messages_that_fit_no_cap_all_stay() -> None:
    # Six messages overrun the budget in every round (each clipping note costs more than the cut saves),
    # but six is as many as the last round's budget keeps: all stay, clipped, none said to be left out.
    rows = tuple(record(seq, "user", "message", "x" * 186) for seq in range(10, 16))
    lines = _transcript(rows, 2000)
    assert [line.split("]")[0] for line in lines if line.startswith("[seq ")] == [
        f"[seq {s}" for s in range(10, 16)
    ]
    assert len(_clipped(lines)) == 6
    assert not any("left out" in line for line in lines)
