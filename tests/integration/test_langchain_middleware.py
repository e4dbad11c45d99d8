"""``SleepcompactMiddleware`` under the real LangChain v1 ``create_agent``, on real SQLite and PostgreSQL.

The model is langchain_core's ``GenericFakeChatModel`` (scripted replies, tool calls included),
subclassed only to record the messages of each call and to accept tools; the agent loop, the tool node,
the checkpointer and the middleware hooks are LangChain's and LangGraph's own.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatResult
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from pydantic import Field

from sleepcompact import ContextOverflow, InvalidSetting, Memory, Settings
from sleepcompact.domain.validation import openai_problems
from sleepcompact.integrations.langchain import SleepcompactMiddleware
from tests.support.queues import RecordingQueue

SYSTEM = "You are a careful calculator."


class RecordingChatModel(GenericFakeChatModel):
    """The fake chat model, recording what each call received; ``bind_tools`` keeps it as it is."""

    seen: list[list[BaseMessage]] = Field(default_factory=list)

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> RecordingChatModel:  # type: ignore[override]
        return self

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        self.seen.append(list(messages))
        return super()._generate(messages, *args, **kwargs)


def _model(*replies: AIMessage) -> RecordingChatModel:
    return RecordingChatModel(messages=iter(replies))


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@pytest.fixture
def mem(database_url: str) -> Iterator[Memory]:
    """A Memory whose guard's ticks are recorded (no broker)."""
    memory = Memory(Settings(database_url=database_url), auto_migrate=True, queue=RecordingQueue())
    try:
        yield memory
    finally:
        memory.close()


def _shape(messages: Sequence[BaseMessage]) -> list[tuple[Any, ...]]:
    """Messages as (type, text, tool calls, tool call id), ids aside."""
    return [
        (
            m.type,
            m.text,
            [(c["name"], c["args"]) for c in getattr(m, "tool_calls", [])],
            getattr(m, "tool_call_id", None),
        )
        for m in messages
    ]


def _thread(name: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": name}}


def test_turns_are_stored_and_the_model_gets_the_prepared_context(mem: Memory) -> None:
    model = _model(
        AIMessage(content="", tool_calls=[{"name": "add", "args": {"a": 2, "b": 2}, "id": "c1"}]),
        AIMessage(content="It is 4."),
        AIMessage(content="You asked for 2+2."),
    )
    mw = SleepcompactMiddleware(memory=mem, model="gpt-4o-mini")
    agent = create_agent(
        model=model, tools=[add], system_prompt=SYSTEM, middleware=[mw], checkpointer=InMemorySaver()
    )
    agent.invoke({"messages": [HumanMessage("What is 2+2?")]}, config=_thread("lc-turns"))
    out = agent.invoke({"messages": [HumanMessage("What did I ask?")]}, config=_thread("lc-turns"))

    assert out["messages"][-1].text == "You asked for 2+2."
    assert len(out["messages"]) == 6  # the state is LangChain's, left as it was
    stored = list(mem.export("lc-turns").appended)
    assert [m["role"] for m in stored] == ["user", "assistant", "tool", "assistant", "user", "assistant"]
    assert json.loads(stored[1]["tool_calls"][0]["function"]["arguments"]) == {"a": 2, "b": 2}
    assert mw.last_action == "none" and mw.last_context is not None

    # The third call got the guard's context: the system prompt, then the stored history.
    third = model.seen[2]
    assert third[0].type == "system" and third[0].text == SYSTEM
    context = mem.context("lc-turns", system=SYSTEM, fmt="openai").messages[:-1]  # before the last reply
    assert openai_problems(context) == []
    assert _shape(third) == [
        ("system", SYSTEM, [], None),
        ("human", "What is 2+2?", [], None),
        ("ai", "", [("add", {"a": 2, "b": 2})], None),
        ("tool", "4", [], "c1"),
        ("ai", "It is 4.", [], None),
        ("human", "What did I ask?", [], None),
    ]


def test_without_a_checkpointer_sleepcompact_keeps_the_history(mem: Memory) -> None:
    model = _model(AIMessage(content="Noted: blue."), AIMessage(content="Blue."))
    mw = SleepcompactMiddleware("lc-nockpt", mem)
    agent = create_agent(model=model, tools=[add], middleware=[mw])
    agent.invoke({"messages": [HumanMessage("My favourite colour is blue.")]})
    agent.invoke({"messages": [HumanMessage("What is my favourite colour?")]})
    assert [m.text for m in model.seen[1]] == [
        "My favourite colour is blue.",
        "Noted: blue.",
        "What is my favourite colour?",
    ]
    assert len(mem.export("lc-nockpt").appended) == 4


def test_the_async_hooks_store_and_prepare_too(mem: Memory) -> None:
    model = _model(AIMessage(content="Hi."), AIMessage(content="You said hello."))
    mw = SleepcompactMiddleware(memory=mem)
    agent = create_agent(model=model, tools=[add], middleware=[mw], checkpointer=InMemorySaver())

    async def run() -> None:
        await agent.ainvoke({"messages": [HumanMessage("Hello")]}, config=_thread("lc-async"))
        await agent.ainvoke({"messages": [HumanMessage("What did I say?")]}, config=_thread("lc-async"))

    asyncio.run(run())
    assert [m.text for m in model.seen[1]] == ["Hello", "Hi.", "What did I say?"]
    assert [m["content"] for m in mem.export("lc-async").appended] == [
        "Hello",
        "Hi.",
        "What did I say?",
        "You said hello.",
    ]


def _long_history(turns: int) -> list[BaseMessage]:
    out: list[BaseMessage] = []
    for i in range(turns):
        words = " ".join(f"w{i}x{j}" for j in range(60))
        out.append(HumanMessage(f"Step {i}: look at module_{i}.py please. {words}"))
        out.append(
            AIMessage(content="", tool_calls=[{"name": "add", "args": {"a": i, "b": 1}, "id": f"c{i}"}])
        )
        body = "\n".join(f"line {k} of module_{i}: value_{i}_{k} = {k * i}" for k in range(40))
        out.append(ToolMessage(body, tool_call_id=f"c{i}"))
        out.append(AIMessage(content=f"Module {i} sets value_{i}_3. {words}"))
    out.append(HumanMessage("Which value does module 29 set?"))
    return out


def test_a_long_history_is_compacted_so_what_the_model_gets_fits(mem: Memory) -> None:
    model = _model(AIMessage(content="value_29_3"))
    mw = SleepcompactMiddleware("lc-long", mem, model="gpt-4o-mini", context_window=8_000)
    agent = create_agent(model=model, tools=[add], system_prompt=SYSTEM, middleware=[mw])
    history = _long_history(30)
    agent.invoke({"messages": history})

    assert mw.last_action in ("emergency_compacted", "fallback_compacted")
    ctx = mw.last_context
    assert ctx is not None and ctx.tokens <= ctx.usable
    (seen,) = model.seen
    counter = mem.admin.counter
    assert sum(counter.count(m.text) for m in seen) < ctx.usable  # what reached the model fits
    assert len(seen) < len(history)
    assert seen[-1].text.startswith("Which value does module 29 set?")  # then what the archive recalls
    assert len(mem.export("lc-long").appended) == len(history) + 1  # every message kept


def test_context_overflow_surfaces_as_the_typed_error(mem: Memory) -> None:
    model = _model(AIMessage(content="never"))
    huge = "Follow these rules. " + " ".join(f"rule{i}" for i in range(9_000))
    mw = SleepcompactMiddleware("lc-over", mem, model="gpt-4o-mini", context_window=8_000)
    agent = create_agent(model=model, tools=[add], system_prompt=huge, middleware=[mw])
    with pytest.raises(ContextOverflow) as caught:
        agent.invoke({"messages": [HumanMessage("hello")]})
    assert caught.value.conversation_id == "lc-over" and caught.value.fixed_tokens > caught.value.usable
    assert model.seen == []  # the model was never called


def test_a_run_without_a_conversation_is_a_clear_error(mem: Memory) -> None:
    agent = create_agent(
        model=_model(AIMessage(content="x")), tools=[add], middleware=[SleepcompactMiddleware(None, mem)]
    )
    with pytest.raises(InvalidSetting, match="thread_id"):
        agent.invoke({"messages": [HumanMessage("hello")]})


DOCS = Path(__file__).resolve().parents[2] / "docs" / "integrations.md"


def _docs_block() -> str:
    """The one fenced Python block of the ``## LangChain`` section of docs/integrations.md."""
    section = DOCS.read_text(encoding="utf-8").split("\n## LangChain\n", 1)[1].split("\n## ", 1)[0]
    (block,) = re.findall(r"^```python\n(.*?)^```", section, re.S | re.M)
    return str(block)


def test_the_docs_example_runs_as_written(tmp_path: Path) -> None:
    block = _docs_block()
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(("SLEEPCOMPACT_", "ANTHROPIC_", "OPENAI_"))
    }
    env.update(SLEEPCOMPACT_DATABASE_URL=f"sqlite:///{tmp_path}/docs.db")
    run = subprocess.run([sys.executable, "-c", block], env=env, cwd=tmp_path, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines() == ["Your name is Ada. none", "4"]
