"""What an import says when it cannot read a file, word for word: the file, the line where there is
one, and what is wrong, so that a user can fix the file without reading the source. Nothing is
imported from a refused file (``parse_import`` never returns part of one)."""

from __future__ import annotations

import pytest

from sleepcompact.domain.errors import ImportFormatError
from sleepcompact.domain.formats import parse_import


def _refusal(data: bytes, **kwargs: object) -> ImportFormatError:
    with pytest.raises(ImportFormatError) as caught:
        parse_import(data, source="x.json", **kwargs)  # type: ignore[arg-type]
    return caught.value


@pytest.mark.parametrize(
    ("data", "message", "line"),
    [
        (b"  \n", "the file is empty", None),
        (b"[" * 100_000 + b"]" * 100_000, "the JSON is nested too deeply", None),
        (b'{"a": }', "malformed JSON at column 7: Expecting value", 1),
        (b'"hello"', "expected a JSON array or object of messages, got a JSON string", None),
        (b"3", "expected a JSON array or object of messages, got a JSON number", None),
        (b'{"x": 1}', "a JSON object needs 'messages', a SWE-agent 'history' or an export 'format'", None),
    ],
)
def test_a_file_that_is_not_a_conversation_is_refused_saying_why(
    data: bytes, message: str, line: int | None
) -> None:
    error = _refusal(data)
    where = "" if line is None else f"line {line}: "
    assert str(error) == f"x.json: {where}{message}"
    assert (error.reason, error.line, error.source) == (message, line, "x.json")


def test_one_record_and_all_records_cannot_both_be_asked_for() -> None:
    error = _refusal(b'[{"role": "user", "content": "hi"}]', all_records=True, record=1)
    assert str(error) == "x.json: choose either one record or all records, not both"


@pytest.mark.parametrize(("data", "offset"), [(b"\n[\xff]", 2), (b"\xef\xbb\xbf\n\xff", 4)])
def test_bytes_that_are_not_utf8_are_found_by_line_and_byte(data: bytes, offset: int) -> None:
    """The offset counts the byte order mark, as an editor's byte offset does; the line counts a
    first line that is empty."""
    error = _refusal(data)
    assert str(error) == f"x.json: line 2: bytes that are not valid UTF-8 at byte offset {offset}"
    assert error.line == 2
