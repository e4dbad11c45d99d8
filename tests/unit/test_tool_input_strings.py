"""Which strings of a stored tool call's input are read: ``input_strings`` and ``row_text``.

The summary and the identifier search read a tool call by the text values of its input, never its JSON:
every string however deeply it sits, each paired with the name of the field that holds it (an item of a
list is named by the list's field), fields in sorted order and list items in their own order, numbers,
booleans and nulls left out. A bare string or list given as the input has no field name: its key is "".
"""

from __future__ import annotations

from typing import Any

from sleepcompact.domain.records import MessageRecord, call_input, input_strings, row_text
from sleepcompact.domain.summary_items import schema_fields
from tests.support.rows import record


def tool_call(tool_input: dict[str, Any]) -> MessageRecord:
    use = {"type": "tool_use", "id": "call-1", "name": "edit", "input": tool_input}
    return row("tool_call", [use])


def row(kind: str, content: str | list[dict[str, Any]]) -> MessageRecord:
    return record(1, "assistant", kind, content, tool_name="edit", tool_call_id="call-1")


def test_fields_are_read_in_sorted_order_each_with_its_own_name() -> None:
    assert input_strings({"path": "src/a.py", "command": "cat", "body": "x = 1"}) == [
        ("body", "x = 1"),
        ("command", "cat"),
        ("path", "src/a.py"),
    ]


def test_every_item_of_a_list_is_read_in_order_under_the_lists_field_name() -> None:
    assert input_strings({"paths": ["src/b.py", "src/a.py", "src/c.py"]}) == [
        ("paths", "src/b.py"),
        ("paths", "src/a.py"),
        ("paths", "src/c.py"),
    ]


def test_nested_objects_and_lists_are_read_under_the_innermost_field_name() -> None:
    tool_input = {
        "edits": [
            {"old": "a = 1", "new": "a = 2"},
            [["deep one", {"file": "README.md"}], "deep two"],
        ],
        "dry_run": "no",
    }
    assert input_strings(tool_input) == [
        ("dry_run", "no"),
        ("new", "a = 2"),
        ("old", "a = 1"),
        ("edits", "deep one"),
        ("file", "README.md"),
        ("edits", "deep two"),
    ]


def test_numbers_booleans_and_nulls_are_not_read_even_inside_lists() -> None:
    tool_input = {"lines": [1, 2.5, None, True, "tail"], "limit": 40, "force": False, "cwd": None}
    assert input_strings(tool_input) == [("lines", "tail")]


def test_an_empty_input_has_no_strings() -> None:
    assert input_strings({}) == []
    assert input_strings([]) == []
    assert input_strings({"args": [], "opts": {}}) == []


def test_a_bare_string_or_list_has_no_field_name() -> None:
    assert input_strings("ls -la") == [("", "ls -la")]
    assert input_strings(["ls", ["-la", 3]]) == [("", "ls"), ("", "-la")]
    assert input_strings("") == [("", "")]


def test_a_tool_calls_text_is_its_input_strings_one_a_line() -> None:
    row = tool_call({"paths": ["src/b.py", "src/a.py"], "note": "swap them", "count": 2})
    assert row_text(row) == "swap them\nsrc/b.py\nsrc/a.py"


def test_the_field_names_of_a_folded_tool_input_include_those_of_list_items() -> None:
    row = tool_call({"paths": ["src/b.py"], "edits": [{"old": "a", "new": "b"}], "n": 1})
    assert schema_fields([row]) == frozenset({"paths", "old", "new"})


def test_a_calls_input_is_a_copy_and_only_a_tool_call_has_one() -> None:
    row_ = tool_call({"path": "src/a.py"})
    found = call_input(row_)
    found["path"] = "elsewhere"
    assert call_input(row_) == {"path": "src/a.py"}
    # A server tool's block carries an input too, but the agent did not call it: not a tool call row.
    server = {"type": "server_tool_use", "id": "srv-1", "name": "web_search", "input": {"query": "q"}}
    assert call_input(row("message", [server])) == {}
    assert call_input(row("message", "plain text")) == {}
    assert call_input(row("tool_call", [])) == {}
