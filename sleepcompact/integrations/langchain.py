"""A LangChain v1 agent middleware backed by sleepcompact: ``SleepcompactMiddleware``.

``create_agent(model, tools, middleware=[SleepcompactMiddleware()])`` stores every message of the
agent's state in a sleepcompact conversation and sends the model what the guard prepares instead of
the raw state, a drop-in alternative to LangChain's ``SummarizationMiddleware``:

* ``before_model``, ``after_model`` and ``after_agent`` (and their async twins) store the messages the
  state gained since the last hook, with the importer of ``sleepcompact import``
  (``domain.agent_logs.langchain_messages``); how many are stored is kept in the agent's state (a
  private key, ``sleepcompact_stored``), so a checkpointer carries it across invocations and an
  invocation without one stores just the messages it is given;
* ``wrap_model_call`` (``awrap_model_call``) runs the guard (``prepare_context(..., fmt="openai")``)
  with the request's system prompt and tools, and replaces the request's messages with its context,
  so the model always gets a context that fits: compacted history as its summary and the turns kept.

The state itself is left as it is (the checkpointer still holds every message); sleepcompact is where
history is kept, compacted and searched. The conversation is the constructor's ``conversation_id``, else
the run's ``thread_id`` (``config={"configurable": {"thread_id": ...}}``), created on the first write
with ``model`` and ``context_window``. ``ContextOverflow`` propagates from the model call when the system
prompt, the tools and the newest turn alone do not fit. ``last_context`` (the guard's
``PreparedContext``) and ``last_action`` say what the guard did; each call also logs the guard's
canonical ``guard`` event.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Annotated, Any, NotRequired, cast

try:
    from langchain.agents.middleware import AgentMiddleware, AgentState, ModelRequest, ModelResponse
    from langchain.agents.middleware.types import ModelCallResult, PrivateStateAttr
    from langchain_core.messages import AnyMessage, SystemMessage, convert_to_messages, messages_to_dict
    from langchain_core.tools import BaseTool
    from langchain_core.utils.function_calling import convert_to_openai_tool
    from langgraph.config import get_config
    from langgraph.runtime import Runtime
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "sleepcompact.integrations.langchain needs LangChain v1: pip install 'sleepcompact[langchain]'"
    ) from exc

from sleepcompact.api import Memory
from sleepcompact.domain.agent_logs import langchain_messages
from sleepcompact.domain.errors import InvalidSetting
from sleepcompact.domain.guard import Action
from sleepcompact.integrations._backing import Backing, split_system
from sleepcompact.services.prepared import PreparedContext

__all__ = ["SleepcompactMiddleware", "SleepcompactState"]

STORED_KEY = "sleepcompact_stored"


class SleepcompactState(AgentState[Any]):
    """The agent state with how many of its messages are stored (private to the middleware)."""

    sleepcompact_stored: NotRequired[Annotated[int, PrivateStateAttr]]


class SleepcompactMiddleware(AgentMiddleware[SleepcompactState, Any, Any]):
    """Stores each turn in sleepcompact and gives the model the guard's context instead of the state.

    ``conversation_id`` (1 to 40 characters): the conversation every run uses; None takes the run's
    ``thread_id``. ``memory=None`` builds ``Memory.from_env()`` on first use. ``model`` and
    ``context_window`` are what a new conversation is created with (the budget follows them; default:
    ``SLEEPCOMPACT_DEFAULT_MODEL`` and that model's window).
    """

    state_schema = SleepcompactState

    def __init__(
        self,
        conversation_id: str | None = None,
        memory: Memory | None = None,
        *,
        model: str | None = None,
        context_window: int | None = None,
    ) -> None:
        super().__init__()
        self.conversation_id = conversation_id
        self._backing = Backing(memory, model=model, context_window=context_window)

    @property
    def memory(self) -> Memory:
        """The Memory behind the middleware (built from the environment on first use if none was given)."""
        return self._backing.memory

    @property
    def last_context(self) -> PreparedContext | None:
        """The guard's latest answer (its action, tokens, usable budget, compaction id), or None."""
        return self._backing.last_context

    @property
    def last_action(self) -> Action | None:
        """What the guard did on the latest model call (``none``, ``sleep_requested``,
        ``emergency_compacted``, ``fallback_compacted``), or None before the first."""
        return self._backing.last_action

    # -- storing the turns ----------------------------------------------------------------------------

    def before_model(self, state: SleepcompactState, runtime: Runtime[Any]) -> dict[str, Any] | None:
        """Store what the state gained since the last hook (the user's turn, tool results)."""
        return self._store(state, runtime)

    async def abefore_model(self, state: SleepcompactState, runtime: Runtime[Any]) -> dict[str, Any] | None:
        """``before_model`` in a worker thread."""
        return await asyncio.to_thread(self._store, state, runtime)

    def after_model(self, state: SleepcompactState, runtime: Runtime[Any]) -> dict[str, Any] | None:
        """Store the model's reply."""
        return self._store(state, runtime)

    async def aafter_model(self, state: SleepcompactState, runtime: Runtime[Any]) -> dict[str, Any] | None:
        """``after_model`` in a worker thread."""
        return await asyncio.to_thread(self._store, state, runtime)

    def after_agent(self, state: SleepcompactState, runtime: Runtime[Any]) -> dict[str, Any] | None:
        """Store what the run ended with after the model's last reply (a ``return_direct`` tool's)."""
        return self._store(state, runtime)

    async def aafter_agent(self, state: SleepcompactState, runtime: Runtime[Any]) -> dict[str, Any] | None:
        """``after_agent`` in a worker thread."""
        return await asyncio.to_thread(self._store, state, runtime)

    def _store(self, state: SleepcompactState, runtime: Runtime[Any]) -> dict[str, Any] | None:
        messages = state["messages"]
        done = state.get("sleepcompact_stored", 0)
        if done >= len(messages):
            return None
        found = langchain_messages(messages_to_dict(messages[done:]))
        chat = [m.data for m in found if not _empty_reply(m.data)]
        self._backing.append_many(self._conversation(runtime), chat)
        return {STORED_KEY: len(messages)}

    # -- the model call -------------------------------------------------------------------------------

    def wrap_model_call(
        self, request: ModelRequest[Any], handler: Callable[[ModelRequest[Any]], ModelResponse[Any]]
    ) -> ModelCallResult[Any]:
        """Send the guard's context instead of the state's messages."""
        return handler(self._prepared(request))

    async def awrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]],
    ) -> ModelCallResult[Any]:
        """``wrap_model_call``, the guard in a worker thread."""
        return await handler(await asyncio.to_thread(self._prepared, request))

    def _prepared(self, request: ModelRequest[Any]) -> ModelRequest[Any]:
        system = request.system_prompt
        ctx = self._backing.prepare(
            self._conversation(request.runtime), system=system, tools=_tool_dicts(request.tools), create=True
        )
        assert ctx is not None  # created when missing
        stored_system, messages = split_system(ctx.messages, system)
        system_message = request.system_message
        if stored_system:  # system messages stored in the conversation join the request's own
            system_message = SystemMessage(content="\n\n".join(t for t in (system, stored_system) if t))
        lc_messages = cast(list[AnyMessage], convert_to_messages(messages))  # the concrete message classes
        return request.override(messages=lc_messages, system_message=system_message)

    def _conversation(self, runtime: Runtime[Any] | None) -> str:
        if self.conversation_id:
            return self.conversation_id
        info = runtime.execution_info if runtime is not None else None
        thread = info.thread_id if info is not None else None
        if not thread:
            try:
                thread = get_config().get("configurable", {}).get("thread_id")
            except RuntimeError:  # outside a run: no config
                thread = None
        if not thread:
            raise InvalidSetting(
                "SleepcompactMiddleware needs a conversation: pass conversation_id=... or run the agent with "
                "config={'configurable': {'thread_id': ...}}"
            )
        return str(thread)


def _empty_reply(message: Mapping[str, Any]) -> bool:
    """A model reply with neither text nor tool calls (nothing to store, and refused if appended)."""
    return message.get("role") == "assistant" and not message.get("content") and not message.get("tool_calls")


def _tool_dicts(tools: Sequence[BaseTool | dict[str, Any]]) -> list[dict[str, Any]] | None:
    """The request's tools as OpenAI definitions, for the guard to count (a provider's built-in tool, a
    dict LangChain cannot convert, is counted as it is)."""
    out: list[dict[str, Any]] = []
    for tool in tools:
        try:
            out.append(convert_to_openai_tool(tool))
        except (ValueError, TypeError, KeyError):
            out.append(dict(tool) if isinstance(tool, Mapping) else {"name": getattr(tool, "name", "")})
    return out or None
