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


_MESSAGE = b'{"role": "user", "content": "hi"}'
_RECORD = b'{"instance_id": "a", "messages": []}'


@pytest.mark.parametrize(
    ("data", "message", "line"),
    [
        (_MESSAGE + b"\n" + b"[" * 100_000 + b"]" * 100_000, "the JSON is nested too deeply", 2),
        (_MESSAGE + b'\n{"a": }', "malformed JSON: Expecting value (column 7)", 2),
        (_MESSAGE + b"\n[1]", "expected a JSON object on each line, got a JSON array", 2),
        (
            _RECORD + b"\n" + _RECORD + b'\n{"instance_id": "b"}',
            "a mini-swe-agent record without 'messages'",
            3,
        ),
        (b'\n{"x": 1}\n{"y": 2}', "expected a message (with 'role') or a record (with 'messages')", 2),
    ],
)
def test_a_jsonl_file_is_refused_at_the_line_at_fault(data: bytes, message: str, line: int) -> None:
    error = _refusal(data, all_records=True)
    assert str(error) == f"x.json: line {line}: {message}"
    assert error.line == line


_MINI = b'{"instance_id": "a", "messages": [{"role": "user", "content": "x"}]}'
_USER = '{"role": "user", "content": "x"}'


@pytest.mark.parametrize(
    ("data", "message", "line"),
    [
        (
            _MINI + b'\n{"instance_id": "b", "messages": {"role": "user"}}',
            "'messages' must be a list, got a JSON object",
            2,
        ),
        (
            _MINI + b'\n{"instance_id": "b", "messages": [7]}',
            "messages[0] is a JSON number, expected a message object",
            2,
        ),
        (b'{"instance_id": "b", "messages": "no"}', "'messages' must be a list, got a JSON string", 1),
        (b'{"messages": "no"}', "'messages' must be a list, got a JSON string", None),
        (
            f'{{"messages": [{_USER}, "hi"]}}'.encode(),
            "messages[1] is a JSON string, expected a message object",
            None,
        ),
        (f"[{_USER}, null]".encode(), "element 1 is a JSON null, expected a message object", None),
        (
            f'{{"messages": [{_USER}], "system": 5}}'.encode(),
            "'system' must be a string or a list of text blocks, got a JSON number",
            None,
        ),
        (b'{"messages": []}', "the conversation has no messages", None),
        (
            b'{"format": "sleepcompact.export/2", "format_version": 2}',
            "a version 2 export is restored by the import, not read as messages",
            None,
        ),
        (
            b'{"format": "sleepcompact.export/1", "appended": 5}',
            "the export's 'appended' must be a list, got a JSON number",
            None,
        ),
        (
            f'{{"format": "sleepcompact.export/1", "appended": [{_USER}, 5]}}'.encode(),
            "appended[1] is a JSON number, expected a message object",
            None,
        ),
        (
            b'[{"type": "message", "role": "user", "content": "hi"}, 5]',
            "item 1 is not an object",
            None,
        ),
        (b'{"history": 5}', "the trajectory's 'history' must be a list, got a JSON number", None),
        (b'{"history": [5]}', "history[0] is a JSON number, expected a message object", None),
    ],
)
def test_a_conversation_of_the_wrong_shape_is_refused_at_its_place(
    data: bytes, message: str, line: int | None
) -> None:
    error = _refusal(data, all_records=True)
    where = "" if line is None else f"line {line}: "
    assert str(error) == f"x.json: {where}{message}"
    assert error.line == line


def test_an_export_that_cannot_be_read_is_refused_naming_the_file() -> None:
    error = _refusal(b'{"format": "sleepcompact.export/1+shareable", "appended": []}')
    assert str(error).startswith("x.json: 'sleepcompact.export/1+shareable' is a shareable export")
    assert error.source == "x.json"
