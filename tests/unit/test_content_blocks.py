"""OpenAI and Responses API image and file parts as sleepcompact stores them (``domain.blocks``).

An image part becomes an Anthropic image: a base64 source when its url is a ``data:`` url with a
``;base64,`` marker, a url source otherwise. A file part with inline bytes becomes a document: a PDF as a
base64 source, ``text/*`` bytes that decode as UTF-8 as a plain-text source; any other file part (a
file id, another media type, bytes that are not UTF-8 or not base64) is kept exactly as sent.
"""

from __future__ import annotations

from typing import Any

import pytest

from sleepcompact.domain.blocks import plain_blocks
from sleepcompact.domain.errors import MalformedContent
from tests.support.documents import b64, pdf_document, text_document


def _one(block: dict[str, Any]) -> dict[str, Any]:
    (stored,) = plain_blocks([block], "message 0")
    return stored


def _url_image(url: str) -> dict[str, Any]:
    return {"type": "image", "source": {"type": "url", "url": url}}


def _base64_image(media: str, data: str) -> dict[str, Any]:
    return {"type": "image", "source": {"type": "base64", "media_type": media, "data": data}}


@pytest.mark.parametrize(
    ("block", "stored"),
    [
        ({"type": "image_url", "image_url": {"url": "https://x/a.png"}}, _url_image("https://x/a.png")),
        # the url may be the value itself (Responses API input_image, older chat clients)
        ({"type": "input_image", "image_url": "https://x/b.png"}, _url_image("https://x/b.png")),
        (
            {"type": "image_url", "image_url": "data:image/png;base64,iVBO"},
            _base64_image("image/png", "iVBO"),
        ),
        (
            {"type": "input_image", "image_url": "data:image/gif;base64,R0lG", "detail": "low"},
            _base64_image("image/gif", "R0lG"),
        ),
        # both conditions are needed for a base64 source: the data: scheme and the marker
        (
            {"type": "image_url", "image_url": {"url": "https://x/img;base64,a.png"}},
            _url_image("https://x/img;base64,a.png"),
        ),
        (
            {"type": "image_url", "image_url": {"url": "data:image/png,%89PNG"}},
            _url_image("data:image/png,%89PNG"),
        ),
        # the media type ends at the first marker: the rest is the data, as sent
        (
            {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAA;base64,BBB"}},
            _base64_image("image/png", "AAA;base64,BBB"),
        ),
    ],
)
def test_an_image_part_becomes_an_anthropic_image(block: dict[str, Any], stored: dict[str, Any]) -> None:
    assert _one(block) == stored


@pytest.mark.parametrize(
    ("block", "message"),
    [
        ({"type": "image_url", "image_url": {"url": ""}}, "message 0: image_url block 0 has no url"),
        ({"type": "input_image", "image_url": ""}, "message 0: input_image block 0 has no url"),
        ({"type": "input_image", "image_url": {"url": 7}}, "message 0: input_image block 0 has no url"),
        ({"type": "image_url"}, "message 0: image_url block 0 has no url"),
    ],
)
def test_an_image_part_without_a_url_is_refused_by_name(block: dict[str, Any], message: str) -> None:
    with pytest.raises(MalformedContent) as raised:
        _one(block)
    assert str(raised.value) == message


def test_the_refusal_names_the_blocks_position() -> None:
    with pytest.raises(MalformedContent) as raised:
        plain_blocks(["look:", {"type": "image_url", "image_url": {"url": ""}}], "message 3")
    assert str(raised.value) == "message 3: image_url block 1 has no url"


PDF = "data:application/pdf;base64," + b64(b"%PDF-1.7")


@pytest.mark.parametrize(
    ("block", "stored"),
    [
        ({"type": "file", "file": {"file_data": PDF, "filename": "a.pdf"}}, pdf_document(b64(b"%PDF-1.7"))),
        # the Responses API puts file_data on the part itself
        ({"type": "input_file", "file_data": PDF, "filename": "a.pdf"}, pdf_document(b64(b"%PDF-1.7"))),
        # a PDF's payload is everything after the first marker, passed on unchecked
        (
            {"type": "file", "file": {"file_data": "data:application/pdf;base64,JVBE;base64,Rg=="}},
            pdf_document("JVBE;base64,Rg=="),
        ),
        (
            {
                "type": "file",
                "file": {"file_data": "data:text/plain;base64," + b64("naïve — ok\n".encode())},
            },
            text_document("naïve — ok\n"),
        ),
        # any text/* type, with parameters, is stored as plain text
        (
            {"type": "input_file", "file_data": "data:text/csv;charset=utf-8;base64," + b64(b"a,b\n1,2\n")},
            text_document("a,b\n1,2\n"),
        ),
    ],
)
def test_a_file_part_with_inline_bytes_becomes_a_document(
    block: dict[str, Any], stored: dict[str, Any]
) -> None:
    assert _one(block) == stored


@pytest.mark.parametrize(
    "block",
    [
        {"type": "file", "file": {"file_id": "file-abc123"}},  # no bytes: a reference to an upload
        {"type": "input_file", "file_id": "file-abc123"},
        {"type": "input_file", "file_url": "https://x/report.pdf"},
        {"type": "file", "file": {"file_data": "JVBERi0xLjc="}},  # bare base64, no data: url
        {"type": "file", "file": {"file_data": "data:text/plain,hello%20there"}},  # url-encoded, not base64
        {
            "type": "file",
            "file": {"file_data": "https://x/notes;base64,aGk="},
        },  # a marker but no data: scheme
        {"type": "file", "file": {"file_data": "data:image/png;base64,iVBO"}},  # neither PDF nor text
        {"type": "file", "file": {"file_data": "data:Text/Plain;base64,aGk="}},  # only text/ in lower case
        # text that is not valid base64 (even with the junk dropped it would decode) or not UTF-8
        {"type": "file", "file": {"file_data": "data:text/plain;base64,aGVsbG8=!"}},
        {"type": "file", "file": {"file_data": "data:text/plain;base64,aGVs bG8="}},
        {"type": "file", "file": {"file_data": "data:text/plain;base64," + b64(b"\xff\xfe\x00")}},
    ],
)
def test_any_other_file_part_is_kept_exactly_as_sent(block: dict[str, Any]) -> None:
    assert _one(block) == block
