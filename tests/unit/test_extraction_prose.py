"""Which lines of a message are read as statements: prose is, code and symbol-heavy lines are not.

A memory drafted from a fenced or indented code line ("I deleted the database." inside a code block)
would state as a fact what was only shown; a lead-in ending in ":" says nothing by itself. Each case is
one message; what is remembered is the drafts' text without their date.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

import pytest

from sleepcompact.domain.extraction import extract_facts
from tests.support.rows import rows_of

DAY = datetime(2024, 3, 2, tzinfo=UTC)


def remembered(text: str, role: str = "user") -> list[str]:
    rows = tuple(replace(r, created_at=DAY) for r in rows_of([{"role": role, "content": text}], len))
    return [d.content.removeprefix("[2024-03-02] ") for d in extract_facts(rows, user_name="Emily")]


BOTH = ["Emily moved to Berlin.", "Emily likes tea."]


@pytest.mark.parametrize(
    "text",
    [
        "I moved to Berlin.\n```\nI deleted the database.\n```\nI like tea.",  # a fenced block
        "I moved to Berlin.\n~~~\nI deleted the database.\n~~~\nI like tea.",
        "I moved to Berlin.\n    I deleted the database.\nI like tea.",  # indented code
        "I moved to Berlin.\n\n\nI like tea.",  # blank lines between
    ],
)
def test_code_lines_are_not_statements_and_the_prose_after_them_is(text: str) -> None:
    assert remembered(text) == BOTH


def test_a_line_of_over_8_percent_symbols_is_not_a_statement_and_the_next_line_is() -> None:
    # 5 underscores in 31 characters; half the words are words.
    assert remembered("I moved to a_b_c_d with e_f_g.\nI like tea.") == [
        "Emily likes tea.",
        "Identifiers mentioned by Emily (seq 1): a_b_c_d, e_f_g.",
    ]


def test_a_line_of_exactly_8_percent_symbols_is_a_statement() -> None:
    line = "I moved to Berlin (yay!)."  # 2 symbols in 25 characters
    assert remembered(line) == ["Emily moved to Berlin (yay!)."]


def test_a_line_of_exactly_half_words_is_a_statement() -> None:
    assert remembered("I ran 5 km.") == ["Emily ran 5 km."]  # ran, km; not I, 5


def test_a_line_of_under_half_words_is_not_a_statement() -> None:
    assert remembered("I got 7 8 9 10 11 12 points.\nI like tea.") == ["Emily likes tea."]


def test_a_lead_in_ending_with_a_colon_says_nothing_by_itself() -> None:
    assert remembered("I have three plans:\nI moved to Berlin.") == ["Emily moved to Berlin."]


def test_each_line_is_its_own_sentence() -> None:
    assert remembered("I moved to Berlin\nI like tea") == BOTH


@pytest.mark.parametrize(
    ("role", "said", "memory"),
    [
        ("user", "We went hiking.", "Emily and others went hiking."),
        ("assistant", "We can talk later.", "The assistant and Emily can talk later."),
        ("assistant", "I recommend Dune.", "The assistant recommended Dune to Emily."),
    ],
)
def test_who_we_are_depends_on_who_speaks(role: str, said: str, memory: str) -> None:
    assert remembered(said, role) == [memory]
