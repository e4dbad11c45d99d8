"""Images, documents and audio cost what the provider bills for them, read from the bytes sent.

An image's tokens come from the width and height in its own header (PNG, GIF, WebP, JPEG), by
Anthropic's published rule: scale down so the long edge is at most 1,568 px and the area at most
about 1.2 megapixels (1,600 tokens), then ``width * height / 750``. An image with no bytes to read (a
URL or a file id) or
bytes that are not an image costs the documented cap. A PDF costs per page, audio by its length. The
headers here are built byte by byte, so each test says exactly which dimensions the image declares.
"""

from __future__ import annotations

import base64
import json
import math
import struct
import zlib
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from sleepcompact.domain.attachments import (
    IMAGE_TOKEN_CAP,
    MAX_LONG_EDGE,
    MAX_PIXELS,
    PDF_PAGE_TOKENS,
    PIXELS_PER_TOKEN,
    attachment_bytes,
    attachment_tokens,
    count_attachments,
    image_size,
    image_tokens_for,
    request_weight,
)
from sleepcompact.domain.messages import MESSAGE_OVERHEAD, normalize, part_tokens

AREA_CAP_TOKENS = math.ceil(MAX_PIXELS / PIXELS_PER_TOKEN)
"""The most an image whose size is known can cost: its area is scaled to at most MAX_PIXELS."""


def words(text: str) -> int:
    """A transparent stand-in tokenizer: one token per whitespace-separated word."""
    return len(text.split())


# -- image files, built by hand -----------------------------------------------------------------------


def _png_chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def png(width: int, height: int, *, pixels: bool = False) -> bytes:
    """A PNG header declaring width x height; with ``pixels``, a complete image (one RGB row per line)."""
    ihdr = _png_chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
    out = b"\x89PNG\r\n\x1a\n" + ihdr
    if pixels:
        rows = b"".join(b"\x00" + b"\xff\x00\x00" * width for _ in range(height))
        out += _png_chunk(b"IDAT", zlib.compress(rows)) + _png_chunk(b"IEND", b"")
    return out


def gif(width: int, height: int) -> bytes:
    return b"GIF89a" + struct.pack("<HH", width, height) + b"\x00\x00\x00" + b";"


def _riff(chunk: bytes, payload: bytes) -> bytes:
    body = b"WEBP" + chunk + struct.pack("<I", len(payload)) + payload
    return b"RIFF" + struct.pack("<I", len(body)) + body


def webp_vp8x(width: int, height: int) -> bytes:
    dims = (width - 1).to_bytes(3, "little") + (height - 1).to_bytes(3, "little")
    return _riff(b"VP8X", b"\x00\x00\x00\x00" + dims)


def webp_lossless(width: int, height: int) -> bytes:
    bits = (width - 1) | ((height - 1) << 14)
    return _riff(b"VP8L", b"\x2f" + bits.to_bytes(4, "little") + b"\x00" * 8)  # then the bitstream


def webp_lossy(width: int, height: int) -> bytes:
    return _riff(b"VP8 ", b"\x00\x00\x00" + b"\x9d\x01\x2a" + struct.pack("<HH", width, height))


def jpeg(width: int, height: int, *, exif_bytes: int = 0, progressive: bool = False) -> bytes:
    """SOI, a JFIF APP0, optionally a large EXIF APP1 (as cameras write), then the frame header."""
    app0 = b"\xff\xe0" + struct.pack(">H", 16) + b"JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00"
    app1 = b""
    if exif_bytes:
        app1 = b"\xff\xe1" + struct.pack(">H", exif_bytes + 2) + b"Exif\x00\x00" + b"\x00" * (exif_bytes - 6)
    sof = b"\xff\xc2" if progressive else b"\xff\xc0"
    frame = sof + struct.pack(">HBHHB", 17, 8, height, width, 3) + b"\x01\x22\x00\x02\x11\x01\x03\x11\x01"
    return b"\xff\xd8" + app0 + app1 + frame + b"\xff\xd9"


def image_block(data: bytes, media_type: str = "image/png") -> dict[str, Any]:
    encoded = base64.b64encode(data).decode("ascii")
    return {"type": "image", "source": {"type": "base64", "media_type": media_type, "data": encoded}}


def scaled(width: int, height: int) -> tuple[float, float]:
    """Anthropic's downscaling, written out independently (no edge below one pixel)."""
    scale = min(1.0, 1568 / max(width, height), math.sqrt(1_200_000 / (width * height)))
    return max(1.0, width * scale), max(1.0, height * scale)


def published_tokens(width: int, height: int) -> float:
    """Anthropic's rule: scale down, then width * height / 750."""
    w, h = scaled(width, height)
    return w * h / 750


def rounding_slack(width: int, height: int) -> float:
    """What whole pixels and whole tokens may cost: a pixel off each scaled edge, one token up."""
    w, h = scaled(width, height)
    return (w + h) / 750 + 1


# -- images counted from their headers -----------------------------------------------------------------


def test_a_real_one_pixel_png_costs_one_token() -> None:
    block = image_block(png(1, 1, pixels=True))
    assert attachment_tokens(block, words) == 1


def test_a_small_image_costs_its_area_over_750_as_the_provider_documents() -> None:
    # The provider's own table: 200x200 is about 54 tokens, 1000x1000 about 1,334.
    assert attachment_tokens(image_block(png(200, 200)), words) == 54
    assert attachment_tokens(image_block(png(1000, 1000)), words) == 1334


def test_a_large_photo_is_counted_after_the_providers_downscaling() -> None:
    tokens = attachment_tokens(image_block(png(4000, 3000)), words)
    assert abs(tokens - published_tokens(4000, 3000)) <= rounding_slack(4000, 3000)
    assert tokens <= AREA_CAP_TOKENS
    assert tokens < 4000 * 3000 / 750 / 10  # far below the unscaled cost of 16,000


def test_a_long_edge_over_1568_is_scaled_down_even_when_the_area_is_small() -> None:
    # 3136 x 100: the area is only 0.31 MP but the long edge is twice the limit, so the image is halved.
    tokens = attachment_tokens(image_block(png(3136, 100)), words)
    assert tokens == math.ceil(1568 * 50 / 750)


def test_the_same_size_costs_the_same_in_every_header_format() -> None:
    width, height = 1000, 750
    expected = math.ceil(width * height / 750)
    files = {
        "image/png": png(width, height),
        "image/gif": gif(width, height),
        "image/webp": webp_vp8x(width, height),
        "image/jpeg": jpeg(width, height),
    }
    for media_type, data in files.items():
        assert attachment_tokens(image_block(data, media_type), words) == expected, media_type


def test_every_webp_variant_and_a_progressive_jpeg_are_read() -> None:
    assert image_size(webp_vp8x(640, 480)) == (640, 480)
    assert image_size(webp_lossless(640, 480)) == (640, 480)
    assert image_size(webp_lossy(640, 480)) == (640, 480)
    assert image_size(jpeg(640, 480, progressive=True)) == (640, 480)


def test_a_jpeg_whose_size_follows_a_large_exif_block_is_still_read() -> None:
    data = jpeg(800, 600, exif_bytes=60_000)
    assert attachment_tokens(image_block(data, "image/jpeg"), words) == 640


def test_an_openai_data_url_image_is_counted_from_its_header() -> None:
    url = "data:image/png;base64," + base64.b64encode(png(200, 200)).decode("ascii")
    msg = {"role": "user", "content": [{"type": "image_url", "image_url": {"url": url}}]}
    (part,) = normalize(msg).parts
    assert part_tokens(part.content, words) == 54 + MESSAGE_OVERHEAD


def test_an_image_in_a_message_adds_its_own_cost_to_the_text() -> None:
    content = [{"type": "text", "text": "what is this"}, image_block(png(1000, 1000))]
    (part,) = normalize({"role": "user", "content": content}).parts
    assert part_tokens(part.content, words) == 3 + MESSAGE_OVERHEAD + 1334


@given(st.integers(1, 20_000), st.integers(1, 20_000))
def test_any_declared_size_costs_between_one_token_and_the_scaled_area(width: int, height: int) -> None:
    tokens = attachment_tokens(image_block(png(width, height)), words)
    assert 1 <= tokens <= AREA_CAP_TOKENS
    assert abs(tokens - published_tokens(width, height)) <= rounding_slack(width, height)
    if max(width, height) <= MAX_LONG_EDGE and width * height <= MAX_PIXELS:
        assert tokens == math.ceil(width * height / 750)


# -- images whose size cannot be read ------------------------------------------------------------------


def test_an_image_by_url_or_file_id_costs_the_documented_cap() -> None:
    by_url = {"type": "image", "source": {"type": "url", "url": "https://example.com/cat.png"}}
    by_file = {"type": "image", "source": {"type": "file", "file_id": "file_011CNha8iCJcU1wXNR6q4V8w"}}
    assert attachment_tokens(by_url, words) == IMAGE_TOKEN_CAP
    assert attachment_tokens(by_file, words) == IMAGE_TOKEN_CAP


def test_base64_that_is_not_an_image_costs_the_cap_instead_of_crashing() -> None:
    not_images = [
        base64.b64encode(b"hello, I am a text file").decode("ascii"),
        "%%%% not base64 at all %%%%",
        "",
        base64.b64encode(b"\x89PNG\r\n\x1a\n\x00\x00").decode("ascii"),  # a PNG cut off inside its header
        base64.b64encode(b"\xff\xd8\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00").decode("ascii"),  # bad JPEG
    ]
    for data in not_images:
        block = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": data}}
        assert attachment_tokens(block, words) == IMAGE_TOKEN_CAP, data


def test_an_image_declaring_zero_pixels_or_with_no_data_costs_the_cap() -> None:
    assert attachment_tokens(image_block(png(0, 0)), words) == IMAGE_TOKEN_CAP
    no_data = {"type": "image", "source": {"type": "base64", "media_type": "image/png"}}
    assert attachment_tokens(no_data, words) == IMAGE_TOKEN_CAP
    assert attachment_tokens({"type": "image"}, words) == IMAGE_TOKEN_CAP


def test_a_known_size_never_costs_more_than_the_unknown_size_cap() -> None:
    assert image_tokens_for(100_000, 100_000) <= IMAGE_TOKEN_CAP
    assert image_tokens_for(1, 1_000_000) >= 1


# -- documents ---------------------------------------------------------------------------------------


def pdf(pages: int) -> bytes:
    """A small PDF with a page tree of ``pages`` pages (the tree node itself is /Type /Pages)."""
    kids = " ".join(f"{3 + i} 0 R" for i in range(pages))
    objects = [
        "1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj",
        f"2 0 obj << /Type /Pages /Kids [{kids}] /Count {pages} >> endobj",
    ]
    objects += [f"{3 + i} 0 obj << /Type/Page /Parent 2 0 R >> endobj" for i in range(pages)]
    return ("%PDF-1.4\n" + "\n".join(objects) + "\n%%EOF\n").encode("ascii")


def pdf_block(data: bytes) -> dict[str, Any]:
    encoded = base64.b64encode(data).decode("ascii")
    return {
        "type": "document",
        "source": {"type": "base64", "media_type": "application/pdf", "data": encoded},
    }


def test_a_pdf_is_counted_by_its_pages() -> None:
    assert attachment_tokens(pdf_block(pdf(1)), words) == PDF_PAGE_TOKENS
    assert attachment_tokens(pdf_block(pdf(3)), words) == 3 * PDF_PAGE_TOKENS


def test_a_pdf_whose_pages_cannot_be_found_counts_as_one_page() -> None:
    assert attachment_tokens(pdf_block(b"%PDF-1.7 compressed object streams only"), words) == PDF_PAGE_TOKENS
    by_url = {"type": "document", "source": {"type": "url", "url": "https://example.com/paper.pdf"}}
    assert attachment_tokens(by_url, words) == PDF_PAGE_TOKENS


def test_an_openai_pdf_file_part_is_counted_by_its_pages() -> None:
    data = "data:application/pdf;base64," + base64.b64encode(pdf(2)).decode("ascii")
    msg = {"role": "user", "content": [{"type": "file", "file": {"file_data": data, "filename": "a.pdf"}}]}
    (part,) = normalize(msg).parts
    assert part_tokens(part.content, words) == 2 * PDF_PAGE_TOKENS + MESSAGE_OVERHEAD


def test_a_plain_text_document_is_counted_by_its_text() -> None:
    text_doc = {"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": "one two"}}
    content_doc = {
        "type": "document",
        "source": {"type": "content", "content": [{"type": "text", "text": "a b c"}]},
    }
    assert attachment_tokens(text_doc, words) == 2
    assert attachment_tokens(content_doc, words) == 3


# -- bytes and counts against the per-request limits ---------------------------------------------------


def test_attachment_bytes_covers_the_base64_text_a_request_carries() -> None:
    block = image_block(png(64, 64, pixels=True))
    data = block["source"]["data"]
    size = attachment_bytes(block)
    assert len(data) <= size <= len(json.dumps(block))


def test_attachment_bytes_of_a_url_image_is_about_its_url() -> None:
    url = "https://example.com/" + "x" * 500 + ".png"
    block = {"type": "image", "source": {"type": "url", "url": url}}
    assert len(url) <= attachment_bytes(block) <= len(json.dumps(block))


def test_a_block_without_a_source_adds_no_attachment_bytes() -> None:
    assert attachment_bytes({"type": "image"}) == 0
    assert attachment_bytes({"type": "image", "source": "not an object"}) == 0


def audio_block(seconds: int) -> dict[str, Any]:
    """OpenAI ``input_audio``: ``seconds`` of 128 kbps MP3 (16,000 bytes a second)."""
    data = base64.b64encode(b"\xff\xfb" * (8000 * seconds)).decode("ascii")
    return {"type": "input_audio", "input_audio": {"data": data, "format": "mp3"}}


def test_audio_is_counted_by_its_length_at_about_ten_tokens_a_second() -> None:
    assert attachment_tokens(audio_block(3), words) == 30
    assert attachment_tokens({"type": "input_audio"}, words) == 1


def test_attachment_bytes_of_audio_covers_its_base64_text() -> None:
    block = audio_block(1)
    data = block["input_audio"]["data"]
    assert len(data) <= attachment_bytes(block) <= len(json.dumps(block))


def test_count_attachments_counts_images_documents_and_audio_only() -> None:
    content = [
        {"type": "text", "text": "look"},
        image_block(png(10, 10)),
        pdf_block(pdf(1)),
        {"type": "tool_use", "id": "t", "name": "x", "input": {}},
        image_block(gif(5, 5), "image/gif"),
        audio_block(1),
        "a bare string is not a block",
    ]
    assert count_attachments(content) == 4


def test_count_attachments_of_text_content_is_zero() -> None:
    assert count_attachments("an image of a cat") == 0
    assert count_attachments(None) == 0
    assert count_attachments([]) == 0


# -- weighing a request -----------------------------------------------------------------------------

# Every character JSON may escape (the C0 controls, quotes, backslashes) drawn often, in short strings
# and in long ones (weighed by two different paths).
JSON_CHARS = st.characters(blacklist_categories=("Cs",)) | st.sampled_from('\n"\\\x00\x1b\t\r\x7f')
JSON_TEXT = st.text(JSON_CHARS, max_size=40)
LONG_TEXT = st.text(JSON_CHARS, min_size=500, max_size=600)
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-(10**9), 10**9) | JSON_TEXT | LONG_TEXT,
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(JSON_TEXT, inner, max_size=5),
    max_leaves=40,
)


@given(JSON_VALUES)
def test_a_request_is_weighed_close_to_its_serialized_size(body: Any) -> None:
    exact = len(json.dumps(body, ensure_ascii=False).encode("utf-8"))
    _, estimate = request_weight(body)
    # Good enough to decide whether to serialize (the guard does when the estimate nears half the limit).
    assert exact / 2 <= estimate <= 2 * exact, (exact, estimate)


def _slack(value: Any) -> int:
    """What the estimate may add to the exact size: the separator after a container's last item (2)
    and the fifth byte of ``null`` and ``true`` (weighed like ``false``)."""
    if isinstance(value, dict | list):
        items = list(value.values()) if isinstance(value, dict) else value
        return (2 if items else 0) + sum(_slack(v) for v in items)
    return 1 if value is None or value is True else 0


@given(JSON_VALUES)
def test_a_request_is_never_under_weighed_and_over_only_by_its_punctuation(body: Any) -> None:
    # Under-weighing could let an oversized request through to the API; over-weighing by more than the
    # punctuation the walk does not track would serialize requests that are nowhere near the limit.
    exact = len(json.dumps(body, ensure_ascii=False).encode("utf-8"))
    assert request_weight(body)[1] == exact + _slack(body)


def test_punctuation_and_literals_are_weighed_like_their_json() -> None:
    assert request_weight({}) == (0, 2)
    assert request_weight([]) == (0, 2)
    assert request_weight({"ab": 7}) == (0, len('{"ab": 7, }'))
    assert request_weight([None, False, True, 12]) == (0, len("[null , false, true , 12, ]"))


def test_keys_are_weighed_by_their_utf8_bytes_and_escapes() -> None:
    # A tool keyed in another language: ten characters, 39 bytes; counted as characters the request
    # was weighed at half its size.
    body = {"ࠀ" + "𐀀" * 9: None, 'say "hi"': 1, 7: 2}
    exact = len(json.dumps(body, ensure_ascii=False).encode("utf-8"))
    assert request_weight(body) == (0, exact + _slack(body))


def test_screenshots_inside_tool_results_are_counted_and_weighed_by_their_base64() -> None:
    shot = image_block(png(1280, 800) + bytes(200_000))
    body = {
        "system": "be brief",
        "messages": [
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": [shot]}]},
            {"role": "user", "content": [{"type": "text", "text": "and this"}, shot]},
        ],
    }
    attachments, estimate = request_weight(body)
    exact = len(json.dumps(body, ensure_ascii=False).encode("utf-8"))
    assert attachments == 2
    assert abs(estimate - exact) <= exact * 0.01


@given(JSON_TEXT)
def test_a_string_is_weighed_as_exactly_its_serialized_utf8_bytes(text: str) -> None:
    # The quotes, escaped characters and multi-byte characters all count, so a string is never under-weighed.
    assert request_weight(text) == (0, len(json.dumps(text, ensure_ascii=False).encode("utf-8")))


def test_strings_are_weighed_by_their_utf8_bytes_and_quotes() -> None:
    assert request_weight("") == (0, 2)
    assert request_weight("hello") == (0, 7)
    assert request_weight("héllo ☃") == (0, 12)  # é is 2 bytes, ☃ is 3
    assert request_weight('say "hi"\n') == (0, 14)  # each quote and the newline escape to 2 bytes
