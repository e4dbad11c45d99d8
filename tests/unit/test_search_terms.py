"""Which words a search treats as one, and which terms a question's words become.

Pins the stemmer's exceptions (a singular ending in -us or -is keeps its s; -ply, -bly and -fly words
keep their -ly; a word made of -sses alone loses its -es like "classes"), that every word of a question
is read (an identifier in the middle does not end it), and that an identifier that comes down to a
single plain word is looked up as a word.
"""

from __future__ import annotations

import pytest

from sleepcompact.domain.search_query import MAX_PART, Term, parse_query, stem


@pytest.mark.parametrize(
    ("word", "expected"),
    [("status", "status"), ("campus", "campus"), ("analysis", "analysis"), ("basis", "basis")],
)
def test_a_singular_ending_in_us_or_is_keeps_its_final_s(word: str, expected: str) -> None:
    assert stem(word) == expected


@pytest.mark.parametrize(
    ("word", "expected"),
    [("simply", "simpli"), ("possibly", "possibli"), ("butterfly", "butterfli"), ("quickly", "quick")],
)
def test_only_an_adverbs_ly_is_stripped_not_that_of_ply_bly_or_fly(word: str, expected: str) -> None:
    assert stem(word) == expected


def test_a_word_that_is_only_an_sses_ending_loses_its_es() -> None:
    assert stem("sses") == stem("ss") == "ss"
    assert stem("classes") == stem("class") == "class"


def test_words_after_an_identifier_are_still_looked_up() -> None:
    assert parse_query("reservation_id invoice paid").terms == (
        Term(("reservation", "id"), exact=True),
        Term(("invoic",)),
        Term(("paid",)),
    )


def test_an_identifier_that_comes_down_to_one_plain_word_is_looked_up_as_a_word() -> None:
    # The part after the underscore is too long to be indexed, so only "config" is left of it.
    (term,) = parse_query("config_" + "a" * (MAX_PART + 1)).terms
    assert term == Term(("config",), exact=False)
