"""Which files are sleepcompact exports, and which export versions an import reads.

``export_document`` decides whether a file is restored row for row (an export) or read by the format
detector; ``export_version`` refuses, word for word, what cannot be restored: a shareable (redacted)
export, a version this release does not read, and a ``format_version`` that disagrees with the
``format`` it sits beside. Each refusal names the file it came from.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from sleepcompact.domain.errors import ImportFormatError
from sleepcompact.domain.formats import export_document, export_version


def _bytes(doc: Any) -> bytes:
    return json.dumps(doc).encode()


def _refusal(doc: dict[str, Any], **kwargs: str) -> ImportFormatError:
    with pytest.raises(ImportFormatError) as caught:
        export_version(doc, **kwargs)
    return caught.value


def test_an_export_saved_with_a_byte_order_mark_is_still_an_export() -> None:
    doc = {"format": "sleepcompact.export/2", "format_version": 2, "conversations": []}
    assert export_document(b"\xef\xbb\xbf" + _bytes(doc)) == doc


def test_a_file_that_only_mentions_the_export_format_is_not_an_export() -> None:
    mention = {"role": "user", "content": "what is sleepcompact.export/2?"}
    assert export_document(_bytes([mention])) is None
    assert export_document(_bytes({"messages": [mention]})) is None
    assert export_document(_bytes({"format": "other", "note": "sleepcompact.export/1"})) is None
    assert export_document(b"sleepcompact.export/1 {") is None
    assert export_document(b'{"format": "sleepcompact.export/1", "x": "\xff"}') is None


def test_a_version_is_read_from_format_version_or_from_the_format_alone() -> None:
    assert export_version({"format": "sleepcompact.export/2", "format_version": 2}) == 2
    assert export_version({"format": "sleepcompact.export/1"}) == 1


def test_a_shareable_export_is_refused_naming_its_source() -> None:
    error = _refusal({"format": "sleepcompact.export/2+shareable", "format_version": 2}, source="a.json")
    assert str(error) == (
        "a.json: 'sleepcompact.export/2+shareable' is a shareable export: every string in it is redacted, "
        "so it cannot restore a conversation; import an export made without --shareable (shareable=False)"
    )
    assert error.source == "a.json"


def test_a_refusal_without_a_source_names_the_input() -> None:
    error = _refusal({"format": "sleepcompact.export/2+shareable"})
    assert str(error).startswith("<input>: 'sleepcompact.export/2+shareable' is a shareable export")
    assert error.source == "<input>"


@pytest.mark.parametrize("given", ["2", True, 2.0, None])
def test_a_format_version_that_is_not_an_integer_is_refused(given: object) -> None:
    error = _refusal({"format": "sleepcompact.export/1", "format_version": given}, source="b.json")
    assert str(error) == (
        f"b.json: the export's format_version must be an integer, got {given!r} "
        "(format 'sleepcompact.export/1')"
    )
    assert error.source == "b.json"


def test_a_format_version_that_disagrees_with_the_format_is_refused() -> None:
    error = _refusal({"format": "sleepcompact.export/1", "format_version": 2}, source="c.json")
    assert (
        str(error)
        == "c.json: the export's format 'sleepcompact.export/1' does not match its format_version 2"
    )


def test_a_document_without_a_format_is_refused_naming_an_empty_one() -> None:
    error = _refusal({"format_version": 2})
    assert str(error) == "<input>: the export's format '' does not match its format_version 2"
    assert str(_refusal({})) == "<input>: unknown export format ''"


@pytest.mark.parametrize(
    ("doc", "version"),
    [
        ({"format": "sleepcompact.export/3"}, 3),
        ({"format": "sleepcompact.export/1", "format_version": 0}, 0),
        ({"format": "sleepcompact.export/7", "format_version": 2}, 7),
    ],
)
def test_a_version_this_release_does_not_read_is_refused(doc: dict[str, Any], version: int) -> None:
    assert str(_refusal(doc, source="d.json")) == (
        f"d.json: unknown export format {doc['format']!r}: version {version}; "
        "this release reads versions 1, 2"
    )
