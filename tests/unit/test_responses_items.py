"""OpenAI Responses API / Agents SDK item lists read as chat messages, nothing lost or misattributed.

``agent_logs.responses_items`` turns each item of ``result.to_input_list()`` (or a Responses API
``input``/``output`` list) into one chat message named ``item N``: a message item keeps its role and
content (input messages carry no ``type``, only a ``role``), a ``function_call`` becomes an assistant
tool call under its ``call_id``, a ``function_call_output`` a tool result answering that id (text and
part lists kept, anything else as JSON text), and any other item (reasoning) an assistant block kept
verbatim. An item that is not an object is refused, naming it. ``looks_like_responses`` and
``looks_like_langchain`` decide which reader a JSON array goes to. The item shapes are the ones the
real SDK writes (see ``tests/integration/test_agent_logs.py``, which drives it).
"""

from __future__ import annotations

from typing import Any

import pytest

from sleepcompact.domain.agent_logs import (
    Located,
    looks_like_langchain,
    looks_like_responses,
    responses_items,
)
from sleepcompact.domain.errors import ImportFormatError

USER = {"role": "user", "content": "Weather in Paris?"}  # an input message: no "type"
REASONING = {
    "id": "rs_1",
    "summary": [{"text": "Look it up.", "type": "summary_text"}],
    "type": "reasoning",
}
CALL = {
    "arguments": '{"city": "Paris"}',
    "call_id": "call_paris",
    "name": "get_weather",
    "type": "function_call",
    "id": "fc_1",
    "status": "completed",
}
OUTPUT = {"call_id": "call_paris", "output": "Sunny in Paris", "type": "function_call_output"}
ANSWER = {
    "id": "msg_1",
    "content": [{"annotations": [], "text": "It is sunny.", "type": "output_text"}],
    "role": "assistant",
    "status": "completed",
    "type": "message",
}


def read(*items: Any) -> list[Located]:
    return responses_items(list(items), ImportFormatError)


def test_an_agents_sdk_run_reads_as_one_chat_message_per_item() -> None:
    assert read(USER, REASONING, CALL, OUTPUT, ANSWER) == [
        Located({"role": "user", "content": "Weather in Paris?"}, "item 0", None),
        Located({"role": "assistant", "content": [REASONING]}, "item 1", None),
        Located(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "call_paris",
                        "type": "function",
                        "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
                    }
                ],
            },
            "item 2",
            None,
        ),
        Located({"role": "tool", "tool_call_id": "call_paris", "content": "Sunny in Paris"}, "item 3", None),
        Located({"role": "assistant", "content": ANSWER["content"]}, "item 4", None),
    ]


def test_responses_items_carry_no_line_and_no_sent_time() -> None:
    for found in read(USER, REASONING, CALL, OUTPUT, ANSWER):
        assert found.line is None
        assert found.sent_at is None


def test_a_typed_message_item_keeps_its_role_and_content() -> None:
    developer = {
        "type": "message",
        "role": "developer",
        "content": [{"type": "input_text", "text": "Be brief."}],
    }
    assert read(developer) == [
        Located(
            {"role": "developer", "content": [{"type": "input_text", "text": "Be brief."}]}, "item 0", None
        )
    ]


def test_an_untyped_item_without_a_role_is_kept_verbatim_as_an_assistant_block() -> None:
    odd = {"id": "x_1", "note": "unknown item"}
    assert read(odd) == [Located({"role": "assistant", "content": [odd]}, "item 0", None)]


def test_an_unknown_item_type_is_kept_verbatim_even_with_a_role() -> None:
    search = {"type": "web_search_call", "id": "ws_1", "status": "completed", "role": "assistant"}
    assert read(search) == [Located({"role": "assistant", "content": [search]}, "item 0", None)]


def test_the_verbatim_block_is_a_copy_of_the_item() -> None:
    (found,) = read(REASONING)
    (block,) = found.data["content"]
    assert block == REASONING and block is not REASONING


def test_a_function_call_without_arguments_gets_empty_arguments() -> None:
    bare = {"call_id": "call_now", "name": "get_time", "type": "function_call"}
    (found,) = read(bare)
    assert found.data["tool_calls"] == [
        {"id": "call_now", "type": "function", "function": {"name": "get_time", "arguments": ""}}
    ]


def test_a_function_output_given_as_parts_is_kept_as_a_list() -> None:
    parts = [{"type": "input_text", "text": "Sunny"}, {"type": "input_image", "image_url": "https://x/y.png"}]
    (found,) = read({**OUTPUT, "output": parts})
    assert found.data == {"role": "tool", "tool_call_id": "call_paris", "content": parts}


def test_a_function_output_that_is_not_text_or_parts_is_kept_as_json_text() -> None:
    (as_object,) = read({**OUTPUT, "output": {"temp": 24, "sky": "clear"}})
    assert as_object.data == {
        "role": "tool",
        "tool_call_id": "call_paris",
        "content": '{"temp": 24, "sky": "clear"}',
    }
    (missing,) = read({"call_id": "call_x", "type": "function_call_output"})
    assert missing.data == {"role": "tool", "tool_call_id": "call_x", "content": "null"}


def test_a_function_output_given_as_text_is_not_quoted() -> None:
    (found,) = read({**OUTPUT, "output": ""})
    assert found.data["content"] == ""


@pytest.mark.parametrize("bad", ["just text", None, 3, ["nested"]], ids=["str", "null", "int", "list"])
def test_an_item_that_is_not_an_object_is_refused_naming_it(bad: Any) -> None:
    with pytest.raises(ImportFormatError) as caught:
        read(USER, bad)
    assert str(caught.value) == "item 1 is not an object"
    assert caught.value.reason == "item 1 is not an object"


def test_an_empty_item_list_reads_as_no_messages() -> None:
    assert read() == []


# -- detection ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["message", "function_call", "function_call_output", "reasoning"])
def test_a_list_with_one_responses_typed_item_is_a_responses_log(kind: str) -> None:
    assert looks_like_responses(["text", {"role": "user", "content": "hi"}, {"type": kind}])


def test_a_list_without_responses_typed_items_is_not_a_responses_log() -> None:
    assert not looks_like_responses([{"role": "user", "content": "hi"}, {"type": "human", "data": {}}])
    assert not looks_like_responses(["message", ["function_call"]])
    assert not looks_like_responses([])


def test_a_langchain_log_is_a_list_of_typed_items_each_with_data() -> None:
    assert looks_like_langchain([{"type": "human", "data": {"content": "hi"}}, {"type": "ai", "data": {}}])


def test_an_item_with_data_but_a_foreign_type_is_not_langchain() -> None:
    assert not looks_like_langchain([{"type": "human", "data": {}}, {"type": "message", "data": {}}])
    assert not looks_like_langchain([{"type": "human", "data": {}}, {"type": "human", "data": "hi"}])
    assert not looks_like_langchain([{"type": "human", "data": {}}, "human"])
    assert not looks_like_langchain([])
