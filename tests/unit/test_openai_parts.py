"""OpenAI Chat Completions content both ways: what an OpenAI-format message reads as, and what a stored turn
renders to.

Reading (``normalize`` -> ``openai_shapes``): function tool calls (arguments as a JSON string or an
object), the legacy ``function_call`` and its ``role: function`` result, refusals, and the exact error a
malformed message is refused with: the caller sees that text in the 400 answer, so it must name the
message and the tool call at fault.

Rendering (``openai_turn``): each user content part becomes the part OpenAI takes (images as
``image_url``, base64 PDFs as ``file`` parts, text documents as text, OpenAI's own parts verbatim) and
whatever OpenAI cannot fetch is named in a text part instead of being dropped silently.
"""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest

from sleepcompact.domain.errors import MalformedContent
from sleepcompact.domain.messages import normalize
from sleepcompact.domain.openai_turns import openai_turn
from sleepcompact.domain.parts import Part
from sleepcompact.domain.rendering import render_openai
from tests.support.rows import rows_of

PNG_B64 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
PDF_B64 = base64.b64encode(b"%PDF-1.4\n1 0 obj <</Type /Catalog>> endobj\ntrailer <<>>\n%%EOF\n").decode()
AUDIO = {"type": "input_audio", "input_audio": {"data": "UklGRiQAAABXQVZFZm10IBAAAAABAAEA", "format": "wav"}}
CHART_URL = "https://example.com/q3-chart.png"
SHOT = {"type": "image", "source": {"type": "url", "url": CHART_URL}}
SHOT_PART = {"type": "image_url", "image_url": {"url": CHART_URL}}
FILE_ID = "file_011CNha8iCJcU1wXNR6q4V8w"


def _call(name: str, arguments: Any, call_id: str = "call_abc") -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def _assistant(*calls: Any, content: Any = None) -> dict[str, Any]:
    return {"role": "assistant", "content": content, "tool_calls": list(calls)}


WEATHER_USE = {"type": "tool_use", "id": "call_abc", "name": "get_weather", "input": {"city": "Paris"}}
WEATHER_CALL = Part("assistant", "tool_call", [WEATHER_USE], tool_call_id="call_abc", tool_name="get_weather")


# -- reading OpenAI messages ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("message", "parts"),
    [
        pytest.param(
            _assistant(_call("get_weather", '{"city": "Paris"}'), content="Checking the weather."),
            (Part("assistant", "message", "Checking the weather."), WEATHER_CALL),
            id="text-and-json-arguments",
        ),
        # Some clients send the arguments already parsed: taken as they are.
        pytest.param(
            _assistant(_call("get_weather", {"city": "Paris"})), (WEATHER_CALL,), id="object-arguments"
        ),
        pytest.param(
            _assistant({"id": "call_abc", "type": "function", "function": {"name": "get_weather"}}),
            (Part("assistant", "tool_call", [{**WEATHER_USE, "input": {}}], "call_abc", "get_weather"),),
            id="no-arguments",
        ),
        # The legacy function_call has no id: it is paired with its result by the function's name.
        pytest.param(
            {
                "role": "assistant",
                "content": None,
                "function_call": {"name": "get_weather", "arguments": "{}"},
            },
            (
                Part(
                    "assistant",
                    "tool_call",
                    [{**WEATHER_USE, "id": "call_get_weather", "input": {}}],
                    "call_get_weather",
                    "get_weather",
                ),
            ),
            id="legacy-function-call",
        ),
        pytest.param(
            {"role": "function", "name": "get_weather", "content": "18°C and sunny"},
            (Part("tool", "tool_result", "18°C and sunny", "call_get_weather"),),
            id="legacy-function-result",
        ),
        # A refusal is the assistant's answer: kept as its text when there is no content, and flagged.
        pytest.param(
            {"role": "assistant", "content": None, "refusal": "I can't help with that."},
            (Part("assistant", "message", "I can't help with that.", metadata={"refusal": True}),),
            id="refusal-only",
        ),
        pytest.param(
            {
                "role": "assistant",
                "content": "I won't share the key.",
                "refusal": "Sharing secrets is unsafe.",
            },
            (Part("assistant", "message", "I won't share the key.", metadata={"refusal": True}),),
            id="refusal-beside-content",
        ),
    ],
)
def test_an_openai_message_reads_as_these_parts(message: dict[str, Any], parts: tuple[Part, ...]) -> None:
    assert normalize(message, fmt="openai").parts == parts


# Stored, the input object sits at level 3 (message, content list, block): its 62nd nested list is at
# level 65, one past MAX_DEPTH (64), as deep as an Anthropic tool_use input may not go either.
DEEP = '{"x": ' + "[" * 62 + "]" * 62 + "}"
NO_FUNCTION = {"id": "call_2", "type": "function"}


@pytest.mark.parametrize(
    ("message", "error"),
    [
        (
            {"role": "user", "content": "hi", "tool_calls": []},
            "user message: tool_calls belong in assistant messages",
        ),
        (
            _assistant(content="x") | {"tool_calls": _call("f", "{}")},
            "assistant message: tool_calls must be a list",
        ),
        (_assistant("call_1"), "assistant message: tool call 0 is not an object"),
        (
            {"role": "assistant", "function_call": "get_weather"},
            "assistant message: function_call must be an object",
        ),
        (
            {"role": "assistant", "function_call": {"arguments": "{}"}},
            "assistant message has no function name",
        ),
        (
            _assistant({"type": "function", "function": {"name": "f"}}),
            "assistant message: a tool call id must be a non-empty string",
        ),
        (_assistant(_call("f", "{}"), NO_FUNCTION), "assistant message: tool call 1 has no function name"),
        (
            _assistant(NO_FUNCTION | {"function": {"arguments": "{}"}}),
            "assistant message: tool call 0 has no function name",
        ),
        (_assistant(_call("", "{}")), "assistant message: tool call 0 has no function name"),
        (
            _assistant(_call("get\x00weather", "{}")),
            "assistant message: tool call 0 has a NUL character in its name",
        ),
        (
            _assistant(_call("f", "{}"), _call("f", "{city: Paris}", "call_2")),
            "assistant message: tool call 1 arguments are not valid JSON: "
            "Expecting property name enclosed in double quotes",
        ),
        (_assistant(_call("f", 42)), "assistant message: tool call 0 arguments must be a JSON string"),
        (
            _assistant(_call("f", '{"x": NaN}')),
            "assistant message: tool call 0 arguments: NaN is not a finite number "
            "(JSON has no NaN or Infinity)",
        ),
        # 1e999 is valid JSON that parses to infinity, anywhere in the arguments.
        (
            _assistant(_call("f", '{"x": [1.5, {"y": -1e999}]}')),
            "assistant message: -inf is not a finite number (JSON has no NaN or Infinity)",
        ),
        (
            _assistant(_call("f", DEEP)),
            "assistant message: tool call arguments nested deeper than 64 levels",
        ),
        (
            _assistant(_call("f", "[" * 100_000)),
            "assistant message: tool call 0 arguments are nested too deeply",
        ),
        (
            _assistant(_call("f", "{}"), content=42),
            "assistant message: content must be a string or a list of blocks, got int",
        ),
        ({"role": "function", "content": "18°C"}, "tool message has no function name"),
        ({"role": "tool", "content": "18°C"}, "tool message: a tool call id must be a non-empty string"),
        (
            {"role": "tool", "tool_call_id": "call_abc", "content": [42]},
            "tool message: block 0 is not an object with a 'type'",
        ),
    ],
)
def test_a_malformed_openai_message_is_refused_naming_what_is_wrong(
    message: dict[str, Any], error: str
) -> None:
    with pytest.raises(MalformedContent) as caught:
        normalize(message, fmt="openai")
    assert str(caught.value) == error


# -- rendering user content parts -------------------------------------------------------------------------


def _omitted(what: str) -> dict[str, Any]:
    return {"type": "text", "text": f"[{what} omitted: not supported here]"}


SEARCH_RESULT = {
    "type": "search_result",
    "source": "https://docs.example.com/api",
    "title": "API reference",
    "content": [{"type": "text", "text": "Rate limit: 100 requests per minute."}],
}


@pytest.mark.parametrize(
    ("block", "part"),
    [
        pytest.param(
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG_B64}},
            {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG_B64}"}},
            id="png",
        ),
        pytest.param(SHOT, SHOT_PART, id="https-image"),
        # An Anthropic Files API image: OpenAI cannot fetch it, so the turn says what was left out.
        pytest.param(
            {"type": "image", "source": {"type": "file", "file_id": FILE_ID}},
            _omitted(f"image {FILE_ID}"),
            id="files-api-image",
        ),
        pytest.param(
            {"type": "image", "source": {"type": "url", "url": ""}}, _omitted("image "), id="no-url"
        ),
        pytest.param(
            {
                "type": "document",
                "source": {"type": "base64", "media_type": "application/pdf", "data": PDF_B64},
            },
            {
                "type": "file",
                "file": {"file_data": f"data:application/pdf;base64,{PDF_B64}", "filename": "document.pdf"},
            },
            id="base64-pdf",
        ),
        pytest.param(
            {
                "type": "document",
                "source": {"type": "text", "media_type": "text/plain", "data": "Q3 revenue: 4.2M"},
            },
            {"type": "text", "text": "Q3 revenue: 4.2M"},
            id="text-document",
        ),
        # A text document without its text is sent as empty text, never as a made-up word.
        pytest.param(
            {"type": "document", "source": {"type": "text", "media_type": "text/plain"}},
            {"type": "text", "text": ""},
            id="text-document-without-data",
        ),
        pytest.param(
            {"type": "document", "source": {"type": "url", "url": "https://example.com/report.pdf"}},
            _omitted("document https://example.com/report.pdf"),
            id="url-pdf",
        ),
        pytest.param(
            {"type": "document", "source": {"type": "file", "file_id": FILE_ID}},
            _omitted(f"document {FILE_ID}"),
            id="files-api-document",
        ),
        pytest.param(
            {"type": "document", "source": {"type": "content", "content": [SHOT]}},
            _omitted("document content"),
            id="content-document",
        ),
        # OpenAI's own parts, kept when they were stored, go back unchanged.
        pytest.param(AUDIO, AUDIO, id="input-audio"),
        pytest.param(
            {"type": "file", "file": {"file_id": "file-6F2ksmvXxt4VdoqmHRw6kL"}},
            {"type": "file", "file": {"file_id": "file-6F2ksmvXxt4VdoqmHRw6kL"}},
            id="openai-file",
        ),
        # Any other block travels as its text, or by its type when it has none OpenAI could read.
        pytest.param(
            {"type": "input_file", "file_id": "file-6F2ksmvXxt4VdoqmHRw6kL"},
            {"type": "text", "text": "[input_file]"},
            id="responses-input-file",
        ),
        pytest.param(
            SEARCH_RESULT,
            {
                "type": "text",
                "text": json.dumps(
                    {k: v for k, v in SEARCH_RESULT.items() if k != "type"}, ensure_ascii=False
                ),
            },
            id="search-result",
        ),
    ],
)
def test_a_user_content_block_renders_as_this_openai_part(
    block: dict[str, Any], part: dict[str, Any]
) -> None:
    turn = {"role": "user", "content": [{"type": "text", "text": "What does this show?"}, block, SHOT]}
    assert openai_turn(turn) == [
        {"role": "user", "content": [{"type": "text", "text": "What does this show?"}, part, SHOT_PART]}
    ]


def test_openai_attachments_survive_the_round_trip_through_storage() -> None:
    # What a client sent as OpenAI parts is what the next request carries (a PDF's name excepted:
    # it is stored as an Anthropic document, which has none).
    message = {
        "role": "user",
        "content": [
            {"type": "text", "text": "Compare the chart, the report and the recording."},
            {"type": "image_url", "image_url": {"url": CHART_URL, "detail": "high"}},
            {
                "type": "file",
                "file": {"filename": "q3.pdf", "file_data": f"data:application/pdf;base64,{PDF_B64}"},
            },
            AUDIO,
        ],
    }
    reply = _assistant(_call("get_weather", '{"city": "Paris"}'))
    result = {"role": "tool", "tool_call_id": "call_abc", "content": ""}
    assert render_openai(rows_of([message, reply, result], len)) == [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "Compare the chart, the report and the recording."},
                SHOT_PART,
                {
                    "type": "file",
                    "file": {
                        "file_data": f"data:application/pdf;base64,{PDF_B64}",
                        "filename": "document.pdf",
                    },
                },
                AUDIO,
            ],
        },
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_abc",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_abc", "content": "(the tool returned no output)"},
    ]
