"""``rendering.finish``: the request built from a conversation's cached turns, with the memory block
opening the first user turn (OpenAI: a user message after the system message) and the recalled
snippets closing the newest user turn. Mutation testing found no selected test that read where the
snippets go or what the request weighs (docs/mutation.md); the integration tests of recall did, slowly.
"""

from __future__ import annotations

from typing import Any

from sleepcompact.domain.attachments import request_weight
from sleepcompact.domain.rendering import finish, has_marker, history_of
from tests.unit.test_ladder import Rows, result

IMAGE = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}}
MARKED = {"type": "text", "text": "first question", "cache_control": {"type": "ephemeral"}}


def _conversation() -> Rows:
    b = Rows().system("rules").user([MARKED])
    b.assistant("looking", ("c1", "read_file", {"path": "a.py"}))
    b.results(result("c1", "read_file", "print(1)"))
    b.assistant("done")
    b.user([{"type": "text", "text": "second question"}, IMAGE])
    return b.assistant("answered")


def _text(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def test_memories_open_the_first_user_turn_and_snippets_close_the_newest() -> None:
    done = finish(history_of(_conversation().rows, openai=False), "caller", "MEMORIES", "RECALLED")
    assert done.system == "caller\n\nrules"
    assert done.messages[0] == {"role": "user", "content": [_text("MEMORIES"), MARKED]}
    # The newest user turn is not the last turn: the assistant answered after it.
    assert done.messages[4] == {
        "role": "user",
        "content": [_text("second question"), IMAGE, _text("RECALLED")],
    }
    assert done.messages[5] == {"role": "assistant", "content": "answered"}
    plain = finish(history_of(_conversation().rows, openai=False), "caller", None, None)
    assert done.messages[1:4] == plain.messages[1:4], "the turns in between are as cached"
    assert plain.messages[4] == {"role": "user", "content": [_text("second question"), IMAGE]}


def test_a_single_user_turn_gets_both_memories_and_snippets() -> None:
    rows = Rows().system("rules").user("only question").rows
    done = finish(history_of(rows, openai=False), None, "MEMORIES", "RECALLED")
    assert done.messages == [
        {"role": "user", "content": [_text("MEMORIES"), _text("only question"), _text("RECALLED")]}
    ]


def test_openai_gets_a_system_message_a_memory_message_and_snippets_in_the_newest_user_message() -> None:
    done = finish(history_of(_conversation().rows, openai=True), "caller", "MEMORIES", "RECALLED")
    assert done.system is None, "the system text travels as the first message"
    assert done.messages[:3] == [
        {"role": "system", "content": "caller\n\nrules"},
        {"role": "user", "content": "MEMORIES"},
        {"role": "user", "content": "first question"},
    ]
    assert done.messages[-2] == {
        "role": "user",
        "content": [
            {"type": "text", "text": "second question"},
            {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}},
            {"type": "text", "text": "RECALLED"},
        ],
    }
    assert done.messages[-1] == {"role": "assistant", "content": "answered"}


def test_the_weight_is_the_requests_own_and_the_markers_are_where_they_are() -> None:
    for openai in (False, True):
        history = history_of(_conversation().rows, openai=openai)
        for memories, recalled in ((None, None), ("MEMORIES", None), (None, "RECALLED"), ("M", "R")):
            done = finish(history, "caller", memories, recalled)
            assert done.weight == request_weight({"system": done.system, "messages": done.messages})
            assert list(done.marked) == [i for i, m in enumerate(done.messages) if has_marker(m)]
    anthropic = finish(history_of(_conversation().rows, openai=False), None, None, "RECALLED")
    assert anthropic.weight[0] == 1, "the image in the newest user turn, counted once"
    assert anthropic.marked == (0,), "the first turn's stored marker, before the turn the snippets changed"
