"""MemoryBank users on small inline samples: days in date order, and refusals that name the turn.

Each user of a MemoryBank file is one conversation: their days in date order, each turn a user message
and (when there is one) the assistant's response. A turn that cannot be imported is refused with the
user, the day and the turn number, whichever of its two messages is at fault.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from sleepcompact.domain.chat_logs import memorybank_user
from sleepcompact.domain.errors import ImportFormatError
from sleepcompact.domain.formats import parse_import


def _user(history: dict[str, Any]) -> dict[str, Any]:
    return {"alice": {"name": "Alice", "history": history}}


def test_days_are_read_in_date_order_whatever_the_file_order() -> None:
    history = {
        "2023-05-02": [{"query": "hi", "response": "yo"}],
        "2023-04-30": [{"query": "a", "response": "b"}],
    }
    (conv,) = parse_import(json.dumps(_user(history)).encode())
    assert conv.messages == [
        {"role": "user", "content": "a"},
        {"role": "assistant", "content": "b"},
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "yo"},
    ]
    assert conv.metadata["days"] == ["2023-04-30", "2023-05-02"]


NOT_CONTENT = "content must be a string or a list of blocks, got "


@pytest.mark.parametrize(
    ("turns", "message"),
    [
        (
            [{"query": "hi", "response": "yo"}, {"query": "and?", "response": 5}],
            "alice, 2023-05-02, turn 2: assistant message: " + NOT_CONTENT + "int",
        ),
        (
            [{"query": ["hi"], "response": {"text": "yo"}}],
            "alice, 2023-05-02, turn 1: assistant message: " + NOT_CONTENT + "dict",
        ),
        (
            [{"query": 7, "response": "yo"}],
            "alice, 2023-05-02, turn 1: user message: " + NOT_CONTENT + "int",
        ),
    ],
)
def test_a_turn_that_cannot_be_imported_is_named(turns: list[Any], message: str) -> None:
    with pytest.raises(ImportFormatError) as raised:
        parse_import(json.dumps(_user({"2023-05-02": turns})).encode())
    assert str(raised.value) == f"<input>: {message}"


def test_a_day_that_is_not_text_is_refused_by_name_not_a_crash() -> None:
    # JSON keys are always text, but the reader takes any mapping: a day of another type (here among
    # real dates) must come back as the same refusal as any other day that is not a date.
    doc: dict[str, Any] = {"bob ": {"history": {"2023-05-02": [], 20230501: []}}}
    with pytest.raises(ValueError, match=r"^bob: the day 20230501 is not a date \(expected YYYY-MM-DD\)$"):
        memorybank_user(doc, "bob ", ValueError)
