"""What an append stores: ``new_rows`` and the row helpers around it (``logical_order``, ``tool_names``,
``row_text``).

``new_rows`` turns one normalized message into the rows the store inserts, the way the append path
(``services.conversations.store_prepared``) and the evaluation baseline call it. Pinned here, as exact
rows: each part's seq is ``first_seq`` plus its index and its part number is that index; ``raw`` is on
the first row only; a tool call is named by its own part, a tool result after the call it answers,
looked up in ``tool_names`` by the result's stored key (a key the map lacks, or no key, gives no name);
when keys are given a row's ``tool_call_id`` is its key, the call's ``tool_use`` block carries the key
as its id (no other block changes) and ``call_ref`` keeps the caller's id; without keys the part's own
id is used; the tool-provided summary is lifted out of the metadata with NUL replaced and counted with
the given count function (no count when there is no summary), the include-in-history flag is lifted out
as a bool, the rest of the metadata is kept exactly; a token list of another length than the parts
raises.

``logical_order``: leading system rows first, then summaries in their order, then everything else in
order (a system row after another row, or a system-role summary, does not lead). ``tool_names``: the
name of each tool call row that has both an id and a name. ``row_text``: a tool call as its input
values, any other row as its content's text.
"""

from __future__ import annotations

from typing import Any

import pytest

from sleepcompact.domain.messages import NormalizedMessage, Part, normalize
from sleepcompact.domain.records import (
    MessageRecord,
    NewMessage,
    logical_order,
    new_rows,
    row_text,
    tool_names,
)
from tests.support.rows import record


def chars(text: str) -> int:
    """A count function that is not a word count, so its use is visible (and it refuses None)."""
    return len(text)


def call_turn() -> NormalizedMessage:
    return normalize(
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Let me look."},
                {"type": "tool_use", "id": "toolu_a", "name": "read", "input": {"path": "a.py"}},
                {"type": "tool_use", "id": "toolu_b", "name": "grep", "input": {"pattern": "x"}},
            ],
        }
    )


def use(call_id: str, name: str, tool_input: dict[str, Any]) -> dict[str, Any]:
    return {"type": "tool_use", "id": call_id, "name": name, "input": tool_input}


def test_an_assistant_turn_with_keys_stores_each_call_under_its_key_and_keeps_the_callers_id() -> None:
    message = call_turn()

    rows = new_rows(
        message,
        [5, 7, 9],
        first_seq=41,
        tool_names={"k-a": "not-this", "k-b": "nor-this"},
        count=chars,
        keys=[None, "k-a", "k-b"],
    )

    assert rows == [
        NewMessage(
            seq=41,
            part=0,
            role="assistant",
            kind="message",
            content="Let me look.",
            raw=message.raw,
            tool_name=None,
            tool_call_id=None,
            token_count=5,
            call_ref=None,
        ),
        NewMessage(
            seq=42,
            part=1,
            role="assistant",
            kind="tool_call",
            content=[use("k-a", "read", {"path": "a.py"})],
            raw=None,
            tool_name="read",
            tool_call_id="k-a",
            token_count=7,
            call_ref="toolu_a",
        ),
        NewMessage(
            seq=43,
            part=2,
            role="assistant",
            kind="tool_call",
            content=[use("k-b", "grep", {"pattern": "x"})],
            raw=None,
            tool_name="grep",
            tool_call_id="k-b",
            token_count=9,
            call_ref="toolu_b",
        ),
    ]
    # The message itself is not rewritten: its part still carries the caller's id.
    assert message.parts[1].content == [use("toolu_a", "read", {"path": "a.py"})]


def test_without_keys_each_call_is_stored_under_its_own_id() -> None:
    message = call_turn()

    rows = new_rows(message, [1, 2, 3], first_seq=1, tool_names={}, count=chars)

    assert [(r.seq, r.part, r.tool_call_id, r.call_ref, r.tool_name) for r in rows] == [
        (1, 0, None, None, None),
        (2, 1, "toolu_a", "toolu_a", "read"),
        (3, 2, "toolu_b", "toolu_b", "grep"),
    ]
    assert [r.content for r in rows] == [
        "Let me look.",
        [use("toolu_a", "read", {"path": "a.py"})],
        [use("toolu_b", "grep", {"pattern": "x"})],
    ]
    assert [r.raw for r in rows] == [message.raw, None, None]


def test_tool_results_are_named_after_the_call_their_stored_key_answers() -> None:
    message = normalize(
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "toolu_a", "content": "print(1)"},
                {"type": "tool_result", "tool_use_id": "toolu_b", "content": "no match"},
                {"type": "text", "text": "go on"},
            ],
        }
    )

    rows = new_rows(
        message,
        [3, 4, 5],
        first_seq=10,
        # Keyed by the stored key: the caller's id "toolu_b" is not what a result is looked up by.
        tool_names={"k-a": "read", "toolu_b": "grep"},
        count=chars,
        keys=["k-a", "k-b", None],
    )

    assert rows == [
        NewMessage(
            seq=10,
            part=0,
            role="tool",
            kind="tool_result",
            content="print(1)",
            raw=message.raw,
            tool_name="read",
            tool_call_id="k-a",
            token_count=3,
            call_ref="toolu_a",
        ),
        NewMessage(
            seq=11,
            part=1,
            role="tool",
            kind="tool_result",
            content="no match",
            raw=None,
            tool_name=None,
            tool_call_id="k-b",
            token_count=4,
            call_ref="toolu_b",
        ),
        NewMessage(
            seq=12,
            part=2,
            role="user",
            kind="message",
            content="go on",
            raw=None,
            tool_name=None,
            tool_call_id=None,
            token_count=5,
            call_ref=None,
        ),
    ]


def test_without_keys_a_result_is_named_by_its_own_id() -> None:
    message = normalize(
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_a", "content": "ok"}]}
    )

    (row,) = new_rows(message, [2], first_seq=3, tool_names={"toolu_a": "read"}, count=chars)

    assert (row.tool_name, row.tool_call_id, row.call_ref) == ("read", "toolu_a", "toolu_a")


def test_a_row_without_a_key_is_never_named_even_by_a_name_stored_under_the_empty_key() -> None:
    message = normalize({"role": "user", "content": "hi"})

    (row,) = new_rows(message, [2], first_seq=1, tool_names={"": "read"}, count=chars)

    assert (row.tool_name, row.tool_call_id) == (None, None)


def test_a_calls_name_is_its_own_even_when_the_map_names_its_key_otherwise() -> None:
    message = normalize({"role": "assistant", "content": [use("toolu_a", "read", {})]})

    (row,) = new_rows(message, [2], first_seq=1, tool_names={"toolu_a": "write"}, count=chars)

    assert row.tool_name == "read"


def test_the_tool_summary_and_history_flag_are_lifted_out_and_the_rest_of_the_metadata_kept() -> None:
    message = normalize(
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_a",
                    "content": "a.py\nb.py",
                    "tool_summary": "two\x00files found",
                    "include_in_history": True,
                    "is_error": True,
                    "cache_control": {"type": "ephemeral"},
                },
                {"type": "tool_result", "tool_use_id": "toolu_b", "content": "plain"},
            ],
        }
    )

    first, second = new_rows(message, [6, 2], first_seq=1, tool_names={}, count=chars, keys=["k-a", "k-b"])

    assert first.tool_summary == "two\ufffdfiles found"
    assert first.tool_summary_tokens == len("two\ufffdfiles found")
    assert first.include_in_history is True
    assert first.metadata == {"is_error": True, "cache_control": {"type": "ephemeral"}}
    # No summary: nothing counted (the count function is never handed None), no flag, no metadata.
    assert (second.tool_summary, second.tool_summary_tokens) == (None, None)
    assert second.include_in_history is False
    assert second.metadata == {}


def test_an_empty_tool_summary_is_not_counted() -> None:
    part = Part("tool", "tool_result", "ok", "toolu_a", None, {"tool_summary": "", "source": "disk"})
    message = NormalizedMessage(raw="{}", parts=(part,))

    (row,) = new_rows(message, [2], first_seq=1, tool_names={}, count=chars)

    assert (row.tool_summary, row.tool_summary_tokens) == ("", None)
    assert row.metadata == {"source": "disk"}


def test_the_history_flag_is_stored_as_a_bool_whatever_truthy_value_carried_it() -> None:
    parts = (
        Part("tool", "tool_result", "ok", "toolu_a", None, {"include_in_history": 1}),
        Part("tool", "tool_result", "ok", "toolu_b", None, {"include_in_history": 0}),
    )

    rows = new_rows(NormalizedMessage(raw="{}", parts=parts), [1, 1], first_seq=1, tool_names={}, count=chars)

    assert [r.include_in_history for r in rows] == [True, False]
    assert [r.metadata for r in rows] == [{}, {}]


@pytest.mark.parametrize("tokens", [[4], [4, 4, 4, 4]])
def test_a_token_list_of_another_length_than_the_parts_raises(tokens: list[int]) -> None:
    with pytest.raises(ValueError):
        new_rows(call_turn(), tokens, first_seq=1, tool_names={}, count=chars)


def test_only_the_tool_use_block_of_a_call_carries_the_key() -> None:
    content = [
        {"type": "text", "text": "calling", "id": "text-1"},
        use("toolu_a", "read", {"path": "a.py"}),
        {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {}},
    ]
    part = Part("assistant", "tool_call", content, "toolu_a", "read")

    (row,) = new_rows(
        NormalizedMessage(raw="{}", parts=(part,)), [3], first_seq=1, tool_names={}, count=chars, keys=["k-a"]
    )

    assert row.content == [
        {"type": "text", "text": "calling", "id": "text-1"},
        use("k-a", "read", {"path": "a.py"}),
        {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {}},
    ]


def test_a_call_with_no_key_is_stored_as_given() -> None:
    part = Part("assistant", "tool_call", [use("toolu_a", "read", {})], None, "read")
    message = NormalizedMessage(raw="{}", parts=(part,))

    (row,) = new_rows(message, [3], first_seq=1, tool_names={}, count=chars)

    assert row.content == [use("toolu_a", "read", {})]
    assert (row.tool_call_id, row.call_ref, row.tool_name) == (None, None, "read")


def test_a_results_content_is_stored_as_given_even_with_a_key() -> None:
    # new_rows does not re-validate: only a tool_call part's tool_use block is rewritten.
    content = [{"type": "text", "text": "ok"}, use("toolu_x", "read", {})]
    part = Part("tool", "tool_result", content, "toolu_a")

    (row,) = new_rows(
        NormalizedMessage(raw="{}", parts=(part,)), [3], first_seq=1, tool_names={}, count=chars, keys=["k-a"]
    )

    assert row.content == [{"type": "text", "text": "ok"}, use("toolu_x", "read", {})]


# -- rows as stored ------------------------------------------------------------------------------------


def seqs(rows: list[MessageRecord]) -> list[int]:
    return [r.seq for r in rows]


def test_no_rows_have_no_order() -> None:
    assert logical_order([]) == []


def test_only_system_rows_keep_their_order() -> None:
    rows = [record(1, "system"), record(2, "system"), record(3, "system")]

    assert seqs(logical_order(rows)) == [1, 2, 3]


def test_summaries_go_after_the_leading_system_rows_and_before_the_rest() -> None:
    rows = [
        record(1, "system"),
        record(2, "system"),
        record(3, "system"),
        record(4, "user"),
        record(5, "assistant", "summary"),
        record(6, "assistant"),
        record(7, "user", "summary"),
    ]

    assert seqs(logical_order(rows)) == [1, 2, 3, 5, 7, 4, 6]


def test_with_no_leading_system_row_a_summary_comes_first() -> None:
    rows = [record(1, "user"), record(2, "assistant"), record(3, "assistant", "summary")]

    assert seqs(logical_order(rows)) == [3, 1, 2]


def test_one_leading_system_row_then_the_summary() -> None:
    rows = [record(1, "system"), record(2, "user"), record(3, "assistant", "summary")]

    assert seqs(logical_order(rows)) == [1, 3, 2]


def test_a_system_row_after_another_row_does_not_lead() -> None:
    rows = [record(1, "user"), record(2, "system"), record(3, "assistant", "summary")]

    assert seqs(logical_order(rows)) == [3, 1, 2]


def test_a_system_summary_does_not_lead_nor_do_the_system_rows_after_it() -> None:
    rows = [record(1, "system", "summary"), record(2, "system"), record(3, "system", "summary")]

    assert seqs(logical_order(rows)) == [1, 3, 2]


def test_tool_names_come_from_tool_calls_with_both_an_id_and_a_name() -> None:
    rows = [
        record(1, "assistant", "tool_call", tool_name="read", tool_call_id="k-a"),
        record(2, "assistant", "tool_call", tool_name=None, tool_call_id="k-b"),
        record(3, "assistant", "tool_call", tool_name="grep", tool_call_id=None),
        record(4, "assistant", "tool_call", tool_name="grep", tool_call_id=""),
        record(5, "tool", "tool_result", tool_name="write", tool_call_id="k-c"),
        record(6, "assistant", "message", tool_name="ls", tool_call_id="k-d"),
    ]

    assert tool_names(rows) == {"k-a": "read"}


def test_a_tool_calls_text_is_its_input_values_one_a_line() -> None:
    row = record(1, "assistant", "tool_call", [use("k-a", "bash", {"path": "a.py", "command": "cat"})])

    assert row_text(row) == "cat\na.py"


def test_any_other_rows_text_is_its_contents_text() -> None:
    blocks = [{"type": "text", "text": "first"}, {"type": "text", "text": "second"}]

    assert row_text(record(1, "user", "message", "hello")) == "hello"
    assert row_text(record(2, "tool", "tool_result", blocks)) == "first\nsecond"
