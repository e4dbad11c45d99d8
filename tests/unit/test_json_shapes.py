"""The JSON readings the import formats share, and the records every ``to_dict()`` returns.

What a user sees: the type named in an import error ("expected an object, got an array"), a message's
text blocks read as its text (and anything else left as it is), a record as plain JSON, a log's clock in
UTC whatever the machine's zone.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import pytest

from sleepcompact.domain.json_shapes import join_text, json_kind, json_problem, json_ready, source_time


@pytest.mark.parametrize(
    ("value", "kind"),
    [
        (None, "null"),
        (True, "boolean"),
        ({}, "object"),
        ([], "array"),
        ("x", "string"),
        (3, "number"),
        (2.5, "number"),
    ],
)
def test_a_parsed_value_is_named_by_its_json_type(value: Any, kind: str) -> None:
    assert json_kind(value) == kind


@pytest.mark.parametrize(
    ("content", "text"),
    [
        (None, ""),
        ("plain", "plain"),
        (
            [
                {"type": "text", "text": "a", "cache_control": {"type": "ephemeral"}},
                {"type": "text", "text": "b"},
            ],
            "a\nb",
        ),
        ([], ""),
    ],
)
def test_text_blocks_read_as_one_text(content: Any, text: str) -> None:
    assert join_text(content) == text


@pytest.mark.parametrize(
    "content",
    [
        [{"type": "text", "text": "a"}, {"type": "thinking", "text": "b"}],  # not only text blocks
        [{"type": "text", "text": "a"}, {"type": "image", "source": {"type": "base64"}}],
        [{"type": "text", "text": 3}],  # a text that is no string
        ["a", "b"],
        {},
    ],
)
def test_anything_but_text_blocks_is_left_as_it_is(content: Any) -> None:
    assert join_text(content) == content


@dataclass(frozen=True)
class _Record:
    at: datetime
    seqs: tuple[int, ...]
    by_key: dict[int, tuple[str, ...]]


def test_a_record_becomes_plain_json() -> None:
    at = datetime(2024, 3, 2, 10, 0, tzinfo=UTC)
    record = _Record(at, (1, 2), {7: ("x",)})
    assert json_ready([record]) == [
        {"at": "2024-03-02T10:00:00+00:00", "seqs": [1, 2], "by_key": {"7": ["x"]}}
    ]


@pytest.mark.usefixtures("host_in_tokyo")
@pytest.mark.parametrize(
    ("given", "utc"),
    [
        ("2024-03-02T10:00:00", datetime(2024, 3, 2, 10, 0, tzinfo=UTC)),  # no offset: UTC, not the machine's
        ("2024-03-02", datetime(2024, 3, 2, tzinfo=UTC)),
        ("2024-03-02T10:00:00Z", datetime(2024, 3, 2, 10, 0, tzinfo=UTC)),
        ("2024-03-02T10:00:00+02:00", datetime(2024, 3, 2, 8, 0, tzinfo=UTC)),
        (" 2024-03-02T10:00:00+02:00 ", datetime(2024, 3, 2, 8, 0, tzinfo=UTC)),
        ("yesterday", None),
        ("  ", None),
        (1709373600, None),
    ],
)
def test_a_log_s_clock_reads_as_utc(given: Any, utc: datetime | None) -> None:
    assert source_time(given) == utc


def test_a_value_json_cannot_carry_is_named_at_any_depth_and_a_plain_one_is_not() -> None:
    nan = "nan is not a finite number (JSON has no NaN or Infinity)"
    assert json_problem({"a": [1, {"b": float("nan")}]}, 5) == nan
    assert json_problem(float("-inf"), 0) == "-inf is not a finite number (JSON has no NaN or Infinity)"
    assert json_problem({"a": "b", "n": 1.5}, 0) is None and json_problem("x", 0) is None


def test_nesting_is_measured_in_containers_lists_tuples_and_objects_alike() -> None:
    assert json_problem([[[1]]], 2) is None
    assert json_problem([[[1]]], 1) == "nested deeper than 1 levels"
    assert json_problem(({"x": (1,)},), 1) == "nested deeper than 1 levels"
    deep: Any = 1
    for _ in range(5000):  # far past the interpreter's recursion limit: measured, not crashed on
        deep = [deep]
    assert json_problem(deep, 4999) is None
    assert json_problem(deep, 4998) == "nested deeper than 4998 levels"
