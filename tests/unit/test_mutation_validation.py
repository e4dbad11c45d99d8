"""The strict request validators, rule by rule, where mutation testing found the suite blind
(docs/mutation.md): each broken rule is named in its own readable sentence, and a valid request has
none. The guard and the conformance tests rely on these sentences to prove a rendering would be sent.
"""

from __future__ import annotations

from typing import Any

from sleepcompact.domain.validation import anthropic_problems, openai_problems

USER = {"role": "user", "content": "hi"}


def _assistant(*blocks: dict[str, Any]) -> dict[str, Any]:
    return {"role": "assistant", "content": list(blocks)}


def _use(call_id: str) -> dict[str, Any]:
    return {"type": "tool_use", "id": call_id, "name": "bash", "input": {}}


def _result(call_id: str) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": call_id, "content": "ok"}


THINK = {"type": "thinking", "thinking": "hmm", "signature": "sig"}
REDACTED = {"type": "redacted_thinking", "data": "xyz"}
TEXT = {"type": "text", "text": "done"}


# -- Anthropic -------------------------------------------------------------------------------------------


def test_content_that_is_neither_text_nor_blocks_is_named() -> None:
    assert anthropic_problems([{"role": "user", "content": None}]) == [
        "message 0: content is neither text nor blocks"
    ]
    assert anthropic_problems([{"role": "user", "content": 42}]) == [
        "message 0: content is neither text nor blocks"
    ]


def test_a_text_block_without_text_is_an_empty_text_block() -> None:
    assert anthropic_problems([{"role": "user", "content": [{"type": "text"}]}]) == [
        "message 0 block 0: empty text block"
    ]
    assert anthropic_problems([{"role": "user", "content": [{"type": "text", "text": "  "}]}]) == [
        "message 0 block 0: empty text block"
    ]


def test_a_tool_result_in_an_assistant_turn_is_named() -> None:
    problems = anthropic_problems([USER, _assistant(TEXT, _result("c1"))])
    assert problems == ["message 1 block 1: tool_result outside a user turn"]


def test_a_call_answered_twice_is_named() -> None:
    problems = anthropic_problems(
        [USER, _assistant(_use("c1")), {"role": "user", "content": [_result("c1"), _result("c1")]}]
    )
    assert problems == ["message 2: a tool_use is answered more than once"]


def test_thinking_opens_its_turn_and_any_order_after_other_content_is_refused() -> None:
    # Valid: thinking (of either kind) first, then text and tool use; or no thinking at all.
    for blocks in ([THINK, TEXT], [REDACTED, _use("c1")], [THINK, REDACTED, TEXT], [TEXT], [THINK]):
        messages = [USER, _assistant(*blocks)]
        assert anthropic_problems(messages) == [], blocks
    for blocks in ([TEXT, THINK], [_use("c1"), REDACTED], [THINK, TEXT, REDACTED]):
        messages = [USER, _assistant(*blocks)]
        assert anthropic_problems(messages) == ["message 1: a thinking block comes after other content"], (
            blocks
        )


def test_a_valid_anthropic_exchange_has_no_problem() -> None:
    messages = [
        USER,
        _assistant(THINK, TEXT, _use("c1"), _use("c2")),
        {"role": "user", "content": [_result("c1"), _result("c2"), {"type": "text", "text": "go on"}]},
        _assistant(TEXT),
    ]
    assert anthropic_problems(messages) == []


# -- OpenAI chat -----------------------------------------------------------------------------------------


def _call(call_id: str) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": "bash", "arguments": "{}"}}


def _tool(call_id: str, content: Any = "ok") -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "content": content}


def test_a_valid_openai_exchange_has_no_problem() -> None:
    messages = [
        {"role": "system", "content": "rules"},
        {"role": "developer", "content": "more rules"},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "look"},
                {"type": "image_url", "image_url": {"url": "https://x/a.png"}},
            ],
        },
        {"role": "assistant", "content": None, "tool_calls": [_call("c1"), _call("c2")]},
        _tool("c2"),
        _tool("c1"),
        {"role": "assistant", "content": "done"},
    ]
    assert openai_problems(messages) == []
    assert openai_problems([]) == []


def test_an_unknown_role_is_named_and_skipped() -> None:
    assert openai_problems([{"role": "function", "content": "x"}, {"role": "user", "content": "hi"}]) == [
        "message 0: unknown role 'function'"
    ]
    assert openai_problems([{"content": "x"}]) == ["message 0: unknown role None"]
    # The messages after it are still checked.
    assert openai_problems([{"role": "function", "content": "x"}, {"role": "user", "content": ""}]) == [
        "message 0: unknown role 'function'",
        "message 1: empty user content",
    ]


def test_a_tool_result_must_answer_a_pending_call_once_and_say_something() -> None:
    assert openai_problems([{"role": "user", "content": "hi"}, _tool("c9")]) == [
        "message 1: tool result c9 answers no pending call"
    ]
    calls = {"role": "assistant", "content": None, "tool_calls": [_call("c1")]}
    assert openai_problems([calls, _tool("c1"), _tool("c1")]) == [
        "message 2: tool result c1 answers no pending call"
    ]
    assert openai_problems([calls, _tool("c1", "")]) == ["message 1: empty tool result"]
    assert openai_problems([calls, _tool("c1", None)]) == ["message 1: empty tool result"]


def test_calls_not_answered_before_the_next_message_are_named_once() -> None:
    calls = {"role": "assistant", "content": None, "tool_calls": [_call("c1"), _call("c2")]}
    problems = openai_problems(
        [calls, _tool("c1"), {"role": "user", "content": "next"}, {"role": "assistant", "content": "ok"}]
    )
    assert problems == ["message 2: tool calls ['c2'] are not answered"]
    # Once named, a late answer answers nothing.
    late = openai_problems([calls, {"role": "user", "content": "next"}, _tool("c1")])
    assert late == [
        "message 1: tool calls ['c1', 'c2'] are not answered",
        "message 2: tool result c1 answers no pending call",
    ]


def test_a_tool_call_id_used_twice_is_named() -> None:
    twice = {"role": "assistant", "content": None, "tool_calls": [_call("c1"), _call("c1")]}
    assert openai_problems([twice, _tool("c1"), _tool("c1")]) == [
        "message 0: a tool call id is used twice in the request"
    ]
    first = {"role": "assistant", "content": None, "tool_calls": [_call("c1")]}
    again = {"role": "assistant", "content": "again", "tool_calls": [_call("c1")]}
    assert openai_problems([first, _tool("c1"), again, _tool("c1")]) == [
        "message 2: a tool call id is used twice in the request"
    ]


def test_empty_content_is_named_with_its_role() -> None:
    for role in ("system", "developer", "user", "assistant"):
        assert openai_problems([{"role": role, "content": ""}]) == [f"message 0: empty {role} content"]
        assert openai_problems([{"role": role}]) == [f"message 0: empty {role} content"]
    assert openai_problems([{"role": "user", "content": []}]) == ["message 0: empty user content"]
    # An assistant message that only calls tools needs no content.
    calls = {"role": "assistant", "content": "", "tool_calls": [_call("c1")]}
    assert openai_problems([calls, _tool("c1")]) == []


def test_parts_must_say_something() -> None:
    def problems(*parts: Any) -> list[str]:
        return openai_problems([{"role": "user", "content": list(parts)}])

    assert problems({"type": "text", "text": " "}) == ["message 0 part 0: empty text part"]
    assert problems({"type": "text", "text": "a"}, {"type": "text"}) == ["message 0 part 1: empty text part"]
    assert problems({"type": "image_url", "image_url": {"url": ""}}) == [
        "message 0 part 0: image_url part without a url"
    ]
    assert problems({"type": "image_url", "image_url": "https://x/a.png"}) == [
        "message 0 part 0: image_url part without a url"
    ]
    assert problems({"type": "image_url"}) == ["message 0 part 0: image_url part without a url"]
    assert problems("plain string part", {"type": "input_audio", "input_audio": {}}) == []
    assert problems({"type": "text", "text": "a"}, {"type": "image_url", "image_url": {"url": "u"}}) == []


def test_the_request_level_rules_are_named() -> None:
    assert anthropic_problems([]) == ["there are no messages"]
    assert anthropic_problems([_assistant(TEXT)]) == ["the first message is not a user message"]
    pending = [USER, _assistant(_use("c1"))]
    assert anthropic_problems(pending) == []
    assert anthropic_problems(pending, allow_pending_calls=False) == [
        "the last assistant turn has unanswered tool calls"
    ]
    # A message of an unknown role is named, and the messages after it are still checked.
    assert anthropic_problems(
        [USER, {"role": "system", "content": "x"}, {"role": "user", "content": " "}]
    ) == [
        "message 1: role 'system' is not user or assistant",
        "message 2: two user messages in a row",
        "message 2: empty text",
    ]
