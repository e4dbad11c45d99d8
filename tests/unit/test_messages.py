"""normalize(): Anthropic and OpenAI message dicts become parts, or a typed error that names the problem."""

from __future__ import annotations

import json
from typing import Any

import pytest

from sleepcompact.domain.errors import (
    ContentTooLarge,
    EmptyContent,
    InvalidEncoding,
    InvalidMessage,
    MalformedContent,
    UnknownKind,
    UnknownRole,
)
from sleepcompact.domain.messages import (
    IMAGE_TOKENS,
    MESSAGE_OVERHEAD,
    content_text,
    image_count,
    normalize,
    part_tokens,
)


def words(text: str) -> int:
    """A transparent stand-in tokenizer: one token per whitespace-separated word."""
    return len(text.split())


# -- Anthropic shapes ---------------------------------------------------------------------------------


def test_anthropic_string_content_is_one_message_part() -> None:
    msg = {"role": "user", "content": "What is in /tmp?"}
    norm = normalize(msg)
    assert len(norm.parts) == 1
    part = norm.parts[0]
    assert (part.role, part.kind, part.content) == ("user", "message", "What is in /tmp?")
    assert part.tool_call_id is None
    assert part.tool_name is None
    assert part.metadata == {}
    assert norm.tool_call_ids == ()
    assert norm.tool_result_ids == ()


def test_anthropic_system_message() -> None:
    norm = normalize({"role": "system", "content": "You are terse."})
    assert [(p.role, p.kind, p.content) for p in norm.parts] == [("system", "message", "You are terse.")]


def test_anthropic_assistant_text_and_two_tool_uses_become_three_parts_in_order() -> None:
    msg = {
        "role": "assistant",
        "content": [
            {"type": "text", "text": "Let me look."},
            {"type": "tool_use", "id": "toolu_01", "name": "ls", "input": {"path": "/tmp"}},
            {"type": "tool_use", "id": "toolu_02", "name": "cat", "input": {"path": "/tmp/a"}},
        ],
    }
    norm = normalize(msg)
    assert [p.kind for p in norm.parts] == ["message", "tool_call", "tool_call"]
    assert [p.role for p in norm.parts] == ["assistant"] * 3
    assert norm.parts[0].content == "Let me look."
    assert [p.tool_call_id for p in norm.parts] == [None, "toolu_01", "toolu_02"]
    assert [p.tool_name for p in norm.parts] == [None, "ls", "cat"]
    assert norm.parts[1].content == [
        {"type": "tool_use", "id": "toolu_01", "name": "ls", "input": {"path": "/tmp"}}
    ]
    assert norm.parts[2].content == [
        {"type": "tool_use", "id": "toolu_02", "name": "cat", "input": {"path": "/tmp/a"}}
    ]
    assert norm.tool_call_ids == ("toolu_01", "toolu_02")


def test_anthropic_tool_use_without_text_has_no_message_part() -> None:
    msg = {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "ls", "input": {}}]}
    norm = normalize(msg)
    assert [p.kind for p in norm.parts] == ["tool_call"]


def test_anthropic_user_tool_results_then_text() -> None:
    msg = {
        "role": "user",
        "content": [
            {"type": "tool_result", "tool_use_id": "toolu_01", "content": "a.txt b.txt"},
            {
                "type": "tool_result",
                "tool_use_id": "toolu_02",
                "content": [{"type": "text", "text": "hello"}],
                "is_error": True,
            },
            {"type": "text", "text": "Now summarize."},
        ],
    }
    norm = normalize(msg)
    assert [(p.role, p.kind) for p in norm.parts] == [
        ("tool", "tool_result"),
        ("tool", "tool_result"),
        ("user", "message"),
    ]
    assert [p.tool_call_id for p in norm.parts] == ["toolu_01", "toolu_02", None]
    assert norm.parts[0].content == "a.txt b.txt"
    # A single text block inside a result is stored as plain text.
    assert norm.parts[1].content == "hello"
    assert norm.parts[1].metadata == {"is_error": True}
    assert norm.parts[0].metadata == {}
    assert norm.parts[2].content == "Now summarize."
    assert norm.tool_result_ids == ("toolu_01", "toolu_02")


def test_tool_results_come_first_even_when_text_precedes_them() -> None:
    msg = {
        "role": "user",
        "content": [
            {"type": "text", "text": "here you go"},
            {"type": "tool_result", "tool_use_id": "t1", "content": "out"},
        ],
    }
    norm = normalize(msg)
    assert [p.kind for p in norm.parts] == ["tool_result", "message"]


def test_tool_summary_and_include_in_history_are_carried_in_metadata() -> None:
    msg = {
        "role": "user",
        "content": [
            {
                "type": "tool_result",
                "tool_use_id": "t1",
                "content": "x" * 500,
                "tool_summary": "500 x characters",
                "include_in_history": True,
            }
        ],
    }
    (part,) = normalize(msg).parts
    assert part.metadata == {"tool_summary": "500 x characters", "include_in_history": True}


def test_openai_tool_message_carries_tool_summary_metadata() -> None:
    msg = {"role": "tool", "tool_call_id": "c1", "content": "big output", "tool_summary": "short"}
    (part,) = normalize(msg).parts
    assert part.metadata == {"tool_summary": "short"}


def test_empty_tool_summary_is_rejected() -> None:
    msg = {"role": "tool", "tool_call_id": "c1", "content": "out", "tool_summary": "  "}
    with pytest.raises(MalformedContent, match="tool_summary"):
        normalize(msg)


# -- OpenAI shapes ------------------------------------------------------------------------------------


def test_openai_assistant_with_content_and_tool_calls() -> None:
    msg = {
        "role": "assistant",
        "content": "Checking both.",
        "tool_calls": [
            {
                "id": "call_a",
                "type": "function",
                "function": {"name": "read_file", "arguments": '{"path": "a.py", "lines": [1, 2]}'},
            },
            {"id": "call_b", "type": "function", "function": {"name": "now", "arguments": ""}},
        ],
    }
    norm = normalize(msg)
    assert [p.kind for p in norm.parts] == ["message", "tool_call", "tool_call"]
    assert norm.parts[0].content == "Checking both."
    assert norm.tool_call_ids == ("call_a", "call_b")
    assert norm.parts[1].tool_name == "read_file"
    # Arguments arrive as a JSON string and are stored as the dict input of an Anthropic tool_use.
    assert norm.parts[1].content == [
        {"type": "tool_use", "id": "call_a", "name": "read_file", "input": {"path": "a.py", "lines": [1, 2]}}
    ]
    assert norm.parts[2].content == [{"type": "tool_use", "id": "call_b", "name": "now", "input": {}}]


def test_openai_assistant_with_null_content_and_tool_call() -> None:
    msg = {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}],
    }
    norm = normalize(msg)
    assert [p.kind for p in norm.parts] == ["tool_call"]


def test_openai_tool_role_becomes_a_tool_result() -> None:
    norm = normalize({"role": "tool", "tool_call_id": "call_a", "content": "print('hi')"})
    (part,) = norm.parts
    assert (part.role, part.kind, part.tool_call_id, part.content) == (
        "tool",
        "tool_result",
        "call_a",
        "print('hi')",
    )
    assert norm.tool_result_ids == ("call_a",)


# -- images ------------------------------------------------------------------------------------------


def test_anthropic_base64_image_block_is_kept() -> None:
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}}
    msg = {"role": "user", "content": [{"type": "text", "text": "What is this?"}, image]}
    (part,) = normalize(msg).parts
    assert part.content == [{"type": "text", "text": "What is this?"}, image]
    assert image_count(part.content) == 1


def test_openai_image_url_data_url_becomes_base64_source() -> None:
    msg = {
        "role": "user",
        "content": [
            {"type": "text", "text": "look"},
            {"type": "image_url", "image_url": {"url": "data:image/jpeg;base64,/9j/4AAQSk"}},
        ],
    }
    (part,) = normalize(msg).parts
    assert part.content == [
        {"type": "text", "text": "look"},
        {"type": "image", "source": {"type": "base64", "media_type": "image/jpeg", "data": "/9j/4AAQSk"}},
    ]


def test_openai_image_url_http_becomes_url_source() -> None:
    msg = {
        "role": "user",
        "content": [{"type": "image_url", "image_url": {"url": "https://example.com/cat.png"}}],
    }
    (part,) = normalize(msg).parts
    assert part.content == [
        {"type": "image", "source": {"type": "url", "url": "https://example.com/cat.png"}}
    ]


def test_image_without_source_is_malformed() -> None:
    with pytest.raises(MalformedContent, match="source"):
        normalize({"role": "user", "content": [{"type": "image"}]})


# -- kind ----------------------------------------------------------------------------------------------


def test_kind_context_is_kept() -> None:
    norm = normalize({"role": "user", "kind": "context", "content": "The repo is a Django app."})
    assert [(p.role, p.kind, p.content) for p in norm.parts] == [
        ("user", "context", "The repo is a Django app.")
    ]


def test_kind_context_rejects_tool_results() -> None:
    msg = {"role": "tool", "kind": "context", "tool_call_id": "c1", "content": "out"}
    with pytest.raises(UnknownKind, match="context"):
        normalize(msg)


@pytest.mark.parametrize("kind", ["summary", "bogus", "tool_call"])
def test_unknown_or_reserved_kind_is_rejected(kind: str) -> None:
    with pytest.raises(UnknownKind) as info:
        normalize({"role": "user", "kind": kind, "content": "hi"})
    assert repr(kind) in str(info.value)


# -- raw ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "msg",
    [
        {"role": "user", "content": "héllo wörld ✓ 日本語 🎉"},
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "ünïcode"},
                {"type": "tool_use", "id": "t1", "name": "f", "input": {"q": "Ω", "n": [1, 2.5, None, True]}},
            ],
            "extra_field": {"nested": "kept"},
        },
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "c", "type": "function", "function": {"name": "f", "arguments": '{"a":1}'}}
            ],
        },
    ],
)
def test_raw_is_the_exact_json_of_the_input(msg: dict[str, Any]) -> None:
    norm = normalize(msg)
    assert json.loads(norm.raw) == msg
    # Unicode is stored as itself, not as \u escapes.
    for ch in ("é", "日本語", "🎉", "Ω"):
        if ch in json.dumps(msg, ensure_ascii=False):
            assert ch in norm.raw


def test_raw_does_not_include_normalization() -> None:
    msg = {"role": "tool", "tool_call_id": "c1", "content": "r"}
    assert json.loads(normalize(msg).raw) == msg


# -- errors --------------------------------------------------------------------------------------------


def test_unknown_role_names_the_role() -> None:
    with pytest.raises(UnknownRole) as info:
        normalize({"role": "robot", "content": "beep"})
    assert "'robot'" in str(info.value)


def test_missing_role_is_unknown_role() -> None:
    with pytest.raises(UnknownRole, match="None"):
        normalize({"content": "beep"})


def test_role_tool_in_anthropic_format_is_unknown_role() -> None:
    with pytest.raises(UnknownRole) as info:
        normalize({"role": "tool", "tool_call_id": "c1", "content": "out"}, fmt="anthropic")
    assert "tool" in str(info.value)
    # The same message is fine when the format is open.
    assert normalize({"role": "tool", "tool_call_id": "c1", "content": "out"}).parts[0].kind == "tool_result"


def test_openai_shape_in_anthropic_format_is_malformed() -> None:
    msg = {
        "role": "assistant",
        "content": "x",
        "tool_calls": [{"id": "c", "type": "function", "function": {"name": "f", "arguments": "{}"}}],
    }
    with pytest.raises(MalformedContent, match="anthropic"):
        normalize(msg, fmt="anthropic")


def test_anthropic_shape_in_openai_format_is_malformed() -> None:
    msg = {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "f", "input": {}}]}
    with pytest.raises(MalformedContent, match="openai"):
        normalize(msg, fmt="openai")


def test_unknown_format_is_malformed() -> None:
    with pytest.raises(MalformedContent, match="format"):
        normalize({"role": "user", "content": "x"}, fmt="gemini")  # type: ignore[arg-type]


@pytest.mark.parametrize("content", ["", "   ", "\n\t ", [], [{"type": "text", "text": ""}], None])
def test_empty_content_is_rejected(content: object) -> None:
    with pytest.raises(EmptyContent) as info:
        normalize({"role": "user", "content": content})
    assert "user" in str(info.value)


def test_empty_assistant_content_names_the_role() -> None:
    with pytest.raises(EmptyContent, match="assistant"):
        normalize({"role": "assistant", "content": [{"type": "text", "text": "  "}]})


def test_content_too_large_reports_size_and_limit() -> None:
    msg = {"role": "user", "content": "x" * 200}
    with pytest.raises(ContentTooLarge) as info:
        normalize(msg, max_bytes=100)
    err = info.value
    assert err.limit == 100
    assert err.size == len(json.dumps(msg, separators=(",", ":")).encode("utf-8"))
    assert err.size > 100
    assert "100" in str(err)
    assert str(err.size) in str(err)


def test_content_size_is_measured_in_utf8_bytes() -> None:
    # 40 characters but 120 bytes of UTF-8.
    msg = {"role": "user", "content": "日" * 40}
    normalize(msg, max_bytes=200)
    with pytest.raises(ContentTooLarge):
        normalize(msg, max_bytes=100)


def test_content_just_under_the_limit_is_accepted() -> None:
    msg = {"role": "user", "content": "abc"}
    size = len(json.dumps(msg, separators=(",", ":")).encode("utf-8"))
    assert normalize(msg, max_bytes=size).parts[0].content == "abc"
    with pytest.raises(ContentTooLarge):
        normalize(msg, max_bytes=size - 1)


def test_invalid_utf8_bytes_are_rejected() -> None:
    with pytest.raises(InvalidEncoding, match="UTF-8"):
        normalize({"role": "user", "content": b"\xff\xfe"})


def test_valid_utf8_bytes_are_decoded() -> None:
    norm = normalize({"role": "user", "content": "héllo".encode()})
    assert norm.parts[0].content == "héllo"
    assert json.loads(norm.raw) == {"role": "user", "content": "héllo"}


def test_lone_surrogate_is_rejected() -> None:
    with pytest.raises(InvalidEncoding, match="surrogate"):
        normalize({"role": "user", "content": "bad \ud800 text"})


def test_lone_surrogate_deep_inside_a_tool_input_is_rejected() -> None:
    msg = {
        "role": "assistant",
        "content": [{"type": "tool_use", "id": "t", "name": "f", "input": {"a": ["ok", "\udfff"]}}],
    }
    with pytest.raises(InvalidEncoding):
        normalize(msg)


def test_openai_arguments_that_are_not_json_are_malformed() -> None:
    msg = {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{not json"}}],
    }
    with pytest.raises(MalformedContent, match="not valid JSON"):
        normalize(msg)


def test_openai_arguments_that_are_a_json_list_are_malformed() -> None:
    msg = {
        "role": "assistant",
        "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": "[1, 2]"}}],
    }
    with pytest.raises(MalformedContent, match="object"):
        normalize(msg)


def test_tool_use_in_a_user_message_is_malformed() -> None:
    msg = {"role": "user", "content": [{"type": "tool_use", "id": "t1", "name": "f", "input": {}}]}
    with pytest.raises(MalformedContent, match="assistant"):
        normalize(msg)


def test_tool_result_in_an_assistant_message_is_malformed() -> None:
    msg = {"role": "assistant", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "x"}]}
    with pytest.raises(MalformedContent, match="user"):
        normalize(msg)


def test_block_without_type_is_malformed() -> None:
    with pytest.raises(MalformedContent, match="'type'"):
        normalize({"role": "user", "content": [{"text": "no type"}]})


def test_an_unknown_block_type_is_kept_verbatim() -> None:
    # A future block type is stored and passed back as received (only tool_use/tool_result pair up).
    block = {"type": "hologram", "data": "x", "cache_control": {"type": "ephemeral"}}
    (part,) = normalize({"role": "user", "content": [block]}).parts
    assert part.content == [block]


def test_integer_content_is_malformed() -> None:
    with pytest.raises(MalformedContent, match="int"):
        normalize({"role": "user", "content": 42})


def test_message_that_is_not_a_dict_is_malformed() -> None:
    with pytest.raises(MalformedContent, match="list"):
        normalize(["role", "user"])


def test_tool_use_without_id_is_malformed() -> None:
    msg = {"role": "assistant", "content": [{"type": "tool_use", "name": "f", "input": {}}]}
    with pytest.raises(MalformedContent, match="id"):
        normalize(msg)


def test_tool_calls_on_a_user_message_are_malformed() -> None:
    msg = {
        "role": "user",
        "content": "hi",
        "tool_calls": [{"id": "c", "type": "function", "function": {"name": "f", "arguments": "{}"}}],
    }
    with pytest.raises(MalformedContent, match="assistant"):
        normalize(msg)


def test_mixed_openai_and_anthropic_tool_shapes_are_malformed() -> None:
    msg = {
        "role": "assistant",
        "content": [{"type": "tool_use", "id": "t", "name": "f", "input": {}}],
        "tool_calls": [{"id": "c", "type": "function", "function": {"name": "f", "arguments": "{}"}}],
    }
    with pytest.raises(MalformedContent, match="mixes"):
        normalize(msg)


def test_every_error_is_an_invalid_message() -> None:
    for exc in (UnknownRole, UnknownKind, EmptyContent, ContentTooLarge, InvalidEncoding, MalformedContent):
        assert issubclass(exc, InvalidMessage)


# -- token costs ------------------------------------------------------------------------------------


def test_part_tokens_text_only_is_count_plus_overhead() -> None:
    text = "one two three four five"
    assert MESSAGE_OVERHEAD == 4
    assert part_tokens(text, words) == words(text) + 4 == 9
    assert part_tokens([{"type": "text", "text": text}], words) == 9


def test_part_tokens_image_adds_1600() -> None:
    content: list[dict[str, Any]] = [
        {"type": "text", "text": "what is this"},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AAAA"}},
    ]
    assert IMAGE_TOKENS == 1600
    assert part_tokens(content, words) == 3 + 1600 + 4
    two = [*content, {"type": "image", "source": {"type": "url", "url": "https://x/y.png"}}]
    assert part_tokens(two, words) == 3 + 2 * 1600 + 4


def test_part_tokens_counts_tool_use_name_and_input() -> None:
    content: list[dict[str, Any]] = [
        {"type": "tool_use", "id": "t", "name": "grep", "input": {"pattern": "foo"}}
    ]
    assert content_text(content) == 'grep {"pattern": "foo"}'
    assert part_tokens(content, words) == 3 + 4


def test_content_text_joins_text_blocks() -> None:
    content: list[dict[str, Any]] = [
        {"type": "text", "text": "a"},
        {"type": "image", "source": {}},
        {"type": "text", "text": "b"},
    ]
    assert content_text(content) == "a\nb"
