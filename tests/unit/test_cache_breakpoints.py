"""Cache breakpoints on any request: never more than the provider's four, never on a block that may not
carry one, the caller's own kept, and the recalled snippets never marked (they change every call)."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from sleepcompact.domain.cache_breakpoints import cache_problems, count_breakpoints, with_breakpoints
from sleepcompact.domain.history_recall import OPEN_TAG
from sleepcompact.domain.prompt import SUMMARY_PREFIX

EPHEMERAL = {"type": "ephemeral"}

text = st.sampled_from(["", "hello", f"{OPEN_TAG}\nsnippet", f"{SUMMARY_PREFIX}summary", "result"])
block = st.one_of(
    text.map(lambda t: {"type": "text", "text": t}),
    st.just({"type": "tool_result", "tool_use_id": "t1", "content": "ok"}),
    st.just({"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "x"}}),
    st.just({"type": "text", "text": "stored", "cache_control": EPHEMERAL}),
)
user = st.one_of(text.filter(bool), st.lists(block, min_size=1, max_size=4)).map(
    lambda c: {"role": "user", "content": c}
)
assistant = st.one_of(
    st.just({"role": "assistant", "content": "sure"}),
    st.just({"role": "assistant", "content": [{"type": "thinking", "thinking": "t", "signature": "s"}]}),
)


@st.composite
def requests(draw: st.DrawFn) -> dict[str, Any]:
    turns = draw(st.lists(st.tuples(user, assistant), min_size=1, max_size=8))
    messages = [m for pair in turns for m in pair][:-1]
    out: dict[str, Any] = {"messages": messages}
    if draw(st.booleans()):
        out["system"] = "Be brief."
    if draw(st.booleans()):
        tools = [{"name": "bash", "input_schema": {"type": "object"}}]
        if draw(st.booleans()):
            tools[0]["cache_control"] = {"type": "ephemeral", "ttl": "1h"}
        out["tools"] = tools
    return out


@settings(max_examples=300)
@given(request=requests(), ttl=st.sampled_from(["5m", "1h"]))
def test_any_request_gets_valid_breakpoints(request: dict[str, Any], ttl: Any) -> None:
    before = copy.deepcopy(request)
    marked = with_breakpoints(request, ttl)
    assert request == before  # a copy is marked; the caller's request is left as it was
    assert cache_problems(marked) == [] and count_breakpoints(marked) <= 4
    for msg in marked["messages"]:
        for b in msg["content"] if isinstance(msg["content"], list) else []:
            if str(b.get("text", "")).startswith(OPEN_TAG):
                assert "cache_control" not in b  # the recalled snippets change every call
    if "tools" in request and "cache_control" in request["tools"][0]:
        assert marked["tools"] == request["tools"]  # the caller's marker, as it was, not doubled
    if request.get("system"):
        assert marked["system"][0]["cache_control"] == (
            {"type": "ephemeral"} if ttl == "5m" else {"type": "ephemeral", "ttl": "1h"}
        )


def test_the_four_places_in_order_of_value() -> None:
    request = {
        "system": "Be brief.",
        "messages": [
            {"role": "user", "content": f"{SUMMARY_PREFIX}what happened"},
            {"role": "assistant", "content": "ok"},
            {"role": "user", "content": "first"},
            {"role": "assistant", "content": "ok"},
            {
                "role": "user",
                "content": [{"type": "text", "text": "second"}, {"type": "text", "text": OPEN_TAG}],
            },
        ],
    }
    marked = with_breakpoints(request, "5m")
    assert marked["system"] == [{"type": "text", "text": "Be brief.", "cache_control": EPHEMERAL}]
    messages = marked["messages"]
    assert messages[0]["content"] == [
        {"type": "text", "text": f"{SUMMARY_PREFIX}what happened", "cache_control": EPHEMERAL}
    ]
    assert messages[2]["content"] == [{"type": "text", "text": "first", "cache_control": EPHEMERAL}]
    assert messages[4]["content"][0]["cache_control"] == EPHEMERAL  # before the recalled snippets
    assert "cache_control" not in messages[4]["content"][1]
    assert count_breakpoints(marked) == 4 and cache_problems(marked) == []
    assert request["system"] == "Be brief."  # the input is not changed


def test_the_validator_refuses_what_the_provider_refuses() -> None:
    five = {
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "x", "cache_control": EPHEMERAL}] * 5}
        ]
    }
    assert cache_problems(five)
    empty = {
        "messages": [{"role": "user", "content": [{"type": "text", "text": "", "cache_control": EPHEMERAL}]}]
    }
    assert cache_problems(empty)
    order = {
        "system": [{"type": "text", "text": "s", "cache_control": EPHEMERAL}],
        "messages": [
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "x", "cache_control": {"type": "ephemeral", "ttl": "1h"}}
                ],
            }
        ],
    }
    assert cache_problems(order)  # a 1-hour entry after a 5-minute one


def test_a_request_that_ends_with_an_assistant_prefill_marks_its_last_two_user_turns() -> None:
    # A caller may end the request with the start of the answer ("prefill"); the newest user turns are
    # then the second and fourth from the end, and they are still the ones marked.
    request = {
        "messages": [
            {"role": "user", "content": "first"},
            {"role": "assistant", "content": "ok"},
            {"role": "user", "content": "second"},
            {"role": "assistant", "content": "ok"},
            {"role": "user", "content": "third"},
            {"role": "assistant", "content": "{"},
        ],
    }
    messages = with_breakpoints(request, "5m")["messages"]
    marked = [i for i, m in enumerate(messages) if isinstance(m["content"], list)]
    assert marked == [2, 4]
    assert messages[4]["content"] == [{"type": "text", "text": "third", "cache_control": EPHEMERAL}]
