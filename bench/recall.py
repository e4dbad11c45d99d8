"""What recall costs the request path: ``prepare_context`` with the archive searched for the newest user
message, against the same call with recall off, and the recall tool's own calls.

Run with ``.venv/bin/python -m bench.recall``. A 90-day synthetic companion chat (~1,100 messages) and
a 2,000-message coding agent, each compacted at its window, then a question as the newest user message;
the same database is read by two ``Memory`` objects, one with the recall budget at its default and one
with 0. The cases take turns so drift hits them alike. SQLite. Nothing here asserts on time.
"""

from __future__ import annotations

import platform
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime

from bench.ladder import cpu_model
from bench.results import publish
from sleepcompact import Memory, Settings
from sleepcompact.demo.synthetic import coding_agent, scaled
from sleepcompact.demo.synthetic.companion import companion_chat

RUNS = 40


def companion(mem: Memory) -> str:
    chat = companion_chat(seed=3, days=90)
    cid = mem.create_conversation("claude-haiku-4-5", context_window=8_000)
    for m in chat.messages:
        mem.append(
            cid, {"role": m["role"], "content": m["content"]}, sent_at=datetime.fromisoformat(m["sent_at"])
        )
    mem.compactions.compact(cid, force=True)
    mem.append(cid, {"role": "user", "content": "What was the confirmation code for my autumn trip?"})
    return cid


def coder(mem: Memory) -> str:
    conv = coding_agent(seed=0, big_output_tokens=770)
    cid = mem.create_conversation("claude-haiku-4-5", context_window=64_000)
    mem.append_many(cid, [{"role": "system", "content": conv.system}, *scaled(conv, 2000)])
    mem.compactions.compact(cid, force=True)
    mem.append(cid, {"role": "user", "content": "Which assertion failed when the tests first ran?"})
    return cid


def timed(cases: dict[str, Callable[[], object]]) -> dict[str, list[float]]:
    for fn in cases.values():
        fn()
    out: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(RUNS):
        for name, fn in cases.items():
            start = time.perf_counter()
            fn()
            out[name].append((time.perf_counter() - start) * 1000)
    return out


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="sc-bench-recall-") as tmp:
        url = f"sqlite:///{tmp}/bench.db"
        on = Memory(Settings(database_url=url), auto_migrate=True)
        off = Memory(Settings(database_url=url, recall_budget_tokens=0))
        cases: dict[str, Callable[[], object]] = {}
        for name, build in (("companion chat, 8k", companion), ("coding agent, 64k", coder)):
            cid = build(on)
            tokens = on.prepare_context(cid).view.recall_tokens
            cases[f"`prepare_context`, {name}, recall on ({tokens} tokens recalled)"] = lambda c=cid: (
                on.prepare_context(c)
            )
            cases[f"`prepare_context`, {name}, recall off"] = lambda c=cid: off.prepare_context(c)
            search = {
                "type": "tool_use",
                "id": "b",
                "name": "search_history",
                "input": {"query": "failed tests"},
            }
            cases[f"`handle_tool_call` search_history, {name}"] = lambda c=cid, s=search: on.handle_tool_call(
                c, s
            )
        results = timed(cases)
        on.close()
        off.close()
    now = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        f"{now}, {platform.system()} {platform.machine()}, {cpu_model()}, Python {sys.version.split()[0]}",
        "",
        "| case | median ms | p90 ms | runs |",
        "|---|---:|---:|---:|",
    ]
    for name, xs in results.items():
        xs = sorted(xs)
        lines.append(f"| {name} | {statistics.median(xs):.2f} | {xs[int(len(xs) * 0.9)]:.2f} | {len(xs)} |")
    publish("\n".join(lines) + "\n", "recall.md")


if __name__ == "__main__":
    main()
