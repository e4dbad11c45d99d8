"""The recall tools' pure part (``domain.recall_tools``): the definitions a caller passes to each API, how
a call the model made is read from each provider's shape, what makes a call unrunnable (answered with an
error the model can read, never raised), how a long original is paged, and the answer's shape.

The integration tests run the tools against a store; these pin what the model sees and sends, exactly.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sleepcompact.domain.recall_tools import (
    DEFAULT_LIMIT,
    MAX_LIMIT,
    READ,
    SEARCH,
    page,
    read_call,
    tool_definitions,
    tool_result,
)


def test_each_api_gets_both_tools_in_its_own_shape() -> None:
    anthropic, openai, responses = (tool_definitions(s) for s in ("anthropic", "openai", "responses"))
    assert [t["name"] for t in anthropic] == [SEARCH, READ]
    assert [t["function"]["name"] for t in openai] == [SEARCH, READ]
    assert [t["name"] for t in responses] == [SEARCH, READ]
    assert all(t["type"] == "function" and "function" in t for t in openai)
    assert all(t["type"] == "function" and "function" not in t for t in responses)
    for a, o, r in zip(anthropic, openai, responses, strict=True):
        assert a["input_schema"] == o["function"]["parameters"] == r["parameters"]
        assert a["description"] == o["function"]["description"] == r["description"]
    assert anthropic[0]["input_schema"]["required"] == ["query"]
    assert anthropic[1]["input_schema"]["required"] == ["seq"]
    assert tool_definitions() == anthropic


SEARCH_ARGS = {"query": "rounding bug", "limit": 3}
CALLS: list[tuple[str, dict[str, Any]]] = [
    ("anthropic", {"type": "tool_use", "id": "toolu_1", "name": SEARCH, "input": SEARCH_ARGS}),
    (
        "openai",
        {
            "id": "call_1",
            "type": "function",
            "function": {"name": SEARCH, "arguments": json.dumps(SEARCH_ARGS)},
        },
    ),
    (
        "responses",
        {"type": "function_call", "call_id": "call_1", "name": SEARCH, "arguments": json.dumps(SEARCH_ARGS)},
    ),
]


@pytest.mark.parametrize(("shape", "raw"), CALLS, ids=[c[0] for c in CALLS])
def test_a_search_call_is_read_from_each_providers_shape(shape: str, raw: dict[str, Any]) -> None:
    call = read_call(raw)
    assert (call.shape, call.name, call.arguments, call.problem) == (shape, SEARCH, SEARCH_ARGS, None)
    assert call.call_id == ("toolu_1" if shape == "anthropic" else "call_1")
    assert (call.query, call.limit) == ("rounding bug", 3)


@pytest.mark.parametrize(("shape", "raw"), CALLS, ids=[c[0] for c in CALLS])
def test_the_answer_goes_back_in_the_calls_own_shape(shape: str, raw: dict[str, Any]) -> None:
    call = read_call(raw)
    ok, failed = tool_result(call, "2 hits"), tool_result(call, "no such seq", is_error=True)
    if shape == "anthropic":
        assert ok == {"type": "tool_result", "tool_use_id": "toolu_1", "content": "2 hits"}
        assert failed == {
            "type": "tool_result",
            "tool_use_id": "toolu_1",
            "content": "no such seq",
            "is_error": True,
        }
    elif shape == "responses":
        assert ok == {"type": "function_call_output", "call_id": "call_1", "output": "2 hits"}
        assert failed == {"type": "function_call_output", "call_id": "call_1", "output": "no such seq"}
    else:
        assert ok == {"role": "tool", "tool_call_id": "call_1", "content": "2 hits"}
        assert failed == {"role": "tool", "tool_call_id": "call_1", "content": "no such seq"}


def _openai(name: str, arguments: Any) -> dict[str, Any]:
    return {"id": "c", "type": "function", "function": {"name": name, "arguments": arguments}}


@pytest.mark.parametrize(
    ("raw", "problem"),
    [
        (_openai(SEARCH, "{not json"), "the arguments are not valid JSON"),
        (_openai(SEARCH, "[1, 2]"), "the arguments must be a JSON object"),
        (_openai(SEARCH, 42), "the arguments must be a JSON object"),
        (
            {"type": "tool_use", "id": "t", "name": SEARCH, "input": ["x"]},
            "the arguments must be a JSON object",
        ),
        (_openai(SEARCH, "[" * 100_000 + "]" * 100_000), "the arguments are nested too deeply"),
        (_openai("rm_rf", "{}"), "unknown tool 'rm_rf'; the recall tools are search_history, read_archived"),
        (_openai(SEARCH, "{}"), "search_history needs a non-empty 'query' string"),
        (_openai(SEARCH, '{"query": "   "}'), "search_history needs a non-empty 'query' string"),
        (_openai(SEARCH, '{"query": 7}'), "search_history needs a non-empty 'query' string"),
        (_openai(SEARCH, '{"query": "x", "limit": "3"}'), "'limit' must be a whole number"),
        (_openai(SEARCH, '{"query": "x", "limit": true}'), "'limit' must be a whole number"),
        (_openai(SEARCH, '{"query": "x", "limit": 2.5}'), "'limit' must be a whole number"),
        (_openai(READ, "{}"), "read_archived needs 'seq', a positive whole number"),
        (_openai(READ, '{"seq": 0}'), "read_archived needs 'seq', a positive whole number"),
        (_openai(READ, '{"seq": true}'), "read_archived needs 'seq', a positive whole number"),
        (_openai(READ, '{"seq": "4"}'), "read_archived needs 'seq', a positive whole number"),
        (_openai(READ, '{"seq": 4, "offset": "10"}'), "'offset' must be a whole number"),
        (
            {"type": "tool_use", "id": "t", "input": {"query": "x"}},
            "unknown tool ''; the recall tools are search_history, read_archived",
        ),
        (
            {"id": "c", "type": "function", "function": "search_history"},
            "unknown tool ''; the recall tools are search_history, read_archived",
        ),
    ],
)
def test_a_call_that_cannot_run_says_why(raw: dict[str, Any], problem: str) -> None:
    call = read_call(raw)
    assert call.problem == problem
    assert call.shape == ("anthropic" if raw.get("type") == "tool_use" else "openai")


@pytest.mark.parametrize(
    "raw",
    [
        _openai(READ, '{"seq": 4}'),
        _openai(READ, '{"seq": 4, "offset": null}'),
        _openai(READ, '{"seq": 4, "offset": 8000}'),
        _openai(SEARCH, '{"query": "x", "limit": 20}'),
        {"type": "function_call", "call_id": "c", "name": READ, "arguments": {"seq": 1}},
    ],
)
def test_a_well_formed_call_has_no_problem(raw: dict[str, Any]) -> None:
    assert read_call(raw).problem is None


@pytest.mark.parametrize("arguments", [None, ""])
def test_no_arguments_read_as_an_empty_object(arguments: str | None) -> None:
    call = read_call(_openai(SEARCH, arguments))
    assert call.arguments == {}
    assert call.problem == "search_history needs a non-empty 'query' string"


def test_a_missing_id_or_name_reads_as_empty_not_as_none() -> None:
    call = read_call({"type": "function_call", "arguments": '{"query": "x"}'})
    assert (call.call_id, call.name, call.shape) == ("", "", "responses")


@pytest.mark.parametrize(
    ("arguments", "limit", "offset"),
    [
        ({"query": "x"}, DEFAULT_LIMIT, 0),
        ({"query": "x", "limit": 0}, DEFAULT_LIMIT, 0),
        ({"query": "x", "limit": 1}, 1, 0),
        ({"query": "x", "limit": 500}, MAX_LIMIT, 0),
        ({"query": "x", "limit": -3}, 1, 0),
        ({"seq": 2, "offset": -40}, DEFAULT_LIMIT, 0),
        ({"seq": 2, "offset": 40}, DEFAULT_LIMIT, 40),
    ],
)
def test_limit_and_offset_stay_in_range(arguments: dict[str, Any], limit: int, offset: int) -> None:
    call = read_call({"type": "tool_use", "id": "t", "name": SEARCH, "input": arguments})
    assert (call.limit, call.offset) == (limit, offset)


def test_a_page_ends_at_the_last_line_break_in_its_second_half() -> None:
    text = "a" * 60 + "\n" + "b" * 20 + " " + "c" * 50
    assert page(text, 0, size=100) == (text[:82], 82)  # the space at 81 is later than the newline at 60
    assert page(text, 82, size=100) == (text[82:], None)
    no_break = "x" * 250
    assert page(no_break, 0, size=100) == ("x" * 100, 100)
    early = "y" * 10 + " " + "z" * 200  # the only break is in the first half: a hard cut, not a tiny page
    assert page(early, 0, size=100) == (early[:100], 100)


@pytest.mark.parametrize(
    ("text", "offset", "expected"),
    [
        ("a" * 60 + "\n" + "b" * 20 + "\n" + "c" * 50, 0, 82),  # the later of two newlines
        ("a" * 60 + " " + "b" * 20 + " " + "c" * 50, 0, 82),  # the later of two spaces
        ("a" * 70 + "\n" + "b" * 100, 0, 71),  # a newline alone is a break
        ("a" * 10 + "\n" + "b" * 200, 0, 100),  # a newline in the first half is too early
        ("a" * 40 + "\n" + "b" * 200, 0, 100),  # 40 of 100: still in the first half
        ("a" * 40 + " " + "b" * 200, 0, 100),  # a space there too
        ("a" * 120 + "\n" + "b" * 200, 100, 200),  # the second page's first half, not the first's
    ],
)
def test_where_a_page_breaks(text: str, offset: int, expected: int) -> None:
    assert page(text, offset, size=100) == (text[offset:expected], expected)


def test_the_last_page_says_there_is_no_more() -> None:
    assert page("short", 0, size=100) == ("short", None)
    assert page("x" * 100, 0, size=100) == ("x" * 100, None)
    assert page("x" * 100, 100, size=100) == ("", None)
    exact = "x" * 60 + " " + "y" * 39  # exactly one page long, with a break in its second half
    assert page(exact, 0, size=100) == (exact, None)


@given(
    st.text(alphabet=st.sampled_from("ab \n"), max_size=600),
    st.integers(min_value=4, max_value=120),
)
def test_reading_page_after_page_gives_back_the_whole_text(text: str, size: int) -> None:
    pieces, offset = [], 0
    while True:
        piece, following = page(text, offset, size)
        assert len(piece) <= size
        if following is None:
            pieces.append(piece)
            break
        assert following > offset and len(piece) > size // 2  # never a page of almost nothing
        pieces.append(piece)
        offset = following
    assert "".join(pieces) == text
