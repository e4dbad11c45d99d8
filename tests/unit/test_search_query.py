"""What an archive search looks up: query parsing, the index's normalization, stemming, snippets."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sleepcompact.domain.search_query import (
    STOP_WORDS,
    DayMention,
    Term,
    index_body,
    index_tokens,
    parse_query,
    snippet,
    stem,
)


def words(query: str) -> list[str]:
    """The terms of a query as text, exact ones in brackets."""
    return [f"[{t.text}]" if t.exact else t.text for t in parse_query(query).terms]


def test_a_question_keeps_its_content_words_and_drops_the_asking() -> None:
    assert words("Do you remember what painters you recommended to me?") == ["painter", "recommend"]
    assert words("I mentioned that I had been to Green Wheat Park. What did I see there?") == [
        "green",
        "wheat",
        "park",
    ]


def test_a_question_of_stop_words_alone_falls_back_to_all_its_words() -> None:
    assert words("what did you tell me") == ["what", "did", "you", "tell", "me"]
    assert all(w in STOP_WORDS for w in ("what", "did", "you", "tell", "me"))


def test_quoted_phrases_stay_phrases_and_keep_their_stop_words() -> None:
    assert words('the film called "Taxi Driver"') == ["[taxi driver]", "film"]
    assert words("\u201cto be or not to be\u201d") == ["[to be or not to be]"]


def test_a_quoted_question_reads_as_plain_words() -> None:
    assert words('"What type of music do I like to listen to?"') == ["music", "lik", "listen"]


@pytest.mark.parametrize(
    ("token", "phrase"),
    [
        ("src/billing/invoice.py", "src bill invoic py"),
        ("reservation_id", "reservation id"),
        ("reservationId", "reservation id"),
        ("HTTP-404", "http 404"),
        ("a1b2c3", "a1b2c3"),
        ("getUserName", "get user nam"),
        ("HTTPServer", "http server"),
        ("dana@example.com", "dana exampl com"),
        ("10:30", "10 30"),
    ],
)
def test_identifiers_become_exact_phrases_of_their_parts(token: str, phrase: str) -> None:
    (term,) = parse_query(f"where is {token}?").terms
    assert term == Term(tuple(phrase.split()), exact=True)
    # The index splits it the same way, so the phrase is found where the identifier is written.
    assert phrase in index_body(f"see {token} here")


def test_an_identifier_made_of_stop_words_is_still_looked_up() -> None:
    assert words("what is the_one_thing") == ["[the one thing]"]


@pytest.mark.parametrize(
    "group",
    [
        ("movie", "movies"),
        ("hike", "hiking", "hiked", "hikes"),
        ("study", "studies", "studied", "studying"),
        ("run", "running", "runs"),
        ("recommend", "recommended", "recommending", "recommends"),
        ("family", "families"),
        ("play", "played", "playing", "plays"),
        ("love", "loved", "loving", "lovely"),
        ("box", "boxes"),
        ("class", "classes"),
        ("day", "days"),
        ("city", "cities"),
        ("stop", "stopped", "stopping"),
        ("quick", "quickly"),
        ("need", "needs", "needed"),
    ],
)
def test_inflections_meet_on_one_stem(group: tuple[str, ...]) -> None:
    assert len({stem(w) for w in group}) == 1


def test_stemming_is_the_same_at_index_time_and_at_query_time() -> None:
    body = index_tokens("Yesterday I went hiking with my families and watched two movies.")
    for question, word in (("Where did I hike?", "hike"), ("Which family?", "family"), ("A movie?", "movie")):
        (term,) = parse_query(question).terms
        assert term.words == (stem(word),) and term.words[0] in body


def test_short_and_non_english_words_are_left_as_they_are() -> None:
    assert [stem(w) for w in ("is", "bus", "ok", "café", "naïve", "日本語", "x86")] == [
        "is",
        "bus",
        "ok",
        "café",
        "naïve",
        "日本語",
        "x86",
    ]


def test_the_index_folds_case_width_ligatures_and_accents() -> None:
    assert index_body("Ｃａｆé ﬁne HELLO") == index_body("cafe fine hello") == "caf fin hello"


@pytest.mark.parametrize(
    ("query", "day"),
    [
        ("On May 4th, what problems did I have?", DayMention(5, 4)),
        ("what did we talk about on April 27th?", DayMention(4, 27)),
        ("the 2nd of June", DayMention(6, 2)),
        ("on 27 April 2023", DayMention(4, 27, 2023)),
        ("log of 2023-04-27", DayMention(4, 27, 2023)),
        ("Sept. 5", DayMention(9, 5)),
    ],
)
def test_days_a_question_names_are_taken_out_of_its_words(query: str, day: DayMention) -> None:
    parsed = parse_query(query)
    assert parsed.days == (day,)
    assert not {"4th", "27th", "2nd", "2023", "27", "5"} & {w for t in parsed.terms for w in t.words}


def test_may_and_march_are_months_only_when_capitalized_and_days_must_exist() -> None:
    assert parse_query("you may 2x the dose").days == ()
    assert parse_query("we march 3 miles").days == ()
    assert parse_query("April 31st").days == ()
    assert parse_query("February 29").days == (DayMention(2, 29),)


def test_a_question_naming_only_a_day_has_no_words_to_fall_back_on() -> None:
    parsed = parse_query("What did we talk about on April 29th?")
    assert parsed.terms == () and parsed.days == (DayMention(4, 29),) and parsed


LONG = (
    "Intro words that say nothing much at all about anything in particular. " * 6
    + "The invoice for reservation_id R-7 was sent to billing. "
    + "Filler sentence about the weather and the season and the garden. " * 6
    + "Later the reservation R-7 invoice was paid in full by the customer."
)


def test_a_snippet_is_cut_around_the_densest_window_of_matched_terms() -> None:
    query = parse_query("invoice paid reservation")
    out = snippet(LONG, query, width=120)
    assert "paid" in out and "invoice" in out and "reservation" in out
    assert out.startswith("…") and len(out) <= 122
    assert not out.endswith("…")  # the densest window is at the very end of the text


def test_a_snippet_marks_both_cut_ends_and_cuts_at_word_boundaries() -> None:
    out = snippet(LONG, parse_query("billing"), width=100)
    assert out.startswith("…") and out.endswith("…") and "billing" in out
    inner = out.strip("…")
    assert inner in " ".join(LONG.split())
    assert re.fullmatch(r"\S.*\S", inner)


def test_a_snippet_without_a_match_is_the_text_start_and_short_text_is_whole() -> None:
    assert snippet(LONG, parse_query("zebra"), width=80).startswith("Intro words")
    assert snippet("short\n\ntext", parse_query("zebra")) == "short text"


def test_a_snippet_matches_phrases_only_in_order() -> None:
    text = "the driver drove the taxi home. " * 20 + "She watched Taxi Driver twice." + " more words" * 30
    out = snippet(text, parse_query('"taxi driver"'), width=60)
    assert "Taxi Driver" in out


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_parsing_never_fails_and_every_term_occurs_in_the_text_it_came_from(text: str) -> None:
    parsed = parse_query(text)
    tokens = index_tokens(text)
    joined = " " + " ".join(tokens) + " "
    for term in parsed.terms:
        assert term.words and all(re.fullmatch(r"[^\W_]+", w) for w in term.words)
        assert " " + term.text + " " in joined  # searching a message with its own words finds it


@settings(max_examples=300, deadline=None)
@given(st.text(), st.text(max_size=40), st.integers(min_value=20, max_value=300))
def test_the_index_body_is_space_separated_words_and_snippets_stay_within_width(
    text: str, query: str, width: int
) -> None:
    body = index_body(text)
    assert body == "" or re.fullmatch(r"[^\W_]+( [^\W_]+)*", body)
    out = snippet(text, parse_query(query), width=width)
    assert len(out) <= width + 2
    assert out.strip("…") in " ".join(text.split())


@pytest.mark.parametrize("tail", ["", " é"])  # the ASCII shortcut and the span-by-span path
def test_a_word_of_200_characters_is_indexed_and_one_of_201_is_not(tail: str) -> None:
    # A longer "word" is a blob (base64, minified code): no one searches for it by hand.
    tokens = index_tokens("q" * 200 + " " + "r" * 201 + " ok" + tail)
    assert tokens[:2] == ["q" * 200, "ok"]
