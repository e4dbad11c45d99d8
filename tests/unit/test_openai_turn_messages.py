"""The exact OpenAI Chat messages a stored (Anthropic-form) turn becomes.

An assistant turn is one ``assistant`` message: its text blocks joined by a newline, its thinking left
out, its tool calls as ``tool_calls`` whose ``arguments`` are the input as JSON (non-ASCII kept as
written, "café" and not "caf\\u00e9"); a turn of thinking alone still says something. A user turn is a
``role: tool`` message per tool result (an empty or unreadable result says it was empty), then one
``user`` message with the rest, several text blocks joined by a blank line. An image or document a tool
returned is named in its text, never passed off as no output.
"""

from __future__ import annotations

from typing import Any

import pytest

from sleepcompact.domain.blocks import EMPTY_RESULT
from sleepcompact.domain.openai_turns import RESUMED_PLACEHOLDER, openai_turn

THINKING = {"type": "thinking", "thinking": "The user wants a café in Zürich.", "signature": "EqQBCgIYAhIM"}
REDACTED = {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIw"}
FIND_CAFE = {
    "type": "tool_use",
    "id": "toolu_01",
    "name": "find_cafe",
    "input": {"name": "café", "city": "Zürich"},
}


def _text(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def _result(**fields: Any) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": "toolu_01", **fields}


# -- assistant turns --------------------------------------------------------------------------------------


def test_an_assistant_turn_joins_its_text_leaves_thinking_out_and_keeps_non_ascii_arguments() -> None:
    turn = {
        "role": "assistant",
        "content": [THINKING, _text("Let me look that up."), REDACTED, _text("One moment."), FIND_CAFE],
    }
    assert openai_turn(turn) == [
        {
            "role": "assistant",
            "content": "Let me look that up.\nOne moment.",
            "tool_calls": [
                {
                    "id": "toolu_01",
                    "type": "function",
                    "function": {"name": "find_cafe", "arguments": '{"name": "café", "city": "Zürich"}'},
                }
            ],
        }
    ]


def test_an_assistant_turn_of_tool_calls_alone_has_no_content_and_a_call_without_input_sends_braces() -> None:
    turn = {
        "role": "assistant",
        "content": [THINKING, {"type": "tool_use", "id": "toolu_02", "name": "list_cafes"}],
    }
    assert openai_turn(turn) == [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "toolu_02", "type": "function", "function": {"name": "list_cafes", "arguments": "{}"}}
            ],
        }
    ]


@pytest.mark.parametrize(
    "content",
    [
        pytest.param([THINKING], id="thinking"),
        pytest.param([REDACTED, THINKING], id="redacted-thinking"),
    ],
)
def test_an_assistant_turn_of_thinking_alone_says_the_conversation_resumed(content: list[Any]) -> None:
    assert openai_turn({"role": "assistant", "content": content}) == [
        {"role": "assistant", "content": RESUMED_PLACEHOLDER}
    ]


def test_an_assistant_turn_as_a_string_is_its_text() -> None:
    assert openai_turn({"role": "assistant", "content": "Café Sprüngli opens at 8."}) == [
        {"role": "assistant", "content": "Café Sprüngli opens at 8."}
    ]


# -- user turns -------------------------------------------------------------------------------------------


def test_a_user_turn_of_several_text_blocks_is_one_string_split_by_blank_lines() -> None:
    turn = {"role": "user", "content": [_text("Here is the menu."), _text("Which one is vegan?")]}
    assert openai_turn(turn) == [{"role": "user", "content": "Here is the menu.\n\nWhich one is vegan?"}]


def test_tool_results_become_tool_messages_before_the_rest_of_the_user_turn() -> None:
    turn = {
        "role": "user",
        "content": [
            _result(content="Café Sprüngli, Bahnhofstrasse 21"),
            {
                "type": "tool_result",
                "tool_use_id": "toolu_02",
                "content": [_text("3 cafés"), _text("all open")],
            },
            _text("Thanks, and the closest?"),
        ],
    }
    assert openai_turn(turn) == [
        {"role": "tool", "tool_call_id": "toolu_01", "content": "Café Sprüngli, Bahnhofstrasse 21"},
        {"role": "tool", "tool_call_id": "toolu_02", "content": "3 cafés\nall open"},
        {"role": "user", "content": "Thanks, and the closest?"},
    ]


@pytest.mark.parametrize(
    "result",
    [
        pytest.param(_result(content=""), id="empty-string"),
        pytest.param(_result(content=[]), id="no-blocks"),
        pytest.param(_result(), id="no-content"),
        pytest.param(_result(content=None), id="null"),
        pytest.param(_result(content=42), id="number"),
        pytest.param(_result(content={"type": "text", "text": "a lone block"}), id="object"),
    ],
)
def test_a_tool_result_with_no_readable_text_says_the_tool_returned_nothing(result: dict[str, Any]) -> None:
    # Content that is neither a string nor a list of blocks is not guessed at: it reads as empty.
    assert openai_turn({"role": "user", "content": [result]}) == [
        {"role": "tool", "tool_call_id": "toolu_01", "content": EMPTY_RESULT}
    ]


def test_an_image_a_tool_returned_is_named_not_reported_as_no_output() -> None:
    # OpenAI's tool messages carry text only; "the tool returned no output" would be a falsehood the
    # model acts on (a screenshot tool "failed", so it takes the screenshot again).
    shot = {"type": "image", "source": {"type": "url", "url": "https://example.com/shot.png"}}
    pdf = {"type": "document", "source": {"type": "url", "url": "https://example.com/report.pdf"}}
    turn = {"role": "user", "content": [_result(content=[_text("Saved the page:"), shot, pdf])]}
    assert openai_turn(turn) == [
        {
            "role": "tool",
            "tool_call_id": "toolu_01",
            "content": "Saved the page:\n[image omitted: this result travels as text]\n"
            "[document omitted: this result travels as text]",
        }
    ]
    alone = {"role": "user", "content": [_result(content=[shot])]}
    assert openai_turn(alone)[0]["content"] == "[image omitted: this result travels as text]"
