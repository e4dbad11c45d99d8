"""How one said sentence is written as a memory, and when a question counts as unanswered.

``test_extraction.py`` pins what is drafted from a conversation; this file pins the finish of each
statement a user reads back: it ends with one full stop (an exclamation is stated, a question keeps its
mark), it is clipped to 400 characters with an ellipsis, and a question is "still unanswered" only when
the assistant's next message says it cannot answer, whatever tool calls came in between, and not
when the user spoke again first.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

import pytest

from sleepcompact.domain.extraction import extract_facts, user_name_of
from sleepcompact.domain.records import MessageRecord
from tests.support.rows import rows_of

DAY = datetime(2024, 3, 2, tzinfo=UTC)
PREFIX = "[2024-03-02] "


def _rows(messages: list[dict[str, Any]]) -> tuple[MessageRecord, ...]:
    return tuple(replace(r, created_at=DAY) for r in rows_of(messages, lambda s: len(s.split())))


def _said(text: str) -> list[str]:
    drafts = extract_facts(_rows([{"role": "user", "content": text}]), user_name="Emily")
    return [d.content.removeprefix(PREFIX) for d in drafts]


@pytest.mark.parametrize(
    ("said", "remembered"),
    [
        ("I moved to Berlin last May!", "Emily moved to Berlin last May."),
        ("I moved to Berlin last May!!", "Emily moved to Berlin last May."),
        ("I moved to Berlin last May !", "Emily moved to Berlin last May."),
        ("I moved to Berlin last May?!", "Emily moved to Berlin last May?"),
        ("I moved to Berlin last May", "Emily moved to Berlin last May."),
        ("I moved to Berlin last May.", "Emily moved to Berlin last May."),
        ("I moved to Berlin last May…", "Emily moved to Berlin last May…"),
        ("I watched Malcolm X", "Emily watched Malcolm X."),
        ("I watched Malcolm X!", "Emily watched Malcolm X."),
    ],
)
def test_a_statement_ends_with_one_full_stop_or_its_own_mark(said: str, remembered: str) -> None:
    assert _said(said) == [remembered]


def _sentence_of(length: int, city: str = "Berlin") -> str:
    """A statement without pronouns (the rewrite keeps its length) of exactly ``length`` characters."""
    return (f"{city} has " + "parks " * length)[: length - 1] + "x"


@pytest.mark.parametrize("length", [399, 400])
def test_a_statement_of_up_to_400_characters_is_kept_whole(length: int) -> None:
    said = _sentence_of(length)
    assert len(said) == length
    assert _said(said) == [said + "."]


@pytest.mark.parametrize("length", [401, 900])
def test_a_longer_statement_is_clipped_to_400_characters_with_an_ellipsis(length: int) -> None:
    said = _sentence_of(length)
    (remembered,) = _said(said)
    assert remembered == said[:399] + "…"
    assert len(remembered) == 400


def test_a_clip_that_ends_on_a_space_drops_the_space() -> None:
    said = _sentence_of(900, city="Rome")
    assert said[398] == " "
    assert _said(said) == [said[:398] + "…"]


def _question_then(*after: dict[str, Any]) -> list[str]:
    rows = _rows([{"role": "user", "content": "What's the gate for my flight?"}, *after])
    return [
        d.content.removeprefix(PREFIX)
        for d in extract_facts(rows, user_name="Dana")
        if "Dana asked" in d.content
    ]


UNANSWERED = "Dana asked, still unanswered: What's the gate for Dana's flight?"
ASKED = "Dana asked: What's the gate for Dana's flight?"
CALL = {
    "role": "assistant",
    "content": [{"type": "tool_use", "id": "t1", "name": "search", "input": {"q": "gate"}}],
}
RESULT = {
    "role": "user",
    "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "nothing found"}],
}


def test_a_question_the_assistant_says_it_cannot_answer_is_unanswered() -> None:
    assert _question_then({"role": "assistant", "content": "I don't know the gate yet."}) == [UNANSWERED]


def test_tool_calls_before_the_reply_do_not_count_as_the_reply() -> None:
    gap = {"role": "assistant", "content": "I don't know the gate yet."}
    assert _question_then(CALL, RESULT, gap) == [UNANSWERED]


def test_a_question_the_assistant_answers_is_asked() -> None:
    assert _question_then({"role": "assistant", "content": "Your gate is B12."}) == [ASKED]


def test_a_question_the_user_moved_on_from_is_asked_not_unanswered() -> None:
    # The user spoke again before any reply: the later "I don't know" answers that, not the question.
    later = {"role": "user", "content": "I fly on Monday."}
    assert _question_then(later, {"role": "assistant", "content": "I don't know the gate yet."}) == [ASKED]


def test_a_question_with_no_reply_yet_is_asked() -> None:
    assert _question_then() == [ASKED]


@pytest.mark.parametrize(
    ("metadata", "name"),
    [
        ({"user": "A"}, "A"),  # one character is a name
        ({"user": "x" * 64}, "x" * 64),
        ({"user": "x" * 65}, None),
        ({"user": "   "}, None),
        ({"user": "Ann  Lee"}, "Ann Lee"),
        ({"user": None, "user_name": "Dana"}, "Dana"),
    ],
)
def test_a_users_name_is_one_line_of_1_to_64_characters(metadata: dict[str, Any], name: str | None) -> None:
    assert user_name_of(metadata) == name


def test_what_the_user_says_is_the_users_even_when_a_tool_said_it_first() -> None:
    # The assistant relaying tool output gets the tool's provenance; the user saying it does not.
    news = "The payment server in Frankfurt is down for planned maintenance until Friday evening."
    call = {"type": "tool_use", "id": "t1", "name": "fetch", "input": {"url": "https://status.example.com"}}
    rows = _rows(
        [
            {"role": "user", "content": "Check the status page."},
            {"role": "assistant", "content": [call]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": news}]},
            {"role": "user", "content": news},
        ]
    )
    (draft,) = [d for d in extract_facts(rows, user_name="Dana") if d.seq == 4]
    assert (draft.content, draft.source_type, draft.provenance) == (PREFIX + news, "direct", "user")
