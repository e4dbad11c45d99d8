"""Which tags a companion-chat sentence gets: the exact kind and details a memory is filed under.

``test_salience.py`` pins where sentences land on the importance scale; this file pins the tags
themselves, which decide what a memory says about the user: a thing they did (``event``), a plan with a
time (``plan``), an intention without one (a ``remark``), a standing fact (``fact``), the assistant's
``decision``, and whether a statement is too ``vague`` to stand on its own. It also pins what
``opener_stripped`` drops before a sentence is read (labels, greetings, a leading conjunction), since
the stripped text is what ends up in the journal.
"""

from __future__ import annotations

import pytest

from sleepcompact.domain.salience import detail_tags, opener_stripped, statement_tags


@pytest.mark.parametrize(
    ("sentence", "stripped"),
    [
        ("Note: I'm allergic to peanuts.", "I'm allergic to peanuts."),
        ("THOUGHT: I moved to Berlin.", "I moved to Berlin."),
        ("Analysis: the plan works.", "The plan works."),
    ],
)
def test_a_section_label_before_the_prose_is_dropped(sentence: str, stripped: str) -> None:
    assert opener_stripped(sentence) == stripped


def test_a_label_without_a_space_after_the_colon_is_kept() -> None:
    assert opener_stripped("Note:I moved to Berlin.") == "Note:I moved to Berlin."


@pytest.mark.parametrize(
    ("sentence", "stripped"),
    [
        ("But I went to the park.", "I went to the park."),
        ("but I went to the park.", "I went to the park."),
        ("Well I moved to Berlin last year.", "I moved to Berlin last year."),
        ("Now I live in a small town.", "I live in a small town."),
        ("Anyway I live in a small town.", "I live in a small town."),
        ("So I went hiking.", "I went hiking."),
    ],
)
def test_a_leading_conjunction_without_a_comma_is_dropped(sentence: str, stripped: str) -> None:
    assert opener_stripped(sentence) == stripped


def test_a_word_that_only_starts_like_a_conjunction_is_kept() -> None:
    assert opener_stripped("Butter is my thing.") == "Butter is my thing."


@pytest.mark.parametrize(
    ("sentence", "stripped"),
    [
        ("Okay, I finally finished reading it.", "I finally finished reading it."),
        ("Hi AI companion, I went hiking.", "I went hiking."),
        ("Good morning! I went hiking.", "I went hiking."),
        ("Thank you, I went hiking.", "I went hiking."),
    ],
)
def test_a_greeting_or_acknowledgement_opener_is_dropped(sentence: str, stripped: str) -> None:
    assert opener_stripped(sentence) == stripped


@pytest.mark.parametrize("sentence", ["Hi!", "Okay.", "Thanks!", ""])
def test_a_sentence_that_is_all_opener_leaves_nothing(sentence: str) -> None:
    assert opener_stripped(sentence) == ""
    assert statement_tags(sentence) == ("chat",)


@pytest.mark.parametrize(
    ("sentence", "tags"),
    [
        ("We walked along the river.", ("event",)),
        ("I cooked dinner for my family.", ("event",)),
        ("I visited my grandma.", ("event",)),
        ("I wrote a poem about the sea.", ("event",)),
        ("I went to Green Meadow Park and saw a squirrel.", ("event", "named")),
        ("But I went to the park.", ("event",)),
    ],
)
def test_something_the_user_did_is_an_event(sentence: str, tags: tuple[str, ...]) -> None:
    """A past tense right after "I"/"we": a regular "-ed" form or an irregular one ("went", "wrote")."""
    assert statement_tags(sentence) == tags


@pytest.mark.parametrize(
    ("sentence", "tags"),
    [
        ("I teach piano to kids.", ("fact",)),
        ("I live in a small town.", ("fact",)),
        ("My sister lives in Dresden.", ("fact", "named")),
    ],
)
def test_a_present_tense_about_the_user_is_a_fact_not_an_event(sentence: str, tags: tuple[str, ...]) -> None:
    assert statement_tags(sentence) == tags


@pytest.mark.parametrize(
    ("sentence", "tags"),
    [
        ("I will start my new job next Monday.", ("plan", "dated")),
        ("I need to call my mother tomorrow.", ("plan", "dated")),
    ],
)
def test_an_intention_with_a_time_is_a_plan(sentence: str, tags: tuple[str, ...]) -> None:
    assert statement_tags(sentence) == tags


@pytest.mark.parametrize(
    ("sentence", "tags"),
    [
        ("I will take a look.", ("remark", "vague")),
        ("I have to finish my report.", ("remark", "vague")),
        ("I'm going to visit Kyoto.", ("remark", "named")),
        ("I'm going to run 10 kilometres.", ("remark", "numeric")),
    ],
)
def test_an_intention_without_a_time_is_a_remark_vague_unless_named_or_numbered(
    sentence: str, tags: tuple[str, ...]
) -> None:
    assert statement_tags(sentence) == tags


@pytest.mark.parametrize(
    ("sentence", "tags"),
    [
        # three content words and a pointer ("it", "those"): what was read or missed is elsewhere
        ("I finally finished reading it.", ("event", "vague")),
        ("I really missed those long evenings.", ("event", "vague")),
        # four content words are enough to stand on their own, pointer or not
        ("I finally finished reading that novel.", ("event",)),
        ("I really missed those long summer evenings.", ("event",)),
        ("We finally finished painting the fence.", ("event",)),
    ],
)
def test_a_statement_is_vague_up_to_three_content_words_around_a_pointer(
    sentence: str, tags: tuple[str, ...]
) -> None:
    assert statement_tags(sentence) == tags


@pytest.mark.parametrize(
    ("sentence", "tags"),
    [
        ("Let's start with the basics of watercolor.", ("decision",)),
        ("Let's start with Monet's water lilies.", ("decision", "named")),
    ],
)
def test_the_assistants_decision_is_a_decision_with_or_without_a_name(
    sentence: str, tags: tuple[str, ...]
) -> None:
    assert statement_tags(sentence, assistant=True) == tags


def test_the_same_words_from_the_user_are_not_a_decision() -> None:
    assert statement_tags("Let's start with the basics of watercolor.") == ("remark",)


@pytest.mark.parametrize(
    ("sentence", "tags"),
    [
        ("Your sister lives in Dresden.", ("fact", "named")),
        ("Your painting skills keep improving.", ("fact",)),
        ("Your flight LH 123 leaves Munich at 14:40.", ("fact", "named", "dated", "numeric")),
    ],
)
def test_what_the_assistant_says_about_the_user_is_a_fact(sentence: str, tags: tuple[str, ...]) -> None:
    assert statement_tags(sentence, assistant=True) == tags


@pytest.mark.parametrize(
    "sentence", ["I don't have a body, but my memory is large.", "My favourite color is blue."]
)
def test_what_the_assistant_says_about_itself_is_only_a_remark(sentence: str) -> None:
    assert statement_tags(sentence, assistant=True) == ("remark",)


def test_the_user_speaking_about_someone_elses_sister_is_a_remark() -> None:
    assert statement_tags("Your sister lives in Dresden.") == ("remark", "named")


def test_a_number_right_before_a_quote_mark_is_still_a_number() -> None:
    """Inch marks pair up like quotes; the sizes next to them are still numbers."""
    assert "numeric" in detail_tags('I bought a 55" TV and a 65" one for the basement.')
    assert "numeric" in detail_tags('I ordered a 12" pizza and a 10" salad.')


def test_a_title_that_is_a_date_word_does_not_hide_the_count_after_it() -> None:
    # Removing "Yesterday" as a date before the titles left its quote marks to pair with "Help"'s.
    assert detail_tags('I listened to "Yesterday" 3 times and then "Help".') == ("named", "dated", "numeric")
    assert detail_tags("I listened to “Yesterday” 3 times and then “Help”.") == ("named", "dated", "numeric")
    # A number inside a title is part of its name, not a count.
    assert detail_tags('We played "Yesterday" and "Track 5".') == ("named", "dated")
