"""How prose is cut into sentences and what a user's sentence is taken to state (``domain.sentences``).

The journal drafts a memory only from a user sentence tagged preference, deadline or fact, and the
offline summary keeps an assistant sentence that states a decision: each rule below decides whether
something the user said is remembered, so each is pinned at the case that tells it apart.
"""

from __future__ import annotations

from sleepcompact.domain.sentences import is_decision, split_sentences, strip_lead_in, user_sentence_tags


def test_list_markers_are_dropped_and_blank_lines_give_no_sentence() -> None:
    text = "- first point. Second one!\n\n* star item\n• dot item\n1. numbered\n2) paren ok\n   \n"
    assert split_sentences(text) == [
        "first point.",
        "Second one!",
        "star item",
        "dot item",
        "numbered",
        "paren ok",
    ]


def test_a_sentence_ends_only_before_a_capital_or_a_quote() -> None:
    assert split_sentences('Why? because it broke. "Done," she said.') == [
        "Why? because it broke.",
        '"Done," she said.',
    ]
    assert split_sentences("") == []


def test_a_question_is_only_a_question_even_with_trailing_space_or_a_fact_in_it() -> None:
    assert user_sentence_tags("Do you prefer tea?  ") == ("question",)
    assert user_sentence_tags("Where do I park?") == ("question",)


def test_preference_and_deadline_are_each_named_and_can_both_hold() -> None:
    assert user_sentence_tags("I prefer tea.") == ("preference",)
    assert user_sentence_tags("The report is due by Friday.") == ("deadline",)
    assert user_sentence_tags("I prefer to send the report by Friday.") == ("preference", "deadline")


def test_a_fact_states_something_about_the_user_or_the_world_in_two_words_or_more() -> None:
    assert user_sentence_tags("My sister lives in Denver.") == ("fact",)
    assert user_sentence_tags("I'm tired.") == ("fact",)  # two words are enough
    assert user_sentence_tags("Moved.") == ()  # one word is not a statement
    assert user_sentence_tags("Nice weather today.") == ()  # no verb or person of a fact: chat


def test_a_request_is_never_a_fact_even_when_it_mentions_one() -> None:
    assert user_sentence_tags("Fix the bug that is in my code.") == ()
    assert user_sentence_tags("Thanks.") == ()


def test_a_lead_in_is_removed_and_the_rest_capitalised() -> None:
    assert strip_lead_in("Actually, the build is red.") == "The build is red."
    assert strip_lead_in("By the way, ok, my flight leaves at 6.") == "My flight leaves at 6."
    assert strip_lead_in("Important: keep the logs.") == "Keep the logs."
    assert strip_lead_in("the build is red.") == "The build is red."


def test_a_sentence_that_is_all_lead_in_is_kept_as_it_was() -> None:
    assert strip_lead_in("Also, ok ") == "Also, ok "


def test_a_decision_names_its_reason_or_plan() -> None:
    assert is_decision("We chose Postgres because it scales.")
    assert is_decision("I'll retry with a smaller batch.")
    assert not is_decision("The sky is blue.")
