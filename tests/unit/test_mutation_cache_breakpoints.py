"""Cache breakpoints where mutation testing found the suite blind (docs/mutation.md).

The provider refuses a request with more than four ``cache_control`` blocks, so the count left after the
caller's own markers must be exact; the caller's request is never changed in place; two user turns
mark both; a history without a summary never has its first turn taken for one.
"""

from __future__ import annotations

import copy
from typing import Any

from sleepcompact.domain.cache_breakpoints import cache_problems, count_breakpoints, with_breakpoints
from sleepcompact.domain.history_recall import OPEN_TAG
from sleepcompact.domain.prompt import SUMMARY_PREFIX

EPHEMERAL = {"type": "ephemeral"}


def _user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": text}]}


def _assistant(text: str) -> dict[str, Any]:
    return {"role": "assistant", "content": [{"type": "text", "text": text}]}


def _marked(request: dict[str, Any]) -> list[str]:
    """Where the breakpoints are: ``system``, ``tool:NAME`` or ``message:INDEX``."""
    places = []
    system = request.get("system")
    for block in system if isinstance(system, list) else []:
        if "cache_control" in block:
            places.append("system")
    places += [f"tool:{t['name']}" for t in request.get("tools") or [] if "cache_control" in t]
    for i, msg in enumerate(request["messages"]):
        content = msg["content"]
        if isinstance(content, list) and any("cache_control" in b for b in content):
            places.append(f"message:{i}")
    return places


def _tools(marked: int, total: int = 4) -> list[dict[str, Any]]:
    """``total`` tools, the first ``marked`` of them carrying the caller's own breakpoint."""
    return [
        {
            "name": f"t{i}",
            "input_schema": {"type": "object"},
            **({"cache_control": EPHEMERAL} if i < marked else {}),
        }
        for i in range(total)
    ]


SUMMARY = {"role": "user", "content": [{"type": "text", "text": f"{SUMMARY_PREFIX}what happened so far"}]}
HISTORY = [
    SUMMARY,
    _assistant("a1"),
    _user("u1"),
    _assistant("a2"),
    _user("u2"),
    _assistant("a3"),
    _user("u3"),
]


def test_the_callers_own_markers_count_against_the_four() -> None:
    for caller in range(5):
        request = {"system": "You are terse.", "tools": _tools(caller), "messages": list(HISTORY)}
        out = with_breakpoints(request, "5m")
        assert count_breakpoints(out) == 4, caller
        assert cache_problems(out) == [], caller


def test_one_caller_marker_leaves_the_system_prompt_the_newest_turn_and_the_previous_one() -> None:
    out = with_breakpoints({"system": "You are terse.", "tools": _tools(1), "messages": list(HISTORY)}, "5m")
    assert _marked(out) == ["system", "tool:t0", "message:4", "message:6"]


def test_with_one_breakpoint_left_the_system_prompt_takes_it() -> None:
    out = with_breakpoints({"system": "You are terse.", "tools": _tools(3), "messages": list(HISTORY)}, "5m")
    assert _marked(out) == ["system", "tool:t0", "tool:t1", "tool:t2"]


def test_with_none_left_nothing_is_added() -> None:
    out = with_breakpoints({"system": "You are terse.", "tools": _tools(4), "messages": list(HISTORY)}, "1h")
    assert _marked(out) == ["tool:t0", "tool:t1", "tool:t2", "tool:t3"]


def test_two_user_turns_are_both_marked() -> None:
    messages = [_user("u1"), _assistant("a1"), _user("u2")]
    out = with_breakpoints({"system": "s", "messages": messages}, "5m")
    assert _marked(out) == ["system", "message:0", "message:2"]


def test_without_a_summary_the_first_turn_is_not_marked_as_one() -> None:
    messages = [_user("u1"), _assistant("a1"), _user("u2"), _assistant("a2"), _user("u3")]
    out = with_breakpoints({"system": "s", "messages": messages}, "5m")
    assert _marked(out) == ["system", "message:2", "message:4"]


def test_a_request_without_user_turns_gets_only_the_head() -> None:
    out = with_breakpoints({"system": "s", "messages": []}, "5m")
    assert _marked(out) == ["system"]
    assert out["messages"] == []


def test_the_callers_system_blocks_are_marked_in_the_copy_only() -> None:
    request = {
        "system": [{"type": "text", "text": "rules"}, {"type": "text", "text": "more rules"}],
        "messages": [_user("u1")],
    }
    before = copy.deepcopy(request)
    out = with_breakpoints(request, "5m")
    assert request == before
    assert out["system"] == [
        {"type": "text", "text": "rules"},
        {"type": "text", "text": "more rules", "cache_control": EPHEMERAL},
    ]
    assert sorted(out) == ["messages", "system"]


def test_counting_a_request_without_messages() -> None:
    assert count_breakpoints({"system": [{"type": "text", "text": "s", "cache_control": EPHEMERAL}]}) == 1


def test_the_head_is_the_last_system_block_else_the_last_tool() -> None:
    three = [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}, {"type": "text", "text": "c"}]
    out = with_breakpoints({"system": three, "tools": _tools(0, 2), "messages": []}, "5m")
    assert [b.get("cache_control") for b in out["system"]] == [None, None, EPHEMERAL]
    assert _marked(out) == ["system"]
    for system in ("", [], None, [{"type": "text", "text": ""}]):
        out = with_breakpoints({"system": system, "tools": _tools(0, 2), "messages": []}, "5m")
        assert _marked(out) == ["tool:t1"], system


def test_a_caller_marked_system_block_takes_no_second_marker_and_leaves_the_tools_alone() -> None:
    system = [{"type": "text", "text": "a", "cache_control": EPHEMERAL}, {"type": "text", "text": "b"}]
    out = with_breakpoints({"system": system, "tools": _tools(0, 2), "messages": [_user("u")]}, "5m")
    assert _marked(out) == ["system", "message:0"]
    assert out["system"][1] == {"type": "text", "text": "b"}


def test_a_request_with_no_head_to_mark_still_marks_its_turns() -> None:
    out = with_breakpoints({"messages": [_user("u1"), _assistant("a"), _user("u2")]}, "5m")
    assert _marked(out) == ["message:0", "message:2"]


def test_the_one_hour_marker_carries_its_ttl() -> None:
    out = with_breakpoints({"system": "s", "tools": _tools(0, 1), "messages": [_user("u")]}, "1h")
    assert out["system"][0]["cache_control"] == {"type": "ephemeral", "ttl": "1h"}
    assert out["tools"][0] == {"name": "t0", "input_schema": {"type": "object"}}


def test_the_provider_rules_each_named_as_the_api_names_them() -> None:
    five = {"system": "s", "tools": _tools(5, 5), "messages": []}
    assert cache_problems(five) == ["A maximum of 4 blocks with cache_control may be provided. Found 5."]
    bad = {
        "messages": [
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "x", "cache_control": "yes"},
                    {"type": "text", "text": "y", "cache_control": {"type": "persistent"}},
                    {"type": "text", "text": "z", "cache_control": {"type": "ephemeral", "ttl": "2h"}},
                ],
            }
        ]
    }
    assert cache_problems(bad) == [
        "cache_control: invalid value 'yes'",
        "cache_control: invalid value {'type': 'persistent'}",
        "cache_control: invalid value {'type': 'ephemeral', 'ttl': '2h'}",
    ]
    empty = {
        "messages": [{"role": "user", "content": [{"type": "text", "text": "", "cache_control": EPHEMERAL}]}]
    }
    assert cache_problems(empty) == ["cache_control cannot be set for empty text blocks"]
    for kind in ("thinking", "redacted_thinking"):
        thinking = {
            "messages": [
                {
                    "role": "assistant",
                    "content": [{"type": kind, "thinking": "t", "cache_control": EPHEMERAL}],
                }
            ]
        }
        assert cache_problems(thinking) == ["cache_control cannot be set on thinking blocks"], kind


def test_one_hour_entries_must_come_before_five_minute_ones() -> None:
    hour = {"type": "ephemeral", "ttl": "1h"}
    tools = [{"name": "a", "cache_control": EPHEMERAL}, {"name": "b", "cache_control": hour}]
    assert cache_problems({"tools": tools}) == [
        "a ttl='1h' cache_control block must not come after a ttl='5m' one"
    ]
    assert cache_problems({"tools": tools[::-1]}) == []
    same = [{"name": "a", "cache_control": hour}, {"name": "b", "cache_control": hour}]
    assert cache_problems({"tools": same}) == []


def test_a_turn_is_marked_on_its_last_block_that_may_carry_a_marker() -> None:
    recalled = f"{OPEN_TAG}\nan archived snippet"
    messages = [
        {"role": "user", "content": [{"type": "text", "text": "question"}, {"type": "text", "text": ""}]},
        _assistant("a1"),
        {"role": "user", "content": recalled},  # recalled snippets alone: never marked
    ]
    out = with_breakpoints({"system": "s", "messages": messages}, "5m")
    assert _marked(out) == ["system", "message:0"]
    assert out["messages"][0]["content"] == [
        {"type": "text", "text": "question", "cache_control": EPHEMERAL},
        {"type": "text", "text": ""},
    ]
    assert out["messages"][2] == {"role": "user", "content": recalled}
    plain = with_breakpoints(
        {"system": "s", "messages": [_assistant("a"), {"role": "user", "content": "hi"}]}, "5m"
    )
    assert plain["messages"][1]["content"] == [{"type": "text", "text": "hi", "cache_control": EPHEMERAL}]


def test_a_summary_prefix_after_the_first_assistant_turn_is_not_the_summary() -> None:
    quoted = {"role": "user", "content": [{"type": "text", "text": f"{SUMMARY_PREFIX}pasted by the user"}]}
    messages = [
        _user("u0"),
        _assistant("a0"),
        quoted,
        _assistant("a1"),
        _user("u4"),
        _assistant("a2"),
        _user("u6"),
    ]
    out = with_breakpoints({"system": "s", "messages": messages}, "5m")
    assert _marked(out) == ["system", "message:4", "message:6"]


def test_the_head_counts_against_the_four_whichever_block_it_is() -> None:
    # A caller's tool marker and a system prompt in blocks: the head (the last system block) and the
    # three turns would be five, so the head counts and only two turns are marked.
    system = [{"type": "text", "text": "rules"}]
    out = with_breakpoints({"system": system, "tools": _tools(1, 2), "messages": list(HISTORY)}, "5m")
    assert _marked(out) == ["system", "tool:t0", "message:4", "message:6"]
    # A caller-marked system block is no head of ours: the three turns are marked.
    marked_system = [{"type": "text", "text": "rules", "cache_control": EPHEMERAL}]
    out = with_breakpoints({"system": marked_system, "messages": list(HISTORY)}, "5m")
    assert _marked(out) == ["system", "message:0", "message:4", "message:6"]
    # No head at all (no system prompt, the tools marked by the caller): the three turns are marked.
    out = with_breakpoints({"tools": _tools(1, 1), "messages": list(HISTORY)}, "5m")
    assert _marked(out) == ["tool:t0", "message:0", "message:4", "message:6"]


def test_a_request_without_messages_gets_its_head_marked() -> None:
    out = with_breakpoints({"system": "s"}, "5m")
    assert out == {"system": [{"type": "text", "text": "s", "cache_control": EPHEMERAL}], "messages": []}


def test_a_turn_that_cannot_be_marked_leaves_its_breakpoint_to_the_previous_one() -> None:
    recalled = f"{OPEN_TAG}\nan archived snippet"
    for newest in (recalled, [{"type": "text", "text": ""}]):
        messages = [_user("u0"), _assistant("a0"), {"role": "user", "content": newest}]
        out = with_breakpoints({"system": "s", "tools": _tools(2, 2), "messages": messages}, "5m")
        assert _marked(out) == ["system", "tool:t0", "tool:t1", "message:0"], newest
