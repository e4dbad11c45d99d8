"""Benchmark the request path in steady state: append one message, then ``prepare_context``.

Run with ``.venv/bin/python -m bench.request_path [--sqlite-only]`` (needs the ``bench`` extra for
langchain-core). Four parts, each comparing in the same run:

1. 500 against 10,000 live messages, with the per-process rendering cache (the default) and without it
   (``SLEEPCOMPACT_RENDER_CACHE=0``: every call reads and renders every live row, as before the cache);
2. the ~200k-token conversation of ``bench.guard``: ours against LangChain's load, ``count_tokens_
   approximately`` and ``trim_messages`` from the same database;
3. an LLM-free emergency compaction against ``plan()`` on the same rows;
4. 500 messages whose agent holds no, 1,000 and 10,000 memories (made with one INSERT ... SELECT).

The timed region is the call alone (``prepare_context(...).request()``); the append before it is not
timed. Prints Markdown tables and writes them to ``bench/results/request_path.md``. Nothing asserts
on time.
"""

from __future__ import annotations

import functools
import gc
import os
import time
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from datetime import UTC, datetime
from typing import Any

from langchain_core.messages.utils import count_tokens_approximately
from sqlalchemy import text

from bench.guard import (
    CALL_WINDOW,
    CHECK_WINDOW,
    TOOLS,
    NullQueue,
    Row,
    backends_from,
    databases,
    filled,
    load_raw,
    ratio,
    request,
    run_header,
    table,
    to_langchain,
    trim,
)
from bench.ladder import (
    BIG_OUTPUT_TOKENS,
    MODEL,
    TARGET_MESSAGES,
    budget,
    conversation,
    to_records,
)
from bench.results import publish
from sleepcompact import Memory, Settings
from sleepcompact.adapters.tokenizer import load_counter
from sleepcompact.demo.synthetic import coding_agent, scaled
from sleepcompact.domain.ladder import Policy, Snapshot, plan

SIZES = (500, 10_000)
RUNS, WARMUPS, ROUNDS = 48, 4, 8
NEW_TURNS = (
    {"role": "user", "content": "Now run the failing test again with -x and show me the first error."},
    {
        "role": "assistant",
        "content": "Running it again with -x; the first error is an off-by-one in parse().",
    },
)


def timed(cases: Sequence[tuple[str, Callable[[int], None], Callable[[], object]]]) -> list[Row]:
    """For each run: the case's append (untimed), then its call (timed); cases take turns in blocks."""
    for _, append, call in cases:
        for i in range(WARMUPS):
            append(i)
            call()
    gc.collect()
    samples: list[list[float]] = [[] for _ in cases]
    n = WARMUPS
    for _ in range(ROUNDS):
        for (_, append, call), out in zip(cases, samples, strict=True):
            for _ in range(RUNS // ROUNDS):
                append(n)
                n += 1
                start = time.perf_counter()
                call()
                out.append(time.perf_counter() - start)
    return [Row(name, tuple(s)) for (name, _, _), s in zip(cases, samples, strict=True)]


def caller(mem: Memory, cid: str) -> object:
    return mem.prepare_context(cid, system="You are a coding agent.", tools=TOOLS).request()


def appender(mem: Memory, cid: str) -> Callable[[int], None]:
    def append(i: int) -> None:
        mem.append(cid, NEW_TURNS[i % 2])

    return append


def growth_part(new: Callable[[str, str], str], backends: Sequence[str]) -> tuple[list[Row], list[str]]:
    cases = []
    with ExitStack() as stack:
        for backend in backends:
            for n in SIZES:
                url = new(backend, f"steady{n}")
                mem, cid = filled(stack, url, CHECK_WINDOW, scaled(coding_agent(0), n)[:n])
                cold = stack.enter_context(
                    Memory(Settings(database_url=url, render_cache_conversations=0), queue=NullQueue())
                )
                print(f"  {backend}, {n:,} messages: {mem.check(cid).tokens:,} model tokens")
                for label, m in (("cached", mem), ("no cache", cold)):
                    call = functools.partial(caller, m, cid)
                    cases.append(
                        (f"`prepare_context` {label}, {backend}, {n:,} messages", appender(mem, cid), call)
                    )
        rows = timed(cases)
    notes = []
    for b, backend in enumerate(backends):
        group = rows[4 * b : 4 * b + 4]  # small cached, small cold, large cached, large cold
        notes.append(f"{backend}, cached: {SIZES[1]:,} / {SIZES[0]:,} messages = {ratio(group[2], group[0])}")
        notes.append(
            f"{backend}, no cache: {SIZES[1]:,} / {SIZES[0]:,} messages = {ratio(group[3], group[1])}"
        )
        notes.append(f"{backend}, {SIZES[1]:,} messages: no cache / cached = {ratio(group[3], group[2])}")
    return rows, notes


def langchain_part(new: Callable[[str, str], str], backends: Sequence[str]) -> tuple[list[Row], list[str]]:
    conv = coding_agent(seed=0, big_output_tokens=BIG_OUTPUT_TOKENS)
    system, messages = conv.system, scaled(conv, TARGET_MESSAGES)
    cases = []
    with ExitStack() as stack:
        for backend in backends:
            mem, cid = filled(stack, new(backend, "call"), CALL_WINDOW, messages)
            soft, usable = mem.check(cid).soft, mem.check(cid).usable

            def ours(mem: Memory = mem, cid: str = cid) -> object:
                return mem.prepare_context(cid, system=system, tools=TOOLS).request()

            def lc(mem: Memory = mem, cid: str = cid, soft: int = soft, usable: int = usable) -> object:
                history = to_langchain(system, load_raw(mem, cid))
                over = count_tokens_approximately(history) > soft
                return over, request(system, trim(history, usable))

            cases.append(
                (f"ours: append, then `prepare_context` + `.request()`, {backend}", appender(mem, cid), ours)
            )
            cases.append(
                (f"LangChain: append, then load, count, `trim_messages`, {backend}", appender(mem, cid), lc)
            )
        rows = timed(cases)
    notes = [
        f"{backend}: LangChain / ours = {ratio(rows[2 * b + 1], rows[2 * b])}"
        for b, backend in enumerate(backends)
    ]
    return rows, notes


MEMORY_COUNTS = (0, 1_000, 10_000)
MEMORY_MESSAGES = 500


def insert_memories(mem: Memory, agent: str, n: int) -> None:
    """``n`` memories of one agent, each its own statement, by one INSERT ... SELECT over a series."""
    if not n:
        return
    sqlite = mem.admin.engine.dialect.name == "sqlite"
    series = (
        "WITH RECURSIVE s(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s WHERE n < :n) SELECT n FROM s"
        if sqlite
        else "SELECT generate_series(1, :n) AS n"
    )
    now = datetime.now(UTC)
    stamp = now.strftime("%Y-%m-%d %H:%M:%S.%f") if sqlite else now
    statement = (
        "INSERT INTO memory (tenant_id, agent_id, kind, content, confidence, importance, source_trust,"
        " source_journal_ids, created_at, updated_at) SELECT 'default', :agent, 'fact', 'module_' ||"
        " (n % 97) || ' note ' || n || ': parse keeps field f' || (n % 13) || ' optional', 0.8, 6, 0.9,"
        f" '[]', :now, :now FROM ({series}) AS g"
    )
    with mem.admin.engine.begin() as conn:
        conn.execute(text(statement), {"n": n, "agent": agent, "now": stamp})


def memories_part(new: Callable[[str, str], str], backends: Sequence[str]) -> tuple[list[Row], list[str]]:
    """The same call on a conversation whose agent has 0, 1,000 and 10,000 memories (the default memory
    budget: the block recalled into every call is chosen again only when the memories change)."""
    cases = []
    with ExitStack() as stack:
        for backend in backends:
            for n in MEMORY_COUNTS:
                url = new(backend, f"memories{n}")
                mem = stack.enter_context(
                    Memory(Settings(database_url=url), auto_migrate=True, queue=NullQueue())
                )
                cid = mem.create_conversation(MODEL, context_window=CHECK_WINDOW, agent_id=f"agent-{n}")
                messages = scaled(coding_agent(0), MEMORY_MESSAGES)[:MEMORY_MESSAGES]
                for i in range(0, len(messages), 250):
                    mem.append_many(cid, messages[i : i + 250])
                insert_memories(mem, f"agent-{n}", n)
                mem.admin.factors()
                call = functools.partial(caller, mem, cid)
                cases.append((f"`prepare_context`, {backend}, {n:,} memories", appender(mem, cid), call))
        rows = timed(cases)
    k = len(MEMORY_COUNTS)
    most, none = MEMORY_COUNTS[-1], MEMORY_COUNTS[0]
    notes = [
        f"{backend}: {most:,} / {none:,} memories = {ratio(rows[k * b + k - 1], rows[k * b])}"
        for b, backend in enumerate(backends)
    ]
    return rows, notes


EMERGENCY_WINDOW = 300_000  # the ~200k-token conversation is over hard there, and masking alone fits
EMERGENCY_RUNS = 12


def emergency_part(new: Callable[[str, str], str], backends: Sequence[str]) -> tuple[list[Row], list[str]]:
    """An LLM-free emergency compaction in the request path against ``plan()`` on the same rows.

    Before each timed call (untimed): the previous compaction is restored, the guard's cache warmed with
    ``Memory.context`` and one user message appended, as when an append takes a conversation over hard.
    """
    messages = conversation()
    counter = load_counter()
    records = to_records(messages, counter.count)
    snapshot = Snapshot("bench", 0, records[-1].seq, records)
    b = budget(EMERGENCY_WINDOW)
    planned = plan(snapshot, b, Policy(), counter.count)
    steps = "+".join(dict.fromkeys(s.step for s in planned.steps))
    samples: list[list[float]] = [list(timed_plain(lambda: plan(snapshot, b, Policy(), counter.count)))]
    names = [f"`plan()` alone, {len(records):,} rows in memory: {steps}"]
    for backend in backends:
        with Memory(
            Settings(database_url=new(backend, "emergency")), auto_migrate=True, queue=NullQueue()
        ) as mem:
            cid = mem.create_conversation(MODEL, context_window=EMERGENCY_WINDOW)
            for i in range(0, len(messages), 500):
                mem.append_many(cid, messages[i : i + 500])
            samples.append(emergency_runs(mem, cid))
        names.append(f"emergency `prepare_context` + `.request()`, {backend}")
    rows = [Row(n, tuple(s)) for n, s in zip(names, samples, strict=True)]
    return rows, [f"{r.name.split(',')[0]} / `plan()` = {ratio(r, rows[0])}" for r in rows[1:]]


def timed_plain(fn: Callable[[], object]) -> list[float]:
    for _ in range(WARMUPS):
        fn()
    gc.collect()
    out = []
    for _ in range(EMERGENCY_RUNS * 4):
        start = time.perf_counter()
        fn()
        out.append(time.perf_counter() - start)
    return out


def emergency_runs(mem: Memory, cid: str) -> list[float]:
    out: list[float] = []
    last: str | None = None
    for i in range(EMERGENCY_RUNS + 1):
        if last is not None:
            mem.compactions.restore(last)
        mem.context(cid)
        mem.append(cid, {"role": "user", "content": f"Go on with step {i}."})
        gc.collect()
        start = time.perf_counter()
        ctx = mem.prepare_context(cid)
        ctx.request()
        elapsed = time.perf_counter() - start
        if ctx.action != "emergency_compacted" or ctx.compaction_id is None:
            raise RuntimeError(f"expected an emergency compaction, got {ctx.action}: {ctx.reason}")
        info = next(c for c in mem.compactions.history(cid) if c.id == ctx.compaction_id)
        steps = [s["step"] for s in info.steps]
        if "summarize" in steps:
            raise RuntimeError(f"expected an LLM-free compaction, got {steps}")
        last = ctx.compaction_id
        if i:  # the first is a warm-up
            out.append(elapsed)
    return out


def main(argv: Sequence[str] | None = None) -> None:
    backends = backends_from("python -m bench.request_path", __doc__, argv)
    load_before = os.getloadavg()[0]
    with databases(backends == ("SQLite",)) as new:
        print("part 1: 500 against 10,000 live messages")
        growth_rows, growth_notes = growth_part(new, backends)
        print("part 2: ~200k tokens against LangChain")
        lc_rows, lc_notes = langchain_part(new, backends)
        print("part 3: an LLM-free emergency compaction against plan()")
        em_rows, em_notes = emergency_part(new, backends)
        print("part 4: the agent's memories: none, 1,000, 10,000")
        mem_rows, mem_notes = memories_part(new, backends)
    lines: list[Any] = [
        run_header(load_before),
        "",
        f"**Steady state**: append one message, then the call (window {CHECK_WINDOW:,}, below soft):",
        "",
        *table(growth_rows, growth_notes),
        f"**~200k tokens** ({TARGET_MESSAGES + 1:,} messages, window {CALL_WINDOW:,}), {len(TOOLS)} tools:",
        "",
        *table(lc_rows, lc_notes),
        f"**Emergency**, LLM-free, ~200k tokens in a {EMERGENCY_WINDOW:,} window (over hard; masking fits):",
        "",
        *table(em_rows, em_notes),
        f"**Memories**: {MEMORY_MESSAGES} messages, the agent holding none, 1,000 or 10,000 memories (default"
        " memory budget):",
        "",
        *table(mem_rows, mem_notes),
    ]
    publish("\n".join(lines), "request_path.md")


if __name__ == "__main__":
    main()
