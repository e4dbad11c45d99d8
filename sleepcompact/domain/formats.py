"""Read conversation files in the formats sleepcompact can import.

``parse_import`` takes the raw bytes of a file and returns the conversations it
holds, each as a list of message dicts that ``normalize`` accepts. It detects:

* ``json_array``: a JSON array of messages;
* ``json_object``: a JSON object with ``messages`` (and an optional ``system``,
  a string or a list of text blocks, prepended as a system message);
* ``jsonl_messages``: one message object per line;
* ``swe_agent_traj``: a SWE-agent ``.traj`` file (an object with ``history``);
* ``mini_swe_agent``: mini-swe-agent records, one object with ``messages`` per line;
* ``sleepcompact_export``: sleepcompact's own export (``"format": "sleepcompact.export/1"``; version 2,
  the lossless export, is restored row for row instead: ``export_document`` and ``export_version`` tell
  the import which it holds);
* ``claude_code``: a Claude Code session transcript (JSONL under ``~/.claude/projects/``);
* ``responses_items``: an OpenAI Responses API / Agents SDK item list (a JSON array or JSONL);
* ``langchain_messages``: LangChain's ``messages_to_dict`` output;
* ``memorybank``: MemoryBank companion-chat histories, one conversation per user.

The readers of the last four are in ``sleepcompact.domain.agent_logs`` and ``chat_logs``. Messages
keep the time the source gives them (Claude Code's ``timestamp``, MemoryBank's day).

An import is all-or-nothing: every message is validated with ``normalize`` and
every tool result must answer an earlier tool call of its conversation, and any
problem raises ``ImportFormatError`` naming the line or message where it lies.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import partial
from typing import Any

from sleepcompact.domain import agent_logs, chat_logs, swe_agent
from sleepcompact.domain.errors import ImportFormatError, InvalidMessage
from sleepcompact.domain.json_shapes import join_text, json_kind
from sleepcompact.domain.messages import normalize
from sleepcompact.domain.tool_ids import CallBook, bind_parts

SOURCE_FORMATS = (
    "json_array",
    "json_object",
    "jsonl_messages",
    "swe_agent_traj",
    "mini_swe_agent",
    "sleepcompact_export",
    "claude_code",
    "responses_items",
    "langchain_messages",
    "memorybank",
)
EXPORT_FORMAT = "sleepcompact.export/1"
EXPORT_PREFIX = "sleepcompact.export/"
EXPORT_VERSIONS = (1, 2)
"""The export versions this version reads: 1 is replayed through the append path, 2 restored as is."""
SHAREABLE_SUFFIX = "+shareable"
_BOM = b"\xef\xbb\xbf"
# Keys of a mini-swe-agent record kept as provenance (everything but the messages).
_MINI_KEYS: tuple[str, ...] = ("instance_id", "resolved", "exit_status", "api_calls", "instance_cost")
_MINI_KEYS += ("model", "agent", "submission")
# Keys of a message a trajectory tool stores that an LLM API understands; the rest is bookkeeping.
_API_KEYS = ("role", "content", "tool_calls", "tool_call_id")


@dataclass(frozen=True)
class ParsedConversation:
    """One conversation read from an import file.

    ``messages`` are message dicts in order, each accepted by ``normalize``;
    ``metadata`` records provenance (always ``source_format``); ``model`` is the
    model the file names, if any; ``sent_at`` gives, message by message, the time the source
    stamped it with (None where it gives none; empty when the format has no clock).
    """

    messages: list[dict[str, Any]]
    metadata: dict[str, Any]
    model: str | None = None
    sent_at: tuple[datetime | None, ...] = ()


@dataclass(frozen=True)
class _Msg:
    """A message with where it came from, for error reports."""

    data: dict[str, Any]
    label: str
    line: int | None = None
    sent_at: datetime | None = None


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


def export_document(data: bytes) -> dict[str, Any] | None:
    """``data`` parsed, when it is a sleepcompact export document (any version); else None, and
    ``parse_import`` reads it (and reports what is wrong with it)."""
    if EXPORT_PREFIX.encode() not in data:  # a byte search: most files are not exports, and some are large
        return None
    try:
        doc = json.loads(data.removeprefix(_BOM).decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
        return None
    if isinstance(doc, dict) and str(doc.get("format", "")).startswith(EXPORT_PREFIX):
        return doc
    return None


def export_version(doc: dict[str, Any], *, source: str = "<input>") -> int:
    """The version of an export document: its ``format_version``, which must agree with the number in
    its ``format`` (version 1 has only the latter). Raises ``ImportFormatError`` for a shareable export
    (redacted: it cannot restore anything) and for a version this release does not read, naming it."""
    fmt = str(doc.get("format", ""))
    named, shareable, _ = fmt.removeprefix(EXPORT_PREFIX).partition(SHAREABLE_SUFFIX)
    if shareable:
        raise ImportFormatError(
            f"{fmt!r} is a shareable export: every string in it is redacted, so it cannot restore a "
            "conversation; import an export made without --shareable (shareable=False)",
            source=source,
        )
    if "format_version" in doc:
        given = doc["format_version"]
        if isinstance(given, bool) or not isinstance(given, int):
            raise ImportFormatError(
                f"the export's format_version must be an integer, got {given!r} (format {fmt!r})",
                source=source,
            )
    elif named.isdigit():
        given = int(named)
    else:
        raise ImportFormatError(f"unknown export format {fmt!r}", source=source)
    for version in (given, int(named) if named.isdigit() else None):
        if version is not None and version not in EXPORT_VERSIONS:
            raise ImportFormatError(
                f"unknown export format {fmt!r}: version {version}; this release reads versions "
                f"{', '.join(map(str, EXPORT_VERSIONS))}",
                source=source,
            )
    if named != str(given):
        raise ImportFormatError(
            f"the export's format {fmt!r} does not match its format_version {given}", source=source
        )
    return given


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
        if isinstance(doc, list) and agent_logs.looks_like_langchain(doc):
            make = partial(self.langchain, doc)
        elif isinstance(doc, list) and agent_logs.looks_like_responses(doc):
            make = partial(self.responses, doc)
        elif isinstance(doc, list):
            make = partial(self.json_array, doc)
        elif not isinstance(doc, dict):
            raise self.error(f"expected a JSON array or object of messages, got a JSON {json_kind(doc)}")
        elif agent_logs.looks_like_claude_code(doc):
            make = partial(self.claude_code, [(1, doc)])
        elif chat_logs.looks_like_memorybank(doc):
            users = chat_logs.memorybank_users(doc)
            return self.select(
                [partial(self.memorybank, doc, u, n) for n, u in enumerate(users, 1)], all_records, record
            )
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
                    f"expected a JSON object on each line, got a JSON {json_kind(value)}", line=number
                )
            rows.append((number, value))
        first_line, first = rows[0]
        if any(agent_logs.looks_like_claude_code(row) for _, row in rows[:5]):
            return self.select([lambda: self.claude_code(rows)], all_records, record)
        if agent_logs.looks_like_responses([row for _, row in rows]):
            return self.select([lambda: self.responses([row for _, row in rows])], all_records, record)
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
            raise self.error(f"'messages' must be a list, got a JSON {json_kind(messages)}", line=line)
        msgs: list[_Msg] = []
        for i, m in enumerate(messages):
            label = f"messages[{i}]"
            if not isinstance(m, dict):
                raise self.error(f"{label} is a JSON {json_kind(m)}, expected a message object", line=line)
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
                raise self.error(f"{label} is a JSON {json_kind(item)}, expected a message object")
            out.append(_Msg(item, label))
        return out

    def json_array(self, doc: list[Any]) -> ParsedConversation:
        return self.finish(self._objects(doc, ""), {"source_format": "json_array"}, None)

    def json_object(self, doc: dict[str, Any]) -> ParsedConversation:
        messages = doc["messages"]
        if not isinstance(messages, list):
            raise self.error(f"'messages' must be a list, got a JSON {json_kind(messages)}")
        msgs = self._objects(messages, "messages")
        system = doc.get("system")
        if isinstance(system, list):
            system = join_text(system)  # Anthropic's list of text blocks; a string unless other blocks
        if isinstance(system, str):
            if system.strip():
                msgs.insert(0, _Msg({"role": "system", "content": system}, "system"))
        elif system is not None:
            raise self.error(
                f"'system' must be a string or a list of text blocks, got a JSON {json_kind(system)}"
            )
        model = doc.get("model")
        return self.finish(msgs, {"source_format": "json_object"}, model if isinstance(model, str) else None)

    def export(self, doc: dict[str, Any]) -> ParsedConversation:
        version = export_version(doc, source=self.source)
        if version != 1:
            # Replaying its originals would lose its compactions and settings: the import restores it.
            raise self.error(f"a version {version} export is restored by the import, not read as messages")
        appended = doc.get("appended")
        if not isinstance(appended, list):
            raise self.error(f"the export's 'appended' must be a list, got a JSON {json_kind(appended)}")
        meta: dict[str, Any] = {"source_format": "sleepcompact_export"}
        conversation = doc.get("conversation")
        model: str | None = None
        if isinstance(conversation, dict):
            if conversation.get("id") is not None:
                meta["exported_conversation_id"] = conversation["id"]
            if isinstance(conversation.get("model"), str):
                model = conversation["model"]
        return self.finish(self._objects(appended, "appended"), meta, model)

    # -- agent logs (agent_logs.py) ----------------------------------------------------------------

    def claude_code(self, rows: list[tuple[int, dict[str, Any]]]) -> ParsedConversation:
        located, meta, model = agent_logs.claude_code(rows)
        return self.finish([_Msg(*found) for found in located], meta, model)

    def responses(self, items: list[Any]) -> ParsedConversation:
        located = agent_logs.responses_items(items, self.error)
        return self.finish([_Msg(*found) for found in located], {"source_format": "responses_items"}, None)

    def langchain(self, items: list[dict[str, Any]]) -> ParsedConversation:
        located = agent_logs.langchain_messages(items)
        meta = {"source_format": "langchain_messages"}
        return self.finish([_Msg(*found) for found in located], meta, None)

    def memorybank(self, doc: dict[str, Any], user: str, number: int) -> ParsedConversation:
        located, meta = chat_logs.memorybank_user(doc, user, self.error)
        return self.finish([_Msg(*found) for found in located], {**meta, "record": number}, None)

    # -- SWE-agent (swe_agent.py) -----------------------------------------------------------------

    def traj(self, doc: dict[str, Any]) -> ParsedConversation:
        history = doc["history"]
        if not isinstance(history, list):
            raise self.error(f"the trajectory's 'history' must be a list, got a JSON {json_kind(history)}")
        msgs: list[_Msg] = []
        for i, entry in enumerate(history):
            label = f"history[{i}]"
            if not isinstance(entry, dict):
                raise self.error(f"{label} is a JSON {json_kind(entry)}, expected a message object")
            msgs.extend(
                _Msg(data, where) for data, where in swe_agent.entry_messages(entry, label, self.error)
            )
        meta: dict[str, Any] = {"source_format": "swe_agent_traj"}
        meta.update(swe_agent.provenance(doc))
        return self.finish(msgs, meta, swe_agent.trajectory_model(doc.get("replay_config")))

    # -- validation -------------------------------------------------------------------------------

    def finish(self, msgs: list[_Msg], metadata: dict[str, Any], model: str | None) -> ParsedConversation:
        """Validate every message and the pairing of tool calls and results (ids scoped to their turn,
        ``domain.tool_ids``), then build the result."""
        book = CallBook()
        for msg in msgs:
            try:
                bind_parts(book, normalize(msg.data, fmt="auto").parts)
            except InvalidMessage as exc:
                raise self.error(f"{msg.label}: {exc}", line=msg.line) from exc
        if not msgs:
            raise self.error("the conversation has no messages")
        times = tuple(m.sent_at for m in msgs) if any(m.sent_at for m in msgs) else ()
        return ParsedConversation([m.data for m in msgs], metadata, model, times)
