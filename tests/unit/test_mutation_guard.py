"""The guard's figures, where mutation testing found the suite blind (docs/mutation.md). On a throwaway
SQLite file: no server.

``check`` names the conversation it read, whether a sleep was requested and the epoch it saw; an unknown
id is refused by name; an overflow names the conversation and the figures of what did not fit.
"""

from __future__ import annotations

import pytest

from sleepcompact import ContextOverflow, ConversationNotFound, Memory
from sleepcompact.demo.synthetic import coding_agent


def _coding(mem: Memory, window: int) -> str:
    cid = mem.create_conversation("claude-sonnet-4-5", context_window=window)
    mem.append_many(cid, coding_agent(seed=0).messages)
    return cid


def test_check_reports_the_conversation_its_sleep_request_and_its_epoch(mem: Memory) -> None:
    cid = _coding(mem, 70_000)  # over soft, under hard
    first = mem.check(cid)
    assert (first.conversation_id, first.decision, first.sleep_requested, first.compaction_epoch) == (
        cid,
        "request_sleep",
        False,
        0,
    )
    mem.prepare_context(cid)  # asks for a sleep tick
    assert mem.check(cid).sleep_requested is True
    assert mem.compactions.compact(cid, trigger="manual").status == "applied"
    assert mem.check(cid).compaction_epoch == mem.admin.conversation(cid).compaction_epoch >= 1


def test_check_of_an_unknown_conversation_names_it(mem: Memory) -> None:
    with pytest.raises(ConversationNotFound) as raised:
        mem.check("conv_missing")
    assert "conv_missing" in str(raised.value)


def test_an_overflow_names_the_conversation_and_what_took_the_room(mem: Memory) -> None:
    cid = _coding(mem, 16_000)
    tools = [
        {"name": f"tool_{i}", "description": "Look it up. " * 1_500, "input_schema": {"type": "object"}}
        for i in range(4)
    ]
    with pytest.raises(ContextOverflow) as raised:
        mem.prepare_context(cid, tools=tools)
    err = raised.value
    assert err.conversation_id == cid and cid in str(err)
    assert err.tools_tokens > err.usable and err.system_tokens == 0
    assert err.tokens > err.fixed_tokens >= err.tools_tokens and err.current_turn_tokens > 0
    assert f"needs {err.tokens} tokens but {err.usable} are usable" in str(err)
    assert f"tools ({err.tools_tokens}) and current turn ({err.current_turn_tokens})" in str(err)
