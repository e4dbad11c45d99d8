"""Importance that separates: what a sentence is decides whether it can become a memory at all.

The consolidation floor is 5: a journal entry under it is never promoted. Acknowledgements, greetings,
pleasantries, questions, hedged and hypothetical statements stay under it whoever said them; concrete
facts (events, plans with a time, names, numbers, firm preferences, recommendations given) score high.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sleepcompact.domain.journal import TAG_CEILING, heuristic_importance
from sleepcompact.domain.salience import detail_tags, statement_tags
from sleepcompact.services.memories import IMPORTANCE_FLOOR


def importance(sentence: str, *, assistant: bool = False) -> int:
    return heuristic_importance(
        "inference" if assistant else "direct", statement_tags(sentence, assistant=assistant)
    )


NOT_PROMOTED = {
    "acknowledgement": [
        "I totally agree!",
        "Thanks",
        "OK, sounds good.",
        "Thank you for your recommendations.",
        "You're welcome.",
        "Got it.",
        "Those are very practical suggestions.",
        "Definitely.",
        "No problem, feel free to ask me anything you need.",
    ],
    "greeting": ["Hi!", "Hello, AI companion.", "Good morning!", "Nice to meet you.", "See you tomorrow."],
    "pleasantry": [
        "That sounds great!",
        "It sounds like a really good novel.",
        "Have a nice day.",
        "I'm glad you enjoyed it.",
        "Good luck with everything.",
    ],
    "question": [
        "What movie did you see?",
        "Do you have any good book recommendations for me?",
        "Have you heard of it?",
        "Please recommend some.",
    ],
    "hedged": [
        "Maybe I will go to Paris next year.",
        "I think I might start running.",
        "It's probably the best option.",
        "I'm thinking of going hiking in the countryside.",
    ],
    "hypothetical": [
        "If I were rich, I would buy a boat.",
        "I would love to visit Japan someday.",
        "I'd like to learn the piano one day.",
        "I wish I had more time.",
    ],
    "no content": ["I'll give it a try.", "I found it very interesting.", "I'll check them out."],
}
PROMOTED = {
    "event": [
        "I started a pottery class on Thursdays.",
        "Yesterday I went to Green Meadow Park and saw a squirrel.",
        'We saw an art film called "Taxi Driver".',
    ],
    "plan with a date": ["I'm flying to Lisbon on May 19.", "I will start my new job next Monday."],
    "name": ["My sister Noor lives in Dresden.", 'I\'m reading "One Hundred Years of Solitude".'],
    "number": ["I run 10 kilometres every morning.", "My booking reference is ABC123."],
    "firm preference": [
        "I really enjoy painting and tea tasting.",
        "I prefer window seats.",
        "I'm allergic to peanuts.",
        "Please keep the public API unchanged.",
        "Always use type hints.",
    ],
    "recommendation given (by the user)": ["You should definitely visit Green Meadow Park."],
}
ASSISTANT_PROMOTED = [
    'I recommend "The Little Prince" and "Pride and Prejudice".',
    "You could try Emei Mountain or Huangshan for hiking.",
    'How about trying "The Starry Night" by Van Gogh?',
    'I suggest you take a look at "The Adventures of Sherlock Holmes".',
    "Your flight LH 123 leaves Munich at 14:40.",
]
ASSISTANT_NOT_PROMOTED = [
    "That sounds like a movie worth watching.",
    "Time management is very important.",
    "I also want to go take a look at it.",
    "I'm sorry, as an AI I can't go for a walk.",
    "What kind of vegetables do you usually pair with it?",
    "I would love to go see it too.",
    "It's my honor to accompany you.",
]


@pytest.mark.parametrize(
    ("category", "sentence"), [(c, s) for c, group in NOT_PROMOTED.items() for s in group]
)
def test_chat_questions_hedges_and_hypotheticals_stay_under_the_floor(category: str, sentence: str) -> None:
    assert importance(sentence) < IMPORTANCE_FLOOR, (category, statement_tags(sentence))
    assert importance(sentence, assistant=True) < IMPORTANCE_FLOOR, (category, sentence)


@pytest.mark.parametrize(("category", "sentence"), [(c, s) for c, group in PROMOTED.items() for s in group])
def test_concrete_user_statements_score_high(category: str, sentence: str) -> None:
    assert importance(sentence) >= 8, (category, statement_tags(sentence))


@pytest.mark.parametrize("sentence", ASSISTANT_PROMOTED)
def test_the_assistants_recommendations_and_facts_about_the_user_are_promoted(sentence: str) -> None:
    assert importance(sentence, assistant=True) >= 6, statement_tags(sentence, assistant=True)


@pytest.mark.parametrize("sentence", ASSISTANT_NOT_PROMOTED)
def test_the_assistants_small_talk_and_generalities_are_not(sentence: str) -> None:
    assert importance(sentence, assistant=True) < IMPORTANCE_FLOOR, statement_tags(sentence, assistant=True)


def test_the_scale_is_used_not_one_score_for_everything() -> None:
    sentences = [s for group in (*NOT_PROMOTED.values(), *PROMOTED.values()) for s in group]
    scores = {importance(s) for s in sentences}
    assert len(scores) >= 5 and min(scores) <= 2 and max(scores) == 10


@pytest.mark.parametrize(
    ("sentence", "details"),
    [
        ("I met Dana at the Louvre.", ("named",)),
        ('I\'m reading "Dune".', ("named",)),
        ("My flight is on May 19.", ("dated",)),
        ("See you next Tuesday.", ("dated",)),
        ("I ran 12 kilometres.", ("numeric",)),
        ("I went to the park today.", ()),  # "today" is the memory's own date
    ],
)
def test_details_are_names_dates_and_numbers(sentence: str, details: tuple[str, ...]) -> None:
    assert detail_tags(sentence) == details


@settings(max_examples=300, deadline=None)
@given(
    source=st.sampled_from(["direct", "observation", "inference", "environmental"]),
    tags=st.lists(
        st.sampled_from(
            ["fact", "event", "preference", "recommendation", "named", "dated", "numeric", "remark"]
        ),
        max_size=5,
    ),
    ceiling=st.sampled_from(sorted(TAG_CEILING)),
)
def test_a_ceiling_tag_keeps_any_entry_under_the_floor(source: str, tags: list[str], ceiling: str) -> None:
    score = heuristic_importance(source, [*tags, ceiling])
    assert 1 <= score <= TAG_CEILING[ceiling] < IMPORTANCE_FLOOR
