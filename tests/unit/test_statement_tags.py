"""The exact tags ``statement_tags`` files a companion-chat sentence under, at each rule's boundary.

What the user of the memory notices: a pleasantry from the assistant ("Have a pleasant journey, Emily!")
is not remembered although it has a name in it, while a longer sentence that only starts like one and
carries a detail ("... on this Friday") is; a one-word greeting is chat but a name given ("I'm Gary")
is a fact; a question that proposes something named is a recommendation; an intention without a
time is a remark, kept concrete by a name or a number. Sentences are from the MemoryBank companion
chats (``shared/data/conversations/memorybank``) or written like them. ``test_salience_rules.py``
pins the other kinds; this file pins the order of the rules and their thresholds.
"""

from __future__ import annotations

import pytest

from sleepcompact.domain.salience import opener_stripped, statement_tags


@pytest.mark.parametrize(
    ("sentence", "stripped"),
    [
        ("Hello, my name is Emily.", "My name is Emily."),
        ("Okay, thank you for your recommendations.", "Thank you for your recommendations."),
    ],
)
def test_what_is_left_after_the_opener_starts_with_a_capital(sentence: str, stripped: str) -> None:
    assert opener_stripped(sentence) == stripped


@pytest.mark.parametrize("sentence", ["Hello AI companion.", "Sure, no problem!", "Awesome!"])
def test_a_greeting_or_acknowledgement_alone_strips_to_nothing(sentence: str) -> None:
    assert opener_stripped(sentence) == ""


def test_a_sentence_is_read_as_the_users_unless_said_otherwise() -> None:
    sentence = 'I prefer artistic works, like "The Great Gatsby" which is full of charm.'
    assert statement_tags(sentence) == ("preference", "named")
    assert statement_tags(sentence, assistant=True) == ("remark", "named")


@pytest.mark.parametrize(
    "sentence",
    [
        "Have a pleasant journey, Emily!",
        # exactly ten words: still short enough for the name not to count
        "I'm glad to share your movie-watching experience with you, Leo.",
    ],
)
def test_a_pleasantry_of_up_to_ten_words_is_chat_even_with_a_name_in_it(sentence: str) -> None:
    assert statement_tags(sentence, assistant=True) == ("chat",)
    assert statement_tags(sentence) == ("chat",)


def test_a_pleasantry_of_eleven_words_with_a_detail_is_a_statement() -> None:
    sentence = "I understand that you're feeling a bit tired on this Friday."
    assert statement_tags(sentence, assistant=True) == ("fact", "dated")


def test_a_long_pleasantry_without_a_detail_is_still_chat() -> None:
    assert statement_tags("I'm glad to hear that you had such a great day.", assistant=True) == ("chat",)


@pytest.mark.parametrize(
    ("sentence", "assistant"),
    [("Hello, Emily.", True), ("I'm your AI companion.", True), ("What about you?", False)],
)
def test_a_sentence_with_a_single_content_word_and_no_detail_is_chat(sentence: str, assistant: bool) -> None:
    assert statement_tags(sentence, assistant=assistant) == ("chat",)


@pytest.mark.parametrize(
    ("sentence", "assistant", "tags"),
    [
        ("Hello, I'm Gary.", False, ("fact", "named")),
        ("Sure thing, Jack.", True, ("remark", "named")),
        ("I ran 10 km.", False, ("event", "numeric")),
    ],
)
def test_a_single_content_word_with_a_name_or_number_is_a_statement_and_not_vague(
    sentence: str, assistant: bool, tags: tuple[str, ...]
) -> None:
    assert statement_tags(sentence, assistant=assistant) == tags


@pytest.mark.parametrize(
    ("sentence", "tags"),
    [
        ('What about "Roman Holiday"?', ("recommendation", "named")),
        ('How about watching "Roman Holiday" tonight?', ("recommendation", "named", "dated")),
        ("How about visiting the West Lake?", ("recommendation", "named")),
        ("How about visiting the lake?", ("asked",)),
        ("What about going hiking this weekend?", ("asked", "dated")),
    ],
)
def test_a_question_proposing_something_named_is_a_recommendation_otherwise_asked(
    sentence: str, tags: tuple[str, ...]
) -> None:
    assert statement_tags(sentence, assistant=True) == tags


@pytest.mark.parametrize(
    ("sentence", "tags"),
    [
        ("I want to visit cities like Madrid, Barcelona, and Granada.", ("remark", "named")),
        ("I want to lose 5 kilograms.", ("remark", "numeric")),
        ("I plan to read 20 books.", ("remark", "numeric")),
        ("I will definitely try to learn from these artists' works.", ("remark", "vague")),
    ],
)
def test_an_intention_without_a_time_is_a_remark_kept_concrete_by_a_name_or_number(
    sentence: str, tags: tuple[str, ...]
) -> None:
    assert statement_tags(sentence) == tags


@pytest.mark.parametrize(
    ("sentence", "assistant", "tags"),
    [
        ("I need a new laptop.", False, ("fact",)),
        ("I feed my cat every morning.", False, ("fact", "dated")),
        ("I finished the book.", False, ("event",)),
        ("Since the test uses a model, I need a request object.", True, ("remark",)),
    ],
)
def test_a_present_verb_ending_in_ed_is_not_something_done(
    sentence: str, assistant: bool, tags: tuple[str, ...]
) -> None:
    # "need" ends like "finished": read as a past form it made the sentence an event.
    assert statement_tags(sentence, assistant=assistant) == tags


@pytest.mark.parametrize(
    ("sentence", "tags"),
    [
        # A habit is a preference, its verb quoted or not.
        ('I often "work from home" on Fridays.', ("preference", "named", "dated")),
        ("I always “forget” to water my plants.", ("preference", "named")),
        # A title typed without a space before it leaves the word before it whole.
        ("I love“Dune”.", ("preference", "named")),
        ('We could watch it, maybe"Dune" tonight.', ("hedged", "named", "dated")),
    ],
)
def test_a_quotation_changes_nothing_about_the_words_around_it(sentence: str, tags: tuple[str, ...]) -> None:
    assert statement_tags(sentence) == tags
