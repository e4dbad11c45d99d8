"""Which part of a long hit a search result shows, and which days a question names.

Pins the snippet window (the most distinct query words within the width, then the most hits, then
the earliest), how its ends snap to word breaks (and when a long token is cut inside instead), that
phrase hits are measured whole, and that a date's year is kept with the day it names.
"""

from __future__ import annotations

import pytest

from sleepcompact.domain.search_query import DayMention, Term, day_mentions, parse_query, snippet

ALPHA = "alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike"
NOVEMBER = "november oscar papa quebec romeo sierra tango uniform victor whiskey xray yankee zulu"
HASH = "3f9a1c0e7b2d4f6a8c1e3b5d7f9a0c2e4b6d8f01"


def test_the_snippet_is_the_window_holding_the_most_distinct_query_words_not_the_most_repeats() -> None:
    text = f"{ALPHA} the invoice was paid {NOVEMBER} invoice invoice invoice invoice {ALPHA}"
    assert snippet(text, parse_query("invoice paid"), width=40) == "…mike the invoice was paid november…"


def test_of_two_equally_dense_windows_the_snippet_shows_the_earlier() -> None:
    text = f"{ALPHA} invoice paid by alice {NOVEMBER} invoice paid by bob {ALPHA}"
    assert snippet(text, parse_query("invoice paid"), width=40) == "…lima mike invoice paid by alice…"


def test_two_hits_exactly_the_width_apart_still_share_one_snippet() -> None:
    window = "invoice 1234567890 1234567890 paid"
    text = f"{ALPHA} {window} {NOVEMBER}"
    assert snippet(text, parse_query("invoice paid"), width=len(window)) == f"…{window}…"


def test_hits_farther_apart_than_the_width_from_the_first_ones_start_are_not_shown_together() -> None:
    # "paid" ends one character past the width counted from where "reservations" starts: no window
    # holds both, so the snippet is the earliest hit alone.
    text = f"{ALPHA} reservations 12345678 paid {NOVEMBER}"
    width = len("reservations 12345678 paid") - 1
    assert snippet(text, parse_query("reservations paid"), width=width) == "…mike reservations…"


def test_a_phrase_hit_is_shown_whole() -> None:
    text = f"{ALPHA} she watched taxi driver twice {NOVEMBER}"
    assert snippet(text, parse_query('"taxi driver"'), width=14) == "…taxi driver…"


def test_a_phrase_hit_longer_than_the_width_is_shown_from_its_start() -> None:
    text = f"{ALPHA} the quick brown fox jumps over the lazy dog {NOVEMBER}"
    query = parse_query('"quick brown fox jumps over the lazy dog"')
    assert snippet(text, query, width=30) == "…quick brown fox jumps over the…"


@pytest.mark.parametrize(
    ("text", "query", "width", "expected"),
    [
        # the window starts inside "juliet": the snippet starts at the next word
        (f"{ALPHA} {NOVEMBER}", "november", 44, "…kilo lima mike november oscar papa quebec…"),
        # the window starts one character into the text, inside "ab"
        ("ab cd needle ef gh ij kl mn op", "needle", 16, "…cd needle ef…"),
    ],
    ids=["inside-a-word", "one-character-in"],
)
def test_a_snippet_never_starts_or_ends_in_the_middle_of_a_word(
    text: str, query: str, width: int, expected: str
) -> None:
    assert snippet(text, parse_query(query), width=width) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # no word break within 20 characters after the window's start (the next one is the 21st)
        (
            f"{ALPHA} {HASH} paid invoice for the room and then some more words follow here",
            "…3b5d7f9a0c2e4b6d8f01 paid invoice for the room and then some…",
        ),
        # no word break within 20 characters before the window's end
        (
            f"{ALPHA} the invoice {HASH} and then some more words",
            "…juliet kilo lima mike the invoice 3f9a1c0e7b2d4f6a8c1e3b5d7f…",
        ),
    ],
    ids=["at-the-start", "at-the-end"],
)
def test_a_token_too_long_to_find_a_word_break_near_the_cut_is_cut_inside_rather_than_dropped(
    text: str, expected: str
) -> None:
    assert snippet(text, parse_query("invoice"), width=60) == expected


@pytest.mark.parametrize(
    ("text", "day", "rest"),
    [
        ("On May 4th, 2023 we met", DayMention(5, 4, 2023), "On   we met"),
        ("Sept. 5 2021", DayMention(9, 5, 2021), " "),
        ("the 4th of May, 2023", DayMention(5, 4, 2023), "the  "),
        ("4 May", DayMention(5, 4), " "),
        ("on 2023-05-04", DayMention(5, 4, 2023), "on  "),
    ],
)
def test_a_day_named_with_a_year_is_that_day_of_that_year_and_without_one_that_day_of_any(
    text: str, day: DayMention, rest: str
) -> None:
    assert day_mentions(text) == ((day,), rest)


def test_a_hit_at_the_very_start_of_the_text_is_shown_from_the_text_start_without_a_mark() -> None:
    text = f"invoice paid {ALPHA}"
    assert snippet(text, parse_query("invoice"), width=40) == "invoice paid alpha bravo charlie delta…"


def test_a_hit_near_the_end_fills_the_width_back_from_the_text_end_without_a_mark() -> None:
    # Centred on "invoice" the window would run past the end: it is moved back to end there instead.
    text = f"{ALPHA} the invoice was paid"
    assert snippet(text, parse_query("invoice"), width=40) == "…kilo lima mike the invoice was paid"


def test_a_window_starting_one_character_into_a_long_first_word_is_marked_as_cut() -> None:
    # Centring "needle" leaves the window starting at the second "a": no word break follows within 20
    # characters, so the snippet starts there, marked.
    text = "a" * 30 + " needle " + "filler words here " * 10
    assert snippet(text, parse_query("needle"), width=66) == (
        "…" + "a" * 29 + " needle filler words here filler…"
    )


def test_the_default_width_is_240_characters() -> None:
    words = " ".join(["word"] * 48)  # 239 characters
    assert snippet(words + " x", parse_query("zebra")) == words + "…"
    assert snippet(words + "s", parse_query("zebra")) == words + "s"  # exactly 240: whole


def test_a_snippet_can_be_asked_for_with_terms_as_well_as_with_a_parsed_query() -> None:
    text = f"{ALPHA} the invoice was paid {NOVEMBER}"
    terms = (Term(("invoic",)), Term(("paid",)))
    assert snippet(text, terms, width=40) == snippet(text, parse_query("invoice paid"), width=40)
    assert snippet(text, terms, width=40) == "…mike the invoice was paid november…"
