"""One rendered turn in OpenAI chat form: tool calls on the assistant message, a tool message per result.

``domain.rendering`` renders the live rows as Anthropic turns first (merged, paired, repaired); each of
those turns becomes one or more OpenAI messages here, independently of the others, which is what lets a
cached rendering convert only the turns it has not converted before.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from sleepcompact.domain.attachments import is_attachment
from sleepcompact.domain.blocks import EMPTY_RESULT
from sleepcompact.domain.messages import content_text

RESUMED_PLACEHOLDER = "[conversation resumed]"


def openai_turn(msg: dict[str, Any]) -> list[dict[str, Any]]:
    """The OpenAI messages of one Anthropic-form turn (its content a string or blocks)."""
    content = msg["content"]
    blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
    if msg["role"] == "assistant":
        return [_openai_assistant(blocks)]
    out: list[dict[str, Any]] = []
    rest: list[dict[str, Any]] = []
    for b in blocks:
        if b.get("type") == "tool_result":
            text = flatten(b.get("content", "")) or EMPTY_RESULT
            out.append({"role": "tool", "tool_call_id": b["tool_use_id"], "content": text})
        else:
            rest.append(b)
    if rest:
        out.append({"role": "user", "content": _openai_user_content(rest)})
    return out


def flatten(content: Any) -> str:
    """A tool result's content as text (a string, or the text of its blocks). An image or document
    in it cannot travel as text, so it is named instead: a model told the tool returned nothing
    would act on a falsehood (OpenAI's tool messages carry text parts only)."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    notes = [
        f"[{b.get('type')} omitted: this result travels as text]"
        for b in content
        if isinstance(b, Mapping) and is_attachment(b)
    ]
    return "\n".join(t for t in (content_text(content), *notes) if t)


def _openai_assistant(blocks: list[dict[str, Any]]) -> dict[str, Any]:
    texts = [
        str(b["text"]) if b.get("type") == "text" else content_text([b])
        for b in blocks
        if b.get("type") not in ("tool_use", "thinking", "redacted_thinking")
    ]
    calls = [
        {
            "id": b["id"],
            "type": "function",
            "function": {"name": b["name"], "arguments": json.dumps(b.get("input", {}), ensure_ascii=False)},
        }
        for b in blocks
        if b.get("type") == "tool_use"
    ]
    text = "\n".join(t for t in texts if t)
    entry: dict[str, Any] = {"role": "assistant", "content": text or None}
    if calls:
        entry["tool_calls"] = calls
    elif not text:
        entry["content"] = RESUMED_PLACEHOLDER  # only thinking: OpenAI wants some content
    return entry


def _openai_user_content(blocks: list[dict[str, Any]]) -> str | list[dict[str, Any]]:
    if all(b.get("type") == "text" for b in blocks):
        return "\n\n".join(str(b["text"]) for b in blocks)
    return [_openai_part(b) for b in blocks]


def _openai_part(b: dict[str, Any]) -> dict[str, Any]:
    btype = b.get("type")
    raw_source = b.get("source")
    src: dict[str, Any] = raw_source if isinstance(raw_source, dict) else {}
    if btype == "image":
        url = (
            f"data:{src.get('media_type')};base64,{src.get('data')}"
            if src.get("type") == "base64"
            else src.get("url")
        )
        if not isinstance(url, str) or not url:
            # An Anthropic Files API image has no URL OpenAI could fetch: named in text instead.
            return {"type": "text", "text": f"[image {src.get('file_id', '')} omitted: not supported here]"}
        return {"type": "image_url", "image_url": {"url": url}}
    if btype == "document" and src.get("type") == "base64":
        data = f"data:{src.get('media_type')};base64,{src.get('data')}"
        return {"type": "file", "file": {"file_data": data, "filename": "document.pdf"}}
    if btype == "document" and src.get("type") == "text":
        return {"type": "text", "text": str(src.get("data", ""))}
    if btype in ("input_audio", "file"):
        return dict(b)
    if btype == "document":
        where = src.get("url") or src.get("file_id") or src.get("type")
        return {"type": "text", "text": f"[document {where} omitted: not supported here]"}
    return {"type": "text", "text": str(b["text"]) if btype == "text" else content_text([b]) or f"[{btype}]"}
