"""What one attachment costs, to the token, at the edges of each rule the provider publishes.

An image costs ``width * height / 750`` tokens (rounded up) after it is scaled down, aspect kept, so that
its long edge is at most 1,568 px and its area at most 1.2 megapixels; an image with no area costs the
1,600-token cap. An OpenAI file part costs its decoded size at 4 bytes a token, a plain text document
its text, a document with its own content blocks the text of those blocks joined by spaces, and a
document whose source is of no known kind one PDF page. These are the numbers a user's budget is
charged, so each test asserts the exact count on either side of a boundary.
"""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest

from sleepcompact.domain.attachments import (
    IMAGE_TOKEN_CAP,
    PDF_PAGE_TOKENS,
    attachment_bytes,
    attachment_tokens,
    image_tokens_for,
)


def words(text: str) -> int:
    """A transparent stand-in tokenizer: one token per whitespace-separated word."""
    return len(text.split())


def characters(text: str) -> int:
    """A tokenizer that sees every character, so the exact text counted shows in the count."""
    return len(text)


# -- images: the scaling boundaries ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("width", "height", "expected"),
    [
        # The long edge: 1,568 px is kept as it is; one pixel more and the image is scaled to 1568 x 499.
        (1567, 500, 1045),  # 783,500 / 750 = 1044.7
        (1568, 500, 1046),  # 784,000 / 750 = 1045.3
        (1569, 500, 1044),  # 1568 x 499 = 782,432 / 750 = 1043.2
        (500, 1569, 1044),  # the long edge may be the height
        (3136, 1000, 1046),  # halved: 1568 x 500
        # The area: 1.2 megapixels is kept as it is (the cap, 1,600 tokens); more is scaled below it.
        (1000, 1199, 1599),  # 1,199,000 / 750 = 1598.7
        (1000, 1200, 1600),  # 1,200,000 / 750
        (1000, 1201, 1599),  # 999 x 1200 = 1,198,800 / 750 = 1598.4
        (1092, 1092, 1590),  # the provider's table: 1092 x 1092 is not scaled, ~1,590 tokens
        (1568, 765, 1600),  # both limits at once, the area just under: 1,199,520 / 750 = 1599.4
        (1568, 766, 1599),  # the area just over: 1567 x 765 = 1,198,755 / 750 = 1598.3
    ],
)
def test_an_image_costs_its_scaled_area_over_750_at_each_scaling_boundary(
    width: int, height: int, expected: int
) -> None:
    assert image_tokens_for(width, height) == expected


@pytest.mark.parametrize(
    ("width", "height", "expected"),
    [
        (1, 750, 1),
        (1, 751, 2),
        (1, 1500, 2),  # one pixel wide: 1,500 pixels
        (1, 20_000, 3),  # scaled to 1 x 1568 (the width stays one pixel): 1,568 / 750 = 2.1
        (20_000, 1, 3),
    ],
)
def test_a_one_pixel_strip_costs_its_length_over_750(width: int, height: int, expected: int) -> None:
    assert image_tokens_for(width, height) == expected


@pytest.mark.parametrize(("width", "height"), [(0, 100), (100, 0), (0, 0), (-1, 5), (5, -1)])
def test_an_image_declaring_no_area_costs_the_cap(width: int, height: int) -> None:
    assert image_tokens_for(width, height) == IMAGE_TOKEN_CAP


# -- OpenAI file parts -------------------------------------------------------------------------------

CSV = b"date,steps,sleep_hours\n" + b"2024-03-01,8123,7.5\n" * 149  # 3,003 bytes


def data_url(data: bytes, media_type: str = "text/csv") -> str:
    return f"data:{media_type};base64," + base64.b64encode(data).decode("ascii")


def file_part(data: bytes) -> dict[str, Any]:
    """Chat Completions: the file's fields sit under ``file``."""
    return {"type": "file", "file": {"file_data": data_url(data), "filename": "steps.csv"}}


def input_file_part(data: bytes) -> dict[str, Any]:
    """The Responses API: the file's fields sit on the part itself."""
    return {"type": "input_file", "file_data": data_url(data), "filename": "steps.csv"}


def test_a_file_part_costs_its_decoded_size_at_four_bytes_a_token() -> None:
    assert len(CSV) == 3003
    # 4,004 base64 characters are 3,003 bytes: 750.75 tokens, rounded up.
    assert attachment_tokens(file_part(CSV), words) == 751
    assert attachment_tokens(input_file_part(CSV), words) == 751
    assert attachment_tokens(file_part(CSV[:399]), words) == 100  # 399 / 4 = 99.75


def test_a_file_part_by_id_costs_one_page() -> None:
    assert attachment_tokens({"type": "file", "file": {"file_id": "file-abc123"}}, words) == PDF_PAGE_TOKENS
    assert attachment_tokens({"type": "input_file", "file_id": "file-abc123"}, words) == PDF_PAGE_TOKENS


@pytest.mark.parametrize("make", [file_part, input_file_part], ids=["file", "input_file"])
def test_a_file_part_adds_its_base64_text_to_the_request_bytes(make: Any) -> None:
    part = make(CSV)
    data = data_url(CSV)
    assert len(data) <= attachment_bytes(part) <= len(json.dumps(part))


# -- documents ---------------------------------------------------------------------------------------


def test_a_text_document_with_no_text_costs_nothing() -> None:
    empty = {"type": "document", "source": {"type": "text", "media_type": "text/plain"}}
    assert attachment_tokens(empty, characters) == 0


def test_a_content_document_is_counted_as_its_text_blocks_joined_by_single_spaces() -> None:
    doc = {
        "type": "document",
        "source": {
            "type": "content",
            "content": [{"type": "text", "text": "first page"}, {"type": "text", "text": "second"}],
        },
    }
    assert attachment_tokens(doc, characters) == len("first page second")


def test_an_image_in_a_content_document_costs_what_the_image_costs() -> None:
    chart = {"type": "image", "source": {"type": "url", "url": "https://example.com/chart.png"}}
    doc = {
        "type": "document",
        "source": {"type": "content", "content": [{"type": "text", "text": "see the chart"}, chart]},
    }
    # The chart by URL cannot be sized, so it costs the cap; it adds no text.
    assert attachment_tokens(doc, characters) == len("see the chart") + IMAGE_TOKEN_CAP
    assert attachment_tokens(doc, words) == 3 + IMAGE_TOKEN_CAP


def test_a_content_document_given_as_one_string_is_counted_as_that_text() -> None:
    doc = {"type": "document", "source": {"type": "content", "content": "one two three"}}
    assert attachment_tokens(doc, words) == 3


def test_a_document_whose_source_has_no_known_kind_costs_one_page_whatever_it_carries() -> None:
    untyped = {"type": "document", "source": {"content": [{"type": "text", "text": "a b"}]}}
    by_url = {
        "type": "document",
        "source": {
            "type": "url",
            "url": "https://example.com/a.pdf",
            "content": [{"type": "text", "text": "a"}],
        },
    }
    assert attachment_tokens(untyped, words) == PDF_PAGE_TOKENS
    assert attachment_tokens(by_url, words) == PDF_PAGE_TOKENS


def test_a_file_part_adds_its_data_and_name_to_the_request_bytes_not_its_type() -> None:
    # The part's own "type" is counted with the rest of the JSON, not as the file's bytes.
    data = data_url(CSV)
    assert attachment_bytes(input_file_part(CSV)) == len(data) + len("steps.csv")
    assert attachment_bytes(file_part(CSV)) == attachment_bytes(input_file_part(CSV))


def test_a_file_of_a_few_bytes_costs_one_token() -> None:
    assert attachment_tokens(file_part(b"hi!"), words) == 1  # "aGkh": 4 characters, 3 bytes


def test_a_content_document_block_without_text_adds_no_text() -> None:
    doc = {
        "type": "document",
        "source": {
            "type": "content",
            "content": [{"type": "text", "text": "see the chart"}, {"type": "text"}],
        },
    }
    assert attachment_tokens(doc, characters) == len("see the chart ")
    assert attachment_tokens(doc, words) == 3
