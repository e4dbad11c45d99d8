"""LangChain ``messages_to_dict`` output read as OpenAI chat messages, tool calls intact.

``agent_logs.langchain_messages`` maps every ``{"type": ..., "data": {...}}`` item to one chat message
named ``message N``: human (and its chunk) to ``user``, ``system`` as is, ai (and its chunk) to an
assistant message whose tool calls come from ``tool_calls`` (arguments as JSON text, non-ASCII kept),
never duplicated from the Anthropic-style ``tool_use`` blocks its content may also hold; ``tool`` to a
result answering its ``tool_call_id``, ``function`` to a named function result, and ``chat`` to a
message in its own role. The items are written as ``messages_to_dict`` writes them (langchain_core).
"""

from __future__ import annotations

from typing import Any

from sleepcompact.domain.agent_logs import Located, langchain_messages


def item(kind: str, content: Any, **fields: Any) -> dict[str, Any]:
    """One ``messages_to_dict`` entry, with the bookkeeping fields every message carries."""
    data: dict[str, Any] = {
        "content": content,
        "additional_kwargs": {},
        "response_metadata": {},
        "type": kind,
        "name": None,
        "id": None,
    }
    data.update(fields)
    return {"type": kind, "data": data}


def ai(content: Any, calls: list[dict[str, Any]] | None = None, *, kind: str = "ai") -> dict[str, Any]:
    return item(kind, content, tool_calls=calls or [], invalid_tool_calls=[], usage_metadata=None)


def call(call_id: str, args: dict[str, Any]) -> dict[str, Any]:
    return {"name": "get_weather", "args": args, "id": call_id, "type": "tool_call"}


def fn(call_id: str, arguments: str) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": "get_weather", "arguments": arguments}}


def test_a_langchain_chat_reads_as_one_chat_message_per_item_in_order() -> None:
    items = [
        item("system", "Be terse."),
        item("human", "Weather in Zürich?"),
        ai("", [call("call_0", {"city": "Zürich"})]),
        item("tool", "Snow, -3C", tool_call_id="call_0", artifact=None, status="success"),
        item("function", "-3C", name="get_weather"),
        item("chat", "Looks right.", role="critic"),
        ai("Snowing in Zürich."),
    ]
    assert langchain_messages(items) == [
        Located({"role": "system", "content": "Be terse."}, "message 0", None),
        Located({"role": "user", "content": "Weather in Zürich?"}, "message 1", None),
        Located(
            {"role": "assistant", "content": None, "tool_calls": [fn("call_0", '{"city": "Zürich"}')]},
            "message 2",
            None,
        ),
        Located({"role": "tool", "tool_call_id": "call_0", "content": "Snow, -3C"}, "message 3", None),
        Located({"role": "function", "name": "get_weather", "content": "-3C"}, "message 4", None),
        Located({"role": "critic", "content": "Looks right."}, "message 5", None),
        Located({"role": "assistant", "content": "Snowing in Zürich."}, "message 6", None),
    ]


def test_streamed_chunks_read_as_the_messages_they_are_chunks_of() -> None:
    chunk = ai("Hello.", kind="AIMessageChunk")
    chunk["data"].update(tool_call_chunks=[], chunk_position=None)
    items = [item("HumanMessageChunk", "Hi"), chunk]
    assert langchain_messages(items) == [
        Located({"role": "user", "content": "Hi"}, "message 0", None),
        Located({"role": "assistant", "content": "Hello."}, "message 1", None),
    ]


def test_langchain_messages_carry_no_line_and_no_sent_time() -> None:
    items = [item("human", "Hi"), ai("Hello."), item("chat", "x", role="critic")]
    assert all(m.line is None and m.sent_at is None for m in langchain_messages(items))


def test_a_tool_call_without_args_gets_an_empty_json_object() -> None:
    (found,) = langchain_messages([ai("", [{"name": "get_weather", "id": "call_0"}])])
    assert found.data["tool_calls"] == [fn("call_0", "{}")]


def test_parallel_tool_calls_keep_their_order_and_ids() -> None:
    calls = [call("call_0", {"city": "Paris"}), call("call_1", {"city": "Rome", "days": [1, 2]})]
    (found,) = langchain_messages([ai("Checking both.", calls)])
    assert found.data == {
        "role": "assistant",
        "content": "Checking both.",
        "tool_calls": [fn("call_0", '{"city": "Paris"}'), fn("call_1", '{"city": "Rome", "days": [1, 2]}')],
    }


def test_tool_use_blocks_are_dropped_from_the_content_in_favour_of_tool_calls() -> None:
    blocks = [
        {"type": "text", "text": "Let me check Oslo."},
        {"type": "tool_use", "id": "toolu_oslo", "name": "get_weather", "input": {"city": "Oslo"}},
    ]
    (found,) = langchain_messages([ai(blocks, [call("toolu_oslo", {"city": "Oslo"})])])
    assert found.data == {
        "role": "assistant",
        "content": [{"type": "text", "text": "Let me check Oslo."}],
        "tool_calls": [fn("toolu_oslo", '{"city": "Oslo"}')],
    }


def test_content_of_only_tool_use_blocks_becomes_no_content() -> None:
    blocks = [{"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {}}, "plain"]
    (found,) = langchain_messages([ai(blocks[:1], [call("toolu_1", {})])])
    assert found.data["content"] is None
    (kept,) = langchain_messages([ai(blocks)])
    assert kept.data == {"role": "assistant", "content": ["plain"]}


def test_tool_calls_that_are_not_objects_are_ignored() -> None:
    (found,) = langchain_messages([ai("Hi.", ["call_0", None])])  # type: ignore[list-item]
    assert found.data == {"role": "assistant", "content": "Hi."}
    missing = item("ai", "Hi.")  # tool_calls absent or null
    also = item("ai", "Hi.", tool_calls=None)
    assert [m.data for m in langchain_messages([missing, also])] == [
        {"role": "assistant", "content": "Hi."}
    ] * 2


def test_a_chat_message_without_a_role_keeps_a_null_role() -> None:
    (found,) = langchain_messages([item("chat", "x")])
    assert found.data == {"role": None, "content": "x"}


def test_a_call_whose_arguments_did_not_parse_is_a_call_with_none_and_its_text_is_kept() -> None:
    # What an OpenAI model wrote when max_tokens cut its arguments short: LangChain keeps it in
    # ``invalid_tool_calls``, and its agents answer it with an error ToolMessage.
    broken = {"name": "get_weather", "args": '{"city": "Par', "id": "call_9", "error": "Unterminated"}
    items = [
        item("ai", "Checking.", tool_calls=[], invalid_tool_calls=[{**broken, "type": "invalid_tool_call"}]),
        item("tool", "Tool call get_weather with id call_9 could not be executed", tool_call_id="call_9"),
    ]
    assert [m.data for m in langchain_messages(items)] == [
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Checking."},
                {"type": "text", "text": '[malformed arguments for get_weather: {"city": "Par]'},
            ],
            "tool_calls": [fn("call_9", "{}")],
        },
        {
            "role": "tool",
            "tool_call_id": "call_9",
            "content": "Tool call get_weather with id call_9 could not be executed",
        },
    ]


def test_a_malformed_call_without_an_id_or_a_name_is_kept_as_text_only() -> None:
    nameless = {
        "name": None,
        "args": "{'city': Rome}",
        "id": None,
        "error": None,
        "type": "invalid_tool_call",
    }
    valid = call("call_1", {"city": "Oslo"})
    (message,) = langchain_messages([item("ai", "", tool_calls=[valid], invalid_tool_calls=[nameless])])
    assert message.data == {
        "role": "assistant",
        "content": [{"type": "text", "text": "[malformed arguments for unknown: {'city': Rome}]"}],
        "tool_calls": [fn("call_1", '{"city": "Oslo"}')],
    }


def test_a_malformed_call_with_an_id_but_no_name_is_called_unknown_as_langchain_answers_it() -> None:
    broken = {"name": "", "args": "", "id": "call_3", "error": None, "type": "invalid_tool_call"}
    (message,) = langchain_messages([item("ai", [], tool_calls=[], invalid_tool_calls=[broken])])
    assert message.data["content"] == [{"type": "text", "text": "[malformed arguments for unknown: ]"}]
    assert message.data["tool_calls"] == [
        {"id": "call_3", "type": "function", "function": {"name": "unknown", "arguments": "{}"}}
    ]
