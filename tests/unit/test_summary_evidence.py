"""The evidence an offline summary draws from the folded rows, exactly: the files touched and by which
tools, every identifier under the label it was given, a few per tool output that nothing else named,
and each distinct error with whether the same call later succeeded.

These bullets are the ones a summary keeps longest (critical data, files, errors): a value under the
wrong label, a ticket dropped as listing noise, or an error called open that was resolved sends a
resumed model after the wrong thing.
"""

from __future__ import annotations

import json
from typing import Any

from sleepcompact.adapters.tokenizer import load_counter
from sleepcompact.domain.records import tool_names
from sleepcompact.domain.summary_items import (
    _shown_within,
    clip,
    code,
    error_items,
    identifier_items,
    json_pairs,
    output_identifiers,
    schema_fields,
)
from tests.support.rows import rows_of
from tests.support.summaries import tool_call

COUNT = load_counter().count

RUN: list[dict[str, Any]] = [
    {
        "role": "user",
        "content": "Cancel my reservation ZFA04Y and check order: W123456. The error says `KeyError: 'x'`.",
    },
    {
        "role": "assistant",
        "content": "Looking up reservation ZFA04Y with django.setup() and user.user_permissions.add.",
        "tool_calls": [tool_call("c1", "get_reservation", {"reservation_id": "ZFA04Y"})],
    },
    {
        "role": "tool",
        "tool_call_id": "c1",
        "content": json.dumps(
            {
                "reservation_id": "ZFA04Y",
                "flight_number": "HAT170",
                "status": "active",
                "items": [{"seat": "12A", "price": 120}],
                "ok": True,
            }
        ),
    },
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            tool_call("c2", "bash", {"command": "cat src/app/models.py && ls tests/unit"}),
            tool_call("c3", "edit", {"path": "src/app/models.py", "text": "x"}),
        ],
    },
    {
        "role": "tool",
        "tool_call_id": "c2",
        "content": "src/app/models.py\ntests/unit/test_a.py::test_one\nrun_0001.log\n"
        "sha 3f9a2c1e in build BLD-4411 took 250 ms\nValueError: boom",
    },
    {"role": "tool", "tool_call_id": "c3", "content": "Error: permission denied"},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [tool_call("c4", "edit", {"path": "src/app/models.py", "text": "x"})],
    },
    {"role": "tool", "tool_call_id": "c4", "content": "written"},
    {"role": "user", "content": "Now I get ImportError: cannot import name 'y'\nand also RuntimeError: z"},
]
ROWS = list(rows_of(RUN, COUNT))


def test_each_identifier_is_listed_once_under_its_label_and_files_under_their_tools() -> None:
    assert [(it.section, it.text, it.priority, it.rank) for it in identifier_items(ROWS)] == [
        ("Files touched", "`src/app/models.py` (bash ×1, edit ×2)", 10, (0, 0)),
        ("Files touched", "`tests/unit` (bash ×1)", 10, (0, 1)),
        ("Critical data (verbatim)", "reservation_id=`ZFA04Y`", 10, (0, 0)),
        ("Critical data (verbatim)", "order=`W123456`", 10, (0, 1)),
        ("Critical data (verbatim)", "command=`KeyError: 'x'`", 10, (1, 2)),
        # django and user_permissions are shown whole by the longer names, and not listed apart
        ("Critical data (verbatim)", "code=`django.setup`", 10, (1, 4)),
        ("Critical data (verbatim)", "code=`user.user_permissions.add`", 10, (1, 5)),
        ("Critical data (verbatim)", "command=`cat src/app/models.py && ls tests/unit`", 10, (1, 7)),
        ("Critical data (verbatim)", "error=`Now I get ImportError: cannot import name 'y'`", 10, (1, 10)),
        ("Critical data (verbatim)", "error=`and also RuntimeError: z`", 10, (1, 12)),
        # from the outputs, what nothing else named: a JSON value under its field, a ticket (not listing
        # noise like run_0001.log or a test node id), a hash, an exception name, a duration
        ("Critical data (verbatim)", "flight_number=`HAT170` (seq 4, tool output)", 8, (-1, 0, 1)),
        ("Critical data (verbatim)", "id=`BLD-4411` (seq 7, tool output)", 8, (-1, 0, 3)),
        ("Critical data (verbatim)", "hash=`3f9a2c1e` (seq 7, tool output)", 8, (-1, 1, 4)),
        ("Critical data (verbatim)", "code=`ValueError` (seq 7, tool output)", 8, (-1, 2, 5)),
    ]


def test_each_error_is_listed_once_with_whether_the_same_call_later_succeeded() -> None:
    items, failed = error_items(ROWS, tool_names(ROWS))
    assert failed == 2
    assert [(it.text, it.priority, it.rank) for it in items] == [
        (
            "seq 1 user reported: Cancel my reservation ZFA04Y and check order: W123456. The error says "
            "`KeyError: 'x'`.",
            9,
            (-1,),
        ),
        ("seq 7 bash: ValueError: boom (open)", 9, (-7,)),
        ("seq 8 edit: Error: permission denied (resolved: the same call succeeded at seq 10)", 8, (-8,)),
        ("seq 11 user reported: Now I get ImportError: cannot import name 'y'", 9, (-11,)),
        ("seq 11 user reported: and also RuntimeError: z", 9, (-11,)),
    ]


def test_the_field_names_of_inputs_and_json_outputs_are_labels_not_data() -> None:
    assert schema_fields(ROWS) == frozenset(
        {"text", "price", "command", "reservation_id", "status", "seat", "path", "flight_number"}
    )
    assert json_pairs('[{"a": 1, "b": [true, "x", 2.5]}, {"": 3}, "y"]') == [
        ("a", "1"),
        ("b", "x"),
        ("b", "2.5"),
    ]
    assert json_pairs("nope") == json_pairs("{bad") == json_pairs("[1, 2]") == []


def test_a_text_output_names_its_identifiers_by_kind_and_weight() -> None:
    text = "see src/app/models.py and HAT170 and 250 ms and tests/a.py::t and CamelWord"
    assert output_identifiers(text) == [
        (0, "src/app/models.py", "path"),
        (0, "HAT170", "id"),
        (3, "250 ms", "number"),
        (2, "CamelWord", "code"),
    ]


def test_a_part_shown_whole_by_a_longer_value_points_at_it() -> None:
    values = ["user.user_permissions.add", "user_permissions", "add", "django.setup", "django", "setup()"]
    assert _shown_within(values) == {
        "user_permissions": "user.user_permissions.add",
        "add": "user.user_permissions.add",
        "django": "django.setup",
    }


def test_clip_and_code() -> None:
    assert (clip("a  b   c", 10), clip("abcdefghijk", 5), clip("abc d e", 5)) == ("a b c", "abcd…", "abc…")
    assert (code("x"), code("a`b")) == ("`x`", "a`b")
