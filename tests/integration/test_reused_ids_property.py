"""Property (issue 14): any sequence of tool calls and results, with ids drawn from a tiny alphabet so
reuse and misuse are common, either goes in whole or is refused with a typed error and nothing written.

The rule, checked here against a model of it: an id may be reused once its earlier call has its
result; a result answers the open call with its id; an id called again while open (in one turn or
across turns), a result no call asked for and a result answering twice are refused. Both OpenAI
shapes (tool_calls and the legacy function_call, whose id is ``call_<name>``) and Anthropic's are
drawn, through ``import_`` (``ImportFormatError`` naming the first bad message) and through
``append_many`` on a conversation that already has history (the exact ``InvalidMessage`` subclass).
Whatever goes in is exported exactly and renders as a valid request for both providers.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from sleepcompact import ImportFormatError, Memory
from sleepcompact.domain.errors import (
    DuplicateToolCall,
    DuplicateToolResult,
    InvalidMessage,
    OrphanToolResult,
)
from sleepcompact.domain.validation import anthropic_problems, openai_problems

Snap = Callable[[Memory], dict[str, list[tuple[Any, ...]]]]
Msg = dict[str, Any]
IDS = ("a", "b", "a_2", "call_f")
"""Tiny on purpose: ``a_2`` is the key a reused ``a`` gets, ``call_f`` the id of a legacy call to ``f``."""
NAMES = ("f", "g")
SETTINGS = settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)

# -- drawing steps --------------------------------------------------------------------------------------

ids = st.sampled_from(IDS)
free_step = st.one_of(
    st.tuples(st.just("call"), st.lists(ids, min_size=1, max_size=3), st.booleans()),
    st.tuples(st.just("result"), st.lists(ids, min_size=1, max_size=3), st.booleans()),
    st.tuples(st.just("legacy_call"), st.sampled_from(NAMES), st.booleans()),
    st.tuples(st.just("legacy_result"), st.sampled_from(NAMES), st.booleans()),
    st.tuples(st.just("user"), st.just(""), st.booleans()),
)


MISUSES = (None, None, None, None, None, "call_twice", "answer_twice", "answer_later", "unanswered", "orphan")


@st.composite
def rounds(draw: st.DrawFn) -> list[tuple[Any, ...]]:
    """Agent loops, each call answered in any order, now and then with one misuse of the ids."""
    steps: list[tuple[Any, ...]] = []
    for _ in range(draw(st.integers(1, 4))):
        called = draw(st.lists(ids, min_size=1, max_size=3, unique=True))
        answered = list(draw(st.permutations(called)))
        misuse = draw(st.sampled_from(MISUSES))
        if misuse == "call_twice":
            called.append(called[0])
        elif misuse == "answer_twice":
            answered.append(answered[0])
        elif misuse == "unanswered":
            answered.pop()
        elif misuse == "orphan":
            answered.append(draw(ids))
        steps.append(("call", called, draw(st.booleans())))
        if answered:
            steps.append(("result", answered, draw(st.booleans())))
        if misuse == "answer_later":
            steps.append(("result", [called[0]], False))
        if draw(st.booleans()):
            steps.append(("user", "", False))
    return steps


step_lists = st.one_of(rounds(), st.lists(free_step, min_size=1, max_size=8))


def _openai(step: tuple[Any, ...], n: int) -> list[Msg]:
    kind, arg, flag = step
    if kind == "call":
        calls = [
            {
                "id": i,
                "type": "function",
                "function": {"name": "run", "arguments": json.dumps({"n": n, "k": k})},
            }
            for k, i in enumerate(arg)
        ]
        return [{"role": "assistant", "content": f"step {n}" if flag else None, "tool_calls": calls}]
    if kind == "result":  # one tool message per result; an empty one now and then
        return [
            {"role": "tool", "tool_call_id": i, "content": "" if flag else f"out {n}.{k}"}
            for k, i in enumerate(arg)
        ]
    if kind == "legacy_call":
        return [
            {"role": "assistant", "content": None, "function_call": {"name": arg, "arguments": '{"x": 1}'}}
        ]
    if kind == "legacy_result":
        return [{"role": "function", "name": arg, "content": f"fn {n}"}]
    return [{"role": "user", "content": f"go on ({n})"}]


def _anthropic(step: tuple[Any, ...], n: int) -> list[Msg]:
    kind, arg, flag = step
    if kind.startswith("legacy"):  # no legacy shape here: the same ref as a plain id
        kind, arg = kind.removeprefix("legacy_"), [f"call_{arg}"]
    if kind == "call":
        text = [{"type": "text", "text": f"step {n}"}] if flag else []
        uses = [
            {"type": "tool_use", "id": i, "name": "run", "input": {"n": n, "k": k}} for k, i in enumerate(arg)
        ]
        return [{"role": "assistant", "content": text + uses}]
    if kind == "result":
        results = [
            {"type": "tool_result", "tool_use_id": i, "content": "" if flag else f"out {n}.{k}"}
            for k, i in enumerate(arg)
        ]
        return [{"role": "user", "content": results}]
    return [{"role": "user", "content": f"go on ({n})"}]


def messages_of(steps: list[tuple[Any, ...]], shape: str, start: int = 0) -> list[Msg]:
    build = _openai if shape == "openai" else _anthropic
    return [m for n, s in enumerate(steps, start=start) for m in build(s, n)]


# -- the rule, modelled ---------------------------------------------------------------------------------


def _events(msg: Msg) -> list[tuple[str, str]]:
    if msg["role"] == "tool":
        return [("result", msg["tool_call_id"])]
    if msg["role"] == "function":
        return [("result", f"call_{msg['name']}")]
    events = [("call", str(c["id"])) for c in msg.get("tool_calls") or []]
    if "function_call" in msg:
        events.append(("call", f"call_{msg['function_call']['name']}"))
    blocks = msg["content"] if isinstance(msg["content"], list) else []
    events += [("call", b["id"]) for b in blocks if b["type"] == "tool_use"]
    return events + [("result", b["tool_use_id"]) for b in blocks if b["type"] == "tool_result"]


class Model:
    """Which refs have an open call, and which were ever called (at most one call per ref is open)."""

    def __init__(self) -> None:
        self.open: set[str] = set()
        self.seen: set[str] = set()

    def first_bad(self, messages: list[Msg]) -> tuple[int, type[InvalidMessage], str] | None:
        """The first message the rule refuses, the error and the id; None (and the model moves on) if none."""
        open_, seen = set(self.open), set(self.seen)
        for i, msg in enumerate(messages):
            for kind, ref in _events(msg):
                if kind == "call":
                    if ref in open_:
                        return i, DuplicateToolCall, ref
                    open_.add(ref)
                    seen.add(ref)
                elif ref not in open_:
                    return i, DuplicateToolResult if ref in seen else OrphanToolResult, ref
                else:
                    open_.discard(ref)
        self.open, self.seen = open_, seen
        return None


def _assert_renders_valid(mem: Memory, cid: str) -> None:
    anthropic = mem.context(cid, fmt="anthropic").messages
    openai = mem.context(cid, fmt="openai").messages
    assert anthropic_problems(anthropic) == [], json.dumps(anthropic)[:3000]
    assert openai_problems(openai) == [], json.dumps(openai)[:3000]
    assert mem.context(cid, fmt="anthropic").messages == anthropic  # the id rewrite is deterministic


# -- the properties -------------------------------------------------------------------------------------


@pytest.mark.parametrize("shape", ["openai", "anthropic"])
@SETTINGS
@given(steps=step_lists)
def test_an_import_with_reused_ids_goes_in_whole_or_not_at_all(
    sqlite_memory: Memory, db_snapshot: Snap, shape: str, steps: list[tuple[Any, ...]]
) -> None:
    messages = [{"role": "user", "content": "start"}, *messages_of(steps, shape)]
    verdict = Model().first_bad(messages)
    before = db_snapshot(sqlite_memory)
    data = json.dumps(messages).encode("utf-8")
    event(f"refused: {verdict[1].__name__}" if verdict else "imported")
    if verdict is not None:
        with pytest.raises(ImportFormatError, match=f"element {verdict[0]}: .*'{verdict[2]}'"):
            sqlite_memory.import_(data)
        assert db_snapshot(sqlite_memory) == before
        return
    (cid,) = sqlite_memory.import_(data)
    assert list(sqlite_memory.export(cid).appended) == messages
    _assert_renders_valid(sqlite_memory, cid)


@pytest.mark.parametrize("shape", ["openai", "anthropic"])
@SETTINGS
@given(history=step_lists, batch=step_lists)
def test_append_many_with_reused_ids_writes_all_or_nothing(
    sqlite_memory: Memory,
    db_snapshot: Snap,
    shape: str,
    history: list[tuple[Any, ...]],
    batch: list[tuple[Any, ...]],
) -> None:
    model = Model()
    earlier = [{"role": "user", "content": "start"}, *messages_of(history, shape)]
    verdict = model.first_bad(earlier)
    if verdict is not None:
        earlier = earlier[: verdict[0]]  # the history stored before: its longest valid prefix
        model.first_bad(earlier)
    cid = sqlite_memory.create_conversation("claude-haiku-4-5")
    sqlite_memory.append_many(cid, earlier)
    later = messages_of(batch, shape, start=len(history))
    verdict = model.first_bad(later)
    before = db_snapshot(sqlite_memory)
    event(f"refused: {verdict[1].__name__}" if verdict else "appended")
    if verdict is not None:
        with pytest.raises(InvalidMessage) as caught:
            sqlite_memory.append_many(cid, later)
        assert type(caught.value) is verdict[1] and f"'{verdict[2]}'" in str(caught.value), caught.value
        assert db_snapshot(sqlite_memory) == before
        return
    sqlite_memory.append_many(cid, later)
    assert list(sqlite_memory.export(cid).appended) == earlier + later
    _assert_renders_valid(sqlite_memory, cid)
