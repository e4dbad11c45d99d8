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
from collections.abc import Callable, Mapping
from typing import Any, Literal

from sleepcompact.domain.attachments import attachment_tokens, count_attachments, is_attachment
from sleepcompact.domain.blocks import (
    MAX_DEPTH,
    Content,
    check_finite,
    compact,
    plain_blocks,
    result_content,
    result_meta,
    tool_call_id,
)
from sleepcompact.domain.errors import (
    ContentTooLarge,
    EmptyContent,
    InvalidEncoding,
    MalformedContent,
    UnknownKind,
    UnknownRole,
)
from sleepcompact.domain.openai_shapes import OPENAI_ROLES, openai_parts
from sleepcompact.domain.parts import NormalizedMessage, Part

ROLES = ("system", "user", "assistant", "tool")
INPUT_ROLES = (*ROLES, *OPENAI_ROLES)
KINDS = ("message", "tool_call", "tool_result", "context", "summary")
# Kinds a caller may set; the others are derived from the shape or written by compaction.
CALLER_KINDS = ("message", "context")
MessageFormat = Literal["auto", "openai", "anthropic"]
FORMATS: tuple[MessageFormat, ...] = ("auto", "openai", "anthropic")

__all__ = [
    "CALLER_KINDS",
    "FORMATS",
    "KINDS",
    "MAX_DEPTH",
    "MESSAGE_OVERHEAD",
    "ROLES",
    "Content",
    "MessageFormat",
    "NormalizedMessage",
    "Part",
    "content_text",
    "image_count",
    "normalize",
    "part_tokens",
    "without_nul",
]


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
    msg = {str(k): _decode(v, "message", 1) for k, v in message.items()}
    raw = _serialize(msg)
    size = len(raw.encode("utf-8"))
    if size > max_bytes:
        raise ContentTooLarge(size, max_bytes)
    given = msg.get("role")
    if given not in INPUT_ROLES:
        raise UnknownRole(f"unknown role {given!r}; expected one of {', '.join(INPUT_ROLES)}")
    role = OPENAI_ROLES.get(str(given), str(given))
    kind = msg.get("kind", "message")
    if kind not in CALLER_KINDS:
        raise UnknownKind(
            f"unknown kind {kind!r}; a caller may append kinds {', '.join(CALLER_KINDS)} "
            "(tool_call and tool_result follow from the message's shape, summary is written by compaction)"
        )
    shape = "openai" if given in OPENAI_ROLES else _shape(msg, fmt)
    parts = openai_parts(msg, role) if shape == "openai" else _anthropic_parts(msg, role)
    if kind == "context":
        if any(p.kind != "message" for p in parts):
            raise UnknownKind("kind 'context' is for plain text or image content, not tool calls or results")
        parts = [Part(p.role, "context", p.content, metadata=p.metadata) for p in parts]
    if not parts:
        raise EmptyContent(f"the {given} message has no content")
    return NormalizedMessage(raw=raw, parts=tuple(parts))


def _serialize(msg: Mapping[str, Any]) -> str:
    try:
        return json.dumps(msg, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise MalformedContent(f"the message is not JSON-serializable: {exc}") from exc
    except UnicodeEncodeError as exc:  # pragma: no cover - json escapes surrogates only with ensure_ascii
        raise InvalidEncoding(f"text that is not valid UTF-8: {exc}") from exc


def _decode(value: Any, where: str, depth: int) -> Any:
    """Return value with every bytes decoded as strict UTF-8, every str and number checked, and the
    nesting bounded by ``MAX_DEPTH``."""
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
    if isinstance(value, float):
        check_finite(value, where)
        return value
    if isinstance(value, Mapping | list | tuple) and depth > MAX_DEPTH:
        raise MalformedContent(f"{where}: nested deeper than {MAX_DEPTH} levels")
    if isinstance(value, Mapping):
        return {str(k): _decode(v, where, depth + 1) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_decode(v, where, depth + 1) for v in value]
    return value


def _shape(msg: Mapping[str, Any], fmt: MessageFormat) -> Literal["openai", "anthropic"]:
    openai_like = (
        msg.get("role") == "tool" or "tool_calls" in msg or "tool_call_id" in msg or "function_call" in msg
    )
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
    # A refusal-only assistant message (content null, refusal text) is OpenAI's shape too.
    refusal = msg.get("refusal")
    refuses = isinstance(refusal, str) and bool(refusal.strip()) and not anthropic_like
    return "openai" if openai_like or refuses else "anthropic"


def without_nul(text: str) -> str:
    """Text for a plain-text column: PostgreSQL refuses NUL there (JSON columns escape it as \\u0000)."""
    return text.replace("\x00", "\ufffd")


# -- Anthropic ----------------------------------------------------------------------------------------


def _anthropic_parts(msg: Mapping[str, Any], role: str) -> list[Part]:
    content = msg.get("content")
    where = f"{role} message"
    if not isinstance(content, list):
        blocks = plain_blocks(content, where)
        return [Part(role, "message", compact(blocks))] if blocks else []
    parts: list[Part] = []
    pending: list[Any] = []
    numbers: list[int] = []  # each pending block's position in the message, for errors that name it

    def flush() -> None:
        if pending:
            blocks = plain_blocks(list(pending), where, numbers)
            if blocks:
                parts.append(Part(role, "message", compact(blocks)))
            pending.clear()
            numbers.clear()

    results: list[Part] = []
    for i, block in enumerate(content):
        btype = block.get("type") if isinstance(block, Mapping) else None
        if btype == "tool_use":
            flush()
            parts.append(_tool_use_part(block, role, where, i))
        elif btype == "tool_result":
            if role != "user":
                raise MalformedContent(f"{where}: tool_result blocks belong in user messages (block {i})")
            call_id = tool_call_id(block.get("tool_use_id"), where)
            content_i = result_content(block.get("content"), where)
            results.append(Part("tool", "tool_result", content_i, call_id, None, result_meta(block)))
        else:
            pending.append(block)
            numbers.append(i)
    flush()
    # The API wants tool results first in their user turn; keep that order in the rows too.
    return results + parts


def _tool_use_part(block: Mapping[str, Any], role: str, where: str, i: int) -> Part:
    if role != "assistant":
        raise MalformedContent(f"{where}: tool_use blocks belong in assistant messages (block {i})")
    call_id = tool_call_id(block.get("id"), where)
    name = block.get("name")
    if not isinstance(name, str) or not name or "\x00" in name:
        raise MalformedContent(f"{where}: tool_use block {i} has no name")
    tool_input = block.get("input", {})
    if not isinstance(tool_input, Mapping):
        raise MalformedContent(f"{where}: tool_use block {i} input must be an object")
    # Everything the block carries (cache_control, caller...) is kept; the id becomes the stored key.
    use = {**dict(block), "type": "tool_use", "id": call_id, "name": name, "input": dict(tool_input)}
    return Part("assistant", "tool_call", [use], tool_call_id=call_id, tool_name=name)


# -- text views ---------------------------------------------------------------------------------------

IMAGE_TOKENS = 1600
"""The most one image costs (Anthropic's cap after scaling); ``attachments`` counts each by its size."""
_OPAQUE = ("signature", "encrypted_content", "data", "cache_control", "citations", "id", "tool_use_id")


def content_text(content: Content) -> str:
    """The text a tokenizer should see for some content (tool calls as name plus JSON input; blocks
    it does not know, as their JSON without the type)."""
    if isinstance(content, str):
        return content
    pieces: list[str] = []
    for block in content:
        btype = block.get("type")
        if btype == "text":
            pieces.append(str(block.get("text", "")))
        elif btype in ("tool_use", "server_tool_use", "mcp_tool_use"):
            pieces.append(f"{block.get('name', '')} {json.dumps(block.get('input', {}), ensure_ascii=False)}")
        elif btype == "thinking":
            pieces.append(str(block.get("thinking", "")))
        elif not is_attachment(block) and btype != "redacted_thinking":
            rest = _readable(block)
            if rest:
                pieces.append(json.dumps(rest, ensure_ascii=False))
    return "\n".join(pieces)


def _readable(block: dict[str, Any]) -> dict[str, Any]:
    """A block the reader does not know, as the fields read as text: without its type and opaque
    fields, and without the encrypted payloads of the results it holds. ``opaque_text`` counts those
    payloads; kept here too, a web search's results were counted twice and indexed for search."""
    rest = {k: v for k, v in block.items() if k not in ("type", *_OPAQUE)}
    inner = rest.get("content")
    if isinstance(inner, list):
        rest["content"] = [
            {k: v for k, v in b.items() if k != "encrypted_content"} if isinstance(b, dict) else b
            for b in inner
        ]
    return rest


def opaque_text(content: Content) -> str:
    """What a model still reads that ``content_text`` leaves out: redacted thinking and encrypted
    search results (counted, never searched or summarized)."""
    if isinstance(content, str):
        return ""
    pieces = [str(b.get("data", "")) for b in content if b.get("type") == "redacted_thinking"]
    pieces += [str(b.get("encrypted_content", "")) for b in _nested(content) if b.get("encrypted_content")]
    return "\n".join(pieces)


def _nested(content: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for block in content:
        out.append(block)
        inner = block.get("content")
        if isinstance(inner, list):
            out.extend(b for b in inner if isinstance(b, dict))
    return out


def image_count(content: Content) -> int:
    """How many image or document blocks some content holds."""
    return count_attachments(content)


MESSAGE_OVERHEAD = 4
"""Tokens each stored part costs beyond its text (role and framing), as BaseAgent estimates."""


def part_tokens(content: Content, count: Callable[[str], int]) -> int:
    """Tokens one stored part costs: its text, its opaque payloads, its images and documents by the
    provider's rules (``attachments``), and the per-message overhead."""
    tokens = count(content_text(content)) + MESSAGE_OVERHEAD
    if isinstance(content, list):
        opaque = opaque_text(content)
        tokens += count(opaque) if opaque else 0
        tokens += sum(attachment_tokens(b, count) for b in content if is_attachment(b))
    return tokens
