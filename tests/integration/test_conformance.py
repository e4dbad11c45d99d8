"""The conformance corpus (issue 14): every shape real agents send is accepted, stored byte for byte,
counted by the provider's rules and rendered back as a request both Anthropic and OpenAI accept,
before and after compaction. The cases live in ``tests/support/conformance_cases.py``.
"""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest

from sleepcompact import Memory
from sleepcompact.domain.attachments import attachment_tokens
from sleepcompact.domain.blocks import EMPTY_RESULT
from sleepcompact.domain.validation import anthropic_problems, openai_problems
from tests.support.conformance_cases import (
    ANTHROPIC_CASES,
    BY_NAME,
    CASES,
    LATER_THINKING,
    PDF_B64,
    REDACTED_THINKING,
    THINKING,
    TINY_PNG_B64,
    Case,
    png_b64,
)

Msgs = list[dict[str, Any]]
PAIRING = ("tool_use", "tool_result")
ATTACHMENTS = ("image", "document")


def _conversation(mem: Memory, messages: Msgs, window: int = 200_000) -> str:
    cid = mem.create_conversation("claude-haiku-4-5", context_window=window)
    mem.append_many(cid, messages)
    return cid


def _both(mem: Memory, cid: str) -> tuple[Msgs, Msgs]:
    return mem.context(cid, fmt="anthropic").messages, mem.context(cid, fmt="openai").messages


def _assert_valid(mem: Memory, cid: str) -> tuple[Msgs, Msgs]:
    anthropic, openai = _both(mem, cid)
    assert anthropic_problems(anthropic) == [], json.dumps(anthropic)[:3000]
    assert openai_problems(openai) == [], json.dumps(openai)[:3000]
    return anthropic, openai


def _blocks(messages: Msgs) -> list[tuple[int, str, dict[str, Any]]]:
    """(turn, role, block) for every block of a rendering (a string turn is one text block)."""
    out = []
    for i, msg in enumerate(messages):
        content = msg.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content or []
        out.extend((i, str(msg["role"]), b) for b in blocks)
    return out


def _call_ids(anthropic: Msgs, openai: Msgs) -> tuple[list[str], list[str]]:
    a = [str(b["id"]) for _, _, b in _blocks(anthropic) if b.get("type") == "tool_use"]
    o = [str(c["id"]) for m in openai for c in m.get("tool_calls") or []]
    return a, o


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_every_shape_is_stored_exactly_and_renders_valid_for_both_providers(
    memory: Memory, case: Case
) -> None:
    cid = _conversation(memory, case.messages)
    _assert_valid(memory, cid)
    appended = list(memory.export(cid).appended)
    assert appended == case.messages
    assert json.dumps(appended, sort_keys=False) == json.dumps(case.messages, sort_keys=False)


@pytest.mark.parametrize("case", ANTHROPIC_CASES, ids=[c.name for c in ANTHROPIC_CASES])
def test_anthropic_blocks_travel_back_verbatim_on_the_side_that_sent_them(memory: Memory, case: Case) -> None:
    """Thinking with signatures, images and documents of every source, server and MCP tool blocks,
    container uploads, cache_control, citations and unknown future types: all passed back as sent."""
    anthropic, _ = _both(memory, _conversation(memory, case.messages))
    rendered = [(role, block) for _, role, block in _blocks(anthropic)]
    for msg in case.messages:
        for block in msg["content"] if isinstance(msg["content"], list) else []:
            if block["type"] not in PAIRING:
                assert (msg["role"], block) in rendered, block


def test_thinking_blocks_open_their_assistant_turn_with_signatures_intact(memory: Memory) -> None:
    anthropic, openai = _both(
        memory, _conversation(memory, BY_NAME["anthropic_thinking_in_open_tool_loop"].messages)
    )
    turns = [m["content"] for m in anthropic if m["role"] == "assistant"]
    assert turns[0][:2] == [THINKING, REDACTED_THINKING] and turns[0][2]["id"] == "toolu_01"
    assert turns[1][0] == LATER_THINKING and turns[1][1]["id"] == "toolu_02"
    assert "thinking" not in json.dumps(openai)  # Anthropic's own: OpenAI never sees them


REUSED = ["anthropic_reused_tool_id", "openai_reused_tool_call_id", "openai_legacy_function_call"]


@pytest.mark.parametrize("name", REUSED)
def test_reused_ids_are_unique_per_request_and_rewritten_the_same_on_every_call(
    memory: Memory, name: str
) -> None:
    cid = _conversation(memory, BY_NAME[name].messages)
    anthropic, openai = _both(memory, cid)
    a_ids, o_ids = _call_ids(anthropic, openai)
    assert len(a_ids) == len(set(a_ids)) > 1 and len(o_ids) == len(set(o_ids)) > 1
    assert _both(memory, cid) == (anthropic, openai)
    # A later turn calling with the same id again leaves the rendered prefix (a cached prompt) unchanged.
    sent = BY_NAME[name].messages
    last_call = max(
        i for i, m in enumerate(sent) if m["role"] == "assistant" and not isinstance(m["content"], str)
    )
    later = [{"role": "user", "content": "Once more."}, *sent[last_call : last_call + 2]]
    memory.append_many(cid, later)
    again = _both(memory, cid)
    assert again[0][: len(anthropic)] == anthropic and again[1][: len(openai)] == openai
    a_ids, o_ids = _call_ids(*again)
    assert len(a_ids) == len(set(a_ids)) and len(o_ids) == len(set(o_ids))
    assert list(memory.export(cid).appended) == [*sent, *later]


def _pairs_anthropic(messages: Msgs) -> list[tuple[str, Any, Any]]:
    """(tool name, input, the content of the result answering it) for every call, in order."""
    out = []
    for i, msg in enumerate(messages[:-1]):
        uses = [b for b in msg["content"] if msg["role"] == "assistant" and isinstance(b, dict)]
        results = {
            b.get("tool_use_id"): b.get("content") for b in messages[i + 1]["content"] if isinstance(b, dict)
        }
        out += [(b["name"], b["input"], results[b["id"]]) for b in uses if b.get("type") == "tool_use"]
    return out


def _pairs_openai(messages: Msgs) -> list[tuple[str, Any, Any]]:
    results = {m["tool_call_id"]: m["content"] for m in messages if m["role"] == "tool"}
    return [
        (c["function"]["name"], json.loads(c["function"]["arguments"]), results[c["id"]])
        for m in messages
        for c in m.get("tool_calls") or []
    ]


EXPECTED_PAIRS = {
    "anthropic_reused_tool_id": [
        ("pytest", {"args": "-q"}, "1 failed"),
        ("pytest", {"args": "-x"}, "all passed"),
    ],
    "openai_reused_tool_call_id": [
        ("ls", {"dir": "."}, "a.txt b.txt tmp/"),
        ("rm", {"path": "tmp"}, "removed tmp/"),
        ("ls", {"dir": "."}, "a.txt b.txt"),
    ],
    "openai_legacy_function_call": [
        ("get_weather", {"city": "Paris"}, '{"temp": 24}'),
        ("get_weather", {"city": "Rome"}, '{"temp": 31}'),
    ],
    "anthropic_parallel_tool_use": [
        ("weather", {"city": "Paris"}, "24C"),
        ("weather", {"city": "Rome"}, "31C"),
        ("weather", {"city": "Oslo"}, "12C"),
    ],
    "openai_parallel_tool_calls": [
        ("quote", {"ticker": "ACME"}, "12.50"),
        ("quote", {"ticker": "GLOBEX"}, "88.10"),
    ],
}


@pytest.mark.parametrize("name", list(EXPECTED_PAIRS))
def test_each_result_answers_the_call_it_was_sent_for(memory: Memory, name: str) -> None:
    anthropic, openai = _both(memory, _conversation(memory, BY_NAME[name].messages))
    assert _pairs_anthropic(anthropic) == EXPECTED_PAIRS[name]
    assert _pairs_openai(openai) == EXPECTED_PAIRS[name]


@pytest.mark.parametrize("name", ["anthropic_empty_tool_result", "openai_empty_tool_result"])
def test_empty_tool_results_render_as_non_empty_content_for_both_providers(memory: Memory, name: str) -> None:
    anthropic, openai = _both(memory, _conversation(memory, BY_NAME[name].messages))
    results = [b["content"] for _, _, b in _blocks(anthropic) if b.get("type") == "tool_result"]
    tool_messages = [m["content"] for m in openai if m["role"] == "tool"]
    assert results and results == [EMPTY_RESULT] * len(results)
    assert tool_messages == [EMPTY_RESULT] * len(results)


def test_cache_control_survives_on_text_image_and_tool_result(memory: Memory) -> None:
    anthropic, _ = _both(memory, _conversation(memory, BY_NAME["anthropic_cache_control"].messages))
    marked = {b["type"]: b["cache_control"] for _, _, b in _blocks(anthropic) if "cache_control" in b}
    assert marked == {
        "text": {"type": "ephemeral"},
        "image": {"type": "ephemeral", "ttl": "1h"},
        "tool_result": {"type": "ephemeral"},
    }


def test_an_unknown_future_block_is_passed_through_to_anthropic_and_named_to_openai(memory: Memory) -> None:
    anthropic, openai = _both(
        memory, _conversation(memory, BY_NAME["anthropic_unknown_future_block"].messages)
    )
    widget = BY_NAME["anthropic_unknown_future_block"].messages[0]["content"][1]
    assert anthropic[0]["content"][1] == widget
    assert "w-42" in json.dumps(openai[0]["content"])


def test_openai_content_parts_reach_the_openai_request_intact(memory: Memory) -> None:
    case = BY_NAME["openai_content_parts"]
    _, openai = _both(memory, _conversation(memory, case.messages))
    parts = openai[0]["content"]
    sent = case.messages[0]["content"]
    assert parts[0] == sent[0]
    assert parts[1]["image_url"]["url"] == f"data:image/png;base64,{TINY_PNG_B64}"
    assert parts[3] == sent[3]  # input_audio, as sent
    assert parts[4]["file"]["file_data"] == f"data:application/pdf;base64,{PDF_B64}"
    assert parts[5] == sent[5]  # a file by id, as sent


def test_developer_and_system_messages_become_the_system_prompt(memory: Memory) -> None:
    cid = _conversation(memory, BY_NAME["openai_several_system_and_developer_messages"].messages)
    view = memory.context(cid)
    assert view.system == "You are a travel agent.\n\nPrices in EUR.\n\nNever book without confirmation."
    assert "The user is a premium member." in json.dumps(view.messages[-1])  # mid-conversation: user side
    openai = memory.context(cid, fmt="openai").messages
    assert openai[0] == {"role": "system", "content": view.system}
    assert [m["role"] for m in openai[1:]] == ["user", "assistant", "user"]


def test_a_refusal_only_assistant_turn_renders_as_its_refusal(memory: Memory) -> None:
    anthropic, openai = _both(
        memory, _conversation(memory, BY_NAME["openai_refusal_only_assistant"].messages)
    )
    assert anthropic[1] == {"role": "assistant", "content": "I can't help with that."}
    assert openai[1] == {"role": "assistant", "content": "I can't help with that."}


def _image_message(width: int, height: int) -> dict[str, Any]:
    source = {"type": "base64", "media_type": "image/png", "data": png_b64(width, height)}
    return {
        "role": "user",
        "content": [{"type": "text", "text": "Look at this."}, {"type": "image", "source": source}],
    }


def _image_cost(mem: Memory, width: int, height: int) -> int:
    """What adding one width x height PNG to a user turn adds to the conversation's tokens."""
    plain = _conversation(mem, [{"role": "user", "content": [{"type": "text", "text": "Look at this."}]}])
    with_image = _conversation(mem, [_image_message(width, height)])
    extra = mem.context(with_image).counted_tokens - mem.context(plain).counted_tokens
    assert mem.stats(with_image).live_tokens - mem.stats(plain).live_tokens == extra
    return extra


@pytest.mark.parametrize(("width", "height", "tokens"), [(1000, 1000, 1334), (400, 300, 160), (30, 20, 1)])
def test_an_image_costs_its_pixels_over_750_not_a_flat_1600(
    memory: Memory, width: int, height: int, tokens: int
) -> None:
    assert _image_cost(memory, width, height) == tokens


def test_a_huge_image_costs_what_it_costs_once_the_provider_scales_it_down(memory: Memory) -> None:
    assert 1500 < _image_cost(memory, 4000, 3000) <= 1600


# -- compaction on the corpus ---------------------------------------------------------------------------


def _filler(turns: int) -> Msgs:
    """Plain text turns, about 470 tokens each way: enough of them to go past an 8k window."""
    out: Msgs = []
    for i in range(turns):
        out.append(
            {"role": "user", "content": f"Question {i}: " + "tell me about the harbour and its ships. " * 40}
        )
        out.append(
            {"role": "assistant", "content": f"Answer {i}: " + "the harbour holds ships of many kinds. " * 40}
        )
    return out


def _rows_with_attachments(mem: Memory, cid: str) -> list[dict[str, Any]]:
    return [
        r
        for r in mem.export(cid).messages
        if isinstance(r["content"], list) and any(b.get("type") in ATTACHMENTS for b in r["content"])
    ]


def _compact_past_8k(mem: Memory, messages: Msgs) -> str:
    cid = _conversation(mem, messages, window=8_000)
    assert mem.stats(cid).tokens > 8_000
    outcome = mem.compactions.compact(cid)
    assert outcome.status == "applied", outcome.reason
    return cid


ATTACHMENT_CASES = [
    "anthropic_image_sources",
    "anthropic_document_sources",
    "openai_content_parts",
    "anthropic_cache_control",
]


@pytest.mark.parametrize("name", ATTACHMENT_CASES)
def test_compacting_a_case_with_attachments_keeps_both_renderings_valid(memory: Memory, name: str) -> None:
    messages = [*BY_NAME[name].messages, *_filler(12)]
    cid = _compact_past_8k(memory, messages)
    anthropic, openai = _assert_valid(memory, cid)
    # The case's attachments are old now: none is still sent, each is a placeholder or archived.
    assert not [b for _, _, b in _blocks(anthropic) if b.get("type") in ATTACHMENTS]
    assert not [b for _, _, b in _blocks(openai) if b.get("type") in ("image_url", "file", "input_audio")]
    rows = _rows_with_attachments(memory, cid)
    assert rows and all(r["state"] in ("masked", "archived") for r in rows)
    for row in (r for r in rows if r["state"] == "masked"):
        assert f"read_archived(seq={row['seq']})" in json.dumps(row["live_content"])
    assert list(memory.export(cid).appended) == messages


def test_old_screenshots_become_placeholders_naming_their_archive_reference(memory: Memory) -> None:
    screenshots = [
        {
            "type": "image",
            "source": {"type": "base64", "media_type": "image/png", "data": png_b64(1000, 1000)},
        }
    ]
    messages = [
        *BY_NAME["anthropic_image_sources"].messages,
        {
            "role": "user",
            "content": [{"type": "text", "text": "Five screenshots of the bug."}, *screenshots * 5],
        },
        {"role": "assistant", "content": "The dialog appears after the second click."},
        *_filler(2),
    ]
    cid = _compact_past_8k(memory, messages)
    anthropic, _ = _assert_valid(memory, cid)
    old = _rows_with_attachments(memory, cid)
    assert [r["state"] for r in old] == ["masked", "masked"]  # placeholders fit: nothing is summarized
    texts = [b["text"] for _, _, b in _blocks(anthropic) if b.get("type") == "text"]
    for row in old:
        reference = f"read_archived(seq={row['seq']})"
        assert any(reference in t for t in texts), reference
        (hit,) = memory.search_history(cid, f"seq:{row['seq']}")
        assert hit.content == row["content"]  # the original, images and all
    # Only what costs less than its placeholder may stay (the case's 16x12 icon: one token).
    live = [b for _, _, b in _blocks(anthropic) if b.get("type") in ATTACHMENTS]
    assert all(attachment_tokens(b, len) <= 5 for b in live), live
    assert base64.b64decode(old[1]["content"][1]["source"]["data"]).startswith(b"\x89PNG")


def test_compaction_keeps_the_thinking_of_the_open_tool_loop(memory: Memory) -> None:
    case = BY_NAME["anthropic_thinking_in_open_tool_loop"]
    cid = _compact_past_8k(memory, [*_filler(12), *case.messages])
    anthropic, _ = _assert_valid(memory, cid)
    turns = [m["content"] for m in anthropic if m["role"] == "assistant"]
    assert turns[-2][:2] == [THINKING, REDACTED_THINKING] and turns[-2][2]["id"] == "toolu_01"
    assert turns[-1][0] == LATER_THINKING
