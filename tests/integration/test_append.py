"""Append on real databases: rows, counters, and bad input that writes nothing."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from sleepcompact import (
    ContentTooLarge,
    ConversationNotFound,
    DuplicateToolCall,
    EmptyContent,
    InvalidEncoding,
    Memory,
    OrphanToolResult,
    UnknownKind,
    UnknownRole,
)
from sleepcompact.domain.errors import InvalidMessage

Snap = Callable[[Memory], dict[str, list[tuple[Any, ...]]]]

ASSISTANT_TWO_CALLS = {
    "role": "assistant",
    "content": [
        {"type": "text", "text": "Let me look."},
        {"type": "tool_use", "id": "toolu_1", "name": "bash", "input": {"cmd": "ls src/"}},
        {"type": "tool_use", "id": "toolu_2", "name": "read_file", "input": {"path": "src/app.py"}},
    ],
}
RESULTS = {
    "role": "user",
    "content": [
        {"type": "tool_result", "tool_use_id": "toolu_1", "content": "app.py\nutil.py"},
        {"type": "tool_result", "tool_use_id": "toolu_2", "content": "def main(): ..."},
    ],
}


def _conversation(memory: Memory) -> str:
    cid = memory.create_conversation("claude-sonnet-4-5", tenant_id="t1", agent_id="a1")
    memory.append(cid, {"role": "user", "content": "Fix the bug in src/app.py"})
    return cid


def test_assistant_with_two_tool_calls_is_stored_together_and_linked(memory: Memory) -> None:
    cid = _conversation(memory)
    first = memory.append(cid, ASSISTANT_TWO_CALLS)
    second = memory.append(cid, RESULTS)
    assert first.seqs == (2, 3, 4)  # text part and two calls, consecutive
    assert second.seqs == (5, 6)
    rows = memory.export(cid).messages
    assert [(r["seq"], r["role"], r["kind"], r["tool_call_id"]) for r in rows] == [
        (1, "user", "message", None),
        (2, "assistant", "message", None),
        (3, "assistant", "tool_call", "toolu_1"),
        (4, "assistant", "tool_call", "toolu_2"),
        (5, "tool", "tool_result", "toolu_1"),
        (6, "tool", "tool_result", "toolu_2"),
    ]
    # Results know the tool that produced them.
    assert [r["tool_name"] for r in rows[4:]] == ["bash", "read_file"]


def test_live_tokens_move_with_each_append_in_the_same_transaction(memory: Memory) -> None:
    cid = _conversation(memory)
    before = memory.admin.conversation(cid).live_tokens
    result = memory.append(cid, {"role": "assistant", "content": "word " * 500})
    after = memory.admin.conversation(cid)
    assert result.tokens > 500
    assert after.live_tokens == before + result.tokens
    assert after.live_messages == 2
    assert after.next_seq == 3
    rows = memory.export(cid).messages
    assert sum(r["live_tokens"] for r in rows) == after.live_tokens


def test_the_original_payload_is_stored_exactly(memory: Memory) -> None:
    cid = memory.create_conversation("gpt-4o")
    message = {
        "role": "assistant",
        "content": "Checking the naïve café → ünïcødé path 🚀",
        "tool_calls": [
            {
                "id": "call_9",
                "type": "function",
                "function": {"name": "grep", "arguments": '{"q": "x", "n": 2}'},
            }
        ],
        "extra_field": {"kept": [1, 2.5, None, True]},
    }
    memory.append(cid, message)
    assert list(memory.export(cid).appended) == [message]


def test_openai_tool_result_needs_an_earlier_call(memory: Memory) -> None:
    cid = memory.create_conversation("gpt-4o")
    memory.append(cid, {"role": "user", "content": "hi"})
    memory.append(
        cid,
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "call_1", "type": "function", "function": {"name": "ls", "arguments": "{}"}}
            ],
        },
    )
    memory.append(cid, {"role": "tool", "tool_call_id": "call_1", "content": "a.txt"})
    view = memory.context(cid)
    assert view.messages[-1] == {
        "role": "user",
        "content": [{"type": "tool_result", "tool_use_id": "call_1", "content": "a.txt"}],
    }


BAD_INPUTS: list[tuple[str, Any, type[Exception], str]] = [
    ("unknown role", {"role": "robot", "content": "beep"}, UnknownRole, "robot"),
    ("unknown kind", {"role": "user", "content": "x", "kind": "gossip"}, UnknownKind, "gossip"),
    (
        "caller cannot write summaries",
        {"role": "user", "content": "x", "kind": "summary"},
        UnknownKind,
        "summary",
    ),
    (
        "orphan tool result",
        {"role": "tool", "tool_call_id": "nope", "content": "x"},
        OrphanToolResult,
        "nope",
    ),
    (
        "orphan anthropic result",
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "ghost", "content": "x"}]},
        OrphanToolResult,
        "ghost",
    ),
    ("empty content", {"role": "user", "content": ""}, EmptyContent, "no content"),
    ("whitespace content", {"role": "user", "content": "  \n "}, EmptyContent, "no content"),
    (
        "too large",
        {"role": "user", "content": "x" * (2 * 1024 * 1024 + 1)},
        ContentTooLarge,
        "over the limit",
    ),
    ("invalid utf-8 bytes", {"role": "user", "content": b"caf\xe9"}, InvalidEncoding, "UTF-8"),
    ("lone surrogate", {"role": "user", "content": "bad \udc80 text"}, InvalidEncoding, "UTF-8"),
]


@pytest.mark.parametrize(("label", "message", "error", "says"), BAD_INPUTS, ids=[b[0] for b in BAD_INPUTS])
def test_bad_input_gets_a_typed_error_and_writes_nothing(
    memory: Memory, db_snapshot: Snap, label: str, message: Any, error: type[Exception], says: str
) -> None:
    cid = _conversation(memory)
    before = db_snapshot(memory)
    with pytest.raises(error, match=says):
        memory.append(cid, message)
    assert db_snapshot(memory) == before, label


def test_unknown_conversation_is_a_typed_error_and_writes_nothing(memory: Memory, db_snapshot: Snap) -> None:
    _conversation(memory)
    before = db_snapshot(memory)
    with pytest.raises(ConversationNotFound, match="conv_missing"):
        memory.append("conv_missing", {"role": "user", "content": "hello"})
    assert db_snapshot(memory) == before


def test_a_tool_call_id_reused_while_its_call_is_unanswered_is_refused(
    memory: Memory, db_snapshot: Snap
) -> None:
    cid = _conversation(memory)
    memory.append(cid, ASSISTANT_TWO_CALLS)
    before = db_snapshot(memory)
    with pytest.raises(DuplicateToolCall, match="toolu_1"):
        memory.append(cid, ASSISTANT_TWO_CALLS)
    assert db_snapshot(memory) == before


def test_append_many_is_all_or_nothing(memory: Memory, db_snapshot: Snap) -> None:
    cid = _conversation(memory)
    before = db_snapshot(memory)
    batch = [
        {"role": "assistant", "content": "fine"},
        {"role": "user", "content": "also fine"},
        {"role": "tool", "tool_call_id": "missing", "content": "orphan"},
    ]
    with pytest.raises(InvalidMessage):
        memory.append_many(cid, batch)
    assert db_snapshot(memory) == before


def test_the_size_limit_is_configurable(database_url: str) -> None:
    from sleepcompact import Settings

    mem = Memory(Settings(database_url=database_url, max_message_bytes=1000), auto_migrate=True)
    try:
        cid = mem.create_conversation("claude-haiku-4-5")
        mem.append(cid, {"role": "user", "content": "x" * 900})
        with pytest.raises(ContentTooLarge) as info:
            mem.append(cid, {"role": "user", "content": "x" * 1000})
        assert info.value.limit == 1000
    finally:
        mem.close()


def test_tool_summary_is_stored_with_its_token_count(memory: Memory) -> None:
    cid = _conversation(memory)
    memory.append(
        cid,
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t9", "name": "search", "input": {}}]},
    )
    memory.append(
        cid,
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "t9",
                    "content": "r" * 4000,
                    "tool_summary": "3 results, none relevant",
                }
            ],
        },
    )
    row = memory.export(cid).messages[-1]
    assert row["tool_summary"] == "3 results, none relevant"
    assert row["include_in_history"] is False
    assert json.dumps(row["content"]).startswith('"rrrr')
