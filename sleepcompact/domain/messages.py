"""Normalize Anthropic- and OpenAI-shaped message dicts into rows.

One appended message becomes one or more *parts*, each stored as a row:
an assistant message with text and N tool calls becomes a text part and N
``tool_call`` parts with consecutive seqs (so they stay together), and a user
message carrying N ``tool_result`` blocks becomes N ``tool_result`` parts
(role ``tool``) followed by a part for any remaining text. Every part holds at
most one ``tool_call_id``, which lets the store index calls and results and
lets compaction mask one tool output at a time.

Normalized content is always in Anthropic form (a string, or a list of
content blocks), because that is what the renderer speaks natively; the
original payload is kept verbatim beside it (``raw``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from sleepcompact.domain.errors import (
    ContentTooLarge,
    EmptyContent,
    InvalidEncoding,
    MalformedContent,
    UnknownKind,
    UnknownRole,
)

ROLES = ("system", "user", "assistant", "tool")
KINDS = ("message", "tool_call", "tool_result", "context", "summary")
# Kinds a caller may set; the others are derived from the shape or written by compaction.
CALLER_KINDS = ("message", "context")
MessageFormat = Literal["auto", "openai", "anthropic"]
FORMATS: tuple[MessageFormat, ...] = ("auto", "openai", "anthropic")

Content = str | list[dict[str, Any]]


@dataclass(frozen=True)
class Part:
    """One row to be: a role, a kind and its content in Anthropic form."""

    role: str
    kind: str
    content: Content
    tool_call_id: str | None = None
    tool_name: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class NormalizedMessage:
    """An appended message: the verbatim payload and the parts it becomes."""

    raw: str
    parts: tuple[Part, ...]

    @property
    def tool_call_ids(self) -> tuple[str, ...]:
        """Ids of the tool calls this message makes."""
        return tuple(p.tool_call_id for p in self.parts if p.kind == "tool_call" and p.tool_call_id)

    @property
    def tool_result_ids(self) -> tuple[str, ...]:
        """Ids of the tool calls this message answers; each must exist earlier."""
        return tuple(p.tool_call_id for p in self.parts if p.kind == "tool_result" and p.tool_call_id)


def normalize(
    message: object, *, fmt: MessageFormat = "auto", max_bytes: int = 2 * 1024 * 1024
) -> NormalizedMessage:
    """Validate one message dict and split it into parts.

    Raises a subclass of ``InvalidMessage`` naming what is wrong; never
    returns a partial result.
    """
    if fmt not in FORMATS:
        raise MalformedContent(f"unknown message format {fmt!r}; expected one of {', '.join(FORMATS)}")
    if not isinstance(message, Mapping):
        raise MalformedContent(
            f"a message must be an object with 'role' and 'content', got {type(message).__name__}"
        )
    msg = {str(k): _decode(v, "message") for k, v in message.items()}
    raw = _serialize(msg)
    size = len(raw.encode("utf-8"))
    if size > max_bytes:
        raise ContentTooLarge(size, max_bytes)

    role = msg.get("role")
    if role not in ROLES:
        raise UnknownRole(f"unknown role {role!r}; expected one of {', '.join(ROLES)}")
    kind = msg.get("kind", "message")
    if kind not in CALLER_KINDS:
        raise UnknownKind(
            f"unknown kind {kind!r}; a caller may append kinds {', '.join(CALLER_KINDS)} "
            "(tool_call and tool_result follow from the message's shape, summary is written by compaction)"
        )
    shape = _shape(msg, fmt)
    parts = _openai_parts(msg, str(role)) if shape == "openai" else _anthropic_parts(msg, str(role))
    if kind == "context":
        if any(p.kind != "message" for p in parts):
            raise UnknownKind("kind 'context' is for plain text or image content, not tool calls or results")
        parts = [Part(p.role, "context", p.content, metadata=p.metadata) for p in parts]
    if not parts:
        raise EmptyContent(f"the {role} message has no content")
    return NormalizedMessage(raw=raw, parts=tuple(parts))


def _serialize(msg: Mapping[str, Any]) -> str:
    try:
        return json.dumps(msg, ensure_ascii=False, separators=(",", ":"))
    except (TypeError, ValueError) as exc:
        raise MalformedContent(f"the message is not JSON-serializable: {exc}") from exc
    except UnicodeEncodeError as exc:  # pragma: no cover - json escapes surrogates only with ensure_ascii
        raise InvalidEncoding(f"text that is not valid UTF-8: {exc}") from exc


def _decode(value: Any, where: str) -> Any:
    """Return value with every bytes decoded as strict UTF-8 and every str checked."""
    if isinstance(value, bytes | bytearray):
        try:
            return bytes(value).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise InvalidEncoding(f"{where}: bytes that are not valid UTF-8 at offset {exc.start}") from exc
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise InvalidEncoding(
                f"{where}: text that is not valid UTF-8 (lone surrogate at offset {exc.start})"
            ) from exc
        return value
    if isinstance(value, Mapping):
        return {str(k): _decode(v, where) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_decode(v, where) for v in value]
    return value


def _shape(msg: Mapping[str, Any], fmt: MessageFormat) -> Literal["openai", "anthropic"]:
    openai_like = msg.get("role") == "tool" or "tool_calls" in msg or "tool_call_id" in msg
    blocks = msg.get("content")
    anthropic_like = isinstance(blocks, list) and any(
        isinstance(b, Mapping) and b.get("type") in ("tool_use", "tool_result") for b in blocks
    )
    if fmt == "openai":
        if anthropic_like:
            raise MalformedContent(
                "tool_use/tool_result blocks are Anthropic-shaped, but the format is openai"
            )
        return "openai"
    if fmt == "anthropic":
        if msg.get("role") == "tool":
            raise UnknownRole("role 'tool' is OpenAI-shaped; Anthropic carries tool results in user messages")
        if openai_like:
            raise MalformedContent("tool_calls/tool_call_id are OpenAI-shaped, but the format is anthropic")
        return "anthropic"
    if openai_like and anthropic_like:
        raise MalformedContent("the message mixes OpenAI tool_calls with Anthropic tool blocks")
    return "openai" if openai_like else "anthropic"


# -- blocks -----------------------------------------------------------------------------------------


def _plain_blocks(content: Any, where: str) -> list[dict[str, Any]]:
    """Text and image content as Anthropic blocks, dropping empty text (the API rejects it)."""
    if content is None:
        return []
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content.strip() else []
    if not isinstance(content, list):
        raise MalformedContent(
            f"{where}: content must be a string or a list of blocks, got {type(content).__name__}"
        )
    out: list[dict[str, Any]] = []
    for i, block in enumerate(content):
        if isinstance(block, str):
            block = {"type": "text", "text": block}
        if not isinstance(block, Mapping) or "type" not in block:
            raise MalformedContent(f"{where}: block {i} is not an object with a 'type'")
        btype = block["type"]
        if btype in ("text", "input_text", "output_text"):
            text = block.get("text")
            if not isinstance(text, str):
                raise MalformedContent(f"{where}: text block {i} has no string 'text'")
            if text.strip():
                out.append({"type": "text", "text": text})
        elif btype in ("image", "document"):
            if not isinstance(block.get("source"), Mapping):
                raise MalformedContent(f"{where}: {btype} block {i} has no 'source'")
            out.append(dict(block))
        elif btype == "image_url":
            out.append(_image_from_url(block, where, i))
        elif btype in ("thinking", "redacted_thinking"):
            out.append(dict(block))
        elif btype in ("tool_use", "tool_result"):
            raise MalformedContent(f"{where}: a {btype} block is not allowed here")
        else:
            raise MalformedContent(f"{where}: unknown block type {btype!r} at block {i}")
    return out


def _image_from_url(block: Mapping[str, Any], where: str, i: int) -> dict[str, Any]:
    spec = block.get("image_url")
    url = spec.get("url") if isinstance(spec, Mapping) else spec
    if not isinstance(url, str) or not url:
        raise MalformedContent(f"{where}: image_url block {i} has no url")
    if url.startswith("data:") and ";base64," in url:
        media, data = url[5:].split(";base64,", 1)
        return {"type": "image", "source": {"type": "base64", "media_type": media, "data": data}}
    return {"type": "image", "source": {"type": "url", "url": url}}


def _result_content(content: Any, where: str) -> Content:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    blocks = _plain_blocks(content, where)
    if len(blocks) == 1 and blocks[0]["type"] == "text":
        return str(blocks[0]["text"])
    return blocks


def _result_meta(source: Mapping[str, Any]) -> dict[str, Any]:
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
    return meta


def _tool_call_id(value: Any, where: str) -> str:
    if not isinstance(value, str) or not value:
        raise MalformedContent(f"{where}: a tool call id must be a non-empty string")
    if "\x00" in value:
        raise MalformedContent(f"{where}: a tool call id may not contain NUL characters")
    return value


def without_nul(text: str) -> str:
    """Text for a plain-text column: PostgreSQL refuses NUL there (JSON columns escape it as \\u0000)."""
    return text.replace("\x00", "\ufffd")


# -- Anthropic ----------------------------------------------------------------------------------------


def _anthropic_parts(msg: Mapping[str, Any], role: str) -> list[Part]:
    content = msg.get("content")
    where = f"{role} message"
    if not isinstance(content, list):
        blocks = _plain_blocks(content, where)
        return [Part(role, "message", _compact(blocks))] if blocks else []
    parts: list[Part] = []
    pending: list[Any] = []

    def flush() -> None:
        if pending:
            blocks = _plain_blocks(list(pending), where)
            if blocks:
                parts.append(Part(role, "message", _compact(blocks)))
            pending.clear()

    results: list[Part] = []
    for i, block in enumerate(content):
        btype = block.get("type") if isinstance(block, Mapping) else None
        if btype == "tool_use":
            if role != "assistant":
                raise MalformedContent(f"{where}: tool_use blocks belong in assistant messages (block {i})")
            flush()
            call_id = _tool_call_id(block.get("id"), where)
            name = block.get("name")
            if not isinstance(name, str) or not name or "\x00" in name:
                raise MalformedContent(f"{where}: tool_use block {i} has no name")
            tool_input = block.get("input", {})
            if not isinstance(tool_input, Mapping):
                raise MalformedContent(f"{where}: tool_use block {i} input must be an object")
            use = {"type": "tool_use", "id": call_id, "name": name, "input": dict(tool_input)}
            parts.append(Part("assistant", "tool_call", [use], tool_call_id=call_id, tool_name=name))
        elif btype == "tool_result":
            if role != "user":
                raise MalformedContent(f"{where}: tool_result blocks belong in user messages (block {i})")
            call_id = _tool_call_id(block.get("tool_use_id"), where)
            meta = _result_meta(block)
            results.append(
                Part("tool", "tool_result", _result_content(block.get("content"), where), call_id, None, meta)
            )
        else:
            pending.append(block)
    flush()
    # The API wants tool results first in their user turn; keep that order in the rows too.
    return results + parts


def _compact(blocks: list[dict[str, Any]]) -> Content:
    """A single text block is stored as a plain string, the common case."""
    if len(blocks) == 1 and blocks[0]["type"] == "text":
        return str(blocks[0]["text"])
    return blocks


# -- OpenAI -------------------------------------------------------------------------------------------


def _openai_parts(msg: Mapping[str, Any], role: str) -> list[Part]:
    where = f"{role} message"
    if role == "tool":
        call_id = _tool_call_id(msg.get("tool_call_id"), where)
        content = _result_content(msg.get("content"), where)
        return [Part("tool", "tool_result", content, call_id, None, _result_meta(msg))]
    blocks = _plain_blocks(msg.get("content"), where)
    parts = [Part(role, "message", _compact(blocks))] if blocks else []
    calls = msg.get("tool_calls")
    if calls is None:
        return parts
    if role != "assistant":
        raise MalformedContent(f"{where}: tool_calls belong in assistant messages")
    if not isinstance(calls, Sequence) or isinstance(calls, str):
        raise MalformedContent(f"{where}: tool_calls must be a list")
    for i, call in enumerate(calls):
        if not isinstance(call, Mapping):
            raise MalformedContent(f"{where}: tool call {i} is not an object")
        call_id = _tool_call_id(call.get("id"), where)
        fn = call.get("function")
        if not isinstance(fn, Mapping) or not isinstance(fn.get("name"), str) or not fn.get("name"):
            raise MalformedContent(f"{where}: tool call {i} has no function name")
        if "\x00" in fn["name"]:
            raise MalformedContent(f"{where}: tool call {i} has a NUL character in its name")
        args = fn.get("arguments", "")
        tool_input = _arguments(args, where, i)
        name = str(fn["name"])
        use = {"type": "tool_use", "id": call_id, "name": name, "input": tool_input}
        parts.append(Part("assistant", "tool_call", [use], tool_call_id=call_id, tool_name=name))
    return parts


def _arguments(args: Any, where: str, i: int) -> dict[str, Any]:
    if isinstance(args, Mapping):
        return dict(args)
    if args is None or (isinstance(args, str) and not args.strip()):
        return {}
    if not isinstance(args, str):
        raise MalformedContent(f"{where}: tool call {i} arguments must be a JSON string")
    try:
        parsed = json.loads(args)
    except json.JSONDecodeError as exc:
        raise MalformedContent(f"{where}: tool call {i} arguments are not valid JSON: {exc.msg}") from exc
    if not isinstance(parsed, dict):
        raise MalformedContent(f"{where}: tool call {i} arguments must be a JSON object")
    return parsed


# -- text views ---------------------------------------------------------------------------------------

IMAGE_TOKENS = 1600
"""Fixed cost of one image or document block: Anthropic's ceiling for a ~1.15 megapixel image."""


def content_text(content: Content) -> str:
    """The text a tokenizer should see for some content (tool calls as name plus JSON input)."""
    if isinstance(content, str):
        return content
    pieces: list[str] = []
    for block in content:
        btype = block.get("type")
        if btype == "text":
            pieces.append(str(block.get("text", "")))
        elif btype == "tool_use":
            pieces.append(f"{block.get('name', '')} {json.dumps(block.get('input', {}), ensure_ascii=False)}")
        elif btype in ("thinking",):
            pieces.append(str(block.get("thinking", "")))
    return "\n".join(pieces)


def image_count(content: Content) -> int:
    """How many image or document blocks some content holds (each costs IMAGE_TOKENS)."""
    if isinstance(content, str):
        return 0
    return sum(1 for b in content if b.get("type") in ("image", "document"))


MESSAGE_OVERHEAD = 4
"""Tokens each stored part costs beyond its text (role and framing), as BaseAgent estimates."""


def part_tokens(content: Content, count: Callable[[str], int]) -> int:
    """Tokens one stored part costs: its text, a fixed cost per image, and the per-message overhead."""
    return count(content_text(content)) + IMAGE_TOKENS * image_count(content) + MESSAGE_OVERHEAD
