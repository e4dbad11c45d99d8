"""Images and documents in messages: what they cost in tokens and bytes, and what a request may carry.

Anthropic's published rule for images: an image whose long edge is over 1,568 pixels, or that would
cost over about 1,600 tokens (an area over 1.2 megapixels: the provider's table leaves 1092x1092 as
it is, at ~1,590 tokens), is scaled down (aspect ratio kept) before the model sees it, and then costs
``width * height / 750`` tokens, at most 1,600. The dimensions come from the image's own
header (PNG, JPEG, GIF, WebP), read from the base64 data without decoding the whole image; an image
given by URL or file id, or one whose header cannot be read, is counted at the cap.

A PDF is counted by its pages (each page travels as an image and its extracted text: the provider quotes 1,500
to 3,000 text tokens per page besides the image, so a page is counted at 3,000); a plain text document by its
text; a document of its own content by its text and each of its images; any other file (an OpenAI ``file``
part that is neither: a spreadsheet, a document by id) by its decoded size as if it were text, 4 bytes a
token, and 3,000 when it has no inline bytes. OpenAI's ``input_audio`` is counted by its size: audio costs
about ten tokens a second, and a second of 128 kbps MP3 (the densest common format) is 16,000 bytes, so one
token per 1,600 bytes (WAV is over-counted, never under-counted). Limits per request: 100 images or documents
(audio counts too), 32 MB.
"""

from __future__ import annotations

import base64
import binascii
import math
import re
import struct
from collections.abc import Callable, Mapping
from json.encoder import encode_basestring
from typing import Any

MAX_LONG_EDGE = 1568
MAX_PIXELS = 1_200_000  # 1,600 tokens x 750 pixels per token
PIXELS_PER_TOKEN = 750
IMAGE_TOKEN_CAP = 1600
"""An image's cost when its size is unknown: the most any image costs after the provider scales it."""
PDF_PAGE_TOKENS = 3000
AUDIO_BYTES_PER_TOKEN = 1600
MAX_IMAGES_PER_REQUEST = 100
MAX_REQUEST_BYTES = 32 * 1024 * 1024
ATTACHMENT_TYPES = ("image", "document", "input_audio", "file", "input_file")
_HEADER_BYTES = 96 * 1024  # enough for any PNG/GIF/WebP header and the SOF of a JPEG past its EXIF
_PDF_PAGE = re.compile(rb"/Type\s*/Page(?![a-zA-Z])")


def is_attachment(block: Mapping[str, Any]) -> bool:
    """Whether a content block is an image, a document or audio (what the attachment rung replaces)."""
    return block.get("type") in ATTACHMENT_TYPES


def _decoded(data: Any, limit: int | None) -> bytes:
    """The first ``limit`` bytes (all when None) of base64 ``data``, wrapped in lines or not."""
    if not isinstance(data, str):
        return b""
    quads = None if limit is None else (limit // 3 + 1) * 4
    # MIME wraps base64 every 76 characters: the line breaks are dropped before the head is cut, or a
    # cut that counted them would end inside a quad and the whole head would fail to decode. Twice the
    # head is more than any wrapping adds to it, so a megabyte image is not copied whole.
    text = data if quads is None else data[: 2 * quads]
    if any(c in text for c in " \t\r\n"):
        text = "".join(text.split())
    text = text if quads is None else text[:quads]
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
    while i + 9 <= len(head):  # a frame header's size ends 9 bytes after its marker
        if head[i] != 0xFF:
            return None
        marker = head[i + 1]
        if marker == 0xFF:  # a fill byte: any number of them may come before a marker
            i += 1
            continue
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
    """Tokens one image, document or audio block costs (see the module docstring for the rules)."""
    if block.get("type") == "input_audio":
        return max(1, math.ceil(len(_audio(block).get("data", "")) * 3 / 4 / AUDIO_BYTES_PER_TOKEN))
    if block.get("type") in ("file", "input_file"):
        return _file_tokens(block)
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
    if kind == "content":
        return _content_tokens(source.get("content"), count)
    if kind == "base64":
        pages = len(_PDF_PAGE.findall(_decoded(source.get("data"), None)))
        return PDF_PAGE_TOKENS * max(1, pages)
    return PDF_PAGE_TOKENS


def _content_tokens(content: Any, count: Callable[[str], int]) -> int:
    """A document of its own content: a string, or text and image blocks (each image at its own cost)."""
    if isinstance(content, str):
        return count(content)
    if not isinstance(content, list):
        return PDF_PAGE_TOKENS
    blocks = [b for b in content if isinstance(b, Mapping)]
    text = " ".join(str(b.get("text", "")) for b in blocks if b.get("type") != "image")
    return count(text) + sum(attachment_tokens(b, count) for b in blocks if b.get("type") == "image")


def attachment_bytes(block: Mapping[str, Any]) -> int:
    """Bytes an attachment adds to a request body (its base64 text, or its URL or file id)."""
    btype = block.get("type")
    source = (
        _audio(block)
        if btype == "input_audio"
        else _file_spec(block)
        if btype in _FILES
        else block.get("source")
    )
    if not isinstance(source, Mapping):
        return 0
    return sum(len(str(v)) for v in source.values())


def count_attachments(content: Any) -> int:
    """Images and documents in some content (each counts against the per-request limit)."""
    if not isinstance(content, list):
        return 0
    return sum(1 for b in content if isinstance(b, Mapping) and is_attachment(b))


def _audio(block: Mapping[str, Any]) -> dict[str, str]:
    """An ``input_audio`` part's ``{data, format}`` (empty when it has none)."""
    audio = block.get("input_audio")
    return {str(k): str(v) for k, v in audio.items()} if isinstance(audio, Mapping) else {}


_FILES = ("file", "input_file")


def _file_spec(block: Mapping[str, Any]) -> dict[str, str]:
    """An OpenAI ``file`` part's ``{file_data, file_id, filename}`` (the part itself for ``input_file``)."""
    spec = block.get("file") if isinstance(block.get("file"), Mapping) else block
    return {str(k): str(v) for k, v in spec.items() if k != "type"} if isinstance(spec, Mapping) else {}


def _file_tokens(block: Mapping[str, Any]) -> int:
    data = _file_spec(block).get("file_data", "")
    if ";base64," not in data:
        return PDF_PAGE_TOKENS
    return max(1, math.ceil(len(data.split(";base64,", 1)[1]) * 3 / 4 / 4))


# What JSON (``ensure_ascii=False``) writes escaped: '"', the backslash and every C0 control. Each costs
# one byte more ('\n' is written as two), or five for a control without a short escape ('\u0001'): a tool
# output full of NULs or terminal codes is up to six times its length once serialized.
_ESCAPED = (*(chr(c) for c in range(0x20)), '"', "\\")
_SHORT_ESCAPES = frozenset('"\\\n\r\t\b\f')
_ENCODED_UP_TO = 512  # characters: below this one C call beats 34 scans, above it the scans win


def _escape_bytes(value: str) -> int:
    """The bytes JSON's escapes add to a string, beyond the string itself and its quotes."""
    if len(value) <= _ENCODED_UP_TO:
        return len(encode_basestring(value)) - len(value) - 2  # the encoder json.dumps uses
    # Long text (base64 above all): 34 memchr scans cost a tenth of encoding it.
    return sum(value.count(c) * (1 if c in _SHORT_ESCAPES else 5) for c in _ESCAPED if c in value)


def request_weight(body: Any) -> tuple[int, int]:
    """(attachments, bytes) of a request body without serializing it: every image, document, audio or
    file part however deeply it sits (a tool result's screenshot), and an estimate of its JSON size
    (each string as UTF-8 plus its quotes and the bytes JSON's escapes add, plus the punctuation
    around each value: never less than the serialized size, more by at most that punctuation). A long
    string costs a few memchr scans, so a request carrying megabytes of base64 is weighed several times
    faster than serializing it; near a limit, serialize to be exact.
    """
    attachments = size = 0
    stack = [body]
    while stack:
        value = stack.pop()
        if isinstance(value, str):
            size += (len(value) if value.isascii() else len(value.encode("utf-8"))) + 2 + _escape_bytes(value)
        elif isinstance(value, Mapping):
            attachments += is_attachment(value)
            size += 2 + 4 * len(value)  # {} and each key's ": " and ", "
            # A key is weighed like any string (JSON writes a number key as one): a tool's input may be
            # keyed in any language, and counting characters would under-weigh a key in CJK four-fold.
            stack.extend(k if isinstance(k, str) else str(k) for k in value)
            stack.extend(value.values())
        elif isinstance(value, list | tuple):
            size += 2 + 2 * len(value)
            stack.extend(value)
        else:
            size += 5 if value is None or isinstance(value, bool) else len(repr(value))
    return attachments, size
