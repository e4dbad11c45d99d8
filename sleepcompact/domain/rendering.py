"""Render live rows as what an LLM call takes: Anthropic Messages or OpenAI chat.

The Anthropic API is strict: the first message is a user message, roles
alternate, every ``tool_use`` is answered by a ``tool_result`` at the start
of the very next user message, and no content is empty. Rows are merged and,
where history itself breaks those rules (an orphan result, a call never
answered), repaired in the rendering only; the stored rows stay as they were.

Recalled memories (``recall.memory_block``) travel on the user side, never in
the system prompt: they come from journal entries, and material that is not
the caller's own instructions never gets a system role. Anthropic: a text
block opening the first user message. OpenAI: a user message right after the
system message. With no rows there is no turn to attach them to, so they are
left out.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sleepcompact.domain.messages import Content, content_text
from sleepcompact.domain.records import MessageRecord, logical_order

RESUMED_PLACEHOLDER = "[conversation resumed]"
UNANSWERED_RESULT = "[no result was recorded for this tool call]"


@dataclass(frozen=True)
class Rendered:
    """A request body's two halves: the system text and the messages."""

    system: str | None
    messages: list[dict[str, Any]]


def _blocks(content: Content) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    return [dict(b) for b in content]


def _result_block(row: MessageRecord) -> dict[str, Any]:
    block: dict[str, Any] = {"type": "tool_result", "tool_use_id": row.tool_call_id}
    view = row.view
    if view:
        block["content"] = view if isinstance(view, str) else _blocks(view)
    if row.metadata.get("is_error"):
        block["is_error"] = True
    return block


def _side(row: MessageRecord) -> str:
    return "assistant" if row.role == "assistant" else "user"


def render_anthropic(
    rows: Sequence[MessageRecord], system: str | None = None, memories: str | None = None
) -> Rendered:
    """Anthropic Messages form of the live rows, with ``system`` prepended to any stored system text.

    ``memories`` (the recalled-notes block) opens the first user message as a text block of its own.
    """
    system_parts = [system] if system else []
    body = logical_order(rows)
    while body and body[0].role == "system":
        system_parts.append(content_text(body[0].view))
        body.pop(0)

    messages: list[dict[str, Any]] = []
    for row in body:
        side = _side(row)
        if row.kind == "tool_result":
            blocks = [_result_block(row)]
        elif row.role == "system":
            # A system message mid-conversation: the API has no such role, so it travels as user text.
            blocks = [{"type": "text", "text": f"[system] {content_text(row.view)}"}]
        else:
            blocks = _blocks(row.view)
        if not blocks:
            continue
        if messages and messages[-1]["role"] == side:
            messages[-1]["content"].extend(blocks)
        else:
            messages.append({"role": side, "content": blocks})
    messages = _repair_tool_pairing(messages)
    for msg in messages:
        if msg["role"] == "user":
            # tool_result blocks must open their user turn.
            msg["content"].sort(key=lambda b: 0 if b.get("type") == "tool_result" else 1)
    if messages and messages[0]["role"] != "user":
        messages.insert(0, {"role": "user", "content": [{"type": "text", "text": RESUMED_PLACEHOLDER}]})
    if memories and messages:
        # The first user turn answers no call, so it has no tool_result block that must stay first.
        messages[0]["content"].insert(0, {"type": "text", "text": memories})
    return Rendered(system="\n\n".join(p for p in system_parts if p) or None, messages=_simplify(messages))


def _repair_tool_pairing(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Answer every call in the next user turn; turn results that answer nothing there into text."""
    out: list[dict[str, Any]] = []
    for i, msg in enumerate(messages):
        if msg["role"] == "user":
            prev_calls = _call_ids(out[-1]) if out and out[-1]["role"] == "assistant" else set()
            fixed: list[dict[str, Any]] = []
            answered: set[str] = set()
            for block in msg["content"]:
                is_result = block.get("type") == "tool_result"
                tid = block.get("tool_use_id")
                if is_result and (tid not in prev_calls or tid in answered):
                    # A result answering no call of the previous turn, or answering it again, travels as text.
                    text = _flatten(block.get("content", ""))
                    fixed.append({"type": "text", "text": f"[tool result {block.get('tool_use_id')}] {text}"})
                else:
                    if is_result:
                        answered.add(str(block.get("tool_use_id")))
                    fixed.append(block)
            msg = {"role": "user", "content": fixed}
        out.append(msg)
        if msg["role"] == "assistant":
            calls = _call_ids(msg)
            nxt = messages[i + 1] if i + 1 < len(messages) else None
            if calls and nxt is not None:
                answered = {b.get("tool_use_id") for b in nxt["content"] if b.get("type") == "tool_result"}
                missing = [c for c in _ordered_call_ids(msg) if c not in answered]
                if missing:
                    synthetic = [
                        {
                            "type": "tool_result",
                            "tool_use_id": c,
                            "content": UNANSWERED_RESULT,
                            "is_error": True,
                        }
                        for c in missing
                    ]
                    nxt["content"][:0] = synthetic
            elif calls and nxt is None:
                pass  # the caller is about to send the results with its next turn
    return out


def _call_ids(msg: dict[str, Any]) -> set[str]:
    return set(_ordered_call_ids(msg))


def _ordered_call_ids(msg: dict[str, Any]) -> list[str]:
    return [str(b["id"]) for b in msg["content"] if b.get("type") == "tool_use"]


def _flatten(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return content_text(content)
    return ""


def _simplify(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A turn that is one text block is sent as a plain string, as clients usually write it."""
    out = []
    for msg in messages:
        content = msg["content"]
        if len(content) == 1 and content[0].get("type") == "text":
            out.append({"role": msg["role"], "content": content[0]["text"]})
        else:
            out.append(msg)
    return out


def render_openai(
    rows: Sequence[MessageRecord], system: str | None = None, memories: str | None = None
) -> list[dict[str, Any]]:
    """OpenAI chat form: system first, tool calls on assistant turns, one tool message per result.

    ``memories`` (the recalled-notes block) is a user message of its own right after the system message.
    """
    anthropic = render_anthropic(rows, system)
    out: list[dict[str, Any]] = []
    if anthropic.system:
        out.append({"role": "system", "content": anthropic.system})
    if memories and anthropic.messages:
        out.append({"role": "user", "content": memories})
    for msg in anthropic.messages:
        content = msg["content"]
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        if msg["role"] == "assistant":
            text = "\n".join(str(b["text"]) for b in blocks if b.get("type") == "text")
            calls = [
                {
                    "id": b["id"],
                    "type": "function",
                    "function": {
                        "name": b["name"],
                        "arguments": json.dumps(b.get("input", {}), ensure_ascii=False),
                    },
                }
                for b in blocks
                if b.get("type") == "tool_use"
            ]
            entry: dict[str, Any] = {"role": "assistant", "content": text or None}
            if calls:
                entry["tool_calls"] = calls
            out.append(entry)
            continue
        rest: list[dict[str, Any]] = []
        for b in blocks:
            if b.get("type") == "tool_result":
                out.append(
                    {
                        "role": "tool",
                        "tool_call_id": b["tool_use_id"],
                        "content": _flatten(b.get("content", "")),
                    }
                )
            else:
                rest.append(b)
        if rest:
            out.append({"role": "user", "content": _openai_user_content(rest)})
    return out


def _openai_user_content(blocks: list[dict[str, Any]]) -> str | list[dict[str, Any]]:
    if all(b.get("type") == "text" for b in blocks):
        return "\n\n".join(str(b["text"]) for b in blocks)
    parts: list[dict[str, Any]] = []
    for b in blocks:
        if b.get("type") == "text":
            parts.append({"type": "text", "text": b["text"]})
        elif b.get("type") == "image":
            src = b.get("source", {})
            if src.get("type") == "base64":
                url = f"data:{src.get('media_type')};base64,{src.get('data')}"
            else:
                url = str(src.get("url", ""))
            parts.append({"type": "image_url", "image_url": {"url": url}})
    return parts
