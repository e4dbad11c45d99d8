"""The agent's recall tools: what the model may call to get archived history back, in both providers'
shapes, and how a call is read and answered.

Two tools, named by every placeholder and truncation marker compaction writes:

* ``search_history(query, limit)``: ranked search over the conversation's originals (words, identifiers,
  "quoted phrases"), a snippet per hit with its seq;
* ``read_archived(seq, offset)``: one original in full, a page at a time.

A call arrives as the provider sent it (an Anthropic ``tool_use`` block, an OpenAI chat tool call, a
Responses API ``function_call`` item); the answer goes back in the same provider's shape. Bad calls are
answered with an error result the model can read (unknown tool, missing or ill-typed arguments), never
raised: a model's mistake must not break the agent loop.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

SEARCH = "search_history"
READ = "read_archived"
NAMES = (SEARCH, READ)
DEFAULT_LIMIT = 5
MAX_LIMIT = 20
PAGE_CHARS = 8_000
"""One ``read_archived`` page: about 2,000 tokens, so a huge tool output comes back in pieces."""

Shape = Literal["anthropic", "openai", "responses"]

_SEARCH_DESCRIPTION = (
    "Search this conversation's archived history: earlier messages, tool calls and tool outputs that "
    "were compacted out of the context. Use it when the context says something was archived, or when "
    "you need a detail from earlier that is not in front of you. Ranked by relevance; each hit gives a "
    "snippet and its seq. Query with the words, names or identifiers you expect in the original (file "
    'paths, ids, error messages); put exact phrases in "double quotes".'
)
_READ_DESCRIPTION = (
    "Read one archived original in full by its seq (the number a placeholder, a truncation marker, "
    "the summary or search_history gives). Long originals come in pages: pass the offset the previous "
    "page ends with to read on."
)
SEARCH_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "query": {"type": "string", "description": "Words, identifiers or quoted phrases to look for."},
        "limit": {
            "type": "integer",
            "minimum": 1,
            "maximum": MAX_LIMIT,
            "description": f"Most hits to return (default {DEFAULT_LIMIT}).",
        },
    },
    "required": ["query"],
}
READ_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "seq": {"type": "integer", "minimum": 1, "description": "The seq of the archived message."},
        "offset": {
            "type": "integer",
            "minimum": 0,
            "description": "Character offset to start at (default 0).",
        },
    },
    "required": ["seq"],
}


def anthropic_tools() -> list[dict[str, Any]]:
    """The two tool definitions for the Anthropic Messages API (``tools=``)."""
    return [
        {"name": SEARCH, "description": _SEARCH_DESCRIPTION, "input_schema": SEARCH_SCHEMA},
        {"name": READ, "description": _READ_DESCRIPTION, "input_schema": READ_SCHEMA},
    ]


def openai_tools() -> list[dict[str, Any]]:
    """The two tool definitions for OpenAI chat completions (``tools=``)."""
    return [
        {
            "type": "function",
            "function": {"name": t["name"], "description": t["description"], "parameters": t["input_schema"]},
        }
        for t in anthropic_tools()
    ]


def responses_tools() -> list[dict[str, Any]]:
    """The two tool definitions for the OpenAI Responses API and the Agents SDK (flat ``function`` tools)."""
    return [
        {
            "type": "function",
            "name": t["name"],
            "description": t["description"],
            "parameters": t["input_schema"],
        }
        for t in anthropic_tools()
    ]


def tool_definitions(shape: Shape = "anthropic") -> list[dict[str, Any]]:
    """The recall tool definitions for one provider's API."""
    return {"anthropic": anthropic_tools, "openai": openai_tools, "responses": responses_tools}[shape]()


@dataclass(frozen=True)
class RecallCall:
    """A tool call read from either provider's shape; ``problem`` says why it cannot run (else None)."""

    call_id: str
    name: str
    arguments: dict[str, Any]
    shape: Shape
    problem: str | None = None

    @property
    def query(self) -> str:
        """The search query."""
        return str(self.arguments.get("query", ""))

    @property
    def limit(self) -> int:
        """Hits to return, within 1..MAX_LIMIT."""
        return max(1, min(MAX_LIMIT, int(self.arguments.get("limit") or DEFAULT_LIMIT)))

    @property
    def seq(self) -> int:
        """The seq to read."""
        return int(self.arguments["seq"])

    @property
    def offset(self) -> int:
        """The character offset to read from."""
        return max(0, int(self.arguments.get("offset") or 0))


def read_call(tool_call: Mapping[str, Any]) -> RecallCall:
    """A recall tool call from an Anthropic ``tool_use`` block, an OpenAI chat tool call or a Responses
    ``function_call`` item. Never raises: a call that cannot run carries its ``problem``."""
    if tool_call.get("type") == "tool_use":
        shape: Shape = "anthropic"
        call_id, name, raw = tool_call.get("id"), tool_call.get("name"), tool_call.get("input")
    elif tool_call.get("type") == "function_call":
        shape = "responses"
        call_id, name, raw = tool_call.get("call_id"), tool_call.get("name"), tool_call.get("arguments")
    else:
        shape = "openai"
        found = tool_call.get("function")
        function: Mapping[str, Any] = found if isinstance(found, Mapping) else {}
        call_id, name, raw = tool_call.get("id"), function.get("name"), function.get("arguments")
    arguments, problem = _arguments(raw)
    name = str(name or "")
    return RecallCall(str(call_id or ""), name, arguments, shape, problem or _problem(name, arguments))


def _arguments(raw: Any) -> tuple[dict[str, Any], str | None]:
    if isinstance(raw, Mapping):
        return dict(raw), None
    if raw is None or raw == "":
        return {}, None
    try:
        parsed = json.loads(raw) if isinstance(raw, str) else None
    except ValueError:
        return {}, "the arguments are not valid JSON"
    except RecursionError:
        return {}, "the arguments are nested too deeply"
    return (dict(parsed), None) if isinstance(parsed, dict) else ({}, "the arguments must be a JSON object")


def _problem(name: str, args: Mapping[str, Any]) -> str | None:
    """Why a call cannot run: an unknown tool, or arguments of the wrong type."""
    if name not in NAMES:
        return f"unknown tool {name!r}; the recall tools are {', '.join(NAMES)}"
    if name == SEARCH:
        if not isinstance(args.get("query"), str) or not args["query"].strip():
            return "search_history needs a non-empty 'query' string"
        if "limit" in args and not _whole(args["limit"]):
            return "'limit' must be a whole number"
        return None
    if not _whole(args.get("seq")) or int(args["seq"]) < 1:
        return "read_archived needs 'seq', a positive whole number"
    if "offset" in args and args["offset"] is not None and not _whole(args["offset"]):
        return "'offset' must be a whole number"
    return None


def _whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def page(text: str, offset: int, size: int = PAGE_CHARS) -> tuple[str, int | None]:
    """``text[offset:offset+size]``, ending at a line or word break when one is near, and the offset the
    next page starts at (None when this is the last)."""
    end = min(len(text), offset + size)
    if end < len(text):
        cut = max(text.rfind("\n", offset + size // 2, end), text.rfind(" ", offset + size // 2, end))
        end = cut + 1 if cut != -1 else end  # a break in the page's second half, else a hard cut
    return text[offset:end], (end if end < len(text) else None)


def tool_result(call: RecallCall, text: str, *, is_error: bool = False) -> dict[str, Any]:
    """The answer to ``call`` in its own provider's shape: a ``tool_result`` block (Anthropic), a
    ``role: tool`` message (OpenAI chat) or a ``function_call_output`` item (Responses)."""
    if call.shape == "anthropic":
        block: dict[str, Any] = {"type": "tool_result", "tool_use_id": call.call_id, "content": text}
        return {**block, "is_error": True} if is_error else block
    if call.shape == "responses":
        return {"type": "function_call_output", "call_id": call.call_id, "output": text}
    return {"role": "tool", "tool_call_id": call.call_id, "content": text}
