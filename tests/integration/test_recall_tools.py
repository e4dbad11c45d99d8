"""The agent's recall tools: definitions for both providers, calls answered from the archive in the
shape they came in, every placeholder naming them, and archived snippets recalled into the request.

Each test runs on SQLite and PostgreSQL (the ``memory`` fixture).
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from sleepcompact import ConversationNotFound, Memory
from sleepcompact.demo.synthetic import coding_agent
from sleepcompact.domain.validation import anthropic_problems, openai_problems

CANARY = "sk-ant-api03-CANARYrecall0a1b2c3d4e5f6g7h8i9j0k1l2m3n4o5p6q7"
FACTS = [
    ("I started a pottery class on Thursdays at the Clayhouse studio.", "That sounds relaxing!"),
    ("My sister Dana moved to Lisbon last spring.", "Lisbon is lovely."),
    ("The wifi password at the cabin is on the fridge.", "Good to know."),
]


def _chat(mem: Memory, *, window: int = 4_000, filler: int = 40) -> str:
    """A conversation whose early facts are compacted away by the filler after them."""
    cid = mem.create_conversation("claude-haiku-4-5", context_window=window)
    for said, reply in FACTS:
        mem.append(cid, {"role": "user", "content": said})
        mem.append(cid, {"role": "assistant", "content": reply})
    for n in range(filler):
        mem.append(
            cid,
            {"role": "user", "content": f"Weather note {n}: clouds over the harbour, wind from the west."},
        )
        mem.append(
            cid, {"role": "assistant", "content": f"Noted weather {n}; nothing to add about the harbour."}
        )
    outcome = mem.compactions.compact(cid, force=True)
    assert outcome.status == ("applied" if filler >= 10 else outcome.status)
    return cid


def _archived(mem: Memory, cid: str) -> set[int]:
    return {m["seq"] for m in mem.export(cid).messages if m["state"] != "live"}


def test_the_definitions_name_the_two_tools_in_each_providers_shape(memory: Memory) -> None:
    anthropic, openai, responses = (memory.recall_tools(s) for s in ("anthropic", "openai", "responses"))
    assert [t["name"] for t in anthropic] == ["search_history", "read_archived"]
    assert all(set(t) == {"name", "description", "input_schema"} for t in anthropic)
    assert [t["function"]["name"] for t in openai] == ["search_history", "read_archived"]
    assert [t["name"] for t in responses] == ["search_history", "read_archived"]
    assert anthropic[1]["input_schema"]["required"] == ["seq"]


def test_prepare_context_adds_the_tools_and_counts_them(memory: Memory) -> None:
    cid = _chat(memory, filler=2)
    own = [{"name": "get_weather", "description": "Weather now.", "input_schema": {"type": "object"}}]
    plain = memory.prepare_context(cid, tools=own)
    with_recall = memory.prepare_context(cid, tools=own, recall_tools=True)
    assert [t["name"] for t in with_recall.request()["tools"]] == [
        "get_weather",
        "search_history",
        "read_archived",
    ]
    assert with_recall.tokens > plain.tokens + 100
    as_openai = memory.prepare_context(cid, fmt="openai", recall_tools=True)
    assert [t["function"]["name"] for t in as_openai.request()["tools"]] == [
        "search_history",
        "read_archived",
    ]


def test_a_search_call_finds_an_archived_fact_in_every_providers_shape(memory: Memory) -> None:
    cid = _chat(memory)
    question = "Which day is my pottery class?"
    shapes: list[dict[str, Any]] = [
        {"type": "tool_use", "id": "toolu_1", "name": "search_history", "input": {"query": question}},
        {
            "id": "call_1",
            "type": "function",
            "function": {"name": "search_history", "arguments": json.dumps({"query": question})},
        },
        {
            "type": "function_call",
            "call_id": "fc_1",
            "name": "search_history",
            "arguments": json.dumps({"query": question}),
        },
    ]
    results = [memory.handle_tool_call(cid, call) for call in shapes]
    assert results[0]["type"] == "tool_result" and results[0]["tool_use_id"] == "toolu_1"
    assert results[1] == {"role": "tool", "tool_call_id": "call_1", "content": results[0]["content"]}
    assert results[2]["type"] == "function_call_output" and results[2]["output"] == results[0]["content"]
    text = results[0]["content"]
    first = text.splitlines()[1]
    assert "Thursdays at the Clayhouse studio" in first, text
    seq = int(re.search(r"seq (\d+)", first).group(1))  # type: ignore[union-attr]
    assert seq in _archived(memory, cid)


def test_a_hit_shows_the_reply_and_the_users_next_words_where_the_answer_often_is(memory: Memory) -> None:
    """ "Which one did you like?" is answered in the user's next message, which shares no word with the
    question that finds the exchange: the first page shows it under the hit."""
    cid = memory.create_conversation("claude-haiku-4-5", context_window=4_000)
    for said, reply in [
        (
            "I traveled to Xiamen recently with two friends.",
            "Xiamen is lovely. Which place did you like the most?",
        ),
        ("Gulangyu Island, the old villas and the piano museum.", "A classic choice."),
        ("Also the ferry at sunset.", "Sounds wonderful."),
    ]:
        memory.append(cid, {"role": "user", "content": said})
        memory.append(cid, {"role": "assistant", "content": reply})
    call = {"type": "tool_use", "id": "t", "name": "search_history", "input": {"query": "my trip to Xiamen"}}
    page = memory.handle_tool_call(cid, call)["content"]
    lines = page.splitlines()
    # The reply mentions Xiamen too, so it is a hit of its own (shown once, as a hit); the user's next
    # words still come right under the first hit.
    assert lines[1].startswith("1. [seq 1, user") and "[seq 3, user] Gulangyu Island" in lines[2], page
    assert sum("[seq 2, assistant" in line for line in lines) == 1, page


def test_read_archived_returns_an_original_whole_in_pages(memory: Memory) -> None:
    cid = memory.create_conversation("claude-haiku-4-5", context_window=8_000)
    log = "\n".join(f"line {n}: worker {n % 7} processed batch {n} in {n % 13} ms" for n in range(1_500))
    memory.append(cid, {"role": "user", "content": "Run the batch job."})
    memory.append(
        cid,
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "t1", "name": "bash", "input": {"command": "./batch"}}],
        },
    )
    memory.append(
        cid, {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": log}]}
    )
    memory.append(cid, {"role": "assistant", "content": "The batch finished."})
    memory.append(cid, {"role": "user", "content": "Thanks."})
    memory.compactions.compact(cid, force=True)
    seq = next(m["seq"] for m in memory.export(cid).messages if m["kind"] == "tool_result")
    pieces, offset = [], 0
    while True:
        call = {
            "type": "tool_use",
            "id": f"r{offset}",
            "name": "read_archived",
            "input": {"seq": seq, "offset": offset},
        }
        text = memory.handle_tool_call(cid, call)["content"]
        head, body = text.split("\n", 1)
        body, tail = body.rsplit("\n", 1)
        assert head.startswith(f"[seq {seq}, output of bash")
        pieces.append(body)
        found = re.search(r"offset=(\d+)\)", tail)
        if found is None:
            assert tail == "[end]"
            break
        offset = int(found.group(1))
    assert len(pieces) >= 4
    assert "".join(pieces) == log


@pytest.mark.parametrize(
    ("call", "problem"),
    [
        ({"type": "tool_use", "id": "x", "name": "delete_everything", "input": {}}, "unknown tool"),
        (
            {"type": "tool_use", "id": "x", "name": "read_archived", "input": {"seq": "four"}},
            "positive whole number",
        ),
        ({"type": "tool_use", "id": "x", "name": "search_history", "input": {"query": "  "}}, "non-empty"),
        (
            {"id": "x", "type": "function", "function": {"name": "read_archived", "arguments": "{seq: 4"}},
            "not valid JSON",
        ),
        (
            {"type": "tool_use", "id": "x", "name": "read_archived", "input": {"seq": 99_999}},
            "no message with seq",
        ),
        (
            {"id": "x", "type": "function", "function": {"name": "search_history", "arguments": "[" * 5_000}},
            "nested too deeply",
        ),
    ],
)
def test_a_bad_call_gets_an_error_the_model_can_read(
    memory: Memory, call: dict[str, Any], problem: str
) -> None:
    cid = _chat(memory, filler=2)
    result = memory.handle_tool_call(cid, call)
    text = result.get("content") or ""
    assert text.startswith("Error:") and problem in text, text
    if call.get("type") == "tool_use" and "no message" not in problem:
        assert result["is_error"] is True


def test_an_unknown_conversation_is_the_callers_mistake(memory: Memory) -> None:
    with pytest.raises(ConversationNotFound):
        memory.handle_tool_call(
            "conv_nope", {"type": "tool_use", "id": "x", "name": "read_archived", "input": {"seq": 1}}
        )


def test_what_the_tools_return_is_redacted_and_scoped_to_the_conversation(memory: Memory) -> None:
    mine = _chat(memory)
    other = memory.create_conversation("claude-haiku-4-5", tenant_id="t-other")
    memory.append(other, {"role": "user", "content": "The Clayhouse studio door code is 4471."})
    memory.append(mine, {"role": "user", "content": f"My key for the studio booking API is {CANARY}"})
    search = {
        "type": "tool_use",
        "id": "s",
        "name": "search_history",
        "input": {"query": "studio key booking door code"},
    }
    text = memory.handle_tool_call(mine, search)["content"]
    assert CANARY not in text and "[REDACTED:" in text
    assert "4471" not in text
    read = {"type": "tool_use", "id": "r", "name": "read_archived", "input": {"seq": 1}}
    assert "Clayhouse studio door code" not in memory.handle_tool_call(mine, read)["content"]


def test_every_placeholder_and_marker_names_the_recall_tools(memory: Memory) -> None:
    conv = coding_agent(seed=1)
    cid = memory.create_conversation("claude-haiku-4-5", context_window=16_000)
    memory.append_many(cid, [{"role": "system", "content": conv.system}, *conv.messages])
    memory.compactions.compact(cid, force=True)
    text = json.dumps(memory.context(cid).messages)
    assert 'search_history(\\"seq:' not in text
    markers = re.findall(
        r"\[(?:tool output archived|\.\.\. [\d,]+ tokens truncated|tool-provided summary|image archived)"
        r"[^\]]*\]",
        text,
    )
    assert markers, "the compaction left no placeholder to check"
    assert all(re.search(r"read_archived\(seq=\d+\)", m) for m in markers), markers
    seq = int(re.search(r"read_archived\(seq=(\d+)\)", markers[0]).group(1))  # type: ignore[union-attr]
    result = memory.handle_tool_call(
        cid, {"type": "tool_use", "id": "r", "name": "read_archived", "input": {"seq": seq}}
    )
    assert result["content"].startswith(f"[seq {seq},")


# -- recall in the request path -----------------------------------------------------------------------


def test_the_newest_question_brings_its_archived_answer_into_its_own_turn(memory: Memory) -> None:
    cid = _chat(memory)
    memory.append(cid, {"role": "user", "content": "Remind me: which city did my sister move to?"})
    ctx = memory.prepare_context(cid, system="You are a kind companion.")
    assert anthropic_problems(ctx.messages) == []
    newest = ctx.messages[-1]
    assert newest["role"] == "user"
    block = newest["content"][-1]["text"]
    assert block.startswith("<recalled_history>") and "Dana moved to Lisbon" in block
    seq = int(re.search(r"\[seq (\d+),", block).group(1))  # type: ignore[union-attr]
    assert seq in _archived(memory, cid), "a live row was recalled"
    assert ctx.view.recall_tokens > 0 and ctx.view.recalled[0]["seq"] == seq
    openai = memory.prepare_context(cid, fmt="openai")
    assert openai_problems(openai.messages) == []
    assert "Dana moved to Lisbon" in json.dumps(openai.messages[-1])


def test_recalled_snippets_never_make_the_guard_compact(memory: Memory) -> None:
    """The snippets only fill the room under hard that the conversation leaves: a call whose own rows sit
    just under hard goes out without them rather than folding the newest turns to make room for them.
    The agent's recall tool still finds the answer."""
    cid = _chat(memory)
    question = {"role": "user", "content": "Remind me: which city did my sister move to?"}
    hard = memory.check(cid).hard
    n = 0
    while memory.check(cid).tokens < hard - 60:  # a pair is about 40 tokens, the question 15
        memory.append(cid, {"role": "user", "content": f"Tide note {n}: the ferry ran late again."})
        memory.append(cid, {"role": "assistant", "content": f"Noted tide {n}."})
        n += 1
    memory.append(cid, question)
    before = memory.check(cid)
    assert before.hard - 30 < before.tokens <= before.hard  # the setup: its own rows just under hard
    compactions = len(memory.compactions.history(cid))

    ctx = memory.prepare_context(cid)
    assert ctx.action == "sleep_requested"  # over soft, not over hard: nothing compacted in the call
    assert len(memory.compactions.history(cid)) == compactions
    assert ctx.view.tokens <= before.hard
    assert ctx.view.recalled == [] and "<recalled_history>" not in json.dumps(ctx.messages)  # no room
    assert "Lisbon" in _search(memory, cid, "Which city did my sister move to?")


def test_an_emergency_compaction_leaves_the_snippets_the_room_it_frees(memory: Memory) -> None:
    """Over hard, the guard compacts for the conversation's own rows; the snippets then fill the room
    between where the compaction landed and hard, and the call stays under hard."""
    cid = _chat(memory)
    hard = memory.check(cid).hard
    n = 0
    while memory.check(cid).tokens <= hard:
        memory.append(cid, {"role": "user", "content": f"Tide note {n}: the ferry ran late again."})
        memory.append(cid, {"role": "assistant", "content": f"Noted tide {n}."})
        n += 1
    memory.append(cid, {"role": "user", "content": "Remind me: which city did my sister move to?"})

    ctx = memory.prepare_context(cid)
    assert ctx.action == "emergency_compacted"
    assert "Dana moved to Lisbon" in ctx.messages[-1]["content"][-1]["text"]
    assert ctx.view.tokens <= hard
    assert memory.check(cid).tokens + ctx.view.budget.effective(ctx.view.recall_tokens) >= ctx.view.tokens


def test_a_recall_budget_of_zero_turns_recall_off_for_one_conversation(memory: Memory) -> None:
    cid = _chat(memory)
    off = memory.create_conversation(
        "claude-haiku-4-5", context_window=4_000, policy={"recall_budget_tokens": 0}
    )
    for m in memory.export(cid).appended:
        memory.append(off, m)
    memory.compactions.compact(off, force=True)
    for conv in (cid, off):
        memory.append(conv, {"role": "user", "content": "Remind me: which city did my sister move to?"})
    on_ctx, off_ctx = memory.prepare_context(cid), memory.prepare_context(off)
    assert on_ctx.view.recalled and not off_ctx.view.recalled
    assert "<recalled_history>" not in json.dumps(off_ctx.messages)
    # The snippets only add to the newest turn: everything before it is byte for byte the same.
    assert on_ctx.messages[:-1] == off_ctx.messages[:-1]
    assert on_ctx.messages[-1]["content"][0]["text"] == off_ctx.messages[-1]["content"]


def _search(memory: Memory, cid: str, query: str) -> str:
    call = {"type": "tool_use", "id": "t", "name": "search_history", "input": {"query": query}}
    return str(memory.handle_tool_call(cid, call)["content"])


def test_a_question_the_assistant_asked_comes_with_the_users_answer(memory: Memory) -> None:
    cid = memory.create_conversation("claude-haiku-4-5", context_window=4_000)
    for role, text in [
        ("user", "Hi again, long day at work."),
        ("assistant", "Welcome back! Do you have any favourite novels lately?"),
        ("user", "Sapiens and Journey to the West, both borrowed from my aunt."),
        ("assistant", "Great picks."),
    ]:
        memory.append(cid, {"role": role, "content": text})
    page = _search(memory, cid, "favourite novels")
    lines = page.splitlines()
    assert lines[1].startswith("1. [seq 2, assistant"), page
    assert "[seq 3, user] Sapiens and Journey to the West" in page, page
    assert page.count("Sapiens") == 1, page  # a partner is shown once, however many hits it borders


def test_the_page_leaves_out_the_message_the_query_was_copied_from(memory: Memory) -> None:
    cid = memory.create_conversation("claude-haiku-4-5", context_window=4_000)
    memory.append(cid, {"role": "user", "content": "We should book the cabin near Lake Bled for June."})
    memory.append(cid, {"role": "assistant", "content": "Noted: the Lake Bled cabin, June."})
    question = "Which   lake did we pick for the cabin?"
    memory.append(cid, {"role": "user", "content": question})
    page = _search(memory, cid, "which lake did we pick for the cabin?")
    assert "[seq 3," not in page, page
    assert page.splitlines()[0].startswith("2 results"), page


def test_a_hit_shows_enough_of_a_long_message_to_hold_a_list(memory: Memory) -> None:
    cid = memory.create_conversation("claude-haiku-4-5", context_window=8_000)
    middle = " ".join(["It follows an ordinary family through a strange and funny week."] * 4)
    said = f'I recommend the movie "Crazy Alien". {middle} If you like action, try "The Climbers" too.'
    memory.append(cid, {"role": "user", "content": "Any weekend plans for me?"})
    memory.append(cid, {"role": "assistant", "content": said})
    page = _search(memory, cid, "which movie did you recommend")
    assert "Crazy Alien" in page and "The Climbers" in page, page


def test_the_first_page_stays_within_its_token_budget(memory: Memory) -> None:
    cid = memory.create_conversation("claude-haiku-4-5", context_window=200_000)
    long = "The deployment runbook step {n} covers rollback, canaries and the pager. " * 12
    for n in range(30):
        memory.append(cid, {"role": "user", "content": long.format(n=n) + " Does that look right?"})
        memory.append(cid, {"role": "assistant", "content": long.format(n=n) + " What about rollback?"})
    call = {
        "type": "tool_use",
        "id": "t",
        "name": "search_history",
        "input": {"query": "deployment runbook rollback", "limit": 20},
    }
    page = str(memory.handle_tool_call(cid, call)["content"])
    head, *body, foot = page.splitlines()
    shown = int(head.split()[0])
    assert 1 <= shown < 20, head  # the budget, not the limit, ended the page
    assert memory.admin.counter.count("\n".join(body)) <= 2_000 + 8 * shown  # each block's "N. " prefix
    assert foot.startswith("read_archived")
