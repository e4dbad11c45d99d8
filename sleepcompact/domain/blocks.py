"""Content blocks as sleepcompact stores them: Anthropic's shapes, everything else kept verbatim.

Text, images and documents are checked; OpenAI's and the Responses API's part shapes (``image_url``,
``input_text``, ``input_image``, ``file``, ``refusal``...) become their Anthropic equivalents; every
other block (thinking and redacted thinking with their signatures, server tool use and results, MCP
tool use and results, container uploads, any future type) is stored exactly as received and passed
back when rendering, with ``cache_control`` and every other field intact. Only ``tool_use`` and
``tool_result`` are structural (they pair across turns), so only they are refused out of place.
"""

from __future__ import annotations

import base64
import binascii
import math
from collections.abc import Mapping, Sequence
from typing import Any

from sleepcompact.domain.errors import MalformedContent

Content = str | list[dict[str, Any]]
PAIRING_BLOCKS = ("tool_use", "tool_result")
MAX_DEPTH = 64
"""Deepest nesting of objects and lists a message may have, the message itself at level 0 (a typed
error past it, never a crash)."""
EMPTY_RESULT = "(the tool returned no output)"
"""What an empty tool result is rendered as: both providers want non-empty content."""


def plain_blocks(content: Any, where: str, numbers: Sequence[int] | None = None) -> list[dict[str, Any]]:
    """Non-pairing content as blocks, dropping empty text (the API rejects it). An error names a block
    by ``numbers[i]`` when given: its position in the whole message, when ``content`` is a part of it."""
    if content is None:
        return []
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content.strip() else []
    if not isinstance(content, list):
        raise MalformedContent(
            f"{where}: content must be a string or a list of blocks, got {type(content).__name__}"
        )
    out: list[dict[str, Any]] = []
    for position, block in enumerate(content):
        i = numbers[position] if numbers else position
        if isinstance(block, str):
            block = {"type": "text", "text": block}
        if not isinstance(block, Mapping) or "type" not in block:
            raise MalformedContent(f"{where}: block {i} is not an object with a 'type'")
        if not isinstance(block["type"], str) or not block["type"]:
            # Kept verbatim as an unknown block, it would only be refused by the provider, later.
            raise MalformedContent(f"{where}: block {i} has a 'type' that is not a non-empty string")
        converted = _block(dict(block), where, i)
        if converted is not None:
            out.append(converted)
    return out


def _block(block: dict[str, Any], where: str, i: int) -> dict[str, Any] | None:
    btype = block["type"]
    if btype in ("text", "input_text", "output_text", "refusal"):
        text = block.get("refusal" if btype == "refusal" else "text")
        if not isinstance(text, str):
            raise MalformedContent(f"{where}: {btype} block {i} has no string text")
        if not text.strip():
            return None
        extra = {k: v for k, v in block.items() if k not in ("type", "text", "refusal", "annotations")}
        return {"type": "text", "text": text, **(extra if btype == "text" else {})}
    if btype in ("image", "document"):
        if not isinstance(block.get("source"), Mapping):
            raise MalformedContent(f"{where}: {btype} block {i} has no 'source'")
        return block
    if btype in ("image_url", "input_image"):
        return _image_from_url(block, where, i)
    if btype in ("file", "input_file"):
        return _file(block)
    if btype in PAIRING_BLOCKS:
        raise MalformedContent(f"{where}: a {btype} block is not allowed here")
    return block  # thinking, server tools, MCP, uploads, future types: verbatim


def _image_from_url(block: Mapping[str, Any], where: str, i: int) -> dict[str, Any]:
    spec = block.get("image_url")
    url = spec.get("url") if isinstance(spec, Mapping) else spec
    if not isinstance(url, str) or not url:
        raise MalformedContent(f"{where}: {block.get('type')} block {i} has no url")
    if url.startswith("data:") and ";base64," in url:
        media, data = url[5:].split(";base64,", 1)
        return {"type": "image", "source": {"type": "base64", "media_type": media, "data": data}}
    return {"type": "image", "source": {"type": "url", "url": url}}


def _file(block: dict[str, Any]) -> dict[str, Any]:
    """An OpenAI file part: inline PDF bytes as a PDF document, inline UTF-8 text as a text document
    (Anthropic's two inline document sources); anything else kept verbatim."""
    spec = block.get("file") if isinstance(block.get("file"), Mapping) else block
    data = spec.get("file_data") if isinstance(spec, Mapping) else None
    if not isinstance(data, str) or not data.startswith("data:") or ";base64," not in data:
        return block
    media, payload = data[5:].split(";base64,", 1)
    if media == "application/pdf":
        return {"type": "document", "source": {"type": "base64", "media_type": media, "data": payload}}
    if media.startswith("text/"):
        try:
            text = base64.b64decode(payload, validate=True).decode("utf-8")
        except (binascii.Error, ValueError):
            return block  # not text after all: kept as the caller sent it, counted as a file
        return {"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": text}}
    return block


def compact(blocks: list[dict[str, Any]]) -> Content:
    """A single plain text block is stored as a string, the common case (one with cache_control or
    citations stays a block)."""
    if len(blocks) == 1 and blocks[0]["type"] == "text" and set(blocks[0]) == {"type", "text"}:
        return str(blocks[0]["text"])
    return blocks


def result_content(content: Any, where: str) -> Content:
    """A tool result's content: text, or blocks (images, documents) when it has them."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    return compact(plain_blocks(content, where))


def result_meta(source: Mapping[str, Any]) -> dict[str, Any]:
    """Error flag and a summary the tool provides itself (Merlin's tool-provided summary)."""
    meta: dict[str, Any] = {}
    if source.get("is_error"):
        meta["is_error"] = True
    summary = source.get("tool_summary")
    if summary is not None:
        if not isinstance(summary, str) or not summary.strip():
            raise MalformedContent("tool_summary must be non-empty text")
        meta["tool_summary"] = summary
    if source.get("include_in_history"):
        meta["include_in_history"] = True
    if isinstance(source.get("cache_control"), Mapping):
        meta["cache_control"] = dict(source["cache_control"])
    return meta


def tool_call_id(value: Any, where: str) -> str:
    """A tool call id as sent: a non-empty string without NUL."""
    if not isinstance(value, str) or not value:
        raise MalformedContent(f"{where}: a tool call id must be a non-empty string")
    if "\x00" in value:
        raise MalformedContent(f"{where}: a tool call id may not contain NUL characters")
    return value


def check_finite(value: float, where: str) -> None:
    """JSON has no NaN or Infinity: a message carrying one could never be sent back as valid JSON."""
    if not math.isfinite(value):
        raise MalformedContent(f"{where}: {value!r} is not a finite number (JSON has no NaN or Infinity)")
