"""Images and documents in messages: what they cost in tokens and bytes, and what a request may carry.

Anthropic's published rule for images: an image whose long edge is over 1,568 pixels, or whose area
is over about 1.15 megapixels, is scaled down (aspect ratio kept) before the model sees it, and then
costs ``width * height / 750`` tokens, at most about 1,600. The dimensions come from the image's own
header (PNG, JPEG, GIF, WebP), read from the base64 data without decoding the whole image; an image
given by URL or file id, or one whose header cannot be read, is counted at the cap.

A PDF is counted by its pages (each page travels as an image and its extracted text: the provider
quotes 1,500 to 3,000 text tokens per page besides the image, so a page is counted at 3,000); a plain
text document by its text. Limits per request: 100 images, 32 MB.
"""

from __future__ import annotations

import base64
import binascii
import math
import re
import struct
from collections.abc import Callable, Mapping
from typing import Any

MAX_LONG_EDGE = 1568
MAX_PIXELS = 1_150_000
PIXELS_PER_TOKEN = 750
IMAGE_TOKEN_CAP = 1600
"""An image's cost when its size is unknown: the most any image costs after the provider scales it."""
PDF_PAGE_TOKENS = 3000
MAX_IMAGES_PER_REQUEST = 100
MAX_REQUEST_BYTES = 32 * 1024 * 1024
ATTACHMENT_TYPES = ("image", "document")
_HEADER_BYTES = 96 * 1024  # enough for any PNG/GIF/WebP header and the SOF of a JPEG past its EXIF
_PDF_PAGE = re.compile(rb"/Type\s*/Page(?![a-zA-Z])")


def is_attachment(block: Mapping[str, Any]) -> bool:
    """Whether a content block is an image or a document (what the attachment rung replaces)."""
    return block.get("type") in ATTACHMENT_TYPES


def _decoded(data: Any, limit: int | None) -> bytes:
    if not isinstance(data, str):
        return b""
    text = data if limit is None else data[: (limit // 3 + 1) * 4]
    try:
        return base64.b64decode(text + "=" * (-len(text) % 4), validate=False)
    except (binascii.Error, ValueError):
        return b""


def image_size(head: bytes) -> tuple[int, int] | None:
    """(width, height) from the first bytes of a PNG, GIF, WebP or JPEG file; None when unreadable."""
    if head[:8] == b"\x89PNG\r\n\x1a\n" and len(head) >= 24:
        return struct.unpack(">II", head[16:24])
    if head[:6] in (b"GIF87a", b"GIF89a") and len(head) >= 10:
        return struct.unpack("<HH", head[6:10])
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP" and len(head) >= 30:
        return _webp_size(head)
    if head[:2] == b"\xff\xd8":
        return _jpeg_size(head)
    return None


def _webp_size(head: bytes) -> tuple[int, int] | None:
    chunk = head[12:16]
    if chunk == b"VP8X":
        return 1 + int.from_bytes(head[24:27], "little"), 1 + int.from_bytes(head[27:30], "little")
    if chunk == b"VP8 " and head[23:26] == b"\x9d\x01\x2a":
        w, h = struct.unpack("<HH", head[26:30])
        return w & 0x3FFF, h & 0x3FFF
    if chunk == b"VP8L" and head[20:21] == b"\x2f":
        bits = int.from_bytes(head[21:25], "little")
        return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    return None


def _jpeg_size(head: bytes) -> tuple[int, int] | None:
    i = 2
    while i + 9 < len(head):
        if head[i] != 0xFF:
            return None
        marker = head[i + 1]
        if marker in (0xD8, 0x01) or 0xD0 <= marker <= 0xD7:
            i += 2
            continue
        length = int.from_bytes(head[i + 2 : i + 4], "big")
        if marker in (0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF):
            h, w = struct.unpack(">HH", head[i + 5 : i + 9])
            return w, h
        i += 2 + length
    return None


def image_tokens_for(width: int, height: int) -> int:
    """The provider's cost of an image of this size, after its scaling."""
    if width <= 0 or height <= 0:
        return IMAGE_TOKEN_CAP
    scale = min(1.0, MAX_LONG_EDGE / max(width, height), math.sqrt(MAX_PIXELS / (width * height)))
    w, h = max(1, int(width * scale)), max(1, int(height * scale))
    return min(IMAGE_TOKEN_CAP, math.ceil(w * h / PIXELS_PER_TOKEN))


def attachment_tokens(block: Mapping[str, Any], count: Callable[[str], int]) -> int:
    """Tokens one image or document block costs (see the module docstring for the rules)."""
    source = block.get("source")
    source = source if isinstance(source, Mapping) else {}
    kind = source.get("type")
    if block.get("type") == "image":
        if kind != "base64":
            return IMAGE_TOKEN_CAP
        size = image_size(_decoded(source.get("data"), _HEADER_BYTES))
        return image_tokens_for(*size) if size else IMAGE_TOKEN_CAP
    if kind == "text":
        return count(str(source.get("data", "")))
    if kind == "content" and isinstance(source.get("content"), list):
        text = " ".join(str(b.get("text", "")) for b in source["content"] if isinstance(b, Mapping))
        return count(text)
    if kind == "base64":
        pages = len(_PDF_PAGE.findall(_decoded(source.get("data"), None)))
        return PDF_PAGE_TOKENS * max(1, pages)
    return PDF_PAGE_TOKENS


def attachment_bytes(block: Mapping[str, Any]) -> int:
    """Bytes an attachment adds to a request body (its base64 text, or its URL or file id)."""
    source = block.get("source")
    if not isinstance(source, Mapping):
        return 0
    return sum(len(str(v)) for v in source.values())


def count_attachments(content: Any) -> int:
    """Images and documents in some content (each counts against the per-request limit)."""
    if not isinstance(content, list):
        return 0
    return sum(1 for b in content if isinstance(b, Mapping) and is_attachment(b))
