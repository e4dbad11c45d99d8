"""``SleepcompactSession`` under the real OpenAI Agents SDK, on real SQLite and PostgreSQL.

Only the remote model is replaced: ``Runner.run`` drives an ``Agent`` whose model (the SDK's own
``OpenAIChatCompletionsModel`` or ``OpenAIResponsesModel``) talks through the real ``openai`` client to
``tests.support.fake_openai``, a local HTTP stand-in that records every request. Tracing is off, so
nothing leaves the machine.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from agents import (
    Agent,
    OpenAIChatCompletionsModel,
    OpenAIResponsesModel,
    Runner,
    function_tool,
    set_tracing_disabled,
)
from agents.memory.session import Session
from agents.models.interface import Model
from openai import AsyncOpenAI

from sleepcompact import ContextOverflow, Memory, Settings
from sleepcompact.domain.validation import openai_problems
from sleepcompact.integrations.openai_agents import SleepcompactSession
from tests.support.fake_openai import FakeOpenAI, Reply
from tests.support.queues import RecordingQueue

CHAT = "/v1/chat/completions"
RESPONSES = "/v1/responses"
MODEL = "gpt-4o-mini"


@function_tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@pytest.fixture(autouse=True)
def _no_tracing() -> None:
    set_tracing_disabled(True)


@pytest.fixture
def fake_openai() -> Iterator[FakeOpenAI]:
    server = FakeOpenAI()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def mem(database_url: str) -> Iterator[Memory]:
    """A Memory whose guard's ticks are recorded (no broker)."""
    memory = Memory(Settings(database_url=database_url), auto_migrate=True, queue=RecordingQueue())
    try:
        yield memory
    finally:
        memory.close()


def _model(kind: str, fake: FakeOpenAI) -> Model:
    client = AsyncOpenAI(api_key="test", base_url=fake.url, max_retries=0)
    if kind == "chat":
        return OpenAIChatCompletionsModel(MODEL, client)
    return OpenAIResponsesModel(MODEL, client)


def _sent(fake: FakeOpenAI, kind: str) -> list[list[dict[str, Any]]]:
    """What each request carried: chat messages, or Responses input items."""
    if kind == "chat":
        return [body["messages"] for body in fake.bodies(CHAT)]
    return [body["input"] for body in fake.bodies(RESPONSES)]


def _canonical(items: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    """Items modulo ids and wire details: messages by role and text, calls by id, name and parsed
    arguments, outputs by call id and output. Reasoning items are stored but never replayed."""
    out: list[tuple[Any, ...]] = []
    for item in items:
        kind = item.get("type", "message")
        if kind == "message":
            content = item["content"]
            text = content if isinstance(content, str) else "".join(p.get("text", "") for p in content)
            out.append(("message", item["role"], text))
        elif kind == "function_call":
            out.append(("call", item["call_id"], item["name"], json.loads(item["arguments"])))
        elif kind == "function_call_output":
            out.append(("output", item["call_id"], item["output"]))
    return out


ITEMS: list[dict[str, Any]] = [
    {"content": "What is 2+2, and what is in notes.txt?", "role": "user"},
    {
        "id": "msg_1",
        "content": [{"annotations": [], "text": "Let me check.", "type": "output_text", "logprobs": []}],
        "role": "assistant",
        "status": "completed",
        "type": "message",
    },
    {"id": "rs_1", "summary": [{"type": "summary_text", "text": "add, then read"}], "type": "reasoning"},
    {"arguments": '{"a":2,"b":2}', "call_id": "call_1", "name": "add", "type": "function_call", "id": "fc_1"},
    {"arguments": '{"path":"notes.txt"}', "call_id": "call_2", "name": "read", "type": "function_call"},
    {"call_id": "call_1", "output": "4", "type": "function_call_output"},
    {"call_id": "call_2", "output": "buy milk", "type": "function_call_output"},
    {
        "id": "msg_2",
        "content": [{"annotations": [], "text": "4, and: buy milk.", "type": "output_text"}],
        "role": "assistant",
        "status": "completed",
        "type": "message",
    },
    {"role": "user", "content": [{"type": "input_text", "text": "Thanks!"}]},
]


def test_the_session_is_the_sdks_session_and_round_trips_items(mem: Memory) -> None:
    session = SleepcompactSession("agents-rt", mem, model=MODEL)
    assert isinstance(session, Session)
    assert asyncio.run(session.get_items()) == []  # nothing stored yet, and nothing created
    asyncio.run(session.add_items(ITEMS))
    items = asyncio.run(session.get_items())
    assert _canonical(items) == _canonical(ITEMS)
    assert not any(i.get("type") == "reasoning" for i in items)
    assert session.last_action == "none"
    assert _canonical(asyncio.run(session.get_items(limit=2))) == _canonical(ITEMS)[-2:]
    assert asyncio.run(session.get_items(limit=0)) == []
    # Stored as the importer of `sleepcompact import` stores the same items (reasoning included).
    assert len(mem.export("agents-rt").appended) == len(ITEMS)


def test_pop_archives_the_newest_item_and_adding_it_back_restores_it(mem: Memory) -> None:
    session = SleepcompactSession("agents-pop", mem, model=MODEL)
    assert asyncio.run(session.pop_item()) is None  # an empty session
    asyncio.run(session.add_items(ITEMS[:8]))  # up to the assistant's answer
    before = _canonical(asyncio.run(session.get_items()))

    popped = asyncio.run(session.pop_item())
    assert popped is not None and popped.get("id") in (None, "__fake_id__")  # not the provider's id
    assert popped["content"] == ITEMS[7]["content"]  # the parts exactly as added
    assert _canonical([popped]) == _canonical([ITEMS[7]])
    assert _canonical(asyncio.run(session.get_items())) == before[:-1]
    rows = mem.export("agents-pop").messages
    assert [r["state"] for r in rows][-1] == "archived" and len(rows) == 8  # archived, not deleted
    pop = mem.compactions.history("agents-pop")[-1]
    assert (pop.trigger, pop.steps[0]["step"], pop.status) == ("clear", "pop", "applied")

    # The SDK puts back what a failed rewind popped: it comes back, not as a copy.
    asyncio.run(session.add_items([popped]))
    assert _canonical(asyncio.run(session.get_items())) == before
    assert len(mem.export("agents-pop").messages) == 8
    assert mem.compactions.history("agents-pop")[-1].status == "reverted"

    # A popped tool output leaves its call answered by a placeholder, so the request stays valid;
    # the output added back is restored (adding it as new would be a second result for that call).
    asyncio.run(session.pop_item())
    output = asyncio.run(session.pop_item())
    assert output == {"type": "function_call_output", "call_id": "call_2", "output": "buy milk"}
    placeholder = ("output", "call_2", "[no result was recorded for this tool call]")
    assert placeholder in _canonical(asyncio.run(session.get_items()))
    asyncio.run(session.add_items([output, popped]))
    assert _canonical(asyncio.run(session.get_items())) == before


def test_a_pop_is_not_restored_once_something_new_was_added(mem: Memory) -> None:
    session = SleepcompactSession("agents-pop3", mem, model=MODEL)
    asyncio.run(session.add_items(ITEMS[:2]))
    popped = asyncio.run(session.pop_item())
    assert popped is not None
    asyncio.run(session.add_items([{"role": "user", "content": "Something new."}]))
    asyncio.run(session.add_items([popped]))  # now a new item, appended after the new one
    assert _canonical(asyncio.run(session.get_items())) == [
        ("message", "user", f"{ITEMS[0]['content']}\n\nSomething new."),  # one side's turn, joined
        ("message", "assistant", "Let me check."),
    ]
    assert mem.compactions.history("agents-pop3")[-1].status == "applied"  # the pop stands


def test_pop_restore_brings_the_item_back_through_the_admin_api(mem: Memory) -> None:
    session = SleepcompactSession("agents-pop2", mem, model=MODEL)
    asyncio.run(session.add_items(ITEMS[:2]))
    asyncio.run(session.pop_item())
    assert _canonical(asyncio.run(session.get_items())) == _canonical(ITEMS[:1])
    pop = mem.compactions.history("agents-pop2")[-1]
    assert pop.trigger == "clear" and pop.steps[0]["step"] == "pop"
    mem.compactions.restore(pop.id)
    assert _canonical(asyncio.run(session.get_items())) == _canonical(ITEMS[:2])


def test_clear_session_archives_everything_restorably(mem: Memory) -> None:
    session = SleepcompactSession("agents-clear", mem, model=MODEL)
    asyncio.run(session.clear_session())  # nothing stored: nothing to do
    asyncio.run(session.add_items(ITEMS))
    asyncio.run(session.clear_session())
    assert asyncio.run(session.get_items()) == []
    assert len(mem.export("agents-clear").appended) == len(ITEMS)
    mem.compactions.restore(mem.compactions.history("agents-clear")[-1].id)
    assert _canonical(asyncio.run(session.get_items())) == _canonical(ITEMS)


@pytest.mark.parametrize("kind", ["chat", "responses"])
def test_runner_run_twice_the_second_request_carries_the_first_turn(
    mem: Memory, fake_openai: FakeOpenAI, kind: str
) -> None:
    agent = Agent(name="calc", instructions="Be brief.", model=_model(kind, fake_openai), tools=[add])
    session = SleepcompactSession("agents-run", mem, model=MODEL)
    fake_openai.script(Reply(text=None, tool_calls=[("add", {"a": 2, "b": 2})]), Reply(text="It is 4."))
    first = asyncio.run(Runner.run(agent, "What is 2+2?", session=session))
    assert first.final_output == "It is 4."
    fake_openai.script(Reply(text="You asked for 2+2."))
    second = asyncio.run(Runner.run(agent, "What did I ask?", session=session))
    assert second.final_output == "You asked for 2+2."
    assert session.last_action == "none"

    last = _sent(fake_openai, kind)[-1]
    text = json.dumps(last)
    assert "What is 2+2?" in text and "It is 4." in text and "What did I ask?" in text
    if kind == "chat":
        assert openai_problems(last) == []
        assert [m["role"] for m in last] == ["system", "user", "assistant", "tool", "assistant", "user"]
    else:
        assert [i.get("type", "message") for i in last] == [
            "message",
            "function_call",
            "function_call_output",
            "message",
            "message",
        ]
        assert all(i.get("id") != "__fake_id__" for i in last)  # the SDK drops its placeholder
    stored = mem.export("agents-run").appended
    assert [m["role"] for m in stored] == ["user", "assistant", "tool", "assistant", "user", "assistant"]


def _long_history(turns: int) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    for i in range(turns):
        words = " ".join(f"w{i}x{j}" for j in range(60))
        items.append({"role": "user", "content": f"Step {i}: look at module_{i}.py please. {words}"})
        items.append(
            {"type": "function_call", "call_id": f"c{i}", "name": "read", "arguments": json.dumps({"p": i})}
        )
        body = "\n".join(f"line {k} of module_{i}: value_{i}_{k} = {k * i}" for k in range(40))
        items.append({"type": "function_call_output", "call_id": f"c{i}", "output": body})
        text = f"Module {i} sets value_{i}_3. " + words
        items.append(
            {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": text}]}
        )
    return items


@pytest.mark.parametrize("kind", ["chat", "responses"])
def test_a_long_history_is_compacted_so_the_request_fits(
    mem: Memory, fake_openai: FakeOpenAI, kind: str
) -> None:
    session = SleepcompactSession("agents-long", mem, model=MODEL, context_window=8_000, system="Be brief.")
    history = _long_history(30)
    asyncio.run(session.add_items(history))
    stored_tokens = mem.check("agents-long").tokens
    usable = mem.check("agents-long").usable
    assert stored_tokens > usable  # the history alone would not fit

    agent = Agent(name="reader", instructions="Be brief.", model=_model(kind, fake_openai))
    result = asyncio.run(Runner.run(agent, "Which value does module 29 set?", session=session))
    assert result.final_output == "ok"
    assert session.last_action in ("emergency_compacted", "fallback_compacted")
    ctx = session.last_context
    assert ctx is not None and ctx.tokens <= ctx.usable

    (sent,) = _sent(fake_openai, kind)
    counter = mem.admin.counter
    assert counter.count(json.dumps(sent)) < usable  # what reached the model fits, JSON and all
    assert "Which value does module 29 set?" in json.dumps(sent)
    assert len(sent) < len(history)
    if kind == "chat":
        assert openai_problems(sent) == []
    assert len(mem.export("agents-long").appended) == len(history) + 2  # nothing deleted


def test_context_overflow_propagates_and_nothing_is_sent(mem: Memory, fake_openai: FakeOpenAI) -> None:
    instructions = "Follow these rules. " + " ".join(f"rule{i}" for i in range(9_000))
    session = SleepcompactSession("agents-over", mem, model=MODEL, context_window=8_000, system=instructions)
    asyncio.run(session.add_items(ITEMS[:1]))
    agent = Agent(name="x", instructions=instructions, model=_model("chat", fake_openai))
    with pytest.raises(ContextOverflow) as caught:
        asyncio.run(Runner.run(agent, "hello", session=session))
    assert caught.value.usable == mem.check("agents-over").usable  # the figures travel with it
    assert fake_openai.requests == []


def test_memory_is_built_from_the_environment_on_first_use(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "env.db"
    monkeypatch.setenv("SLEEPCOMPACT_DATABASE_URL", f"sqlite:///{db}")
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    session = SleepcompactSession("agents-env")
    assert not db.exists()  # nothing built by the constructor
    asyncio.run(session.add_items(ITEMS[:1]))
    assert db.exists()
    assert _canonical(asyncio.run(session.get_items())) == _canonical(ITEMS[:1])
    session.memory.close()


def test_importing_sleepcompact_imports_no_framework() -> None:
    code = (
        "import sys, sleepcompact, sleepcompact.integrations\n"
        "names = ('agents', 'langchain', 'langchain_core', 'langgraph')\n"
        "bad = [m for m in names if m in sys.modules]\n"
        "assert not bad, bad\n"
    )
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    subprocess.run([sys.executable, "-c", code], check=True, env=env)


DOCS = Path(__file__).resolve().parents[2] / "docs" / "integrations.md"


def section_blocks(heading: str) -> list[str]:
    """The fenced Python blocks of one ``## heading`` section of docs/integrations.md."""
    text = DOCS.read_text(encoding="utf-8")
    section = text.split(f"\n## {heading}\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"^```python\n(.*?)^```", section, re.S | re.M)


def test_the_docs_example_runs_as_written(fake_openai: FakeOpenAI, tmp_path: Path) -> None:
    (block,) = section_blocks("OpenAI Agents SDK")
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(("SLEEPCOMPACT_", "ANTHROPIC_", "OPENAI_"))
    }
    env.update(
        SLEEPCOMPACT_DATABASE_URL=f"sqlite:///{tmp_path}/docs.db",
        OPENAI_API_KEY="sk-docs-test",
        OPENAI_BASE_URL=fake_openai.url,
        OPENAI_AGENTS_DISABLE_TRACING="1",
        PYTHONPATH=str(Path(__file__).resolve().parents[2]),
    )
    run = subprocess.run([sys.executable, "-c", block], env=env, cwd=tmp_path, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines() == ["ok none", "4"]
    _, second = fake_openai.bodies(RESPONSES)
    assert (
        "My name is Ada." in json.dumps(second["input"])
        and second["instructions"] == "Reply in one sentence."
    )
