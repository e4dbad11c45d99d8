"""``AsyncMemory``: the sync facade's surface, awaitable, safe from many tasks at once, and cancellation
that never leaves a write half applied.

Every test runs on SQLite and PostgreSQL (``database_url``), in a fresh event loop (``asyncio.run``).
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import threading
from collections import Counter
from typing import Any

import pytest

from sleepcompact import AsyncMemory, ContextOverflow, ConversationNotFound, Memory
from sleepcompact.aio import AsyncAdmin, AsyncCompactions, AsyncJournal, AsyncMemories, AsyncSleep
from sleepcompact.config import Settings
from sleepcompact.domain.errors import InvalidSetting, SleepcompactError
from sleepcompact.domain.records import MESSAGE_STATES
from sleepcompact.facade import Admin, Compactions, Journal, Memories, Sleep
from sleepcompact.facade.moved import Moved
from tests.support.queues import RecordingQueue

# Sync-only on purpose: the deprecated names (one release of shims), the static tool definitions, and
# the admin units of work (blocking context managers; ``amem.memory.admin.uow()`` in a thread).
NOT_AWAITABLE = {"from_env", "recall_tools", "settings", "hooks", "uow", "read_uow", "__call__"}
PAIRS = [
    (Memory, AsyncMemory),
    (Compactions, AsyncCompactions),
    (Journal, AsyncJournal),
    (Memories, AsyncMemories),
    (Sleep, AsyncSleep),
    (Admin, AsyncAdmin),
]


def _amem(url: str, **kwargs: Any) -> AsyncMemory:
    return AsyncMemory(database_url=url, auto_migrate=True, queue=RecordingQueue(), **kwargs)


def _note(cid: str, n: int) -> dict[str, Any]:
    return {"role": "user", "content": f"note {n} for {cid}: the harbour was calm at dawn."}


def _consistent(mem: Memory, cid: str) -> list[str]:
    """The conversation as a reader sees it, checked: seqs 1..N with no gap or duplicate, every (seq,
    part) once, the live counters equal to a recount over the rows, no message stored twice. Returns the
    texts appended, in order."""
    exported = mem.export(cid)
    rows = exported.messages  # a summary takes the next seq too (nothing here restores, so none is deleted)
    seqs = sorted({r["seq"] for r in rows})
    assert seqs == list(range(1, len(seqs) + 1)), "a gap or a duplicate in the seqs"
    assert len({(r["seq"], r["part"]) for r in rows}) == len(rows)
    live = [r for r in rows if r["state"] != "archived"]
    conv = mem.admin.conversation(cid)
    assert conv.live_tokens == sum(r["live_tokens"] for r in live)
    assert conv.live_messages == len(live)
    assert mem.stats(cid).live_tokens == conv.live_tokens
    texts = [m["content"] for m in exported.appended]
    assert all(n == 1 for n in Counter(texts).values()), "a message stored twice"
    return texts


def test_every_sync_method_has_an_awaitable_twin() -> None:
    for sync, proxy in PAIRS:
        names = {
            n
            for n, v in vars(sync).items()
            if not n.startswith("_")
            and n not in NOT_AWAITABLE
            # The namespaces, built on first use: the next test checks each one's async twin.
            and not isinstance(v, Moved | staticmethod | functools.cached_property)
        }
        for name in sorted(names):
            twin = getattr(proxy, name, None)
            assert twin is not None, f"{proxy.__name__} has no {name}"
            if isinstance(vars(sync)[name], property):
                assert isinstance(twin, property), f"{proxy.__name__}.{name} should stay a property"
            else:
                assert inspect.iscoroutinefunction(twin), f"{proxy.__name__}.{name} is not awaitable"
                if hasattr(twin, "__wrapped__"):  # generated from the sync method: its docstring too
                    assert twin.__doc__ == getattr(sync, name).__doc__


def test_the_request_path_and_the_namespaces_answer_like_the_sync_facade(database_url: str) -> None:
    async def scenario() -> None:
        async with _amem(database_url) as amem:
            for name, kind in [
                ("compactions", AsyncCompactions),
                ("journal", AsyncJournal),
                ("memories", AsyncMemories),
                ("sleep", AsyncSleep),
                ("admin", AsyncAdmin),
            ]:
                assert isinstance(getattr(amem, name), kind)
            cid = await amem.create_conversation("claude-haiku-4-5", context_window=4_000)
            for n in range(60):
                await amem.append(cid, _note(cid, n))
            await amem.append_many(cid, [{"role": "assistant", "content": "The pottery class is Thursday."}])
            assert await amem.check(cid) == amem.memory.check(cid)  # the same call, run in a thread
            outcome = await amem.compactions.compact(cid, force=True)
            assert outcome.status == "applied"
            ctx = await amem.prepare_context(cid, system="Be brief.")
            assert ctx.tokens <= ctx.view.budget.usable
            hits = await amem.search_history(cid, "harbour dawn", 3)
            assert hits == amem.memory.search_history(cid, "harbour dawn", 3) and len(hits) == 3
            call = {"type": "tool_use", "id": "t1", "name": "read_archived", "input": {"seq": 1}}
            result = await amem.handle_tool_call(cid, call)
            assert "note 0" in result["content"]
            assert (await amem.stats(cid)).conversation_id == cid
            assert (await amem.stats()).conversations == 1
            assert [c.status for c in await amem.compactions.history(cid)] == ["applied"]
            entry = await amem.journal.add(cid, "The user prefers short answers.")
            assert entry in [e.id for e in await amem.journal.entries(cid)]
            await amem.memories.consolidate(cid)
            assert await amem.memories.list(cid) == amem.memory.memories.list(cid)
            assert (await amem.admin.conversation(cid)).id == cid
            assert [t.tick_key for t in await amem.sleep.ticks(cid)] == []
            with pytest.raises(ConversationNotFound):
                await amem.append("no-such-conversation", _note(cid, 0))
            exported = await amem.export(cid)
            copy = await amem.import_(exported.to_dict(), conversation_id="copy")
            assert copy == ["copy"] and len((await amem.export("copy")).appended) == 61
            await amem.clear(cid)
            assert (await amem.stats(cid)).live_messages <= 1
        with pytest.raises(RuntimeError, match="closed"):
            await amem.check(cid)

    asyncio.run(scenario())


def test_context_overflow_propagates_from_prepare_context(database_url: str) -> None:
    async def scenario() -> None:
        async with _amem(database_url) as amem:
            cid = await amem.create_conversation("claude-sonnet-4-5", plan="free")
            await amem.append(cid, {"role": "user", "content": "hello"})
            with pytest.raises(ContextOverflow) as caught:
                await amem.prepare_context(cid, system="Follow every rule below exactly. " * 4_000)
            assert caught.value.system_tokens > caught.value.usable
            assert (await amem.stats(cid)).live_messages == 1  # nothing was written

    asyncio.run(scenario())


def test_fifty_tasks_append_to_their_own_and_to_one_shared_conversation(database_url: str) -> None:
    per_task = 4

    async def scenario() -> tuple[list[str], str]:
        async with _amem(database_url) as amem:
            own = [await amem.create_conversation() for _ in range(25)]
            shared = await amem.create_conversation()

            async def writer(cid: str, task: int) -> list[int]:
                seqs: list[int] = []
                for n in range(per_task):
                    seqs.extend((await amem.append(cid, _note(cid, task * 100 + n))).seqs)
                return seqs

            tasks = [writer(cid, t) for t, cid in enumerate(own)]
            tasks += [writer(shared, t) for t in range(25)]
            results = await asyncio.gather(*tasks)
            for seqs in results:  # each task's appends kept their order
                assert seqs == sorted(seqs)
            shared_seqs = [s for seqs in results[25:] for s in seqs]
            assert sorted(shared_seqs) == list(range(1, 25 * per_task + 1))
            return own, shared

    own, shared = asyncio.run(scenario())
    with Memory(database_url=database_url) as mem:
        for t, cid in enumerate(own):
            assert _consistent(mem, cid) == [_note(cid, t * 100 + n)["content"] for n in range(per_task)]
        texts = _consistent(mem, shared)
        assert sorted(texts) == sorted(
            _note(shared, t * 100 + n)["content"] for t in range(25) for n in range(per_task)
        )


def test_cancelled_appends_and_compactions_leave_every_write_whole(database_url: str) -> None:
    """Sixty appends (half of them pairs through append_many) and six forced compactions race on one
    conversation through four threads; once ten have finished, every other task is cancelled. Each
    message is then fully there or absent, a pair never half there, and the counters add up."""

    def pair(n: int) -> list[dict[str, Any]]:
        return [
            {"role": "user", "content": f"pair {n} question: where is the lighthouse key?"},
            {"role": "assistant", "content": f"pair {n} answer: under the blue stone by the door."},
        ]

    async def scenario() -> tuple[str, set[int], set[int]]:
        amem = _amem(database_url, workers=4)
        cid = await amem.create_conversation("claude-haiku-4-5", context_window=4_000)
        await amem.append_many(cid, [_note(cid, n) for n in range(40)])
        jobs: dict[asyncio.Task[Any], int] = {}
        for n in range(66):
            if n % 11 == 10:
                work: Any = amem.compactions.compact(cid, force=True)
            elif n % 2:
                work = amem.append_many(cid, pair(n))
            else:
                work = amem.append(cid, _note(cid, 1_000 + n))
            jobs[asyncio.ensure_future(work)] = n
        pending = set(jobs)
        while len(jobs) - len(pending) < 10:
            _, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
        for task in pending:
            task.cancel()
        await asyncio.gather(*jobs, return_exceptions=True)
        await amem.close()  # waits for the calls that were already running in their threads
        finished = {n for task, n in jobs.items() if not task.cancelled()}
        for task, n in jobs.items():
            if not task.cancelled() and task.exception() is not None:
                assert n % 11 == 10 and isinstance(task.exception(), SleepcompactError), task.exception()
        return cid, finished, {n for task, n in jobs.items() if task.cancelled()}

    cid, finished, cancelled = asyncio.run(scenario())
    assert len(finished) >= 10 and cancelled, "nothing was cancelled mid-flight"
    with Memory(database_url=database_url) as mem:
        texts = set(_consistent(mem, cid))
        absent = 0
        for n in range(66):
            if n % 11 == 10:
                continue
            wanted = [m["content"] for m in pair(n)] if n % 2 else [_note(cid, 1_000 + n)["content"]]
            present = [t in texts for t in wanted]
            assert all(present) or not any(present), f"job {n} half applied"
            if n in finished:
                assert all(present), f"job {n} finished but is missing"
            absent += not any(present)
        assert absent > 0, "every cancelled call ran anyway: the test cancelled nothing queued"
        # No compaction was left running, and the summaries in force belong to applied compactions.
        assert all(info.status != "running" for info in mem.compactions.history(cid))
        assert all(r["state"] in MESSAGE_STATES for r in mem.export(cid).messages)


def test_the_pool_size_comes_from_the_setting(sqlite_url: str) -> None:
    settings = Settings.from_env({"SLEEPCOMPACT_ASYNC_WORKERS": "3"}).with_overrides(database_url=sqlite_url)
    amem = AsyncMemory(settings, queue=RecordingQueue())
    assert amem.workers == 3
    asyncio.run(amem.close())
    mem = Memory(database_url=sqlite_url)
    wrapped = AsyncMemory(memory=mem, workers=2)
    assert wrapped.memory is mem and wrapped.workers == 2 and wrapped.settings is mem.settings
    with pytest.raises(InvalidSetting):
        AsyncMemory(memory=mem, auto_migrate=True)
    with pytest.raises(InvalidSetting):
        AsyncMemory(memory=mem, workers=0)
    asyncio.run(wrapped.close())


def test_a_compaction_cancelled_while_running_applies_whole_and_a_queued_append_never_runs(
    database_url: str,
) -> None:
    """One thread: the compaction is inside its summarizer call when its task is cancelled, and an
    append waits in the queue behind it. The compaction still applies, as one transaction; the queued
    append is withdrawn and never runs."""
    started, release = threading.Event(), threading.Event()

    def slow_summarizer(prompt: str) -> str:
        started.set()
        release.wait()
        return "## Task and goals\n- keep notes about the harbour"

    async def scenario() -> str:
        amem = _amem(database_url, workers=1, summarizer=slow_summarizer)
        cid = await amem.create_conversation("claude-haiku-4-5", context_window=4_000)
        await amem.append_many(cid, [_note(cid, n) for n in range(40)])
        compaction = asyncio.ensure_future(amem.compactions.compact(cid, force=True))
        await asyncio.to_thread(started.wait)  # the compaction is running in the pool's only thread
        append = asyncio.ensure_future(amem.append(cid, _note(cid, 999)))
        await asyncio.sleep(0)  # the append reaches the pool's queue
        compaction.cancel()
        append.cancel()
        release.set()
        await asyncio.gather(compaction, append, return_exceptions=True)
        assert compaction.cancelled() and append.cancelled()
        await amem.close()
        return cid

    cid = asyncio.run(scenario())
    with Memory(database_url=database_url) as mem:
        texts = _consistent(mem, cid)
        assert _note(cid, 999)["content"] not in texts and len(texts) == 40
        assert [c.status for c in mem.compactions.history(cid)] == ["applied"]
        rows = mem.export(cid).messages
        assert [r["seq"] for r in rows if r["kind"] == "summary"] == [41]
        assert any(r["state"] == "archived" for r in rows)
