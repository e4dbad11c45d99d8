"""Tool call ids are scoped to their turn: reuse after a result is fine, reuse while open is an error.

``CallBook``/``bind_parts`` decide which stored key each call gets and which call each result
answers: the id itself the first time, ``<id>_2``, ``<id>_3``... on reuse (never a key another call
holds), a result binding to the most recent unanswered call with its id. Every refusal is a typed
``InvalidMessage``; a hypothesis property checks that nothing else can come out of any sequence of
turns with reused ids.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sleepcompact.domain.errors import (
    DuplicateToolCall,
    DuplicateToolResult,
    ImportFormatError,
    InvalidMessage,
    OrphanToolResult,
)
from sleepcompact.domain.formats import parse_import
from sleepcompact.domain.messages import normalize
from sleepcompact.domain.tool_ids import CallBook, bind_parts, legacy_ref

# -- message builders ---------------------------------------------------------------------------------


def anthropic_calls(*ids: str) -> dict[str, Any]:
    uses = [{"type": "tool_use", "id": i, "name": "bash", "input": {"cmd": f"echo {i}"}} for i in ids]
    return {"role": "assistant", "content": [{"type": "text", "text": "running"}, *uses]}


def anthropic_results(*ids: str) -> dict[str, Any]:
    blocks = [{"type": "tool_result", "tool_use_id": i, "content": f"out {i}"} for i in ids]
    return {"role": "user", "content": blocks}


def openai_calls(*ids: str) -> dict[str, Any]:
    calls = [
        {"id": i, "type": "function", "function": {"name": "bash", "arguments": json.dumps({"cmd": i})}}
        for i in ids
    ]
    return {"role": "assistant", "content": None, "tool_calls": calls}


def openai_result(call_id: str) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "content": f"out {call_id}"}


def bind(book: CallBook, msg: dict[str, Any]) -> tuple[str | None, ...]:
    return bind_parts(book, normalize(msg).parts)


def keys(book: CallBook, msg: dict[str, Any]) -> list[str]:
    return [k for k in bind(book, msg) if k is not None]


# -- reuse after a result -------------------------------------------------------------------------------


def test_an_id_reused_after_its_result_gets_a_new_key_each_time() -> None:
    book = CallBook()
    seen = []
    for _ in range(3):
        (call_key,) = keys(book, openai_calls("call_0"))
        (result_key,) = keys(book, openai_result("call_0"))
        assert result_key == call_key
        seen.append(call_key)
    assert seen == ["call_0", "call_0_2", "call_0_3"]


def test_text_parts_get_no_key_and_calls_keep_their_order() -> None:
    book = CallBook()
    assert bind(book, anthropic_calls("a", "b")) == (None, "a", "b")
    assert bind(book, anthropic_results("b", "a")) == ("b", "a")


def test_a_new_key_skips_keys_other_calls_already_hold() -> None:
    book = CallBook()
    keys(book, anthropic_calls("x_2"))  # a model that literally names a call x_2
    keys(book, anthropic_results("x_2"))
    keys(book, anthropic_calls("x"))
    keys(book, anthropic_results("x"))
    assert keys(book, anthropic_calls("x")) == ["x_3"]
    assert keys(book, anthropic_results("x")) == ["x_3"]


def stored_book(stored: dict[str, list[tuple[str, bool]]]) -> CallBook:
    """A book over calls earlier appends stored: ref -> [(key, answered)], oldest first."""
    taken = {key for calls in stored.values() for key, _ in calls}
    return CallBook(lookup=lambda ref: list(stored.get(ref, [])), is_taken=lambda key: key in taken)


def test_keys_stored_by_earlier_appends_are_never_handed_out_again() -> None:
    book = stored_book({"r": [("r", True)], "r_2": [("r_2", True)]})
    assert book.call("r") == "r_3"


def test_calls_answered_in_an_earlier_append_allow_the_id_again() -> None:
    book = stored_book({"c": [("c", True)]})
    assert book.call("c") == "c_2"
    assert book.result("c") == "c_2"


def test_a_call_still_open_from_an_earlier_append_blocks_its_id() -> None:
    with pytest.raises(DuplicateToolCall):
        stored_book({"c": [("c", False)]}).call("c")


# -- which call a result answers ------------------------------------------------------------------------


def test_a_result_binds_to_the_most_recent_unanswered_call_with_its_id() -> None:
    book = stored_book({"c": [("c", True), ("c_2", False)]})
    assert book.result("c") == "c_2"


def test_results_for_several_open_calls_with_one_id_go_newest_first() -> None:
    # Stored history written before the rule held two open calls with one id.
    book = stored_book({"c": [("c", False), ("c_2", False)]})
    assert book.result("c") == "c_2"
    assert book.result("c") == "c"
    with pytest.raises(DuplicateToolResult):
        book.result("c")


def test_a_reused_id_answers_the_call_of_its_own_turn() -> None:
    book = CallBook()
    first = keys(book, anthropic_calls("toolu_1", "toolu_2"))
    assert keys(book, anthropic_results("toolu_1", "toolu_2")) == first
    second = keys(book, anthropic_calls("toolu_2"))
    assert keys(book, anthropic_results("toolu_2")) == second == ["toolu_2_2"]


# -- refusals -------------------------------------------------------------------------------------------


def test_an_id_repeated_inside_one_assistant_turn_is_a_duplicate_call() -> None:
    book = CallBook()
    with pytest.raises(DuplicateToolCall) as err:
        bind(book, anthropic_calls("dup", "dup"))
    assert isinstance(err.value, InvalidMessage)
    assert err.value.tool_call_id == "dup"
    assert "dup" in str(err.value)


def test_an_id_reused_while_its_call_is_still_open_is_a_duplicate_call() -> None:
    book = CallBook()
    keys(book, openai_calls("call_1"))
    with pytest.raises(DuplicateToolCall):
        bind(book, openai_calls("call_1"))


def test_a_result_no_call_ever_made_is_an_orphan() -> None:
    with pytest.raises(OrphanToolResult) as err:
        bind(CallBook(), openai_result("call_nobody"))
    assert isinstance(err.value, InvalidMessage)
    assert "call_nobody" in str(err.value)


def test_a_second_result_for_an_answered_call_is_a_duplicate_result() -> None:
    book = CallBook()
    keys(book, openai_calls("c"))
    keys(book, openai_result("c"))
    with pytest.raises(DuplicateToolResult) as err:
        bind(book, openai_result("c"))
    assert isinstance(err.value, InvalidMessage)
    assert err.value.tool_call_id == "c"


def test_an_import_with_an_id_repeated_inside_one_turn_names_the_message() -> None:
    doc = [{"role": "user", "content": "go"}, openai_calls("call_0", "call_0")]
    with pytest.raises(ImportFormatError, match=r"element 1: .*call_0"):
        parse_import(json.dumps(doc).encode())


def test_an_import_reusing_ids_across_turns_is_accepted_with_the_ids_as_sent() -> None:
    doc = [{"role": "user", "content": "go"}]
    for _ in range(3):
        doc += [openai_calls("call_0"), openai_result("call_0")]
    (conv,) = parse_import(json.dumps(doc).encode())
    assert conv.messages == doc


# -- legacy OpenAI function_call ------------------------------------------------------------------------


def legacy_call(name: str) -> dict[str, Any]:
    return {"role": "assistant", "content": None, "function_call": {"name": name, "arguments": "{}"}}


def legacy_result(name: str) -> dict[str, Any]:
    return {"role": "function", "name": name, "content": "sunny"}


def test_a_legacy_function_call_pairs_with_its_function_result_by_name() -> None:
    book = CallBook()
    assert keys(book, legacy_call("get_weather")) == [legacy_ref("get_weather")] == ["call_get_weather"]
    assert keys(book, legacy_result("get_weather")) == ["call_get_weather"]


def test_a_legacy_function_called_again_after_its_result_gets_a_new_key() -> None:
    book = CallBook()
    for expected in ("call_get_weather", "call_get_weather_2"):
        assert keys(book, legacy_call("get_weather")) == [expected]
        assert keys(book, legacy_result("get_weather")) == [expected]


def test_a_legacy_function_result_without_its_call_is_an_orphan() -> None:
    book = CallBook()
    keys(book, legacy_call("get_weather"))
    with pytest.raises(OrphanToolResult):
        bind(book, legacy_result("get_time"))


def test_legacy_ref_makes_any_function_name_a_safe_bounded_id() -> None:
    assert legacy_ref("my.tool/v2 beta") == "call_my_tool_v2_beta"
    assert legacy_ref("x" * 1000) == "call_" + "x" * 200
    assert legacy_ref("get_weather") == "call_get_weather"  # a safe name is kept as it is


# -- property: any sequence either binds consistently or is a typed refusal -----------------------------

ALPHABET = ["a", "b", "a_2"]  # tiny, so reuse is common; "a_2" collides with a's second key


@st.composite
def conversations(draw: st.DrawFn) -> list[tuple[list[str], list[str], str]]:
    """Assistant turns of 1..3 call ids, each followed by results for some of them in any order."""
    turns = []
    for _ in range(draw(st.integers(1, 6))):
        distinct = draw(st.integers(0, 3)) > 0  # usually distinct within the turn, sometimes not
        ids = draw(st.lists(st.sampled_from(ALPHABET), min_size=1, max_size=3, unique=distinct))
        mostly_answered = st.integers(0, 5).map(lambda n: n > 0)  # so valid reuse is common too
        answered = draw(st.lists(mostly_answered, min_size=len(ids), max_size=len(ids)))
        results = draw(st.permutations([i for i, done in zip(ids, answered, strict=True) if done]))
        turns.append((ids, list(results), draw(st.sampled_from(["anthropic", "openai"]))))
    return turns


def rule_broken(turns: list[tuple[list[str], list[str], str]]) -> bool:
    """The oracle: some id is called while a call with it is still open (in its turn or before)."""
    open_ids: set[str] = set()
    for ids, results, _ in turns:
        if len(set(ids)) < len(ids) or open_ids & set(ids):
            return True
        open_ids |= set(ids)
        open_ids -= set(results)
    return False


def bind_all(turns: list[tuple[list[str], list[str], str]]) -> list[tuple[list[str], list[str]]]:
    book = CallBook()
    bound = []
    for ids, results, fmt in turns:
        call_keys = keys(book, anthropic_calls(*ids) if fmt == "anthropic" else openai_calls(*ids))
        result_keys: list[str] = []
        if results and fmt == "anthropic":
            result_keys = keys(book, anthropic_results(*results))
        for r in results if fmt == "openai" else []:
            result_keys += keys(book, openai_result(r))
        bound.append((call_keys, result_keys))
    return bound


@given(conversations())
def test_any_sequence_of_reused_ids_binds_consistently_or_is_a_typed_refusal(
    turns: list[tuple[list[str], list[str], str]],
) -> None:
    try:
        bound = bind_all(turns)
    except InvalidMessage:
        assert rule_broken(turns)
        return
    assert not rule_broken(turns)
    all_keys = [k for call_keys, _ in bound for k in call_keys]
    assert len(all_keys) == len(set(all_keys)), "two calls share a key"
    for (ids, results, _), (call_keys, result_keys) in zip(turns, bound, strict=True):
        key_of = dict(zip(ids, call_keys, strict=True))
        assert result_keys == [key_of[r] for r in results], "a result bound to a call it does not answer"
        for ref, key in key_of.items():
            assert key == ref or key.startswith(f"{ref}_")
