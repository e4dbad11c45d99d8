"""Strict validators of the request shapes: Anthropic Messages and OpenAI chat.

The guard and the tests use them to prove a rendered context would be accepted. Anthropic: roles
alternate starting with user, no content or text block is empty, tool ids are unique in the request,
every ``tool_use`` is answered at the start of the next user turn and every ``tool_result`` answers a
call of the turn just before, and thinking blocks open their assistant turn. OpenAI: known roles,
every tool call answered by the tool messages that follow it, ids unique, no empty content (nor an
empty text part or an image part without a URL).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def anthropic_problems(messages: Sequence[dict[str, Any]], *, allow_pending_calls: bool = True) -> list[str]:
    """Every rule the request breaks, as readable sentences; empty when it is valid.

    ``allow_pending_calls`` accepts tool calls in the final assistant turn that
    are not answered yet (the caller adds the results before sending).
    """
    problems: list[str] = []
    if not messages:
        return ["there are no messages"]
    if messages[0].get("role") != "user":
        problems.append("the first message is not a user message")
    prev_role: str | None = None
    pending: list[str] = []
    seen: set[str] = set()
    for i, msg in enumerate(messages):
        role = msg.get("role")
        if role not in ("user", "assistant"):
            problems.append(f"message {i}: role {role!r} is not user or assistant")
            continue
        if role == prev_role:
            problems.append(f"message {i}: two {role} messages in a row")
        blocks = _blocks(i, msg.get("content"), role, problems)
        if role == "user":
            _check_results(i, blocks, pending, problems)
            pending = []
        else:
            pending = [str(b.get("id")) for b in blocks if b.get("type") == "tool_use"]
            if len(set(pending)) != len(pending) or seen & set(pending):
                problems.append(f"message {i}: duplicate tool_use ids (an id is used twice in the request)")
            seen.update(pending)
            _check_thinking(i, blocks, problems)
        prev_role = role
    if pending and not allow_pending_calls:
        problems.append("the last assistant turn has unanswered tool calls")
    return problems


def _blocks(i: int, content: Any, role: str, problems: list[str]) -> list[dict[str, Any]]:
    """The message's content blocks (none for text), noting empty content and misplaced blocks."""
    blocks: list[dict[str, Any]] = []
    if isinstance(content, str):
        if not content.strip():
            problems.append(f"message {i}: empty text")
    elif isinstance(content, list):
        if not content:
            problems.append(f"message {i}: empty content list")
        blocks = content
    else:
        problems.append(f"message {i}: content is neither text nor blocks")
    for j, block in enumerate(blocks):
        btype = block.get("type")
        if btype == "text" and not str(block.get("text", "")).strip():
            problems.append(f"message {i} block {j}: empty text block")
        if btype == "tool_use" and role != "assistant":
            problems.append(f"message {i} block {j}: tool_use outside an assistant turn")
        if btype == "tool_result" and role != "user":
            problems.append(f"message {i} block {j}: tool_result outside a user turn")
    return blocks


def _check_results(i: int, blocks: list[dict[str, Any]], pending: list[str], problems: list[str]) -> None:
    """A user turn answers the previous turn's calls: every one, once, before anything else."""
    results = [b for b in blocks if b.get("type") == "tool_result"]
    leading = 0
    for b in blocks:
        if b.get("type") != "tool_result":
            break
        leading += 1
    if leading != len(results):
        problems.append(f"message {i}: tool_result blocks do not all come first")
    answered = [str(b.get("tool_use_id")) for b in results]
    if len(set(answered)) != len(answered):
        problems.append(f"message {i}: a tool_use is answered more than once")
    for tid in answered:
        if tid not in pending:
            problems.append(f"message {i}: tool_result {tid} answers no call of the previous turn")
    for tid in pending:
        if tid not in answered:
            problems.append(f"message {i}: tool_use {tid} of the previous turn is not answered")


def _check_thinking(i: int, blocks: list[dict[str, Any]], problems: list[str]) -> None:
    """Thinking blocks open their assistant turn (the API refuses them after text or tool use)."""
    kinds = [b.get("type") in ("thinking", "redacted_thinking") for b in blocks]
    if any(kinds) and kinds != sorted(kinds, reverse=True):
        problems.append(f"message {i}: a thinking block comes after other content")


def openai_problems(messages: Sequence[dict[str, Any]]) -> list[str]:
    """Every rule an OpenAI chat request breaks; empty when it is valid."""
    problems: list[str] = []
    pending: list[str] = []
    seen: set[str] = set()
    for i, msg in enumerate(messages):
        role = msg.get("role")
        if role not in ("system", "developer", "user", "assistant", "tool"):
            problems.append(f"message {i}: unknown role {role!r}")
            continue
        if role == "tool":
            tid = str(msg.get("tool_call_id"))
            if tid not in pending:
                problems.append(f"message {i}: tool result {tid} answers no pending call")
            else:
                pending.remove(tid)
            if not msg.get("content"):
                problems.append(f"message {i}: empty tool result")
            continue
        if pending:
            problems.append(f"message {i}: tool calls {pending} are not answered")
            pending = []
        calls = [str(c.get("id")) for c in msg.get("tool_calls") or []]
        if role == "assistant" and calls:
            if len(set(calls)) != len(calls) or seen & set(calls):
                problems.append(f"message {i}: a tool call id is used twice in the request")
            seen.update(calls)
            pending = calls
        elif not msg.get("content"):
            problems.append(f"message {i}: empty {role} content")
        _check_parts(i, msg.get("content"), problems)
    return problems


def _check_parts(i: int, content: Any, problems: list[str]) -> None:
    """Content parts say something: no empty text, no image without a URL."""
    if not isinstance(content, list):
        return
    for j, part in enumerate(content):
        ptype = part.get("type") if isinstance(part, dict) else None
        if ptype == "text" and not str(part.get("text", "")).strip():
            problems.append(f"message {i} part {j}: empty text part")
        if ptype == "image_url":
            spec = part.get("image_url")
            if not isinstance(spec, dict) or not spec.get("url"):
                problems.append(f"message {i} part {j}: image_url part without a url")
