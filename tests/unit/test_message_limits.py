"""A message sleepcompact accepts can always be sent back as strict JSON, and one it cannot is a typed error.

JSON has no NaN or Infinity, so a tool input carrying one (as a Python float, or inside an OpenAI
``arguments`` string, or as a number too large for a float) is refused with ``MalformedContent``
rather than stored and later rendered as invalid JSON. Nesting is bounded by ``MAX_DEPTH``, counted
in objects and lists below the message object itself: at the bound a message is accepted, past it
(by one level or by ten thousand) it is a typed error, never a ``RecursionError``. Whatever is
accepted renders, for both providers, to JSON that a strict parser reads back unchanged.
"""

from __future__ import annotations

import json
import math
from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sleepcompact.domain.errors import ImportFormatError, InvalidMessage, MalformedContent
from sleepcompact.domain.formats import parse_import
from sleepcompact.domain.messages import MAX_DEPTH, normalize
from sleepcompact.domain.records import MessageRecord
from sleepcompact.domain.rendering import render_anthropic, render_openai

NON_FINITE = [math.nan, math.inf, -math.inf]


def tool_use(tool_input: dict[str, Any]) -> dict[str, Any]:
    block = {"type": "tool_use", "id": "toolu_1", "name": "calc", "input": tool_input}
    return {"role": "assistant", "content": [block]}


def openai_call(arguments: str) -> dict[str, Any]:
    call = {"id": "call_1", "type": "function", "function": {"name": "calc", "arguments": arguments}}
    return {"role": "assistant", "content": None, "tool_calls": [call]}


def nested(kind: str, levels: int) -> Any:
    """``levels`` objects or lists, one inside the next, around the number 1 (built without recursion)."""
    value: Any = 1
    for _ in range(levels):
        value = {"k": value} if kind == "dict" else [value]
    return value


def depth(value: Any) -> int:
    """How many objects and lists the deepest path through value crosses."""
    best, stack = 0, [(value, 0)]
    while stack:
        item, above = stack.pop()
        if isinstance(item, dict | list):
            children = item.values() if isinstance(item, dict) else item
            stack.extend((child, above + 1) for child in children)
            best = max(best, above + 1)
    return best


def message_nesting(msg: dict[str, Any]) -> int:
    """The nesting MAX_DEPTH bounds: objects and lists below the message object itself."""
    return depth(msg) - 1


def strict_loads(text: str) -> Any:
    def refuse(name: str) -> None:
        raise ValueError(f"{name} is not JSON")

    return json.loads(text, parse_constant=refuse)


# -- non-finite numbers ---------------------------------------------------------------------------------


@pytest.mark.parametrize("number", NON_FINITE, ids=["nan", "inf", "-inf"])
def test_a_non_finite_float_in_a_tool_input_is_refused(number: float) -> None:
    with pytest.raises(MalformedContent, match="not a finite number"):
        normalize(tool_use({"x": number}))


@pytest.mark.parametrize("number", NON_FINITE, ids=["nan", "inf", "-inf"])
def test_a_non_finite_float_anywhere_in_a_message_is_refused(number: float) -> None:
    deep_in_input = tool_use({"rows": [[1.0, 2.0], [3.0, {"z": number}]]})
    in_a_result = {
        "role": "user",
        "content": [{"type": "tool_result", "tool_use_id": "t", "content": [{"type": "chart", "y": number}]}],
    }
    beside_content = {"role": "user", "content": "hi", "score": number}
    for msg in (deep_in_input, in_a_result, beside_content):
        with pytest.raises(MalformedContent) as err:
            normalize(msg)
        assert isinstance(err.value, InvalidMessage)


@pytest.mark.parametrize(
    "arguments",
    [
        '{"x": NaN}',
        '{"x": Infinity}',
        '{"x": -Infinity}',
        '{"a": [1, {"b": NaN}]}',
        '{"x": 1e999}',  # no NaN token, but too large for a float: it would read back as Infinity
    ],
)
def test_non_finite_numbers_inside_openai_arguments_are_refused(arguments: str) -> None:
    with pytest.raises(MalformedContent) as err:
        normalize(openai_call(arguments))
    assert isinstance(err.value, InvalidMessage)
    assert "finite" in str(err.value)


def test_an_import_whose_tool_input_holds_nan_is_refused_naming_the_message() -> None:
    text = '[{"role": "user", "content": "go"}, {"role": "assistant", "content": [{"type": "tool_use", '
    text += '"id": "t1", "name": "calc", "input": {"x": NaN}}]}]'
    with pytest.raises(ImportFormatError, match=r"element 1: .*finite"):
        parse_import(text.encode())


def test_large_but_finite_numbers_are_accepted() -> None:
    norm = normalize(
        openai_call('{"big": 1e308, "tiny": -5e-324, "huge_int": 123456789012345678901234567890}')
    )
    (part,) = norm.parts
    assert part.content[0]["input"]["huge_int"] == 123456789012345678901234567890
    assert strict_loads(norm.raw) == json.loads(norm.raw)


# -- nesting ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["dict", "list"])
def test_a_message_nested_exactly_max_depth_levels_is_accepted(kind: str) -> None:
    msg = tool_use({"v": nested(kind, MAX_DEPTH - 3)})  # content list, block, input, then the payload
    assert message_nesting(msg) == MAX_DEPTH
    (part,) = normalize(msg).parts
    assert part.content[0]["input"] == msg["content"][0]["input"]


@pytest.mark.parametrize("kind", ["dict", "list"])
@pytest.mark.parametrize("extra", [1, 10_000 - MAX_DEPTH])
def test_a_message_nested_deeper_than_max_depth_is_a_typed_error(kind: str, extra: int) -> None:
    msg = tool_use({"v": nested(kind, MAX_DEPTH - 3 + extra)})
    assert message_nesting(msg) == MAX_DEPTH + extra
    with pytest.raises(MalformedContent, match=f"deeper than {MAX_DEPTH}"):
        normalize(msg)


@pytest.mark.parametrize("kind", ["dict", "list"])
def test_deep_nesting_beside_the_content_is_bounded_too(kind: str) -> None:
    with pytest.raises(MalformedContent):
        normalize({"role": "user", "content": "hi", "extra": nested(kind, 10_000)})


def _arguments(levels: int) -> str:
    return '{"k":' * levels + "1" + "}" * levels


def test_openai_arguments_may_nest_as_deep_as_an_anthropic_input() -> None:
    # The parsed arguments become the call's input, which sits two levels down in the stored content.
    (part,) = normalize(openai_call(_arguments(MAX_DEPTH - 2))).parts
    assert depth(part.content) == MAX_DEPTH


@pytest.mark.parametrize("levels", [MAX_DEPTH - 1, 900, 10_000])
def test_openai_arguments_nested_past_the_bound_are_a_typed_error(levels: int) -> None:
    with pytest.raises(MalformedContent) as err:
        normalize(openai_call(_arguments(levels)))
    assert isinstance(err.value, InvalidMessage)


def test_an_import_nested_ten_thousand_levels_is_an_import_error() -> None:
    with pytest.raises(ImportFormatError, match="nested too deeply"):
        parse_import(b"[" * 10_000 + b"]" * 10_000)


# -- what is accepted renders as strict JSON -------------------------------------------------------------


def rows_of(messages: list[dict[str, Any]]) -> list[MessageRecord]:
    """The rows a store would hold for these messages (ids as sent; one row per part)."""
    rows: list[MessageRecord] = []
    for msg in messages:
        norm = normalize(msg)
        for part in norm.parts:
            n = len(rows) + 1
            rows.append(
                MessageRecord(
                    id=n,
                    conversation_id="conv-1",
                    seq=n,
                    part=0,
                    role=part.role,
                    kind=part.kind,
                    content=part.content,
                    raw=norm.raw,
                    tool_name=part.tool_name,
                    tool_call_id=part.tool_call_id,
                    token_count=10,
                    state="live",
                    live_content=None,
                    live_tokens=10,
                    created_at=datetime(2025, 1, 1, tzinfo=UTC),
                    metadata=part.metadata,
                )
            )
    return rows


def rendered_inputs(tool_input: dict[str, Any]) -> tuple[Any, Any]:
    """The call's input as each provider's rendering carries it, read back with a strict parser."""
    conversation = [
        {"role": "user", "content": "go"},
        tool_use(tool_input),
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "ok"}]},
    ]
    rows = rows_of(conversation)
    anthropic = strict_loads(json.dumps(render_anthropic(rows).messages))
    openai = strict_loads(json.dumps(render_openai(rows)))
    (use,) = [b for b in anthropic[1]["content"] if b["type"] == "tool_use"]
    (call,) = openai[1]["tool_calls"]
    return use["input"], strict_loads(call["function"]["arguments"])


json_text = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=8)
finite_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | json_text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(json_text, inner, max_size=3),
    max_leaves=12,
)
any_numbers_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | json_text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(json_text, inner, max_size=3),
    max_leaves=12,
)


@given(st.dictionaries(json_text, finite_json, max_size=4))
def test_any_finite_tool_input_renders_as_strict_json_for_both_providers(tool_input: dict[str, Any]) -> None:
    anthropic_input, openai_input = rendered_inputs(tool_input)
    assert anthropic_input == tool_input
    assert openai_input == tool_input


@given(st.dictionaries(json_text, any_numbers_json, max_size=4))
def test_any_tool_input_is_either_refused_or_renders_as_strict_json(tool_input: dict[str, Any]) -> None:
    try:
        norm = normalize(tool_use(tool_input))
    except InvalidMessage:
        assert not math.isfinite(sum_of_floats(tool_input))
        return
    strict_loads(norm.raw)
    rendered_inputs(tool_input)


def sum_of_floats(value: Any) -> float:
    """NaN or infinite exactly when some float inside is (finite floats here never overflow the sum)."""
    if isinstance(value, float):
        return value if not math.isfinite(value) else 0.0
    if isinstance(value, dict):
        return sum_of_floats(list(value.values()))
    if isinstance(value, list):
        return sum((sum_of_floats(v) for v in value), 0.0)
    return 0.0
