"""Every content shape ``domain.blocks`` accepts, refuses or passes through, pinned exactly.

What a caller sends as message content is what later goes back to a provider, so each accepted shape
is pinned to the exact block it is stored as: text-like parts (``text``, ``input_text``,
``output_text``, ``refusal``) become one text block (extra fields survive only on ``text``, citations
``annotations`` never), empty text is dropped, images and documents are kept as sent, OpenAI image
and file parts become Anthropic images and documents, anything unknown is kept verbatim, and only the
pairing blocks (``tool_use``, ``tool_result``) are refused. ``compact``, ``result_content``,
``result_meta``, ``tool_call_id`` and ``check_finite`` are pinned at the boundaries that tell their
rules apart. Every refusal is a ``MalformedContent`` whose one-line message, naming where and what,
is what the user reads: each is compared in full.
"""

from __future__ import annotations

import math
from typing import Any

import pytest

from sleepcompact.domain.blocks import (
    check_finite,
    compact,
    plain_blocks,
    result_content,
    result_meta,
    tool_call_id,
)
from sleepcompact.domain.errors import MalformedContent
from tests.support.documents import b64, pdf_document, text_document


def _refusal(content: Any, where: str = "message 4") -> str:
    with pytest.raises(MalformedContent) as raised:
        plain_blocks(content, where)
    return str(raised.value)


IMAGE = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBO"}}
DOCUMENT = {"type": "document", "source": {"type": "url", "url": "https://x/a.pdf"}, "title": "A"}


# --- plain_blocks: the content as a whole ---------------------------------------------------------


def test_no_content_is_no_blocks() -> None:
    assert plain_blocks(None, "message 0") == []


def test_a_string_is_one_text_block() -> None:
    assert plain_blocks(" hi ", "message 0") == [{"type": "text", "text": " hi "}]


@pytest.mark.parametrize("content", ["", "  \n\t "])
def test_an_empty_or_blank_string_is_no_blocks(content: str) -> None:
    assert plain_blocks(content, "message 0") == []


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (7, "message 4: content must be a string or a list of blocks, got int"),
        ({"type": "text", "text": "hi"}, "message 4: content must be a string or a list of blocks, got dict"),
        (("hi",), "message 4: content must be a string or a list of blocks, got tuple"),
    ],
)
def test_content_that_is_neither_string_nor_list_is_refused_by_type(content: Any, message: str) -> None:
    assert _refusal(content) == message


def test_an_empty_list_is_no_blocks() -> None:
    assert plain_blocks([], "message 0") == []


def test_strings_in_a_list_are_text_blocks_in_order() -> None:
    assert plain_blocks(["one", IMAGE, "two"], "message 0") == [
        {"type": "text", "text": "one"},
        IMAGE,
        {"type": "text", "text": "two"},
    ]


def test_blank_strings_and_blank_text_blocks_in_a_list_are_dropped() -> None:
    content = ["  ", {"type": "text", "text": ""}, "kept", {"type": "input_text", "text": "\n"}]
    assert plain_blocks(content, "message 0") == [{"type": "text", "text": "kept"}]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ([7], "message 4: block 0 is not an object with a 'type'"),
        (["ok", {"text": "no type"}], "message 4: block 1 is not an object with a 'type'"),
        (["ok", "fine", None], "message 4: block 2 is not an object with a 'type'"),
        ([["type"]], "message 4: block 0 is not an object with a 'type'"),
    ],
)
def test_a_block_that_is_not_an_object_with_a_type_is_refused_by_position(
    content: list[Any], message: str
) -> None:
    assert _refusal(content) == message


@pytest.mark.parametrize("kind", [None, 5, "", ["text"]])
def test_a_block_whose_type_is_not_a_non_empty_string_is_refused(kind: object) -> None:
    assert _refusal(["ok", {"type": kind, "text": "hi"}]) == (
        "message 4: block 1 has a 'type' that is not a non-empty string"
    )


def test_the_caller_s_block_is_not_modified() -> None:
    block = {"type": "text", "text": "hi", "annotations": [{"type": "url"}]}
    plain_blocks([block], "message 0")
    assert block == {"type": "text", "text": "hi", "annotations": [{"type": "url"}]}


# --- text-like parts ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "block",
    [
        {"type": "text", "text": "hello"},
        {"type": "input_text", "text": "hello"},
        {"type": "output_text", "text": "hello"},
        {"type": "refusal", "refusal": "hello"},
    ],
)
def test_every_text_like_part_becomes_a_plain_text_block(block: dict[str, Any]) -> None:
    assert plain_blocks([block], "message 0") == [{"type": "text", "text": "hello"}]


def test_a_text_block_keeps_its_extra_fields_but_drops_annotations_and_refusal() -> None:
    block = {
        "type": "text",
        "text": "cited",
        "cache_control": {"type": "ephemeral"},
        "citations": [{"type": "char_location"}],
        "annotations": [{"type": "url_citation"}],
        "refusal": "stray",
    }
    assert plain_blocks([block], "message 0") == [
        {
            "type": "text",
            "text": "cited",
            "cache_control": {"type": "ephemeral"},
            "citations": [{"type": "char_location"}],
        }
    ]


@pytest.mark.parametrize(
    "block",
    [
        {"type": "input_text", "text": "hello", "cache_control": {"type": "ephemeral"}},
        {"type": "output_text", "text": "hello", "annotations": [], "logprobs": []},
        {"type": "refusal", "refusal": "hello", "text": "ignored", "id": "r1"},
    ],
)
def test_an_openai_text_part_keeps_only_its_text(block: dict[str, Any]) -> None:
    assert plain_blocks([block], "message 0") == [{"type": "text", "text": "hello"}]


@pytest.mark.parametrize(
    "block",
    [
        {"type": "text", "text": "  "},
        {"type": "output_text", "text": ""},
        {"type": "refusal", "refusal": " \n"},
        {"type": "text", "text": " ", "cache_control": {"type": "ephemeral"}},
    ],
)
def test_a_blank_text_like_part_is_dropped(block: dict[str, Any]) -> None:
    assert plain_blocks([block], "message 0") == []


@pytest.mark.parametrize(
    ("block", "message"),
    [
        ({"type": "text"}, "message 4: text block 1 has no string text"),
        ({"type": "text", "text": 5}, "message 4: text block 1 has no string text"),
        ({"type": "input_text", "text": None}, "message 4: input_text block 1 has no string text"),
        ({"type": "output_text", "text": ["a"]}, "message 4: output_text block 1 has no string text"),
        # a refusal's text is in "refusal", never in "text"
        ({"type": "refusal", "text": "no"}, "message 4: refusal block 1 has no string text"),
    ],
)
def test_a_text_like_part_without_string_text_is_refused_by_name(block: dict[str, Any], message: str) -> None:
    assert _refusal(["first", block]) == message


# --- images, documents, unknown and pairing blocks ------------------------------------------------


@pytest.mark.parametrize("block", [IMAGE, DOCUMENT])
def test_an_image_or_document_is_kept_verbatim(block: dict[str, Any]) -> None:
    assert plain_blocks([block], "message 0") == [block]


@pytest.mark.parametrize(
    ("block", "message"),
    [
        ({"type": "image"}, "message 4: image block 1 has no 'source'"),
        ({"type": "image", "source": "https://x/a.png"}, "message 4: image block 1 has no 'source'"),
        ({"type": "document", "source": None}, "message 4: document block 1 has no 'source'"),
    ],
)
def test_an_image_or_document_without_a_source_object_is_refused(block: dict[str, Any], message: str) -> None:
    assert _refusal(["first", block]) == message


@pytest.mark.parametrize(
    "block",
    [
        {"type": "thinking", "thinking": "hmm", "signature": "sig"},
        {"type": "redacted_thinking", "data": "opaque"},
        {"type": "server_tool_use", "id": "s1", "name": "web_search", "input": {}},
        {"type": "mcp_tool_result", "tool_use_id": "m1", "content": [], "cache_control": {"type": "x"}},
        {"type": "something_new", "text": "  "},
        {"type": "Text", "text": ""},
    ],
)
def test_an_unknown_block_is_kept_verbatim(block: dict[str, Any]) -> None:
    assert plain_blocks([block], "message 0") == [block]


@pytest.mark.parametrize("btype", ["tool_use", "tool_result"])
def test_a_pairing_block_is_refused_in_plain_content(btype: str) -> None:
    block = {"type": btype, "id": "t1", "tool_use_id": "t1", "name": "f", "input": {}, "content": "x"}
    assert _refusal(["first", block]) == f"message 4: a {btype} block is not allowed here"


# --- image parts ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("block", "stored"),
    [
        (
            {"type": "image_url", "image_url": {"url": "https://x/a.png", "detail": "high"}},
            {"type": "image", "source": {"type": "url", "url": "https://x/a.png"}},
        ),
        (
            {"type": "input_image", "image_url": "https://x/b.png"},
            {"type": "image", "source": {"type": "url", "url": "https://x/b.png"}},
        ),
        (
            {"type": "input_image", "image_url": {"url": "data:image/webp;base64,UklG"}},
            {"type": "image", "source": {"type": "base64", "media_type": "image/webp", "data": "UklG"}},
        ),
        (
            {"type": "image_url", "image_url": "data:image/png;base64,AA;base64,BB"},
            {
                "type": "image",
                "source": {"type": "base64", "media_type": "image/png", "data": "AA;base64,BB"},
            },
        ),
        # the marker alone, without the data: scheme at the start, is a url
        (
            {"type": "image_url", "image_url": "http:image/png;base64,AAAA"},
            {"type": "image", "source": {"type": "url", "url": "http:image/png;base64,AAAA"}},
        ),
        # a data: url without the marker (or with it in another case) is a url too
        (
            {"type": "image_url", "image_url": "data:image/png;BASE64,AAAA"},
            {"type": "image", "source": {"type": "url", "url": "data:image/png;BASE64,AAAA"}},
        ),
        (
            {"type": "image_url", "image_url": "DATA:image/png;base64,AAAA"},
            {"type": "image", "source": {"type": "url", "url": "DATA:image/png;base64,AAAA"}},
        ),
    ],
)
def test_an_image_part_becomes_an_image(block: dict[str, Any], stored: dict[str, Any]) -> None:
    assert plain_blocks(["first", block], "message 0") == [{"type": "text", "text": "first"}, stored]


@pytest.mark.parametrize(
    ("block", "message"),
    [
        ({"type": "image_url"}, "message 4: image_url block 1 has no url"),
        ({"type": "image_url", "image_url": ""}, "message 4: image_url block 1 has no url"),
        ({"type": "input_image", "image_url": {"url": ""}}, "message 4: input_image block 1 has no url"),
        (
            {"type": "input_image", "image_url": {"href": "https://x"}},
            "message 4: input_image block 1 has no url",
        ),
        ({"type": "image_url", "image_url": 7}, "message 4: image_url block 1 has no url"),
        ({"type": "image_url", "image_url": {"url": 7}}, "message 4: image_url block 1 has no url"),
    ],
)
def test_an_image_part_without_a_url_is_refused_by_name(block: dict[str, Any], message: str) -> None:
    assert _refusal(["first", block]) == message


# --- file parts -----------------------------------------------------------------------------------

PDF_BYTES = b64(b"%PDF-1.7")


@pytest.mark.parametrize(
    ("block", "stored"),
    [
        (
            {"type": "file", "file": {"file_data": "data:application/pdf;base64," + PDF_BYTES}},
            pdf_document(PDF_BYTES),
        ),
        (
            {"type": "input_file", "file_data": "data:application/pdf;base64," + PDF_BYTES, "filename": "a"},
            pdf_document(PDF_BYTES),
        ),
        # the file object wins over a file_data on the part itself
        (
            {
                "type": "file",
                "file": {"file_data": "data:application/pdf;base64,QQ=="},
                "file_data": "data:application/pdf;base64,Qg==",
            },
            pdf_document("QQ=="),
        ),
        # a file that is not an object: the part's own file_data is read
        (
            {"type": "input_file", "file": "file-1", "file_data": "data:application/pdf;base64,QQ=="},
            pdf_document("QQ=="),
        ),
        (
            {"type": "file", "file": {"file_data": "data:application/pdf;base64,QQ==;base64,Qg=="}},
            pdf_document("QQ==;base64,Qg=="),
        ),
        (
            {"type": "input_file", "file_data": "data:text/markdown;base64," + b64("# Été\n".encode())},
            text_document("# Été\n"),
        ),
        (
            {"type": "file", "file": {"file_data": "data:text/plain;base64,"}},
            text_document(""),
        ),
    ],
)
def test_a_file_part_with_inline_pdf_or_text_becomes_a_document(
    block: dict[str, Any], stored: dict[str, Any]
) -> None:
    assert plain_blocks([block], "message 0") == [stored]


@pytest.mark.parametrize(
    "block",
    [
        {"type": "file", "file": {"file_id": "file-abc"}},
        {"type": "input_file", "file_id": "file-abc"},
        {"type": "file"},
        {"type": "file", "file": {"file_data": 12}},
        {"type": "file", "file": {"file_data": "data:text/plain,hello"}},
        {"type": "file", "file": {"file_data": "data:application/pdf;BASE64," + PDF_BYTES}},
        {"type": "file", "file": {"file_data": "DATA:application/pdf;base64," + PDF_BYTES}},
        # the marker without the data: scheme, even where the rest would read as text or PDF
        {"type": "file", "file": {"file_data": "http:text/plain;base64,aGk="}},
        {"type": "input_file", "file_data": "xxxxxapplication/pdf;base64," + PDF_BYTES},
        {"type": "file", "file": {"file_data": "data:APPLICATION/PDF;base64," + PDF_BYTES}},
        {"type": "file", "file": {"file_data": "data:TEXT/plain;base64,aGk="}},
        {"type": "file", "file": {"file_data": "data:image/png;base64,iVBO"}},
        {"type": "input_file", "file_data": "data:application/json;base64,e30="},
        # text/* that is not strict base64, or not UTF-8
        {"type": "file", "file": {"file_data": "data:text/plain;base64,aGk=!"}},
        {"type": "file", "file": {"file_data": "data:text/plain;base64,a Gk="}},
        {"type": "file", "file": {"file_data": "data:text/plain;base64,aGk"}},
        {"type": "file", "file": {"file_data": "data:text/plain;base64," + b64(b"caf\xe9")}},
    ],
)
def test_any_other_file_part_is_kept_verbatim(block: dict[str, Any]) -> None:
    assert plain_blocks([block], "message 0") == [block]


# --- compact --------------------------------------------------------------------------------------


def test_compact_turns_one_plain_text_block_into_its_string() -> None:
    assert compact([{"type": "text", "text": "hi"}]) == "hi"


@pytest.mark.parametrize(
    "blocks",
    [
        [],
        [{"type": "text", "text": "hi", "cache_control": {"type": "ephemeral"}}],
        [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}],
        [{"type": "text", "text": "a"}, IMAGE],
        [IMAGE],
        [{"type": "note", "text": "a"}],
    ],
)
def test_compact_keeps_anything_else_as_blocks(blocks: list[dict[str, Any]]) -> None:
    assert compact(blocks) == blocks


# --- result_content -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "stored"),
    [
        (None, ""),
        ("", ""),
        ("  raw output \n", "  raw output \n"),
        (["done"], "done"),
        ([{"type": "input_text", "text": "done"}], "done"),
        (["a", "b"], [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]),
        ([IMAGE], [IMAGE]),
        (["  "], []),
    ],
)
def test_result_content_is_the_text_or_the_compacted_blocks(content: Any, stored: Any) -> None:
    assert result_content(content, "tool result 2") == stored


def test_result_content_refusals_name_where() -> None:
    with pytest.raises(MalformedContent) as raised:
        result_content(["ok", {"type": "tool_use"}], "tool result 2")
    assert str(raised.value) == "tool result 2: a tool_use block is not allowed here"
    with pytest.raises(MalformedContent) as raised:
        result_content(3.5, "tool result 2")
    assert str(raised.value) == "tool result 2: content must be a string or a list of blocks, got float"


# --- result_meta ----------------------------------------------------------------------------------


def test_result_meta_of_a_plain_result_is_empty() -> None:
    assert result_meta({"content": "x", "tool_use_id": "t1"}) == {}


@pytest.mark.parametrize(
    ("source", "meta"),
    [
        ({"is_error": True}, {"is_error": True}),
        ({"is_error": 1}, {"is_error": True}),
        ({"is_error": False}, {}),
        ({"is_error": None}, {}),
        ({"include_in_history": True}, {"include_in_history": True}),
        ({"include_in_history": "yes"}, {"include_in_history": True}),
        ({"include_in_history": 0}, {}),
        ({"tool_summary": " listed 3 files "}, {"tool_summary": " listed 3 files "}),
        ({"tool_summary": None}, {}),
        ({"cache_control": {"type": "ephemeral"}}, {"cache_control": {"type": "ephemeral"}}),
        ({"cache_control": "ephemeral"}, {}),
        ({"cache_control": None}, {}),
        (
            {"is_error": True, "tool_summary": "s", "include_in_history": True, "cache_control": {"a": 1}},
            {"is_error": True, "tool_summary": "s", "include_in_history": True, "cache_control": {"a": 1}},
        ),
    ],
)
def test_result_meta_keeps_each_flag_only_when_set(source: dict[str, Any], meta: dict[str, Any]) -> None:
    assert result_meta(source) == meta


def test_result_meta_copies_cache_control() -> None:
    cache_control = {"type": "ephemeral"}
    meta = result_meta({"cache_control": cache_control})
    meta["cache_control"]["ttl"] = "1h"
    assert cache_control == {"type": "ephemeral"}


@pytest.mark.parametrize("summary", ["", "   \n", 5, ["s"], False])
def test_result_meta_refuses_a_summary_that_is_not_non_empty_text(summary: Any) -> None:
    with pytest.raises(MalformedContent) as raised:
        result_meta({"tool_summary": summary})
    assert str(raised.value) == "tool_summary must be non-empty text"


# --- tool_call_id ---------------------------------------------------------------------------------


@pytest.mark.parametrize("value", ["toolu_01", "call abc", " "])
def test_a_tool_call_id_is_returned_as_sent(value: str) -> None:
    assert tool_call_id(value, "message 1") == value


@pytest.mark.parametrize("value", [None, "", 0, 12, ["id"]])
def test_a_tool_call_id_must_be_a_non_empty_string(value: Any) -> None:
    with pytest.raises(MalformedContent) as raised:
        tool_call_id(value, "message 1")
    assert str(raised.value) == "message 1: a tool call id must be a non-empty string"


@pytest.mark.parametrize("value", ["\x00", "call\x00x", "call_1\x00"])
def test_a_tool_call_id_may_not_contain_nul(value: str) -> None:
    with pytest.raises(MalformedContent) as raised:
        tool_call_id(value, "message 1")
    assert str(raised.value) == "message 1: a tool call id may not contain NUL characters"


# --- check_finite ---------------------------------------------------------------------------------


@pytest.mark.parametrize("value", [0.0, -1.5, 1e308, -1e308, 5e-324, 3])
def test_a_finite_number_is_accepted(value: float) -> None:
    check_finite(value, "message 2: arguments")  # no error


@pytest.mark.parametrize(("value", "shown"), [(math.nan, "nan"), (math.inf, "inf"), (-math.inf, "-inf")])
def test_nan_and_infinities_are_refused_by_name(value: float, shown: str) -> None:
    with pytest.raises(MalformedContent) as raised:
        check_finite(value, "message 2: arguments")
    assert str(raised.value) == (
        f"message 2: arguments: {shown} is not a finite number (JSON has no NaN or Infinity)"
    )
