"""What recall costs the request path: ``prepare_context`` with the archive searched for the newest user
message, against the same call with recall off, and the recall tool's own calls.

Run with ``.venv/bin/python -m bench.recall``. A 90-day synthetic companion chat (~1,100 messages) and
a 2,000-message coding agent, each compacted at its window, then a question as the newest user message;
the same database is read by two ``Memory`` objects, one with the recall budget at its default and one
with 0. Then the coding agent again, in a database of its own and in one whose search index also
holds 200 other conversations' archives (copies made by one INSERT ... SELECT): what a search costs
when the index is shared by a fleet. The cases take turns so drift hits them alike. SQLite. Nothing
here asserts on time.
"""

from __future__ import annotations

import platform
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime

from sqlalchemy import text

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


FLEET = 200


def add_fleet(mem: Memory, cid: str, n: int) -> None:
    """Index ``n`` other conversations' archives beside ``cid``'s: copies of its index rows under other
    conversations, made by one INSERT ... SELECT (the search's cost in a database shared by a fleet).
    Reads the index's schema, so the same bench runs on the trees before and after migration 0012."""
    with mem.admin.engine.begin() as conn:
        columns = [row[1] for row in conn.execute(text("PRAGMA table_info(message_search)"))]
        column, other = (
            ("conversation", "'c' || lower(hex('other-' || k))")
            if "conversation" in columns
            else ("conversation_id", "'other-' || k")
        )
        conn.execute(
            text(
                f"INSERT INTO message_search(rowid, body, {column}) "
                f"SELECT s.rowid + k * 100000000, s.body, {other} FROM message_search s, "
                "(WITH RECURSIVE r(k) AS (SELECT 1 UNION ALL SELECT k + 1 FROM r WHERE k < :n) "
                "SELECT k FROM r) "
                "WHERE s.rowid IN (SELECT id FROM message WHERE conversation_id = :cid)"
            ),
            {"n": n, "cid": cid},
        )


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
        # The same coding agent in a database of its own and in one shared with FLEET others' archives.
        alone = Memory(Settings(database_url=f"sqlite:///{tmp}/alone.db"), auto_migrate=True)
        shared = Memory(Settings(database_url=f"sqlite:///{tmp}/shared.db"), auto_migrate=True)
        alone_cid, shared_cid = coder(alone), coder(shared)
        add_fleet(shared, shared_cid, FLEET)
        cases["`prepare_context`, coding agent, 64k, its archive alone in the index"] = lambda: (
            alone.prepare_context(alone_cid)
        )
        cases[f"`prepare_context`, coding agent, 64k, beside {FLEET} others' archives"] = lambda: (
            shared.prepare_context(shared_cid)
        )
        results = timed(cases)
        for mem in (on, off, alone, shared):
            mem.close()
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
