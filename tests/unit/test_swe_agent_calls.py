"""SWE-agent trajectories on small inline samples: tool calls, the ids answering them, and the model.

A trajectory's tool call becomes an OpenAI tool call: its type kept ("function" when it has none), its
arguments kept as text ("" when it has none, a JSON object written as JSON text with non-ASCII kept).
A tool entry's ``tool_call_ids`` may be a list or one id, as JSON text or a Python repr. A malformed
entry is refused with a message naming where it lies. The conversation's model is the replay config's
``agent.model.name``, whether the config is an object or JSON text, unless it is missing or no LLM.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from sleepcompact.domain.errors import ImportFormatError
from sleepcompact.domain.formats import ParsedConversation, parse_import


def _parse(history: list[dict[str, Any]], **doc: Any) -> ParsedConversation:
    (conv,) = parse_import(json.dumps({"history": history, **doc}).encode())
    return conv


def _call_and_result(call: dict[str, Any], ids: Any = None) -> list[dict[str, Any]]:
    """A user turn, an assistant turn making ``call`` (id "a"), and the tool entry answering it."""
    return [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": "", "tool_calls": [call]},
        {"role": "tool", "content": "out", "tool_call_ids": ["a"] if ids is None else ids},
    ]


@pytest.mark.parametrize(
    ("call", "stored"),
    [
        (
            {"id": "a", "type": "function", "function": {"name": "ls", "arguments": '{"d": "."}'}},
            {"id": "a", "type": "function", "function": {"name": "ls", "arguments": '{"d": "."}'}},
        ),
        # no type: a function call; another type is kept as written
        (
            {"id": "a", "function": {"name": "ls", "arguments": "{}"}},
            {"id": "a", "type": "function", "function": {"name": "ls", "arguments": "{}"}},
        ),
        (
            {"id": "a", "type": "custom", "function": {"name": "ls", "arguments": "{}"}},
            {"id": "a", "type": "custom", "function": {"name": "ls", "arguments": "{}"}},
        ),
        # no arguments: empty text
        (
            {"id": "a", "type": "function", "function": {"name": "submit"}},
            {"id": "a", "type": "function", "function": {"name": "submit", "arguments": ""}},
        ),
        # arguments as an object: JSON text, non-ASCII written as itself
        (
            {"id": "a", "function": {"name": "open", "arguments": {"path": "café/ü.py", "line": 3}}},
            {
                "id": "a",
                "type": "function",
                "function": {"name": "open", "arguments": '{"path": "café/ü.py", "line": 3}'},
            },
        ),
    ],
)
def test_a_trajectory_tool_call_becomes_an_openai_tool_call(
    call: dict[str, Any], stored: dict[str, Any]
) -> None:
    conv = _parse(_call_and_result(call))
    assert conv.messages[1] == {"role": "assistant", "content": "", "tool_calls": [stored]}


CALL: dict[str, Any] = {"id": "a", "type": "function", "function": {"name": "ls", "arguments": "{}"}}


@pytest.mark.parametrize("ids", [["a"], '["a"]', "['a']", '"a"', "'a'"])
def test_the_ids_a_tool_entry_answers_may_be_one_id_or_a_list_as_text(ids: Any) -> None:
    conv = _parse(_call_and_result(CALL, ids))
    assert conv.messages[2] == {"role": "tool", "content": "out", "tool_call_id": "a"}


NEEDS_IDS = "history[2]: a tool message needs 'tool_call_ids', a non-empty list of ids"


@pytest.mark.parametrize(
    ("history", "message"),
    [
        (
            _call_and_result({"id": "a", "type": "function", "name": "ls"}),
            "history[1].tool_calls[0] is not an object with a 'function'",
        ),
        (
            _call_and_result({"id": "a", "function": "ls"}),
            "history[1].tool_calls[0] is not an object with a 'function'",
        ),
        (
            [
                {"role": "user", "content": "go"},
                {"role": "assistant", "content": "", "tool_calls": [CALL, "ls"]},
            ],
            "history[1].tool_calls[1] is not an object with a 'function'",
        ),
        (
            [{"role": "user", "content": "go"}, {"role": "assistant", "content": "", "tool_calls": CALL}],
            "history[1].tool_calls must be a list, got dict",
        ),
        (
            [
                {"role": "user", "content": "go"},
                {"role": "assistant", "content": "", "tool_calls": '"ls -a"'},
            ],
            "history[1].tool_calls must be a list, got str",
        ),
        (_call_and_result(CALL, "[oops"), "history[2].tool_call_ids is neither JSON nor a Python literal"),
        (_call_and_result(CALL, []), NEEDS_IDS),
        (_call_and_result(CALL, ["a", ""]), NEEDS_IDS),  # every id must be non-empty text
        (_call_and_result(CALL, ["a", 5]), NEEDS_IDS),
        (_call_and_result(CALL, {"a": "b"}), NEEDS_IDS),
        (_call_and_result(CALL, "{'a': 1}"), NEEDS_IDS),
    ],
)
def test_a_malformed_entry_is_refused_with_where_it_lies(history: list[dict[str, Any]], message: str) -> None:
    with pytest.raises(ImportFormatError) as raised:
        _parse(history)
    assert str(raised.value) == f"<input>: {message}"  # the source is named first: stdin here


HELLO = [{"role": "user", "content": "hello"}]


@pytest.mark.parametrize(
    ("config", "model"),
    [
        ({"agent": {"model": {"name": "gpt-4o"}}}, "gpt-4o"),
        (json.dumps({"agent": {"model": {"name": "claude-3-5-sonnet"}}}), "claude-3-5-sonnet"),
        ({"agent": {"model": {"name": "replay"}}}, None),  # replaying recorded actions is no LLM
        (json.dumps({"agent": {"model": {"name": "human"}}}), None),
        ({"agent": {"model": {"name": ""}}}, None),
        ({"agent": {"model": {"name": 4}}}, None),
        ({"agent": {"model": "gpt-4o"}}, None),  # only agent.model.name names the model
        ({"agent": {"model": None}}, None),
        ({"agent": "default"}, None),
        ({"agent": None}, None),
        ({}, None),
        ("{not json", None),
        (json.dumps(["gpt-4o"]), None),
        (None, None),
    ],
)
def test_the_model_is_the_one_the_replay_config_names(config: Any, model: str | None) -> None:
    assert _parse(HELLO, replay_config=config).model == model


TWO_CALLS: list[dict[str, Any]] = [
    {"role": "user", "content": "go"},
    {"role": "assistant", "content": "", "tool_calls": [CALL, {"id": "b", "function": {"name": "pwd"}}]},
]


def test_one_observation_answering_several_calls_points_the_others_to_the_first() -> None:
    conv = _parse([*TWO_CALLS, {"role": "tool", "content": "out", "tool_call_ids": ["a", "b"]}])
    assert conv.messages[2:] == [
        {"role": "tool", "content": "out", "tool_call_id": "a"},
        {
            "role": "tool",
            "content": "(the output of this call is in the result of tool call a)",
            "tool_call_id": "b",
        },
    ]


def test_an_id_after_the_first_is_named_by_its_position_in_the_entry() -> None:
    with pytest.raises(ImportFormatError) as raised:
        _parse([*TWO_CALLS, {"role": "tool", "content": "out", "tool_call_ids": ["a", "b", "zz"]}])
    assert str(raised.value) == (
        "<input>: history[2][id 2]: tool result for unknown tool call id 'zz': no earlier tool call has it"
    )
