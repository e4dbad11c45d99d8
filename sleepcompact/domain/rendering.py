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

from sleepcompact.domain.blocks import EMPTY_RESULT
from sleepcompact.domain.messages import Content, content_text
from sleepcompact.domain.records import MessageRecord, logical_order

RESUMED_PLACEHOLDER = "[conversation resumed]"
UNANSWERED_RESULT = "[no result was recorded for this tool call]"
OPENAI_ONLY = ("input_audio", "file", "input_file")
"""Parts OpenAI accepts and Anthropic does not: an Anthropic rendering names them in text instead."""
NOT_REPLAYED = ("reasoning",)
"""Stored, exported and counted, but in neither request: a Responses API ``reasoning`` item (its
encrypted state goes back only through the Responses API, and chat completions has no place for it)."""


@dataclass(frozen=True)
class Rendered:
    """A request body's two halves: the system text and the messages."""

    system: str | None
    messages: list[dict[str, Any]]


def _blocks(content: Content, *, openai: bool = False) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    # On the way to an OpenAI rendering, OpenAI's own parts stay as they are.
    return [dict(b) if openai else _anthropic_block(b) for b in content if b.get("type") not in NOT_REPLAYED]


def _anthropic_block(block: dict[str, Any]) -> dict[str, Any]:
    """A stored block as Anthropic takes it: verbatim, but for OpenAI-only parts, named in text."""
    if block.get("type") in OPENAI_ONLY:
        return {"type": "text", "text": f"[{block.get('type')} attachment omitted: not supported here]"}
    return dict(block)


def _result_block(row: MessageRecord, *, openai: bool = False) -> dict[str, Any]:
    block: dict[str, Any] = {"type": "tool_result", "tool_use_id": row.tool_call_id}
    view = row.view
    # Both providers want a result to say something: an empty one says that it was empty.
    block["content"] = (
        (view if isinstance(view, str) else _blocks(view, openai=openai)) if view else EMPTY_RESULT
    )
    if row.metadata.get("is_error"):
        block["is_error"] = True
    if isinstance(row.metadata.get("cache_control"), dict):
        block["cache_control"] = dict(row.metadata["cache_control"])
    return block


def _side(row: MessageRecord) -> str:
    return "assistant" if row.role == "assistant" else "user"


def render_anthropic(
    rows: Sequence[MessageRecord],
    system: str | None = None,
    memories: str | None = None,
    recalled: str | None = None,
) -> Rendered:
    """Anthropic Messages form of the live rows, with ``system`` prepended to any stored system text.

    ``memories`` (the recalled-notes block) opens the first user message as a text block of its own;
    ``recalled`` (archived snippets, ``history_recall``) closes the newest user turn.
    """
    return _render(rows, system, memories, openai=False, recalled=recalled)


def _render(
    rows: Sequence[MessageRecord],
    system: str | None,
    memories: str | None,
    *,
    openai: bool,
    recalled: str | None = None,
) -> Rendered:
    """The Anthropic form; with ``openai``, OpenAI-only parts are kept for ``render_openai`` to send."""
    system_parts = [system] if system else []
    body = logical_order(rows)
    while body and body[0].role == "system":
        system_parts.append(content_text(body[0].view))
        body.pop(0)

    messages: list[dict[str, Any]] = []
    for row in body:
        side = _side(row)
        if row.kind == "tool_result":
            blocks = [_result_block(row, openai=openai)]
        elif row.role == "system":
            # A system message mid-conversation: the API has no such role, so it travels as user text.
            blocks = [{"type": "text", "text": f"[system] {content_text(row.view)}"}]
        else:
            blocks = _blocks(row.view, openai=openai)
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
    newest_user = next((m for m in reversed(messages) if m["role"] == "user"), None)
    if recalled and newest_user is not None:
        # Last in the newest user turn: after its tool results, and after everything a cache holds.
        newest_user["content"].append({"type": "text", "text": recalled})
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
        if len(content) == 1 and content[0].get("type") == "text" and set(content[0]) == {"type", "text"}:
            out.append({"role": msg["role"], "content": content[0]["text"]})
        else:
            out.append(msg)
    return out


def render_openai(
    rows: Sequence[MessageRecord],
    system: str | None = None,
    memories: str | None = None,
    recalled: str | None = None,
) -> list[dict[str, Any]]:
    """OpenAI chat form: system first, tool calls on assistant turns, one tool message per result.

    ``memories`` (the recalled-notes block) is a user message of its own right after the system message.
    Thinking blocks are Anthropic's and are left out; server tool blocks travel as their text.
    """
    anthropic = _render(rows, system, None, openai=True, recalled=recalled)
    out: list[dict[str, Any]] = []
    if anthropic.system:
        out.append({"role": "system", "content": anthropic.system})
    if memories and anthropic.messages:
        out.append({"role": "user", "content": memories})
    for msg in anthropic.messages:
        content = msg["content"]
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        if msg["role"] == "assistant":
            out.append(_openai_assistant(blocks))
            continue
        rest: list[dict[str, Any]] = []
        for b in blocks:
            if b.get("type") == "tool_result":
                text = _flatten(b.get("content", "")) or EMPTY_RESULT
                out.append({"role": "tool", "tool_call_id": b["tool_use_id"], "content": text})
            else:
                rest.append(b)
        if rest:
            out.append({"role": "user", "content": _openai_user_content(rest)})
    return out


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
