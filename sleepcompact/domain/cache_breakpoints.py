"""Anthropic prompt-cache breakpoints on a rendered request (``PreparedContext.request()``).

A breakpoint (``cache_control``) caches the request up to and including its block, in the order tools,
system, messages; a later request reads that entry when its prefix is byte-identical, and the provider
checks about 20 blocks before each breakpoint for an earlier entry. A request may carry at most four.
The rendering keeps the prefix stable between compactions (the memory block only changes with the
memory set or a compaction, the recalled snippets sit at the very end), so the breakpoints go where a
later call shares the most:

1. the system prompt (which caches the tools too), else the last tool definition;
2. the newest user turn, before its recalled snippets: written now, read by the next call;
3. the previous user turn: what the last call wrote, read now;
4. the end of the summary message: stable from one compaction to the next.

A caller's own ``cache_control`` on the system prompt or the tools is kept and counts against the four;
message-level markers that came in with stored messages are replaced (they marked positions of calls
long gone, and a request carrying more than four is refused).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from sleepcompact.domain.history_recall import OPEN_TAG
from sleepcompact.domain.prompt import SUMMARY_PREFIX

MAX_BREAKPOINTS = 4
CacheTTL = Literal["5m", "1h"]
# Blocks the API accepts a cache_control on; thinking blocks take the one of their turn's last block.
_MARKABLE = frozenset({"text", "image", "document", "tool_use", "tool_result", "search_result"})


def _is_recalled(block: dict[str, Any]) -> bool:
    """The recalled-snippets block: never marked, it changes with every question."""
    return block.get("type") == "text" and str(block.get("text", "")).startswith(OPEN_TAG)


def _is_summary(block: dict[str, Any]) -> bool:
    return block.get("type") == "text" and str(block.get("text", "")).startswith(SUMMARY_PREFIX)


def with_breakpoints(
    request: dict[str, Any], ttl: CacheTTL, *, marked: Sequence[int] | None = None
) -> dict[str, Any]:
    """A copy of ``request`` (``system``, ``tools``, ``messages`` in Anthropic form) with breakpoints.

    ``marked``: the indexes of the messages that carry a ``cache_control`` already, when the caller
    knows them (the guard's rendering does), so a call does not look through the whole history."""
    out = _copy(request)
    marker: dict[str, Any] = {"type": "ephemeral"} if ttl == "5m" else {"type": "ephemeral", "ttl": ttl}
    messages: list[dict[str, Any]] = out["messages"]
    for i in range(len(messages)) if marked is None else marked:
        msg = messages[i]
        if any("cache_control" in b for b in _blocks(msg)):
            messages[i] = _own(msg)
            for block in messages[i]["content"]:
                if isinstance(block, dict):
                    block.pop("cache_control", None)
    left = MAX_BREAKPOINTS - _caller_markers(out)
    if left > 0 and _mark_head(out, marker):
        left -= 1
    wanted = _last_user_turns(messages, 2)
    summary = _summary_index(messages)
    if summary is not None and summary not in wanted:
        wanted.append(summary)
    for index in wanted:
        if left > 0 and _mark_message(messages, index, marker):
            left -= 1
    return out


def _last_user_turns(messages: list[dict[str, Any]], n: int) -> list[int]:
    """The indexes of the newest ``n`` user messages, newest first (read from the end)."""
    found: list[int] = []
    for i in range(len(messages) - 1, -1, -1):
        if messages[i].get("role") == "user":
            found.append(i)
            if len(found) == n:
                break
    return found


def _copy(request: dict[str, Any]) -> dict[str, Any]:
    """A copy of what may be marked: the system blocks, the tools and the list of messages. A message is
    copied (down to its blocks) only when a marker is put on it or taken off it, so a call costs the same
    whatever the length of the history (every block its own object even where the caller passed the same
    one twice)."""
    out = dict(request)
    if isinstance(out.get("system"), list):
        out["system"] = [dict(b) if isinstance(b, dict) else b for b in out["system"]]
    if out.get("tools"):
        out["tools"] = [dict(t) if isinstance(t, dict) else t for t in out["tools"]]
    out["messages"] = list(out.get("messages", []))
    return out


def _own(message: dict[str, Any]) -> dict[str, Any]:
    """A copy of one message down to its blocks (a plain-string turn stays a string)."""
    content = message.get("content")
    if not isinstance(content, list):
        return dict(message)
    return {**message, "content": [dict(b) if isinstance(b, dict) else b for b in content]}


def _summary_index(messages: list[dict[str, Any]]) -> int | None:
    """The message holding the summary: it opens the history, before the first assistant turn."""
    for i, msg in enumerate(messages):
        if msg.get("role") == "assistant":
            return None
        if any(_is_summary(b) for b in _blocks(msg)):
            return i
    return None


def _caller_markers(request: dict[str, Any]) -> int:
    """The caller's own breakpoints on the system prompt and the tools."""
    system = request.get("system")
    blocks = system if isinstance(system, list) else []
    tools = request.get("tools") or []
    return sum(1 for b in [*blocks, *tools] if isinstance(b, dict) and "cache_control" in b)


def _mark_head(request: dict[str, Any], marker: dict[str, Any]) -> bool:
    """Mark the system prompt (it caches the tools before it too), else the last tool; never where the
    caller put a marker already (a tool marked by the caller still leaves the system prompt to mark)."""
    system, tools = request.get("system"), request.get("tools") or []
    if isinstance(system, str) and system:
        request["system"] = [{"type": "text", "text": system, "cache_control": dict(marker)}]
        return True
    if isinstance(system, list) and system:
        last = system[-1]
        if any(isinstance(b, dict) and "cache_control" in b for b in system):
            return False
        if isinstance(last, dict) and last.get("text"):
            last["cache_control"] = dict(marker)
            return True
    if tools and isinstance(tools[-1], dict) and not any("cache_control" in t for t in tools):
        tools[-1]["cache_control"] = dict(marker)
        return True
    return False


def _blocks(message: dict[str, Any]) -> Sequence[dict[str, Any]]:
    content = message.get("content")
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [b for b in content or [] if isinstance(b, dict)]


def _mark_message(messages: list[dict[str, Any]], index: int, marker: dict[str, Any]) -> bool:
    """Mark the last markable block of a message that is not recalled snippets; a plain-string turn
    becomes one text block (the only way to carry a marker)."""
    msg = messages[index] = _own(messages[index])
    if isinstance(msg.get("content"), str):
        if not msg["content"] or _is_recalled({"type": "text", "text": msg["content"]}):
            return False
        msg["content"] = [{"type": "text", "text": msg["content"]}]
    content = msg.get("content") or []
    for block in reversed(content):
        if not isinstance(block, dict) or _is_recalled(block) or block.get("type") not in _MARKABLE:
            continue
        if block.get("type") == "text" and not block.get("text"):
            continue  # the API refuses a marker on an empty text block
        block["cache_control"] = dict(marker)
        return True
    return False


def count_breakpoints(request: dict[str, Any]) -> int:
    """Every ``cache_control`` a request carries (tools, system blocks, message blocks)."""
    total = _caller_markers(request)
    for msg in request.get("messages", []):
        total += sum(1 for b in _blocks(msg) if "cache_control" in b)
    return total


def cache_problems(request: dict[str, Any]) -> list[str]:
    """The provider's cache_control rules a request breaks (empty when none): at most four breakpoints,
    a known TTL, none on an empty text block or a thinking block, and 1-hour entries before 5-minute ones
    (tools, then system, then messages)."""
    system = request.get("system")
    places = [
        *[b for b in request.get("tools") or [] if isinstance(b, dict)],
        *[b for b in (system if isinstance(system, list) else []) if isinstance(b, dict)],
    ]
    for msg in request.get("messages", []):
        places.extend(b for b in _blocks(msg) if isinstance(msg.get("content"), list))
    marked = [b for b in places if "cache_control" in b]
    problems = []
    if len(marked) > MAX_BREAKPOINTS:
        problems.append(
            f"A maximum of {MAX_BREAKPOINTS} blocks with cache_control may be provided. Found {len(marked)}."
        )
    ttls = []
    for block in marked:
        control = block["cache_control"]
        ttl = control.get("ttl", "5m") if isinstance(control, dict) else None
        if not isinstance(control, dict) or control.get("type") != "ephemeral" or ttl not in ("5m", "1h"):
            problems.append(f"cache_control: invalid value {control!r}")
        if block.get("type") == "text" and not block.get("text"):
            problems.append("cache_control cannot be set for empty text blocks")
        if block.get("type") in ("thinking", "redacted_thinking"):
            problems.append("cache_control cannot be set on thinking blocks")
        ttls.append(ttl)
    if "1h" in ttls and "5m" in ttls and ttls.index("5m") < len(ttls) - 1 - ttls[::-1].index("1h"):
        problems.append("a ttl='1h' cache_control block must not come after a ttl='5m' one")
    return problems
