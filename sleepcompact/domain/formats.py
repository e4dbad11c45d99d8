"""Read conversation files in the formats sleepcompact can import.

``parse_import`` takes the raw bytes of a file and returns the conversations it
holds, each as a list of message dicts that ``normalize`` accepts. It detects:

* ``json_array``: a JSON array of messages;
* ``json_object``: a JSON object with ``messages`` (and an optional ``system``,
  a string or a list of text blocks, prepended as a system message);
* ``jsonl_messages``: one message object per line;
* ``swe_agent_traj``: a SWE-agent ``.traj`` file (an object with ``history``);
* ``mini_swe_agent``: mini-swe-agent records, one object with ``messages`` per line;
* ``sleepcompact_export``: sleepcompact's own export (``"format": "sleepcompact.export/1"``).

An import is all-or-nothing: every message is validated with ``normalize`` and
every tool result must answer an earlier tool call of its conversation, and any
problem raises ``ImportFormatError`` naming the line or message where it lies.
"""

from __future__ import annotations

import ast
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

from sleepcompact.domain.errors import (
    DuplicateToolCall,
    ImportFormatError,
    InvalidMessage,
    OrphanToolResult,
)
from sleepcompact.domain.messages import normalize

SOURCE_FORMATS = (
    "json_array",
    "json_object",
    "jsonl_messages",
    "swe_agent_traj",
    "mini_swe_agent",
    "sleepcompact_export",
)
EXPORT_FORMAT = "sleepcompact.export/1"
_BOM = b"\xef\xbb\xbf"
# Keys of a mini-swe-agent record kept as provenance (everything but the messages).
_MINI_KEYS: tuple[str, ...] = ("instance_id", "resolved", "exit_status", "api_calls", "instance_cost")
_MINI_KEYS += ("model", "agent", "submission")
# Keys of a message a trajectory tool stores that an LLM API understands; the rest is bookkeeping.
_API_KEYS = ("role", "content", "tool_calls", "tool_call_id")
# SWE-agent "models" that are no LLM (replaying recorded actions, a human at the keyboard...).
_SWE_PSEUDO_MODELS = frozenset({"replay", "human", "human_thought", "instant_empty_submit"})


@dataclass(frozen=True)
class ParsedConversation:
    """One conversation read from an import file.

    ``messages`` are message dicts in order, each accepted by ``normalize``;
    ``metadata`` records provenance (always ``source_format``); ``model`` is the
    model the file names, if any.
    """

    messages: list[dict[str, Any]]
    metadata: dict[str, Any]
    model: str | None = None


@dataclass(frozen=True)
class _Msg:
    """A message with where it came from, for error reports."""

    data: dict[str, Any]
    label: str
    line: int | None = None


def parse_import(
    data: bytes, *, source: str = "<input>", all_records: bool = False, record: int | None = None
) -> list[ParsedConversation]:
    """Detect the format of an import file and return its conversations.

    Files holding several conversations (mini-swe-agent JSONL) yield the one
    selected by ``record`` (1-based, counting non-blank lines; default 1), or
    every one with ``all_records=True``. Other formats hold one conversation,
    which is record 1. Raises ``ImportFormatError`` naming the line or message
    at fault; never returns a partial result.
    """
    return _Parser(source).parse(data, all_records=all_records, record=record)


class _Parser:
    def __init__(self, source: str) -> None:
        self.source = source

    def error(self, reason: str, line: int | None = None) -> ImportFormatError:
        return ImportFormatError(reason, line=line, source=self.source)

    # -- top level --------------------------------------------------------------------------------

    def parse(self, data: bytes, *, all_records: bool, record: int | None) -> list[ParsedConversation]:
        if all_records and record is not None:
            raise self.error("choose either one record or all records, not both")
        skipped = len(_BOM) if data.startswith(_BOM) else 0
        try:
            text = data[skipped:].decode("utf-8")
        except UnicodeDecodeError as exc:
            offset = skipped + exc.start
            raise self.error(
                f"bytes that are not valid UTF-8 at byte offset {offset}",
                line=data.count(b"\n", 0, offset) + 1,
            ) from exc
        if not text.strip():
            raise self.error("the file is empty")
        try:
            doc = json.loads(text)
        except json.JSONDecodeError as exc:
            if self._looks_like_jsonl(text):
                return self.parse_jsonl(text, all_records=all_records, record=record)
            raise self.error(f"malformed JSON at column {exc.colno}: {exc.msg}", line=exc.lineno) from exc
        except RecursionError as exc:
            raise self.error("the JSON is nested too deeply") from exc
        make: Callable[[], ParsedConversation]
        if isinstance(doc, list):
            make = partial(self.json_array, doc)
        elif not isinstance(doc, dict):
            raise self.error(f"expected a JSON array or object of messages, got a JSON {_kind(doc)}")
        elif str(doc.get("format", "")).startswith("sleepcompact.export"):
            make = partial(self.export, doc)
        elif "history" in doc:
            make = partial(self.traj, doc)
        elif "messages" in doc:
            # An object with an instance_id is one mini-swe-agent record on its own.
            make = (
                partial(self.mini_record, doc, 1, 1)
                if "instance_id" in doc
                else partial(self.json_object, doc)
            )
        elif "role" in doc:
            make = partial(self.jsonl_messages, [(1, doc)])
        else:
            raise self.error("a JSON object needs 'messages', a SWE-agent 'history' or an export 'format'")
        return self.select([make], all_records, record)

    def select(
        self, makers: Sequence[Callable[[], ParsedConversation]], all_records: bool, record: int | None
    ) -> list[ParsedConversation]:
        """Build the requested conversations only (each maker validates its own)."""
        if all_records:
            return [make() for make in makers]
        number = 1 if record is None else record
        if not 1 <= number <= len(makers):
            held = "1 record" if len(makers) == 1 else f"{len(makers)} records"
            raise self.error(f"record {number} is out of range: the file holds {held}")
        return [makers[number - 1]()]

    @staticmethod
    def _looks_like_jsonl(text: str) -> bool:
        """Several non-blank lines, the first of which is a JSON value on its own."""
        lines = [ln for ln in text.split("\n") if ln.strip()]
        if len(lines) < 2:
            return False
        try:
            json.loads(lines[0])
        except (json.JSONDecodeError, RecursionError):
            return False
        return True

    # -- JSONL ------------------------------------------------------------------------------------

    def parse_jsonl(self, text: str, *, all_records: bool, record: int | None) -> list[ParsedConversation]:
        rows: list[tuple[int, dict[str, Any]]] = []
        for number, line in enumerate(text.split("\n"), start=1):
            if not line.strip():
                continue
            try:
                value = json.loads(line)
            except json.JSONDecodeError as exc:
                raise self.error(f"malformed JSON: {exc.msg} (column {exc.colno})", line=number) from exc
            except RecursionError as exc:
                raise self.error("the JSON is nested too deeply", line=number) from exc
            if not isinstance(value, dict):
                raise self.error(
                    f"expected a JSON object on each line, got a JSON {_kind(value)}", line=number
                )
            rows.append((number, value))
        first_line, first = rows[0]
        if "messages" in first:
            for number, row in rows:
                if "messages" not in row:
                    raise self.error("a mini-swe-agent record without 'messages'", line=number)
            makers = [partial(self.mini_record, row, number, n) for n, (number, row) in enumerate(rows, 1)]
            return self.select(makers, all_records, record)
        if "role" in first:
            return self.select([lambda: self.jsonl_messages(rows)], all_records, record)
        raise self.error("expected a message (with 'role') or a record (with 'messages')", line=first_line)

    def jsonl_messages(self, rows: list[tuple[int, dict[str, Any]]]) -> ParsedConversation:
        msgs = [_Msg(row, "message", number) for number, row in rows]
        return self.finish(msgs, {"source_format": "jsonl_messages"}, None)

    def mini_record(self, row: dict[str, Any], line: int, number: int) -> ParsedConversation:
        messages = row.get("messages")
        if not isinstance(messages, list):
            raise self.error(f"'messages' must be a list, got a JSON {_kind(messages)}", line=line)
        msgs: list[_Msg] = []
        for i, m in enumerate(messages):
            label = f"messages[{i}]"
            if not isinstance(m, dict):
                raise self.error(f"{label} is a JSON {_kind(m)}, expected a message object", line=line)
            msgs.append(_Msg({k: m[k] for k in _API_KEYS if k in m}, label, line))
        meta: dict[str, Any] = {"source_format": "mini_swe_agent", "record": number, "line": line}
        meta.update({k: row[k] for k in _MINI_KEYS if k in row})
        model = row.get("model")
        return self.finish(msgs, meta, model if isinstance(model, str) else None)

    # -- single JSON documents --------------------------------------------------------------------

    def _objects(self, items: list[Any], path: str) -> list[_Msg]:
        out: list[_Msg] = []
        for i, item in enumerate(items):
            label = f"{path}[{i}]" if path else f"element {i}"
            if not isinstance(item, dict):
                raise self.error(f"{label} is a JSON {_kind(item)}, expected a message object")
            out.append(_Msg(item, label))
        return out

    def json_array(self, doc: list[Any]) -> ParsedConversation:
        return self.finish(self._objects(doc, ""), {"source_format": "json_array"}, None)

    def json_object(self, doc: dict[str, Any]) -> ParsedConversation:
        messages = doc["messages"]
        if not isinstance(messages, list):
            raise self.error(f"'messages' must be a list, got a JSON {_kind(messages)}")
        msgs = self._objects(messages, "messages")
        system = doc.get("system")
        if isinstance(system, list):
            system = _join_text(system)  # Anthropic's list of text blocks; a string unless other blocks
        if isinstance(system, str):
            if system.strip():
                msgs.insert(0, _Msg({"role": "system", "content": system}, "system"))
        elif system is not None:
            raise self.error(
                f"'system' must be a string or a list of text blocks, got a JSON {_kind(system)}"
            )
        model = doc.get("model")
        return self.finish(msgs, {"source_format": "json_object"}, model if isinstance(model, str) else None)

    def export(self, doc: dict[str, Any]) -> ParsedConversation:
        if doc.get("format") != EXPORT_FORMAT:
            raise self.error(f"unknown export format {doc.get('format')!r}; expected {EXPORT_FORMAT!r}")
        appended = doc.get("appended")
        if not isinstance(appended, list):
            raise self.error(f"the export's 'appended' must be a list, got a JSON {_kind(appended)}")
        meta: dict[str, Any] = {"source_format": "sleepcompact_export"}
        conversation = doc.get("conversation")
        model: str | None = None
        if isinstance(conversation, dict):
            if conversation.get("id") is not None:
                meta["exported_conversation_id"] = conversation["id"]
            if isinstance(conversation.get("model"), str):
                model = conversation["model"]
        return self.finish(self._objects(appended, "appended"), meta, model)

    # -- SWE-agent --------------------------------------------------------------------------------

    def traj(self, doc: dict[str, Any]) -> ParsedConversation:
        history = doc["history"]
        if not isinstance(history, list):
            raise self.error(f"the trajectory's 'history' must be a list, got a JSON {_kind(history)}")
        msgs: list[_Msg] = []
        for i, entry in enumerate(history):
            label = f"history[{i}]"
            if not isinstance(entry, dict):
                raise self.error(f"{label} is a JSON {_kind(entry)}, expected a message object")
            msgs.extend(self._traj_messages(entry, label))
        meta: dict[str, Any] = {"source_format": "swe_agent_traj"}
        renamed = _unique_call_ids([m.data for m in msgs])
        if renamed:
            meta["renamed_tool_call_ids"] = renamed
        info = doc.get("info")
        if isinstance(info, dict):
            for key in ("exit_status", "submission", "model_stats"):
                if info.get(key) is not None:
                    meta[key] = info[key]
        if isinstance(doc.get("environment"), str):
            meta["environment"] = doc["environment"]
        return self.finish(msgs, meta, self._traj_model(doc.get("replay_config")))

    def _traj_messages(self, entry: dict[str, Any], label: str) -> list[_Msg]:
        """One history entry as clean messages; a tool entry answering N calls becomes N tool messages.

        SWE-agent runs one action per step, so its observation answers every id
        listed: the first tool message carries the observation and the others
        point to it, so each call is still answered once.
        """
        role = entry.get("role")
        msg: dict[str, Any] = {"role": role, "content": _join_text(entry.get("content"))}
        calls = self._literal(entry.get("tool_calls"), f"{label}.tool_calls")
        if calls:
            if not isinstance(calls, list):
                raise self.error(f"{label}.tool_calls must be a list, got {type(calls).__name__}")
            msg["tool_calls"] = [self._tool_call(c, f"{label}.tool_calls[{j}]") for j, c in enumerate(calls)]
        if role != "tool":
            return [_Msg(msg, label)]
        ids = self._literal(entry.get("tool_call_ids"), f"{label}.tool_call_ids")
        if isinstance(ids, str):
            ids = [ids]
        if not ids or not isinstance(ids, list) or not all(isinstance(x, str) and x for x in ids):
            raise self.error(f"{label}: a tool message needs 'tool_call_ids', a non-empty list of ids")
        out = [_Msg({**msg, "tool_call_id": ids[0]}, label)]
        for j, call_id in enumerate(ids[1:], start=1):
            note = f"(the output of this call is in the result of tool call {ids[0]})"
            out.append(_Msg({"role": "tool", "content": note, "tool_call_id": call_id}, f"{label}[id {j}]"))
        return out

    def _tool_call(self, call: Any, label: str) -> dict[str, Any]:
        if not isinstance(call, dict) or not isinstance(call.get("function"), dict):
            raise self.error(f"{label} is not an object with a 'function'")
        fn = call["function"]
        args = fn.get("arguments", "")
        if isinstance(args, dict):
            args = json.dumps(args, ensure_ascii=False)
        return {
            "id": call.get("id"),
            "type": call.get("type") or "function",
            "function": {"name": fn.get("name"), "arguments": args},
        }

    def _literal(self, value: Any, label: str) -> Any:
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
            raise self.error(f"{label} is neither JSON nor a Python literal") from exc

    @staticmethod
    def _traj_model(config: Any) -> str | None:
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
        return name if isinstance(name, str) and name and name not in _SWE_PSEUDO_MODELS else None

    # -- validation -------------------------------------------------------------------------------

    def finish(self, msgs: list[_Msg], metadata: dict[str, Any], model: str | None) -> ParsedConversation:
        """Validate every message and the pairing of tool calls and results, then build the result."""
        calls: set[str] = set()
        for msg in msgs:
            try:
                normalized = normalize(msg.data, fmt="auto")
                for call_id in normalized.tool_result_ids:
                    if call_id not in calls:
                        raise OrphanToolResult(call_id)
                for call_id in normalized.tool_call_ids:
                    if call_id in calls:
                        raise DuplicateToolCall(call_id)
                    calls.add(call_id)
            except InvalidMessage as exc:
                raise self.error(f"{msg.label}: {exc}", line=msg.line) from exc
        if not msgs:
            raise self.error("the conversation has no messages")
        return ParsedConversation(messages=[m.data for m in msgs], metadata=metadata, model=model)


def _unique_call_ids(messages: list[dict[str, Any]]) -> int:
    """Give reused OpenAI tool call ids a suffix, in place; return how many were renamed.

    Replayed SWE-agent trajectories reuse ids (``call_5iDd..`` for two bash
    calls), which the store rejects. A result answers the latest call with its
    id, so a reused id becomes ``<id>_2``, ``<id>_3``... in the call and in the
    results that follow it.
    """
    taken = {c.get("id") for m in messages for c in m.get("tool_calls", []) if isinstance(c, dict)}
    latest: dict[str, str] = {}
    renamed = 0
    for msg in messages:
        if isinstance(msg.get("tool_call_id"), str):
            msg["tool_call_id"] = latest.get(msg["tool_call_id"], msg["tool_call_id"])
        for call in msg.get("tool_calls", []):
            old = call.get("id")
            if not isinstance(old, str):
                continue
            if old in latest:
                n = 2
                while f"{old}_{n}" in taken:
                    n += 1
                call["id"] = f"{old}_{n}"
                taken.add(call["id"])
                renamed += 1
            latest[old] = call["id"]
    return renamed


def _join_text(content: Any) -> Any:
    """A list made only of text blocks as one string (dropping cache_control and the like)."""
    if content is None:
        return ""
    if isinstance(content, list) and all(
        isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str) for b in content
    ):
        return "\n".join(b["text"] for b in content)
    return content


_JSON_KINDS: tuple[tuple[type, str], ...] = (
    (bool, "boolean"),
    (dict, "object"),
    (list, "array"),
    (str, "string"),
)


def _kind(value: Any) -> str:
    """The JSON name of a parsed value's type, for error messages."""
    if value is None:
        return "null"
    return next((name for kind, name in _JSON_KINDS if isinstance(value, kind)), "number")
