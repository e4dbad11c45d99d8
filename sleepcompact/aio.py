"""``AsyncMemory``: the ``Memory`` facade for asyncio applications, with the same surface, awaitable.

There is no second copy of the logic. An ``AsyncMemory`` wraps one ``Memory`` and runs each call in a
bounded thread pool (``Settings.async_workers`` threads, ``SLEEPCOMPACT_ASYNC_WORKERS``) through
``loop.run_in_executor``, so the event loop never blocks on the database or the summarizer, and the
pool caps how many connections the calls of one process hold at once. The services are already safe
to call from many threads (one unit of work per call, the engine's pool, leases and the epoch check).

Cancellation: a call is a whole transaction in its thread. Cancelling the task that awaits it either
withdraws the call before a thread picks it up (it never runs) or lets it finish in its thread
(committed or rolled back as a whole); a write is never left half applied. ``close()`` waits for the
calls still running.

Each wrapper is generated from the ``Memory`` (or namespace) method it runs, so its signature, return
type and docstring are that method's: ``await amem.append(cid, msg)`` is typed like ``mem.append``.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
from collections.abc import Callable, Coroutine
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, Concatenate, Generic, Literal, ParamSpec, TypeVar, overload

from sqlalchemy import Engine

from sleepcompact.api import Memory
from sleepcompact.config import Settings
from sleepcompact.domain.budget import Thresholds
from sleepcompact.domain.errors import InvalidSetting
from sleepcompact.domain.ladder import Policy
from sleepcompact.facade import Admin, Compactions, Journal, Memories, Sleep
from sleepcompact.hooks import Hooks
from sleepcompact.ports import Summarizer, TaskQueue, TokenCounter
from sleepcompact.services.context import ConversationStats, DatabaseStats

if TYPE_CHECKING:
    from sleepcompact.adapters.queue import CeleryQueue

P = ParamSpec("P")
R = TypeVar("R")
T = TypeVar("T")


class _Pool:
    """The bounded thread pool every call of one ``AsyncMemory`` (and its namespaces) runs in."""

    def __init__(self, workers: int) -> None:
        if workers < 1:
            raise InvalidSetting(f"async_workers must be at least 1, got {workers}")
        self.workers = workers
        self.executor = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="sleepcompact-async")
        self.closed = False

    async def run(self, fn: Callable[P, R], /, *args: P.args, **kwargs: P.kwargs) -> R:
        """``fn(*args, **kwargs)`` in a worker thread, with the caller's context variables (structlog's
        bound fields travel with the call, as with ``asyncio.to_thread``)."""
        if self.closed:
            raise RuntimeError("this AsyncMemory is closed")
        loop = asyncio.get_running_loop()
        call = functools.partial(contextvars.copy_context().run, fn, *args, **kwargs)
        # A cancelled await cancels the executor's future: a call still queued never starts, a running
        # one finishes in its thread (one transaction, committed or rolled back whole).
        return await loop.run_in_executor(self.executor, call)


class _Proxy(Generic[T]):
    """An async view of one sync object (``Memory`` or a namespace) sharing one pool."""

    def __init__(self, target: T, pool: _Pool) -> None:
        self._target = target
        self._pool = pool


def _awaitable(
    method: Callable[Concatenate[T, P], R],
) -> Callable[Concatenate[_Proxy[T], P], Coroutine[Any, Any, R]]:
    """An async method running the sync ``method`` of the proxied object in the pool (same signature,
    same docstring)."""

    @functools.wraps(method)
    async def run(self: _Proxy[T], /, *args: P.args, **kwargs: P.kwargs) -> R:
        return await self._pool.run(method, self._target, *args, **kwargs)

    return run


class AsyncCompactions(_Proxy[Compactions]):
    """``amem.compactions``: ``mem.compactions``, awaitable."""

    compact = _awaitable(Compactions.compact)
    restore = _awaitable(Compactions.restore)
    history = _awaitable(Compactions.history)
    rerun = _awaitable(Compactions.rerun)
    preview_rerun = _awaitable(Compactions.preview_rerun)
    queue_rerun = _awaitable(Compactions.queue_rerun)
    submit_batch = _awaitable(Compactions.submit_batch)
    poll_batches = _awaitable(Compactions.poll_batches)


class AsyncJournal(_Proxy[Journal]):
    """``amem.journal``: ``mem.journal``, awaitable."""

    add = _awaitable(Journal.add)
    entries = _awaitable(Journal.entries)


class AsyncMemories(_Proxy[Memories]):
    """``amem.memories``: ``mem.memories``, awaitable."""

    list = _awaitable(Memories.list)
    search = _awaitable(Memories.search)
    correct = _awaitable(Memories.correct)
    delete = _awaitable(Memories.delete)
    consolidate = _awaitable(Memories.consolidate)


class AsyncSleep(_Proxy[Sleep]):
    """``amem.sleep``: ``mem.sleep``, awaitable."""

    tick = _awaitable(Sleep.tick)
    run_tick = _awaitable(Sleep.run_tick)
    sweep_nightly = _awaitable(Sleep.sweep_nightly)
    sweep_idle = _awaitable(Sleep.sweep_idle)
    tick_now = _awaitable(Sleep.tick_now)
    request = _awaitable(Sleep.request)
    ticks = _awaitable(Sleep.ticks)


class AsyncAdmin(_Proxy[Admin]):
    """``amem.admin``: ``mem.admin``, awaitable. The attributes that do no I/O stay plain properties;
    units of work are blocking context managers, so take them from ``amem.memory.admin`` in a thread."""

    conversation = _awaitable(Admin.conversation)
    conversations = _awaitable(Admin.conversations)
    report = _awaitable(Admin.report)
    evaluate = _awaitable(Admin.evaluate)
    evaluate_qa = _awaitable(Admin.evaluate_qa)
    factors = _awaitable(Admin.factors)

    @property
    def engine(self) -> Engine:
        """The SQLAlchemy engine (for one-off SQL; the services never need it)."""
        return self._target.engine

    @property
    def counter(self) -> TokenCounter:
        """The token counter every figure is counted with."""
        return self._target.counter

    @property
    def summarizer(self) -> Summarizer:
        """The summarizer in use (built from the settings on first use)."""
        return self._target.summarizer

    @property
    def policy(self) -> Policy:
        """The ladder's default policy."""
        return self._target.policy

    @property
    def thresholds(self) -> Thresholds:
        """The global default thresholds."""
        return self._target.thresholds

    @property
    def producer(self) -> CeleryQueue:
        """The Celery producer for ``settings.broker_url``."""
        return self._target.producer


class AsyncMemory(_Proxy[Memory]):
    """``Memory`` for asyncio: every call of the request path and of the namespaces is awaitable.

    Build it like ``Memory`` (``AsyncMemory.from_env()``, ``AsyncMemory(settings, database_url=...)``),
    or over a ``Memory`` you already have (``AsyncMemory(memory=mem)``); either way it owns that Memory
    and closes it in ``close()``. Use it from any number of tasks at once::

        async with AsyncMemory.from_env() as amem:
            cid = await amem.create_conversation(model="claude-sonnet-4-5")
            await amem.append(cid, {"role": "user", "content": "hello"})
            ctx = await amem.prepare_context(cid, system="You are a careful agent.")

    Errors are the sync facade's (``ContextOverflow`` from ``prepare_context`` when the system prompt,
    tools and current turn alone do not fit). ``workers`` overrides ``Settings.async_workers``.
    """

    def __init__(
        self,
        settings: Settings | None = None,
        *,
        memory: Memory | None = None,
        workers: int | None = None,
        database_url: str | None = None,
        broker_url: str | None = None,
        counter: TokenCounter | None = None,
        summarizer: Summarizer | Callable[[str], str] | None = None,
        policy: Policy | None = None,
        auto_migrate: bool | None = None,
        queue: TaskQueue | None = None,
    ) -> None:
        building = (settings, database_url, broker_url, counter, summarizer, policy, auto_migrate, queue)
        if memory is not None and any(arg is not None for arg in building):
            raise InvalidSetting("give AsyncMemory a memory or what to build one with, not both")
        # The pool first: a bad size fails before an engine is built.
        size = (
            workers
            if workers is not None
            else (memory.settings if memory is not None else settings or Settings()).async_workers
        )
        pool = _Pool(size)
        if memory is None:
            memory = Memory(
                settings,
                database_url=database_url,
                broker_url=broker_url,
                counter=counter,
                summarizer=summarizer,
                policy=policy,
                auto_migrate=auto_migrate,
                queue=queue,
            )
        super().__init__(memory, pool)
        self.compactions = AsyncCompactions(memory.compactions, pool)
        self.journal = AsyncJournal(memory.journal, pool)
        self.memories = AsyncMemories(memory.memories, pool)
        self.sleep = AsyncSleep(memory.sleep, pool)
        self.admin = AsyncAdmin(memory.admin, pool)

    @classmethod
    def from_env(cls, **kwargs: Any) -> AsyncMemory:
        """An AsyncMemory configured from the environment (see ``Settings.from_env``)."""
        return cls(Settings.from_env(), **kwargs)

    @property
    def memory(self) -> Memory:
        """The sync facade underneath (for code that is not async; it shares the connection pool)."""
        return self._target

    @property
    def settings(self) -> Settings:
        """The settings the Memory was built with."""
        return self._target.settings

    @property
    def hooks(self) -> Hooks:
        """Register callbacks (``sleepcompact.hooks``); they run in the pool's threads."""
        return self._target.hooks

    @property
    def workers(self) -> int:
        """How many calls run at once; the rest wait their turn in order."""
        return self._pool.workers

    create_conversation = _awaitable(Memory.create_conversation)
    append = _awaitable(Memory.append)
    append_many = _awaitable(Memory.append_many)
    clear = _awaitable(Memory.clear)
    pop = _awaitable(Memory.pop)
    check = _awaitable(Memory.check)
    prepare_context = _awaitable(Memory.prepare_context)
    handle_tool_call = _awaitable(Memory.handle_tool_call)
    context = _awaitable(Memory.context)
    search_history = _awaitable(Memory.search_history)
    export = _awaitable(Memory.export)
    export_agent = _awaitable(Memory.export_agent)
    import_ = _awaitable(Memory.import_)

    @overload
    async def stats(self, conversation_id: str) -> ConversationStats: ...
    @overload
    async def stats(self, conversation_id: None = None) -> DatabaseStats: ...
    async def stats(self, conversation_id: str | None = None) -> DatabaseStats:
        """Counts and tokens for one conversation (with its budget figures) or for the whole database."""
        if conversation_id is None:
            return await self._pool.run(self._target.stats)
        return await self._pool.run(self._target.stats, conversation_id)

    @staticmethod
    def recall_tools(fmt: Literal["anthropic", "openai", "responses"] = "anthropic") -> list[dict[str, Any]]:
        """The recall tool definitions for ``fmt`` (no I/O, so not awaitable)."""
        return Memory.recall_tools(fmt)

    async def close(self) -> None:
        """Wait for the calls still running, then release the pool and the Memory (idempotent)."""
        if self._pool.closed:
            return
        self._pool.closed = True  # new calls fail at once; queued and running ones finish

        def shut() -> None:
            self._pool.executor.shutdown(wait=True)
            self._target.close()

        await asyncio.to_thread(shut)

    async def __aenter__(self) -> AsyncMemory:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()


__all__ = ["AsyncAdmin", "AsyncCompactions", "AsyncJournal", "AsyncMemories", "AsyncMemory", "AsyncSleep"]
