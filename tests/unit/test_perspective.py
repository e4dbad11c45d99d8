"""The first-to-third-person rewriter: what a user or the assistant said, as a statement about them."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sleepcompact.domain.perspective import Speakers, third_person

EMILY = Speakers("Emily", "the assistant", speaker_is_user=True)
NAMELESS = Speakers("the user", "the assistant", speaker_is_user=True)
ASSISTANT = Speakers("the assistant", "Emily", speaker_is_user=False)


@pytest.mark.parametrize(
    ("said", "remembered"),
    [
        ("I started a pottery class on Thursdays.", "Emily started a pottery class on Thursdays."),
        ("I really enjoy painting and tea tasting.", "Emily really enjoys painting and tea tasting."),
        ("I'm learning Sichuan cuisine.", "Emily is learning Sichuan cuisine."),
        ("I've perfected a dish called spicy chicken.", "Emily has perfected a dish called spicy chicken."),
        ("I'll visit my sister in May.", "Emily will visit Emily's sister in May."),
        ("I'd love to see it.", "Emily would love to see it."),
        ("I'd been there before.", "Emily had been there before."),
        ("I am a nurse and I have two cats.", "Emily is a nurse and Emily has two cats."),
        ("I don't eat meat.", "Emily doesn't eat meat."),
        ("I usually study every day.", "Emily usually studies every day."),
        ("I watch movies with my friends.", "Emily watches movies with Emily's friends."),
        ("That book is mine.", "That book is Emily's."),
        ("I made it myself.", "Emily made it themself."),
        ("Give me the list.", "Give Emily the list."),
        ("We saw a film called Taxi Driver.", "Emily and others saw a film called Taxi Driver."),
        ("Our trip was great.", "Emily's trip was great."),
        ("Do you have any recommendations for me?", "Does the assistant have any recommendations for Emily?"),
        ("Can you help me?", "Can the assistant help Emily?"),
        ("Am I right?", "Is Emily right?"),
        ("I wondered: Am I right?", "Emily wondered: Is Emily right?"),  # a capital mid-sentence stays
        ("She asked me. Do you like it?", "She asked Emily. Does the assistant like it?"),
        ("Thank you for your advice.", "Thank the assistant for the assistant's advice."),
        ("If you like, you can go see it.", "If the assistant likes, the assistant can go see it."),
    ],
)
def test_what_the_user_said_becomes_a_statement_about_the_user(said: str, remembered: str) -> None:
    assert third_person(said, EMILY) == remembered


@pytest.mark.parametrize(
    ("said", "remembered"),
    [
        (
            "I recommend the painter Claude Monet.",
            "The assistant recommended the painter Claude Monet to Emily.",
        ),
        (
            "I suggest you try the museum on Sunday.",
            "The assistant suggested Emily tries the museum on Sunday.",
        ),
        ("I'll use Decimal for money.", "The assistant will use Decimal for money."),
        ("You are really good at cooking.", "Emily is really good at cooking."),
        ("It seems like you are tired.", "It seems like Emily is tired."),
        ("I think you have a diverse taste.", "The assistant thinks Emily has a diverse taste."),
        ("I'll remind you before July 5.", "The assistant will remind Emily before July 5."),
        ("Did you like it?", "Did Emily like it?"),
        ("We can stay in touch.", "The assistant and Emily can stay in touch."),
        ("Your flight leaves at 14:40.", "Emily's flight leaves at 14:40."),
    ],
)
def test_what_the_assistant_said_becomes_a_statement_about_the_assistant(said: str, remembered: str) -> None:
    assert third_person(said, ASSISTANT) == remembered


@pytest.mark.parametrize(
    ("said", "who", "remembered"),
    [
        ("Fine. I recommend it.", ASSISTANT, "Fine. The assistant recommended it to Emily."),
        ("Sure! I think so.", ASSISTANT, "Sure! The assistant thinks so."),
        ("Ok. We can talk later.", ASSISTANT, "Ok. The assistant and Emily can talk later."),
        ("Thanks. Your advice helped.", NAMELESS, "Thanks. The assistant's advice helped."),
        ('"Great!" I said.', ASSISTANT, '"Great!" the assistant said.'),
        ("Yes, I think so.", ASSISTANT, "Yes, the assistant thinks so."),
    ],
)
def test_a_name_standing_for_a_pronoun_that_opens_a_sentence_is_capitalized(
    said: str, who: Speakers, remembered: str
) -> None:
    # Only a sentence's first word: after a comma or a quotation the name stays as written.
    assert third_person(said, who) == remembered


def test_without_a_name_the_user_is_the_user() -> None:
    assert (
        third_person("My flight LH 123 leaves at 14:40.", NAMELESS)
        == "The user's flight LH 123 leaves at 14:40."
    )
    assert third_person("Next week I travel.", NAMELESS) == "Next week the user travels."


@pytest.mark.parametrize(
    "kept",
    [
        '"I Know What You Did Last Summer"',
        "“My Neighbor Totoro”",
        "`my_var = me()`",
        "/home/me/my_project/I.py",
        "https://example.com/my/page",
        "my_config_value",
        "src/I/you.py",
    ],
)
def test_quoted_titles_code_and_identifiers_are_kept_verbatim(kept: str) -> None:
    out = third_person(f"I watched {kept} with you.", EMILY)
    assert out == f"Emily watched {kept} with the assistant."


_PRONOUN = re.compile(r"(?i)\b(?:i|me|my|mine|myself|we|us|our|ours|ourselves|you|your|yours|yourself)\b|'")
_plain = st.lists(
    st.sampled_from(
        ["the", "cat", "sat", "on", "a", "mat", "near", "Berlin", "in", "May", "while", "rain", "42"]
    ),
    min_size=1,
    max_size=12,
).map(" ".join)


@settings(max_examples=200, deadline=None)
@given(text=_plain)
def test_a_sentence_without_pronouns_is_unchanged_but_for_its_first_letter(text: str) -> None:
    assert not _PRONOUN.search(text)
    out = third_person(text, EMILY)
    assert out == text[:1].upper() + text[1:]


@settings(max_examples=200, deadline=None)
@given(
    title=st.text(st.characters(categories=("L", "N", "Zs")), min_size=1, max_size=30).filter(str.strip),
    before=st.sampled_from(["I loved", "You recommended", "We read", "My favorite is", "Did you see"]),
    who=st.sampled_from([EMILY, ASSISTANT, NAMELESS]),
)
def test_a_quoted_title_survives_any_rewrite_verbatim(title: str, before: str, who: Speakers) -> None:
    quoted = f'"{title}"'
    assert quoted in third_person(f"{before} {quoted} yesterday.", who)
