"""Logs users already have import whole, render back valid for both providers, and keep their ids.

Three importers are exercised through ``Memory.import_`` on SQLite and PostgreSQL:

* LangChain ``messages_to_dict`` output, generated here with the real ``langchain_core`` (parallel tool
  calls, a tool call id reused after its result as OpenAI-compatible servers do, a list-content
  message, an Anthropic-style message that holds its ``tool_use`` block as well as ``tool_calls``);
* OpenAI Agents SDK items, generated here with the real ``agents`` package: a scripted ``Model`` (no
  network, tracing off) drives ``Runner.run_sync`` through a ``@function_tool``, and
  ``result.to_input_list()`` is what gets imported (reasoning items, parallel calls, a reused id);
* a Claude Code session transcript, ``tests/fixtures/claude_code/session.jsonl``, written by hand (no
  real user data) in the record shapes public parsers of ``~/.claude/projects/*.jsonl`` document:
  daaain/claude-code-log (``claude_code_log/models.py``: entry fields, ``toolUseResult``, summary
  ``leafUuid``, one content block streamed per assistant entry), neilberkman/ccrider
  (``research/schema.md``: summary first, ``requestId``, ``usage``, ``isSidechain``),
  DRMacIver/claude-reliability (``notes/transcript-format.md``: parallel tool results as separate
  user entries, ``isMeta``) and ticpu/claude-conversation-search-mcp (``docs/jsonl-format.md``:
  sidechains, ``file-history-snapshot``).

For each: both renderings pass the strict validators, ``export().appended`` is exactly what the
reader produced (original tool call ids included), and a malformed variant raises
``ImportFormatError`` with nothing written.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from agents import Agent, Model, ModelResponse, RunConfig, Runner, function_tool, set_tracing_disabled
from agents.usage import Usage
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage, messages_to_dict
from langchain_core.messages.tool import invalid_tool_call
from openai.types.responses import ResponseFunctionToolCall as Call
from openai.types.responses import ResponseOutputMessage, ResponseOutputText, ResponseReasoningItem
from openai.types.responses.response_reasoning_item import Summary

from sleepcompact import ImportFormatError, Memory
from sleepcompact.domain.formats import ParsedConversation, parse_import
from sleepcompact.domain.validation import anthropic_problems, openai_problems

CLAUDE_CODE = Path(__file__).resolve().parents[1] / "fixtures" / "claude_code" / "session.jsonl"
CLAUDE_MODEL = "claude-sonnet-4-5-20250929"
Snap = Callable[[Memory], dict[str, list[tuple[Any, ...]]]]


def _import_valid(mem: Memory, raw: bytes) -> tuple[str, ParsedConversation]:
    """Import, check both renderings are valid requests and the export is what the reader produced."""
    expected = parse_import(raw)[0]
    (cid,) = mem.import_(raw)
    anthropic = mem.context(cid, fmt="anthropic")
    assert anthropic_problems(anthropic.messages, allow_pending_calls=False) == []
    assert openai_problems(mem.context(cid, fmt="openai").messages) == []
    assert list(mem.export(cid).appended) == expected.messages
    return cid, expected


def _call_ids(messages: list[dict[str, Any]]) -> list[str]:
    """Tool call ids in order, from OpenAI ``tool_calls`` and Anthropic ``tool_use`` blocks."""
    ids: list[str] = []
    for m in messages:
        ids += [c["id"] for c in m.get("tool_calls") or []]
        blocks = m["content"] if isinstance(m.get("content"), list) else []
        ids += [b["id"] for b in blocks if isinstance(b, dict) and b.get("type") == "tool_use"]
    return ids


def _assert_rejected_whole(mem: Memory, raw: bytes, db_snapshot: Snap) -> ImportFormatError:
    before = db_snapshot(mem)
    with pytest.raises(ImportFormatError) as caught:
        mem.import_(raw)
    assert db_snapshot(mem) == before
    return caught.value


# -- LangChain ---------------------------------------------------------------------------------------


def _langchain_log(*, orphan_result: bool = False) -> bytes:
    """A weather chat as LangChain holds it, serialized by ``messages_to_dict``."""

    def call(city: str, call_id: str) -> dict[str, Any]:
        return {"name": "get_weather", "args": {"city": city}, "id": call_id}

    oslo = {"type": "tool_use", "id": "toolu_oslo", "name": "get_weather", "input": {"city": "Oslo"}}
    messages = [
        SystemMessage("You are a terse travel assistant."),
        HumanMessage("Weather in Paris and Rome?"),
        AIMessage("", tool_calls=[call("Paris", "call_0"), call("Rome", "call_1")]),
        ToolMessage("Sunny, 24C", tool_call_id="call_0"),
        ToolMessage("Cloudy, 19C", tool_call_id="call_1"),
        AIMessage([{"type": "text", "text": "Paris is sunny; Rome is cloudy."}]),
        HumanMessage("And Berlin?"),
        AIMessage("Checking Berlin.", tool_calls=[call("Berlin", "call_0")]),  # reused after its result
        ToolMessage("Rain, 12C", tool_call_id="call_0"),
        AIMessage(
            [{"type": "text", "text": "Let me check Oslo too."}, oslo],
            tool_calls=[call("Oslo", "toolu_oslo")],
        ),
        ToolMessage("Snow, -3C", tool_call_id="call_7" if orphan_result else "toolu_oslo"),
        AIMessage("Berlin has rain; Oslo has snow."),
    ]
    return json.dumps(messages_to_dict(messages)).encode()


def test_a_langchain_log_imports_with_its_original_ids_and_renders_valid(memory: Memory) -> None:
    cid, parsed = _import_valid(memory, _langchain_log())
    assert memory.admin.conversation(cid).metadata["source_format"] == "langchain_messages"
    appended = list(memory.export(cid).appended)
    assert _call_ids(appended) == ["call_0", "call_1", "call_0", "toolu_oslo"]
    results = [m["tool_call_id"] for m in appended if m["role"] == "tool"]
    assert results == ["call_0", "call_1", "call_0", "toolu_oslo"]
    anthropic = memory.context(cid, fmt="anthropic")
    assert anthropic.system == "You are a terse travel assistant."
    rendered = _call_ids(anthropic.messages)
    assert len(rendered) == len(set(rendered)) == 4  # one tool_use for Oslo, the reused id rewritten
    assert memory.context(cid, fmt="anthropic").messages == anthropic.messages  # same rewrite every call
    assert parsed.messages[0] == {"role": "system", "content": "You are a terse travel assistant."}


def test_a_langchain_result_without_its_call_writes_nothing(memory: Memory, db_snapshot: Snap) -> None:
    _import_valid(memory, _langchain_log())
    error = _assert_rejected_whole(memory, _langchain_log(orphan_result=True), db_snapshot)
    assert "call_7" in str(error)


def test_a_langchain_call_whose_arguments_did_not_parse_imports_answered_by_its_error(memory: Memory) -> None:
    # An OpenAI model cut off mid-arguments: langchain_core keeps the call in ``invalid_tool_calls``,
    # LangChain's agent answers it with an error ToolMessage, and the model tries again.
    bad = invalid_tool_call(
        name="get_weather", args='{"city": "Par', id="call_9", error="Unterminated string"
    )
    error = (
        "Tool call get_weather with id call_9 could not be executed - arguments were malformed or truncated."
    )
    messages = [
        HumanMessage("Weather in Paris?"),
        AIMessage("", invalid_tool_calls=[bad]),
        ToolMessage(error, tool_call_id="call_9", status="error"),
        AIMessage("", tool_calls=[{"name": "get_weather", "args": {"city": "Paris"}, "id": "call_10"}]),
        ToolMessage("Sunny, 24C", tool_call_id="call_10"),
        AIMessage("Sunny in Paris."),
        HumanMessage("And tomorrow?"),
        AIMessage("", invalid_tool_calls=[{**bad, "id": "call_11"}]),  # left unanswered: the user spoke
        HumanMessage("Never mind."),
    ]
    cid, _ = _import_valid(memory, json.dumps(messages_to_dict(messages)).encode())
    openai = memory.context(cid, fmt="openai").messages
    calls = [c for m in openai for c in m.get("tool_calls") or []]
    assert [(c["id"], c["function"]["arguments"]) for c in calls] == [
        ("call_9", "{}"),
        ("call_10", '{"city": "Paris"}'),
        ("call_11", "{}"),
    ]
    assert [m["content"] for m in openai if m["role"] == "tool"][:2] == [error, "Sunny, 24C"]
    said = [m["content"] for m in openai if m["role"] == "assistant"]
    assert '[malformed arguments for get_weather: {"city": "Par]' in said[0]


# -- OpenAI Agents SDK -------------------------------------------------------------------------------


def _agents_items() -> list[dict[str, Any]]:
    """Two runs of a real Agents SDK agent: parallel calls, then one reusing the first call's id."""
    set_tracing_disabled(True)  # nothing may try the network

    @function_tool
    def get_weather(city: str) -> str:
        """The weather in a city."""
        return f"Sunny in {city}"

    def fn(call_id: str, city: str) -> Call:
        args = json.dumps({"city": city})
        return Call(
            type="function_call", id=f"fc_{city}", call_id=call_id, name="get_weather", arguments=args
        )

    def say(n: int, text: str) -> ResponseOutputMessage:
        part = ResponseOutputText(type="output_text", text=text, annotations=[])
        return ResponseOutputMessage(
            type="message", id=f"msg_{n}", role="assistant", status="completed", content=[part]
        )

    thought = Summary(type="summary_text", text="Both cities at once.")
    script: list[list[Any]] = [
        [
            ResponseReasoningItem(type="reasoning", id="rs_1", summary=[thought]),
            fn("call_paris", "Paris"),
            fn("call_rome", "Rome"),
        ],
        [say(1, "Paris and Rome are sunny.")],
        [fn("call_paris", "Berlin")],
        [say(2, "Berlin is sunny too.")],
    ]

    class Scripted(Model):
        async def get_response(self, *args: Any, **kwargs: Any) -> ModelResponse:
            return ModelResponse(output=script.pop(0), usage=Usage(), response_id=None)

        def stream_response(self, *args: Any, **kwargs: Any) -> Any:
            raise NotImplementedError

    agent = Agent(name="weather", instructions="Answer briefly.", model=Scripted(), tools=[get_weather])
    config = RunConfig(tracing_disabled=True)
    first = Runner.run_sync(agent, "Weather in Paris and Rome?", run_config=config)
    again = [*first.to_input_list(), {"role": "user", "content": "And Berlin?"}]
    items: list[dict[str, Any]] = json.loads(
        json.dumps(Runner.run_sync(agent, again, run_config=config).to_input_list())
    )
    return items


def test_an_agents_sdk_run_imports_as_tool_calls_answered_by_their_results(memory: Memory) -> None:
    items = _agents_items()
    assert {i.get("type") for i in items} >= {"reasoning", "function_call", "function_call_output", "message"}
    cid, _ = _import_valid(memory, json.dumps(items).encode())
    assert memory.admin.conversation(cid).metadata["source_format"] == "responses_items"
    exported = memory.export(cid)
    assert _call_ids(list(exported.appended)) == ["call_paris", "call_rome", "call_paris"]
    calls = [r for r in exported.messages if r["kind"] == "tool_call"]
    results = [r for r in exported.messages if r["kind"] == "tool_result"]
    assert [r["tool_name"] for r in calls] == ["get_weather"] * 3
    assert [r["tool_call_id"] for r in results] == [r["tool_call_id"] for r in calls]
    reasoning = [b for m in exported.appended if isinstance(m["content"], list) for b in m["content"]]
    assert {
        "type": "reasoning",
        "id": "rs_1",
        "summary": [{"type": "summary_text", "text": "Both cities at once."}],
    } in reasoning
    turns = memory.context(cid, fmt="anthropic").messages
    uses = [b["id"] for b in turns[1]["content"] if b["type"] == "tool_use"]
    answered = [b["tool_use_id"] for b in turns[2]["content"] if b["type"] == "tool_result"]
    assert uses == answered == ["call_paris", "call_rome"]
    assert [b["content"] for b in turns[2]["content"]] == ["Sunny in Paris", "Sunny in Rome"]


def test_an_agents_sdk_output_without_its_call_writes_nothing(memory: Memory, db_snapshot: Snap) -> None:
    items = _agents_items()
    _import_valid(memory, json.dumps(items).encode())
    rome = next(i for i, item in enumerate(items) if item.get("call_id") == "call_rome")
    broken = items[:rome] + items[rome + 1 :]
    error = _assert_rejected_whole(memory, json.dumps(broken).encode(), db_snapshot)
    assert "call_rome" in str(error)


# -- Claude Code -------------------------------------------------------------------------------------

# When each message of the main thread was sent: the first record of each (split records are joined).
CLAUDE_TIMES = [
    "2025-11-03T09:59:58.120Z",
    "2025-11-03T09:59:59.870Z",
    "2025-11-03T10:00:01.200Z",
    "2025-11-03T10:00:02.870Z",
    "2025-11-03T10:00:05.020Z",
    "2025-11-03T10:00:06.010Z",
    "2025-11-03T10:00:07.330Z",
    "2025-11-03T10:00:20.000Z",
    "2025-11-03T10:00:21.500Z",
]


def _claude_records() -> list[dict[str, Any]]:
    return [json.loads(line) for line in CLAUDE_CODE.read_text().splitlines() if line.strip()]


def _jsonl(records: list[dict[str, Any]]) -> bytes:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records).encode()


def test_a_claude_code_session_imports_its_main_thread(memory: Memory) -> None:
    cid, parsed = _import_valid(memory, CLAUDE_CODE.read_bytes())
    conv = memory.admin.conversation(cid)
    assert conv.model == CLAUDE_MODEL
    assert conv.metadata["source_format"] == "claude_code"
    assert conv.metadata["skipped_records"] == {"file-history-snapshot": 1, "meta": 1, "sidechain": 2}
    assert conv.metadata["summaries"] == ["Fix the leap-day bug in parse_date"]
    assert conv.metadata["session_id"] == "3f2a9c4e-7b1d-4e8a-9c55-0d6e2b7a1f10"
    text = json.dumps(parsed.messages)
    assert "hard-codes a year" not in text and "local-command-caveat" not in text  # sidechain, meta
    roles = ["user", "assistant", "user", "user", "assistant", "user", "assistant", "user", "assistant"]
    assert [m["role"] for m in parsed.messages] == roles  # 16 user/assistant records, 9 messages


def test_an_assistant_message_streamed_as_several_records_is_one_message(memory: Memory) -> None:
    cid, parsed = _import_valid(memory, CLAUDE_CODE.read_bytes())
    streamed = [r for r in _claude_records() if r.get("message", {}).get("id") == "msg_01LeapA"]
    assert len(streamed) == 4
    joined = parsed.messages[1]["content"]
    assert joined == [block for r in streamed for block in r["message"]["content"]]
    first_turn = memory.context(cid, fmt="anthropic").messages[1]["content"]
    assert [b["type"] for b in first_turn] == ["thinking", "text", "tool_use", "tool_use"]
    assert first_turn[0]["signature"] == streamed[0]["message"]["content"][0]["signature"]


def test_imported_claude_code_rows_keep_the_time_each_message_was_sent(memory: Memory) -> None:
    cid, _ = _import_valid(memory, CLAUDE_CODE.read_bytes())
    rows = memory.export(cid).messages
    starts = [i for i, r in enumerate(rows) if r["part"] == 0]
    assert len(starts) == len(CLAUDE_TIMES)
    for n, (start, sent) in enumerate(zip(starts, CLAUDE_TIMES, strict=True)):
        end = starts[n + 1] if n + 1 < len(starts) else len(rows)
        for row in rows[start:end]:
            assert datetime.fromisoformat(row["created_at"]) == datetime.fromisoformat(sent)


def test_a_trailing_synthetic_error_message_does_not_hide_the_model(memory: Memory) -> None:
    records = _claude_records()
    last = records[-1]
    user = {
        **last,
        "type": "user",
        "uuid": "u-more",
        "message": {"role": "user", "content": "Run all tests."},
    }
    error = {"type": "text", "text": "API Error: Request was aborted."}
    synthetic = {**last, "uuid": "a-err", "isApiErrorMessage": True}
    synthetic["message"] = {**last["message"], "model": "<synthetic>", "id": "syn-1", "content": [error]}
    cid, _ = _import_valid(memory, _jsonl([*records, user, synthetic]))
    assert memory.admin.conversation(cid).model == CLAUDE_MODEL


def test_a_claude_code_result_without_its_call_writes_nothing(memory: Memory, db_snapshot: Snap) -> None:
    _import_valid(memory, CLAUDE_CODE.read_bytes())
    records = _claude_records()
    uses = [i for i, r in enumerate(records) if "toolu_01RunTests" in json.dumps(r)]
    broken = records[: uses[0]] + records[uses[0] + 1 :]  # the tool_use record is lost, its result stays
    error = _assert_rejected_whole(memory, _jsonl(broken), db_snapshot)
    assert error.line == uses[1]  # the result's line in the broken file (1-based, one line earlier)


@pytest.mark.parametrize("cuts", list(itertools.product([False, True], repeat=3)))
def test_however_claude_code_splits_a_message_into_records_it_reads_the_same(cuts: tuple[bool, ...]) -> None:
    """Every way of cutting the 4 blocks of one message into consecutive records gives one message."""
    records = _claude_records()
    streamed = [i for i, r in enumerate(records) if r.get("message", {}).get("id") == "msg_01LeapA"]
    blocks = [b for i in streamed for b in records[i]["message"]["content"]]
    groups: list[list[Any]] = [[blocks[0]]]
    for block, cut in zip(blocks[1:], cuts, strict=True):
        if cut:
            groups.append([block])
        else:
            groups[-1].append(block)
    resplit = [
        {**records[streamed[0]], "message": {**records[streamed[0]]["message"], "content": g}} for g in groups
    ]
    rebuilt = records[: streamed[0]] + resplit + records[streamed[-1] + 1 :]
    assert parse_import(_jsonl(rebuilt))[0].messages == parse_import(CLAUDE_CODE.read_bytes())[0].messages
