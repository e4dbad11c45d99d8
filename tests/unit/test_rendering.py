"""Rendering live rows as Anthropic and OpenAI requests, and the validator that proves them acceptable."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sleepcompact.domain.messages import Content
from sleepcompact.domain.records import MessageRecord
from sleepcompact.domain.rendering import (
    RESUMED_PLACEHOLDER,
    UNANSWERED_RESULT,
    render_anthropic,
    render_openai,
)
from sleepcompact.domain.validation import anthropic_problems

NOW = datetime(2025, 1, 1, tzinfo=UTC)


class Rows:
    """Builds MessageRecord values with increasing seqs, as the store would hand them to the renderer."""

    def __init__(self) -> None:
        self.rows: list[MessageRecord] = []

    def add(
        self,
        role: str,
        kind: str,
        content: Content,
        *,
        tool_call_id: str | None = None,
        tool_name: str | None = None,
        live_content: Content | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> Rows:
        n = len(self.rows) + 1
        self.rows.append(
            MessageRecord(
                id=n,
                conversation_id="conv-1",
                seq=n,
                part=0,
                role=role,
                kind=kind,
                content=content,
                raw=None,
                tool_name=tool_name,
                tool_call_id=tool_call_id,
                token_count=10,
                state="live" if live_content is None else "masked",
                live_content=live_content,
                live_tokens=10,
                created_at=NOW,
                metadata=metadata or {},
            )
        )
        return self

    def system(self, text: str) -> Rows:
        return self.add("system", "message", text)

    def user(self, text: Content) -> Rows:
        return self.add("user", "message", text)

    def assistant(self, text: Content) -> Rows:
        return self.add("assistant", "message", text)

    def call(self, call_id: str, name: str = "bash", tool_input: dict[str, Any] | None = None) -> Rows:
        use = {
            "type": "tool_use",
            "id": call_id,
            "name": name,
            "input": {"cmd": "ls"} if tool_input is None else tool_input,
        }
        return self.add("assistant", "tool_call", [use], tool_call_id=call_id, tool_name=name)

    def result(
        self, call_id: str, output: Content = "ok", *, live: Content | None = None, is_error: bool = False
    ) -> Rows:
        meta = {"is_error": True} if is_error else None
        return self.add("tool", "tool_result", output, tool_call_id=call_id, live_content=live, metadata=meta)


def assert_valid(messages: list[dict[str, Any]], *, allow_pending_calls: bool = True) -> None:
    problems = anthropic_problems(messages, allow_pending_calls=allow_pending_calls)
    assert problems == [], f"{problems}\n{json.dumps(messages, indent=1)}"


# -- render_anthropic ------------------------------------------------------------------------------------


def test_simple_exchange_renders_as_plain_strings() -> None:
    rows = Rows().user("hi").assistant("hello").rows
    out = render_anthropic(rows)
    assert out.system is None
    assert out.messages == [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]
    assert_valid(out.messages)


def test_leading_system_rows_go_to_system_after_the_callers_system() -> None:
    rows = Rows().system("Stored rules.").system("More rules.").user("hi").rows
    out = render_anthropic(rows, system="Caller prompt.")
    assert out.system == "Caller prompt.\n\nStored rules.\n\nMore rules."
    assert out.messages == [{"role": "user", "content": "hi"}]
    assert_valid(out.messages)


def test_caller_system_alone() -> None:
    out = render_anthropic(Rows().user("hi").rows, system="Be brief.")
    assert out.system == "Be brief."


def test_system_row_mid_conversation_travels_as_user_text() -> None:
    rows = Rows().user("hi").assistant("hello").system("Note: time is up.").rows
    out = render_anthropic(rows)
    assert out.system is None
    assert out.messages[-1] == {"role": "user", "content": "[system] Note: time is up."}
    assert_valid(out.messages)


def test_assistant_text_and_tool_calls_merge_into_one_assistant_message() -> None:
    rows = (
        Rows()
        .user("list and read")
        .assistant("Sure.")
        .call("t1", "ls", {"path": "."})
        .call("t2", "cat", {"path": "a"})
        .result("t1", "a b")
        .result("t2", "contents")
        .user("thanks")
        .rows
    )
    out = render_anthropic(rows)
    assert [m["role"] for m in out.messages] == ["user", "assistant", "user"]
    assert out.messages[1]["content"] == [
        {"type": "text", "text": "Sure."},
        {"type": "tool_use", "id": "t1", "name": "ls", "input": {"path": "."}},
        {"type": "tool_use", "id": "t2", "name": "cat", "input": {"path": "a"}},
    ]
    assert out.messages[2]["content"] == [
        {"type": "tool_result", "tool_use_id": "t1", "content": "a b"},
        {"type": "tool_result", "tool_use_id": "t2", "content": "contents"},
        {"type": "text", "text": "thanks"},
    ]
    assert_valid(out.messages, allow_pending_calls=False)


def test_tool_results_are_moved_before_user_text_in_the_merged_turn() -> None:
    rows = Rows().user("go").call("t1").user("also this").result("t1", "done").rows
    out = render_anthropic(rows)
    assert out.messages[2]["content"] == [
        {"type": "tool_result", "tool_use_id": "t1", "content": "done"},
        {"type": "text", "text": "also this"},
    ]
    assert_valid(out.messages)


def test_error_results_keep_their_flag() -> None:
    rows = Rows().user("go").call("t1").result("t1", "boom", is_error=True).rows
    out = render_anthropic(rows)
    assert out.messages[2]["content"] == [
        {"type": "tool_result", "tool_use_id": "t1", "content": "boom", "is_error": True}
    ]


def test_conversation_starting_with_assistant_gets_a_user_placeholder() -> None:
    rows = Rows().assistant("Welcome back.").user("hi").rows
    out = render_anthropic(rows)
    assert out.messages[0] == {"role": "user", "content": RESUMED_PLACEHOLDER}
    assert out.messages[1] == {"role": "assistant", "content": "Welcome back."}
    assert_valid(out.messages)


def test_placeholder_also_after_leading_system_rows() -> None:
    rows = Rows().system("rules").call("t1").result("t1", "x").rows
    out = render_anthropic(rows)
    assert out.system == "rules"
    assert out.messages[0] == {"role": "user", "content": RESUMED_PLACEHOLDER}
    assert_valid(out.messages, allow_pending_calls=False)


def test_orphan_tool_result_becomes_text() -> None:
    # t9's call is not in the previous assistant turn (it was archived by compaction).
    rows = Rows().user("start").assistant("ok").result("t9", "stale output").user("continue").rows
    out = render_anthropic(rows)
    last = out.messages[-1]
    assert last["role"] == "user"
    assert all(b.get("type") != "tool_result" for b in last["content"])
    texts = [b["text"] for b in last["content"]]
    assert any("t9" in t and "stale output" in t for t in texts)
    assert_valid(out.messages)


def test_orphan_tool_result_at_the_start_becomes_text() -> None:
    rows = Rows().result("t1", "old").assistant("next").rows
    out = render_anthropic(rows)
    assert out.messages[0]["role"] == "user"
    assert "old" in out.messages[0]["content"]
    assert_valid(out.messages)


def test_result_answering_an_older_turn_becomes_text() -> None:
    rows = Rows().user("a").call("t1").user("b").assistant("c").result("t1", "late").rows
    out = render_anthropic(rows)
    assert_valid(out.messages)
    # t1 got a synthetic answer in the turn right after it; the late output is kept as text.
    assert out.messages[2]["content"][0]["tool_use_id"] == "t1"
    assert out.messages[2]["content"][0]["content"] == UNANSWERED_RESULT
    assert "late" in json.dumps(out.messages[-1])


def test_unanswered_tool_use_before_a_user_turn_gets_a_synthetic_result() -> None:
    rows = Rows().user("go").call("t1").call("t2").result("t2", "two").user("stop").rows
    out = render_anthropic(rows)
    user = out.messages[2]["content"]
    assert user[0] == {
        "type": "tool_result",
        "tool_use_id": "t1",
        "content": UNANSWERED_RESULT,
        "is_error": True,
    }
    assert user[1] == {"type": "tool_result", "tool_use_id": "t2", "content": "two"}
    assert user[2] == {"type": "text", "text": "stop"}
    assert_valid(out.messages, allow_pending_calls=False)


def test_pending_calls_at_the_end_are_left_for_the_caller() -> None:
    rows = Rows().user("go").call("t1").rows
    out = render_anthropic(rows)
    assert out.messages[-1]["content"][0]["type"] == "tool_use"
    assert_valid(out.messages, allow_pending_calls=True)
    assert anthropic_problems(out.messages, allow_pending_calls=False) != []


def test_masked_row_renders_its_live_view() -> None:
    rows = (
        Rows()
        .user("read it")
        .call("t1", "cat")
        .result("t1", "A" * 5000, live="[output of cat masked: 5000 chars]")
        .user("ok")
        .rows
    )
    out = render_anthropic(rows)
    dumped = json.dumps(out.messages)
    assert "A" * 100 not in dumped
    assert out.messages[2]["content"][0] == {
        "type": "tool_result",
        "tool_use_id": "t1",
        "content": "[output of cat masked: 5000 chars]",
    }
    assert_valid(out.messages)


def test_masked_message_row_renders_its_live_view() -> None:
    rows = Rows().add("user", "message", "original long text", live_content="short view").rows
    out = render_anthropic(rows)
    assert out.messages == [{"role": "user", "content": "short view"}]


def test_image_blocks_are_rendered() -> None:
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AAAA"}}
    rows = Rows().user([{"type": "text", "text": "what is it"}, image]).rows
    out = render_anthropic(rows)
    assert out.messages == [{"role": "user", "content": [{"type": "text", "text": "what is it"}, image]}]


def test_render_does_not_mutate_the_rows() -> None:
    builder = Rows().user("go").call("t1").call("t2").result("t2", "x").user("next")
    before = [(r.content, r.live_content) for r in builder.rows]
    snapshot = json.dumps(before)
    render_anthropic(builder.rows)
    render_openai(builder.rows)
    assert json.dumps([(r.content, r.live_content) for r in builder.rows]) == snapshot


def test_a_call_answered_twice_renders_one_tool_result() -> None:
    rows = Rows().user("go").call("t1").result("t1", "first").result("t1", "second").rows
    out = render_anthropic(rows)
    results = [b for b in out.messages[2]["content"] if b.get("type") == "tool_result"]
    assert [b["tool_use_id"] for b in results] == ["t1"]


def test_anthropic_problems_reports_a_call_answered_twice() -> None:
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "f", "input": {}}]},
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "t1", "content": "a"},
                {"type": "tool_result", "tool_use_id": "t1", "content": "b"},
            ],
        },
    ]
    assert anthropic_problems(messages) != []


# -- render_openai --------------------------------------------------------------------------------


def test_render_openai() -> None:
    rows = (
        Rows()
        .system("Stored rules.")
        .user("list")
        .assistant("On it.")
        .call("c1", "ls", {"path": "/tmp", "ü": 1})
        .call("c2", "pwd", {})
        .result("c1", "a b")
        .result("c2", "/home")
        .user("thanks")
        .assistant("done")
        .rows
    )
    out = render_openai(rows, system="Caller.")
    assert out[0] == {"role": "system", "content": "Caller.\n\nStored rules."}
    assert out[1] == {"role": "user", "content": "list"}
    assistant = out[2]
    assert assistant["role"] == "assistant"
    assert assistant["content"] == "On it."
    calls = assistant["tool_calls"]
    assert [c["id"] for c in calls] == ["c1", "c2"]
    assert all(c["type"] == "function" for c in calls)
    assert calls[0]["function"]["name"] == "ls"
    assert isinstance(calls[0]["function"]["arguments"], str)
    assert json.loads(calls[0]["function"]["arguments"]) == {"path": "/tmp", "ü": 1}
    assert json.loads(calls[1]["function"]["arguments"]) == {}
    assert out[3] == {"role": "tool", "tool_call_id": "c1", "content": "a b"}
    assert out[4] == {"role": "tool", "tool_call_id": "c2", "content": "/home"}
    assert out[5] == {"role": "user", "content": "thanks"}
    assert out[6] == {"role": "assistant", "content": "done"}
    assert len(out) == 7


def test_render_openai_without_system_and_tool_only_assistant() -> None:
    out = render_openai(Rows().user("go").call("c1").result("c1", "x").rows)
    assert out[0]["role"] == "user"
    assert out[1]["content"] is None
    assert [c["id"] for c in out[1]["tool_calls"]] == ["c1"]
    assert out[2] == {"role": "tool", "tool_call_id": "c1", "content": "x"}


def test_render_openai_answers_unanswered_calls_and_drops_orphans_to_text() -> None:
    rows = Rows().user("go").call("c1").user("next").result("zz", "orphan").rows
    out = render_openai(rows)
    tool_msgs = [m for m in out if m["role"] == "tool"]
    assert tool_msgs == [{"role": "tool", "tool_call_id": "c1", "content": UNANSWERED_RESULT}]
    assert "orphan" in out[-1]["content"]


def test_render_openai_images_become_image_urls() -> None:
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AAAA"}}
    url_image = {"type": "image", "source": {"type": "url", "url": "https://x/y.png"}}
    out = render_openai(Rows().user([{"type": "text", "text": "see"}, image, url_image]).rows)
    assert out == [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "see"},
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}},
                {"type": "image_url", "image_url": {"url": "https://x/y.png"}},
            ],
        }
    ]


# -- anthropic_problems on invalid requests ---------------------------------------------------------


def test_valid_request_has_no_problems() -> None:
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "f", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "x"}]},
    ]
    assert anthropic_problems(messages, allow_pending_calls=False) == []


@pytest.mark.parametrize(
    ("messages", "fragment"),
    [
        ([], "no messages"),
        ([{"role": "user", "content": "a"}, {"role": "user", "content": "b"}], "two user messages"),
        ([{"role": "assistant", "content": "hi"}], "first message"),
        (
            [
                {"role": "user", "content": "go"},
                {
                    "role": "assistant",
                    "content": [{"type": "tool_use", "id": "t1", "name": "f", "input": {}}],
                },
                {
                    "role": "user",
                    "content": [
                        {"type": "text", "text": "x"},
                        {"type": "tool_result", "tool_use_id": "t1", "content": "r"},
                    ],
                },
            ],
            "first",
        ),
        (
            [
                {"role": "user", "content": "go"},
                {
                    "role": "assistant",
                    "content": [{"type": "tool_use", "id": "t1", "name": "f", "input": {}}],
                },
                {"role": "user", "content": "never answered"},
            ],
            "not answered",
        ),
        (
            [
                {"role": "user", "content": "go"},
                {"role": "assistant", "content": "plain"},
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t7", "content": "r"}]},
            ],
            "answers no call",
        ),
        ([{"role": "user", "content": ""}], "empty text"),
        ([{"role": "user", "content": "   "}], "empty text"),
        ([{"role": "user", "content": [{"type": "text", "text": ""}]}], "empty text block"),
        ([{"role": "user", "content": []}], "empty content"),
        ([{"role": "system", "content": "x"}], "not user or assistant"),
        (
            [{"role": "user", "content": [{"type": "tool_use", "id": "t", "name": "f", "input": {}}]}],
            "tool_use outside",
        ),
        (
            [
                {"role": "user", "content": "go"},
                {
                    "role": "assistant",
                    "content": [
                        {"type": "tool_use", "id": "t", "name": "f", "input": {}},
                        {"type": "tool_use", "id": "t", "name": "f", "input": {}},
                    ],
                },
            ],
            "duplicate",
        ),
    ],
)
def test_anthropic_problems_reports_each_broken_rule(messages: list[dict[str, Any]], fragment: str) -> None:
    problems = anthropic_problems(messages)
    assert problems, "expected a problem"
    assert any(fragment in p for p in problems), problems


def test_unanswered_final_calls_are_a_problem_only_when_not_allowed() -> None:
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "f", "input": {}}]},
    ]
    assert anthropic_problems(messages, allow_pending_calls=True) == []
    assert any("unanswered" in p for p in anthropic_problems(messages, allow_pending_calls=False))


# -- property: any history renders to a valid request ------------------------------------------------

TEXT = st.text(alphabet="abc xyz", min_size=1, max_size=8).filter(lambda s: s.strip() != "")

step = st.one_of(
    st.tuples(st.just("system"), TEXT),
    st.tuples(st.just("user"), TEXT),
    st.tuples(st.just("assistant"), TEXT),
    st.tuples(st.just("context"), TEXT),
    # n calls; which of them get results (bitmask); whether the results are shuffled; a text after them
    st.tuples(
        st.just("calls"),
        st.integers(0, 3),
        st.integers(0, 7),
        st.booleans(),
        st.sampled_from([None, "user", "assistant"]),
    ),
    st.tuples(st.just("orphan"), TEXT),
    st.tuples(st.just("late"), st.integers(0, 20)),
    st.tuples(st.just("mask"), TEXT),
)


def build_rows(steps: list[tuple[Any, ...]], rng_order: list[int]) -> list[MessageRecord]:
    rows = Rows()
    next_id = 0
    unanswered: list[str] = []
    for i, s in enumerate(steps):
        tag = s[0]
        if tag == "system":
            rows.system(s[1])
        elif tag == "user":
            rows.user(s[1])
        elif tag == "assistant":
            rows.assistant(s[1])
        elif tag == "context":
            rows.add("user", "context", s[1])
        elif tag == "calls":
            _, n, answered_mask, shuffle, after = s
            ids = [f"t{next_id + k}" for k in range(n)]
            next_id += n
            for cid in ids:
                rows.call(cid)
            answered = [cid for k, cid in enumerate(ids) if answered_mask & (1 << k)]
            if shuffle:
                answered = answered[::-1] if rng_order[i % len(rng_order)] % 2 else answered
            if after == "user" and answered:
                rows.user("interjection")
            for cid in answered:
                rows.result(cid, f"out {cid}")
            unanswered.extend(cid for cid in ids if cid not in answered)
            if after == "assistant":
                rows.assistant("thinking aloud")
        elif tag == "orphan":
            rows.result(f"ghost{i}", s[1])
        elif tag == "late":
            if unanswered:
                cid = unanswered.pop(s[1] % len(unanswered))
                rows.result(cid, "late output")
        elif tag == "mask":
            cid = f"t{next_id}"
            next_id += 1
            rows.call(cid)
            rows.result(cid, s[1] * 50, live=f"[masked {cid}]")
    return rows.rows


@settings(max_examples=400, deadline=None)
@given(
    steps=st.lists(step, min_size=0, max_size=14),
    order=st.lists(st.integers(0, 9), min_size=1, max_size=5),
    system=st.sampled_from([None, "Caller system."]),
)
def test_any_history_renders_to_a_valid_anthropic_request(
    steps: list[tuple[Any, ...]], order: list[int], system: str | None
) -> None:
    rows = build_rows(steps, order)
    out = render_anthropic(rows, system=system)
    if all(r.role == "system" for r in rows):
        # Nothing to send but system text: the caller's next user message is the whole conversation.
        assert out.messages == []
        return
    assert_valid(out.messages, allow_pending_calls=True)
    # Every stored call id that survives as a tool_use is still there exactly once.
    uses = [
        b["id"]
        for m in out.messages
        if isinstance(m["content"], list)
        for b in m["content"]
        if b.get("type") == "tool_use"
    ]
    assert sorted(uses) == sorted(str(r.tool_call_id) for r in rows if r.kind == "tool_call")
    # The OpenAI rendering carries the same calls, each answered by one tool message (unless pending).
    oa = render_openai(rows, system=system)
    oa_calls = [c["id"] for m in oa if m["role"] == "assistant" for c in m.get("tool_calls", [])]
    assert sorted(oa_calls) == sorted(uses)
    oa_results = [m["tool_call_id"] for m in oa if m["role"] == "tool"]
    assert len(oa_results) == len(set(oa_results))
    assert set(oa_results) <= set(oa_calls)
