"""SWE-agent trajectories (``.traj``): their history entries as messages an LLM API understands.

``formats.parse_import`` detects the file and validates the result; this module knows the format's
quirks: tool calls and ids stored as JSON text or a Python repr, one observation answering several
calls, ids reused across replayed steps, and "models" that are no LLM.
"""

from __future__ import annotations

import ast
import json
from collections.abc import Callable, Mapping
from typing import Any

from sleepcompact.domain.json_shapes import join_text

# SWE-agent "models" that are no LLM (replaying recorded actions, a human at the keyboard...).
PSEUDO_MODELS = frozenset({"replay", "human", "human_thought", "instant_empty_submit"})
# Keys of a trajectory's ``info`` kept as provenance.
_INFO_KEYS = ("exit_status", "submission", "model_stats")

Error = Callable[[str], Exception]


def entry_messages(entry: dict[str, Any], label: str, error: Error) -> list[tuple[dict[str, Any], str]]:
    """One history entry as clean messages with their labels; a tool entry answering N calls becomes N
    tool messages.

    SWE-agent runs one action per step, so its observation answers every id listed: the first tool
    message carries the observation and the others point to it, so each call is still answered once.
    ``error(reason)`` builds the exception raised for a malformed entry.
    """
    role = entry.get("role")
    msg: dict[str, Any] = {"role": role, "content": join_text(entry.get("content"))}
    calls = _literal(entry.get("tool_calls"), f"{label}.tool_calls", error)
    if calls:
        if not isinstance(calls, list):
            raise error(f"{label}.tool_calls must be a list, got {type(calls).__name__}")
        msg["tool_calls"] = [_tool_call(c, f"{label}.tool_calls[{j}]", error) for j, c in enumerate(calls)]
    if role != "tool":
        return [(msg, label)]
    ids = _literal(entry.get("tool_call_ids"), f"{label}.tool_call_ids", error)
    if isinstance(ids, str):
        ids = [ids]
    if not ids or not isinstance(ids, list) or not all(isinstance(x, str) and x for x in ids):
        raise error(f"{label}: a tool message needs 'tool_call_ids', a non-empty list of ids")
    out = [({**msg, "tool_call_id": ids[0]}, label)]
    for j, call_id in enumerate(ids[1:], start=1):
        note = f"(the output of this call is in the result of tool call {ids[0]})"
        out.append(({"role": "tool", "content": note, "tool_call_id": call_id}, f"{label}[id {j}]"))
    return out


def _tool_call(call: Any, label: str, error: Error) -> dict[str, Any]:
    if not isinstance(call, dict) or not isinstance(call.get("function"), dict):
        raise error(f"{label} is not an object with a 'function'")
    fn = call["function"]
    args = fn.get("arguments", "")
    if isinstance(args, dict):
        args = json.dumps(args, ensure_ascii=False)
    return {
        "id": call.get("id"),
        "type": call.get("type") or "function",
        "function": {"name": fn.get("name"), "arguments": args},
    }


def _literal(value: Any, label: str, error: Error) -> Any:
    """A value that SWE-agent sometimes stores as JSON text or a Python repr."""
    if not isinstance(value, str):
        return value
    if not value.strip():
        return None
    try:
        return json.loads(value)
    except (json.JSONDecodeError, RecursionError):
        pass
    try:
        return ast.literal_eval(value)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError) as exc:
        raise error(f"{label} is neither JSON nor a Python literal") from exc


def provenance(doc: Mapping[str, Any]) -> dict[str, Any]:
    """What the trajectory says about its run (exit status, submission, model stats, environment)."""
    meta: dict[str, Any] = {}
    info = doc.get("info")
    if isinstance(info, dict):
        meta.update({key: info[key] for key in _INFO_KEYS if info.get(key) is not None})
    if isinstance(doc.get("environment"), str):
        meta["environment"] = doc["environment"]
    return meta


def trajectory_model(config: Any) -> str | None:
    """The model a replay_config names (agent.model.name), unless it is no LLM."""
    if isinstance(config, str):
        try:
            config = json.loads(config)
        except (json.JSONDecodeError, RecursionError):
            return None
    if not isinstance(config, Mapping):
        return None
    agent = config.get("agent")
    model = agent.get("model") if isinstance(agent, Mapping) else None
    name = model.get("name") if isinstance(model, Mapping) else None
    return name if isinstance(name, str) and name and name not in PSEUDO_MODELS else None
