"""What a caller reads when an appended message is refused: a typed error whose one line names what is
wrong and, for a value deep inside the message, that it is in the message.

The append API returns these texts as they are (a 400 with the error's type and message), so each one
is pinned word for word: a client fixing its payload reads the expected formats, roles and kinds here.
"""

from __future__ import annotations

from typing import Any

import pytest

from sleepcompact.domain.errors import InvalidEncoding, MalformedContent, UnknownKind, UnknownRole
from sleepcompact.domain.messages import normalize


def _refused(message: Any, error: type[Exception], **kw: Any) -> str:
    with pytest.raises(error) as raised:
        normalize(message, **kw)
    text = str(raised.value)
    assert "\n" not in text
    return text


def test_an_unknown_format_lists_the_formats() -> None:
    assert _refused({"role": "user", "content": "x"}, MalformedContent, fmt="xml") == (
        "unknown message format 'xml'; expected one of auto, openai, anthropic"
    )


def test_an_unknown_role_lists_every_role_accepted() -> None:
    assert _refused({"role": "robot", "content": "x"}, UnknownRole) == (
        "unknown role 'robot'; expected one of system, user, assistant, tool, developer, function"
    )


def test_a_kind_the_caller_may_not_set_says_where_kinds_come_from() -> None:
    assert _refused({"role": "user", "kind": "summary", "content": "x"}, UnknownKind) == (
        "unknown kind 'summary'; a caller may append kinds message, context (tool_call and tool_result follow"
        " from the message's shape, summary is written by compaction)"
    )


def test_context_refuses_tool_calls() -> None:
    call = {"type": "tool_use", "id": "t1", "name": "bash", "input": {}}
    assert _refused({"role": "assistant", "kind": "context", "content": [call]}, UnknownKind) == (
        "kind 'context' is for plain text or image content, not tool calls or results"
    )


def test_a_value_json_cannot_hold_is_named() -> None:
    assert _refused({"role": "user", "content": "x", "extra": {1, 2}}, MalformedContent) == (
        "the message is not JSON-serializable: Object of type set is not JSON serializable"
    )


@pytest.mark.parametrize(
    ("message", "error", "text"),
    [
        (
            {"role": "user", "content": [{"type": "text", "text": b"\xff\xfe"}]},
            InvalidEncoding,
            "message: bytes that are not valid UTF-8 at offset 0",
        ),
        (
            {"role": "user", "content": [{"type": "text", "text": "a\ud800"}]},
            InvalidEncoding,
            "message: text that is not valid UTF-8 (lone surrogate at offset 1)",
        ),
        (
            {"role": "user", "content": "x", "meta": {"score": float("nan")}},
            MalformedContent,
            "message: nan is not a finite number (JSON has no NaN or Infinity)",
        ),
        (
            {"role": "user", "content": "x", "meta": [[float("inf")]]},
            MalformedContent,
            "message: inf is not a finite number (JSON has no NaN or Infinity)",
        ),
    ],
)
def test_a_bad_value_deep_in_the_message_is_said_to_be_in_the_message(
    message: dict[str, Any], error: type[Exception], text: str
) -> None:
    assert _refused(message, error) == text


def test_a_tool_message_without_its_call_id_is_refused_as_openai_shaped() -> None:
    assert _refused({"role": "tool", "content": "x"}, MalformedContent) == (
        "tool message: a tool call id must be a non-empty string"
    )


def test_a_context_message_keeps_its_metadata() -> None:
    refusal = {"role": "assistant", "kind": "context", "content": None, "refusal": "I can't help with that."}
    (part,) = normalize(refusal).parts
    assert (part.kind, part.content, part.metadata) == (
        "context",
        "I can't help with that.",
        {"refusal": True},
    )


_RESULT = {"type": "tool_result", "tool_use_id": "toolu_1", "content": "ok"}


@pytest.mark.parametrize(
    ("message", "fmt", "error", "text"),
    [
        (
            {"role": "user", "content": [_RESULT]},
            "openai",
            MalformedContent,
            "tool_use/tool_result blocks are Anthropic-shaped, but the format is openai",
        ),
        (
            {"role": "tool", "tool_call_id": "c1", "content": "ok"},
            "anthropic",
            UnknownRole,
            "role 'tool' is OpenAI-shaped; Anthropic carries tool results in user messages",
        ),
        (
            {"role": "user", "tool_call_id": "c1", "content": "ok"},
            "anthropic",
            MalformedContent,
            "tool_calls/tool_call_id are OpenAI-shaped, but the format is anthropic",
        ),
        (
            {"role": "user", "tool_call_id": "c1", "content": [_RESULT]},
            "auto",
            MalformedContent,
            "the message mixes OpenAI tool_calls with Anthropic tool blocks",
        ),
    ],
)
def test_a_message_of_the_other_shape_than_its_format_is_refused(
    message: dict[str, Any], fmt: str, error: type[Exception], text: str
) -> None:
    assert _refused(message, error, fmt=fmt) == text


def test_a_refusal_without_content_is_an_openai_message_not_an_empty_one() -> None:
    (part,) = normalize({"role": "assistant", "content": None, "refusal": "I can't help with that."}).parts
    assert (part.role, part.kind, part.content, part.metadata) == (
        "assistant",
        "message",
        "I can't help with that.",
        {"refusal": True},
    )


_USE = {"type": "tool_use", "id": "toolu_1", "name": "bash", "input": {}}
_TEXT = {"type": "text", "text": "a"}


@pytest.mark.parametrize(
    ("role", "content", "text"),
    [
        ("user", 123, "user message: content must be a string or a list of blocks, got int"),
        ("user", [5, _TEXT], "user message: block 0 is not an object with a 'type'"),
        ("user", [_TEXT, 5], "user message: block 1 is not an object with a 'type'"),
        # After a tool call or a tool result, a block is still named by its place in the message.
        ("assistant", [_TEXT, _USE, 5], "assistant message: block 2 is not an object with a 'type'"),
        ("assistant", [_TEXT, _USE, {"type": "text"}], "assistant message: text block 2 has no string text"),
        ("user", [_TEXT, _RESULT, 5], "user message: block 2 is not an object with a 'type'"),
        ("user", [_TEXT, _USE], "user message: tool_use blocks belong in assistant messages (block 1)"),
        (
            "assistant",
            [_TEXT, {**_USE, "id": ""}],
            "assistant message: a tool call id must be a non-empty string",
        ),
        ("assistant", [_TEXT, {**_USE, "name": ""}], "assistant message: tool_use block 1 has no name"),
        (
            "assistant",
            [_TEXT, {**_USE, "input": []}],
            "assistant message: tool_use block 1 input must be an object",
        ),
        ("assistant", [_RESULT], "assistant message: tool_result blocks belong in user messages (block 0)"),
        (
            "user",
            [{**_RESULT, "tool_use_id": ""}],
            "user message: a tool call id must be a non-empty string",
        ),
        (
            "user",
            [{**_RESULT, "content": 5}],
            "user message: content must be a string or a list of blocks, got int",
        ),
    ],
)
def test_a_bad_anthropic_block_is_named_by_its_message_and_place(role: str, content: Any, text: str) -> None:
    assert _refused({"role": role, "content": content}, MalformedContent) == text


@pytest.mark.parametrize("name", ["", "ba\x00sh", 5, None])
def test_a_tool_call_needs_a_name_of_text_without_nul(name: Any) -> None:
    use = {**_USE, "name": name}
    assert _refused({"role": "assistant", "content": [use]}, MalformedContent) == (
        "assistant message: tool_use block 0 has no name"
    )


def test_a_tool_call_without_an_input_has_an_empty_one() -> None:
    (part,) = normalize(
        {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "bash"}]}
    ).parts
    assert part.content == [{"type": "tool_use", "id": "toolu_1", "name": "bash", "input": {}}]
