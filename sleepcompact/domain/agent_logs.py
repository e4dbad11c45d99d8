"""Logs users already have, as message dicts ``normalize`` accepts: Claude Code session transcripts,
OpenAI Responses API / Agents SDK item lists, and LangChain's ``messages_to_dict`` output.

Each reader takes parsed JSON and returns ``(message, where)`` pairs plus provenance; the messages keep
the shapes of the provider they came from (Anthropic for Claude Code, OpenAI chat for the other two),
so ``export`` returns something a provider accepts. Records that are not part of the conversation are
counted in the provenance, never silently turned into messages.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any, NamedTuple

from sleepcompact.domain.json_shapes import source_time

Error = Callable[..., Exception]


class Located(NamedTuple):
    """A message, where it came from (for errors), its line in a JSONL file, and when the source says
    it was sent (imported rows keep that time)."""

    data: dict[str, Any]
    where: str
    line: int | None
    sent_at: datetime | None = None


CLAUDE_CODE_TYPES = ("user", "assistant", "summary", "system", "file-history-snapshot", "queue-operation")
RESPONSES_TYPES = ("message", "function_call", "function_call_output", "reasoning")
LANGCHAIN_TYPES = ("human", "ai", "tool", "system", "function", "chat", "AIMessageChunk", "HumanMessageChunk")


def looks_like_claude_code(row: Mapping[str, Any]) -> bool:
    """A Claude Code transcript record: a typed record with the session's bookkeeping around it."""
    kind = row.get("type")
    return kind in CLAUDE_CODE_TYPES and ("sessionId" in row or "leafUuid" in row or "uuid" in row)


def looks_like_responses(items: list[Any]) -> bool:
    """A Responses API / Agents SDK item list: some item is typed as one."""
    return any(isinstance(i, Mapping) and i.get("type") in RESPONSES_TYPES for i in items)


def looks_like_langchain(items: list[Any]) -> bool:
    """LangChain's ``messages_to_dict``: every item is ``{"type": ..., "data": {...}}``."""
    return bool(items) and all(
        isinstance(i, Mapping) and i.get("type") in LANGCHAIN_TYPES and isinstance(i.get("data"), Mapping)
        for i in items
    )


# -- Claude Code ---------------------------------------------------------------------------------------


def claude_code(rows: list[tuple[int, dict[str, Any]]]) -> tuple[list[Located], dict[str, Any], str | None]:
    """The main thread of a Claude Code session: user and assistant records in file order, an
    assistant message streamed as several records (one per content block, the same ``message.id``)
    joined back into one. Sidechain (subagent) records, meta records and bookkeeping are counted."""
    out: list[Located] = []
    skipped: dict[str, int] = {}
    summaries: list[str] = []
    model: str | None = None
    last_id: str | None = None
    for line, row in rows:
        kind = row.get("type")
        message = row.get("message")
        if kind == "summary" and isinstance(row.get("summary"), str):
            summaries.append(row["summary"])
            continue
        reason = _skip_reason(row, kind, message)
        if reason:
            skipped[reason] = skipped.get(reason, 0) + 1
            continue
        assert isinstance(message, Mapping)
        data = {"role": message.get("role", kind), "content": message.get("content")}
        msg_id = message.get("id") if kind == "assistant" else None
        if msg_id and msg_id == last_id and out:
            out[-1].data["content"] = [*_blocks(out[-1].data["content"]), *_blocks(data["content"])]
        else:
            out.append(Located(data, "record", line, source_time(row.get("timestamp"))))
        last_id = msg_id
        named = message.get("model")
        if kind == "assistant" and isinstance(named, str) and named != "<synthetic>":
            model = named  # Claude Code's own messages (API errors, interruptions) say "<synthetic>"
    meta: dict[str, Any] = {"source_format": "claude_code", "skipped_records": skipped}
    session = next((r.get("sessionId") for _, r in rows if r.get("sessionId")), None)
    if session:
        meta["session_id"] = session
    if summaries:
        meta["summaries"] = summaries
    return out, meta, model or None


def _skip_reason(row: Mapping[str, Any], kind: Any, message: Any) -> str | None:
    if kind not in ("user", "assistant"):
        return str(kind or "untyped")
    if row.get("isSidechain"):
        return "sidechain"
    if row.get("isMeta"):
        return "meta"
    if not isinstance(message, Mapping):
        return "no message"
    return None


def _blocks(content: Any) -> list[Any]:
    if isinstance(content, list):
        return content
    return [{"type": "text", "text": content}] if isinstance(content, str) and content else []


# -- Responses API / Agents SDK ------------------------------------------------------------------------


def responses_items(items: list[Any], error: Error) -> list[Located]:
    """Response items as chat messages: a function call is an assistant tool call, its output a tool
    message, a reasoning item an assistant block kept verbatim (neither provider's chat takes it back)."""
    out: list[Located] = []
    for i, item in enumerate(items):
        where = f"item {i}"
        if not isinstance(item, Mapping):
            raise error(f"{where} is not an object")
        kind = item.get("type", "message" if "role" in item else None)
        if kind == "message":
            out.append(Located({"role": item.get("role"), "content": item.get("content")}, where, None))
        elif kind == "function_call":
            call = {
                "id": item.get("call_id"),
                "type": "function",
                "function": {"name": item.get("name"), "arguments": item.get("arguments", "")},
            }
            out.append(Located({"role": "assistant", "content": None, "tool_calls": [call]}, where, None))
        elif kind == "function_call_output":
            output = item.get("output")
            content = output if isinstance(output, str | list) else json.dumps(output)
            out.append(
                Located(
                    {"role": "tool", "tool_call_id": item.get("call_id"), "content": content}, where, None
                )
            )
        else:
            out.append(Located({"role": "assistant", "content": [dict(item)]}, where, None))
    return out


# -- LangChain -----------------------------------------------------------------------------------------

_LC_ROLES = {"human": "user", "HumanMessageChunk": "user", "ai": "assistant", "AIMessageChunk": "assistant"}


def langchain_messages(items: list[dict[str, Any]]) -> list[Located]:
    """``messages_to_dict`` output as chat messages (tool calls from ``tool_calls``, never duplicated
    from Anthropic-style ``tool_use`` blocks the content may also hold)."""
    out: list[Located] = []
    for i, item in enumerate(items):
        data, kind, where = item["data"], item["type"], f"message {i}"
        content = data.get("content")
        if kind in ("human", "HumanMessageChunk", "system"):
            out.append(Located({"role": _LC_ROLES.get(kind, kind), "content": content}, where, None))
        elif kind in ("ai", "AIMessageChunk"):
            out.append(Located(_ai(data), where, None))
        elif kind == "tool":
            out.append(
                Located(
                    {"role": "tool", "tool_call_id": data.get("tool_call_id"), "content": content},
                    where,
                    None,
                )
            )
        elif kind == "function":
            out.append(
                Located({"role": "function", "name": data.get("name"), "content": content}, where, None)
            )
        else:
            out.append(Located({"role": data.get("role"), "content": content}, where, None))
    return out


def _ai(data: Mapping[str, Any]) -> dict[str, Any]:
    content = data.get("content")
    if isinstance(content, list):
        content = [b for b in content if not (isinstance(b, Mapping) and b.get("type") == "tool_use")]
    msg: dict[str, Any] = {"role": "assistant", "content": content or None}
    valid = [c for c in data.get("tool_calls") or [] if isinstance(c, Mapping)]
    invalid = [c for c in data.get("invalid_tool_calls") or [] if isinstance(c, Mapping)]
    calls = [_call(c.get("id"), c.get("name"), c.get("args", {})) for c in valid]
    # A call whose arguments did not parse is still a call when it has an id: LangChain's agents answer
    # it with an error ToolMessage (naming it "unknown" when it has no name) and send it to the
    # provider. Its raw arguments are no JSON object, so the call goes out with none, and the model's
    # text keeps what it wrote: nothing it sent is lost.
    calls += [_call(c["id"], c.get("name") or "unknown", {}) for c in invalid if c.get("id")]
    if invalid:
        blocks = content if isinstance(content, list) else _blocks(content)
        notes = [_malformed(c) for c in invalid]
        msg["content"] = [*blocks, *({"type": "text", "text": n} for n in notes)]
    if calls:
        msg["tool_calls"] = calls
    return msg


def _malformed(call: Mapping[str, Any]) -> str:
    return f"[malformed arguments for {call.get('name') or 'unknown'}: {call.get('args') or ''}]"


def _call(call_id: Any, name: Any, args: Any) -> dict[str, Any]:
    arguments = json.dumps(args, ensure_ascii=False)
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}
