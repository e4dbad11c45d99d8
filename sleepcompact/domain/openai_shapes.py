"""OpenAI chat messages as parts: tool calls (and the legacy ``function_call``), tool and function
results, ``developer`` messages (treated as system), refusals and content parts.

The legacy ``function_call`` has no id: a call and its ``role: function`` result pair by the
function's name, so both get the ref ``call_<name>`` (``tool_ids.legacy_ref``) and the usual rule
applies: a name may be called again once its earlier call has its result.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from sleepcompact.domain.blocks import (
    MAX_DEPTH,
    check_finite,
    compact,
    plain_blocks,
    result_content,
    result_meta,
    tool_call_id,
)
from sleepcompact.domain.errors import MalformedContent
from sleepcompact.domain.parts import Part
from sleepcompact.domain.tool_ids import legacy_ref

OPENAI_ROLES = {"developer": "system", "function": "tool"}
"""OpenAI roles stored as another: a developer message is a system message, a function result a tool's."""


def openai_parts(msg: Mapping[str, Any], role: str) -> list[Part]:
    """The parts of one OpenAI-shaped message (``role`` as stored: system, user, assistant or tool)."""
    where = f"{role} message"
    if role == "tool":
        if msg.get("role") == "function":
            ref = legacy_ref(_name(msg.get("name"), where))
        else:
            ref = tool_call_id(msg.get("tool_call_id"), where)
        return [
            Part(
                "tool", "tool_result", result_content(msg.get("content"), where), ref, None, result_meta(msg)
            )
        ]
    blocks = plain_blocks(msg.get("content"), where)
    refusal = msg.get("refusal")
    if isinstance(refusal, str) and refusal.strip() and not blocks:
        blocks = [{"type": "text", "text": refusal}]
    meta = {"refusal": True} if isinstance(refusal, str) and refusal.strip() else {}
    parts = [Part(role, "message", compact(blocks), metadata=meta)] if blocks else []
    calls = _calls(msg, role, where)
    for i, call in enumerate(calls):
        parts.append(_call_part(call, where, i))
    return parts


def _calls(msg: Mapping[str, Any], role: str, where: str) -> list[Mapping[str, Any]]:
    calls: Any = msg.get("tool_calls")
    legacy = msg.get("function_call")
    if calls is None and legacy is None:
        return []
    if role != "assistant":
        raise MalformedContent(f"{where}: tool_calls belong in assistant messages")
    if legacy is not None:
        if not isinstance(legacy, Mapping):
            raise MalformedContent(f"{where}: function_call must be an object")
        name = _name(legacy.get("name"), where)
        legacy_call = {"id": legacy_ref(name), "function": legacy}
        calls = [*(calls or []), legacy_call]
    if not isinstance(calls, Sequence) or isinstance(calls, str):
        raise MalformedContent(f"{where}: tool_calls must be a list")
    for i, call in enumerate(calls):
        if not isinstance(call, Mapping):
            raise MalformedContent(f"{where}: tool call {i} is not an object")
    return list(calls)


def _call_part(call: Mapping[str, Any], where: str, i: int) -> Part:
    call_id = tool_call_id(call.get("id"), where)
    fn = call.get("function")
    if not isinstance(fn, Mapping):
        raise MalformedContent(f"{where}: tool call {i} has no function name")
    name = _name(fn.get("name"), f"{where}: tool call {i}")
    tool_input = arguments(fn.get("arguments", ""), where, i)
    use = {"type": "tool_use", "id": call_id, "name": name, "input": tool_input}
    return Part("assistant", "tool_call", [use], tool_call_id=call_id, tool_name=name)


def _name(value: Any, where: str) -> str:
    if not isinstance(value, str) or not value:
        raise MalformedContent(f"{where} has no function name")
    if "\x00" in value:
        raise MalformedContent(f"{where} has a NUL character in its name")
    return value


def _reject_constant(name: str) -> float:
    raise ValueError(f"{name} is not a finite number (JSON has no NaN or Infinity)")


def arguments(args: Any, where: str, i: int) -> dict[str, Any]:
    """A tool call's arguments: an object, or a JSON string holding one (finite numbers only)."""
    if isinstance(args, Mapping):
        return dict(args)
    if args is None or (isinstance(args, str) and not args.strip()):
        return {}
    if not isinstance(args, str):
        raise MalformedContent(f"{where}: tool call {i} arguments must be a JSON string")
    try:
        parsed = json.loads(args, parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        raise MalformedContent(f"{where}: tool call {i} arguments are not valid JSON: {exc.msg}") from exc
    except ValueError as exc:
        raise MalformedContent(f"{where}: tool call {i} arguments: {exc}") from exc
    except RecursionError as exc:
        raise MalformedContent(f"{where}: tool call {i} arguments are nested too deeply") from exc
    if not isinstance(parsed, dict):
        raise MalformedContent(f"{where}: tool call {i} arguments must be a JSON object")
    _checked(parsed, where, _INPUT_DEPTH, MAX_DEPTH)
    return parsed


_INPUT_DEPTH = 3
"""How deep the parsed arguments sit once stored: the call's ``input``, in its block, in the content
list, as an Anthropic ``tool_use`` input does; ``MAX_DEPTH`` bounds both alike."""


def _checked(value: Any, where: str, depth: int, limit: int) -> None:
    """Finite numbers only, and no deeper than ``limit`` (the JSON text hid both from ``normalize``)."""
    if isinstance(value, float):
        check_finite(value, where)
    elif isinstance(value, dict | list):
        if depth > limit:
            raise MalformedContent(f"{where}: tool call arguments nested deeper than {limit} levels")
        for v in value.values() if isinstance(value, dict) else value:
            _checked(v, where, depth + 1, limit)
