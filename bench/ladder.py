"""Benchmark the compaction ladder on a ~200k-token, ~2,000-message coding-agent conversation.

Run with ``.venv/bin/python -m bench.ladder``. Prints a Markdown table (median and p90 wall time per
case) and writes it to ``bench/results/ladder.md``. Nothing here asserts on time; see bench/README.md.
"""

from __future__ import annotations

import functools
import platform
import statistics
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench.results import publish
from sleepcompact.adapters.tokenizer import load_counter
from sleepcompact.api import Memory
from sleepcompact.config import Settings
from sleepcompact.demo.synthetic import coding_agent, scaled
from sleepcompact.domain.budget import Budget, Thresholds, make_budget, model_spec, output_reserve_for
from sleepcompact.domain.ladder import Plan, Policy, Snapshot, plan
from sleepcompact.domain.messages import normalize, part_tokens
from sleepcompact.domain.records import MessageRecord, live_record, new_rows
from sleepcompact.domain.steps import Count
from sleepcompact.logs import configure_logging

MODEL = "claude-sonnet-4-5"
TARGET_MESSAGES = 2000
BIG_OUTPUT_TOKENS = 770  # tuned so the scaled conversation lands near 200k cl100k tokens
PLAN_WARMUPS, PLAN_RUNS = 3, 30
SERVICE_WARMUPS, DRY_RUNS, COMPACT_RUNS = 1, 10, 5
# (label, context window, policy): the model's own window, a 128k window, one where the LLM-free steps
# alone fit (masking; with a 500-token output cap, truncation first), and one already under the target.
SMALL_CAP = Policy(tool_output_cap=500)
PLAN_CASES: tuple[tuple[str, int, Policy], ...] = (
    ("model window 200k", 200_000, Policy()),
    ("window 128k", 128_000, Policy()),
    ("window 300k", 300_000, Policy()),
    ("window 300k, tool_output_cap=500", 300_000, SMALL_CAP),
    ("window 500k", 500_000, Policy()),
)


@dataclass(frozen=True)
class Case:
    """One benchmarked case and its wall-clock samples (seconds)."""

    name: str
    messages: int
    tokens: int
    samples: tuple[float, ...]

    def row(self) -> str:
        ms = sorted(s * 1000 for s in self.samples)
        p90 = statistics.quantiles(ms, n=10, method="inclusive")[8] if len(ms) > 1 else ms[0]
        return (
            f"| {self.name} | {self.messages:,} | {self.tokens:,} | {statistics.median(ms):.1f} "
            f"| {p90:.1f} | {len(ms)} |"
        )


def conversation() -> list[dict[str, Any]]:
    """The system prompt plus the synthetic coding agent repeated to ~2,000 messages."""
    conv = coding_agent(seed=0, big_output_tokens=BIG_OUTPUT_TOKENS)
    return [{"role": "system", "content": conv.system}, *scaled(conv, TARGET_MESSAGES)]


def to_records(messages: Sequence[dict[str, Any]], count: Count) -> tuple[MessageRecord, ...]:
    """Normalize and count each message once, as an append would, into live rows (no database)."""
    now = datetime.now(UTC)
    tool_names: dict[str, str | None] = {}
    rows: list[MessageRecord] = []
    for msg in messages:
        normalized = normalize(msg)
        tokens = [part_tokens(p.content, count) for p in normalized.parts]
        for row in new_rows(normalized, tokens, first_seq=len(rows) + 1, tool_names=tool_names, count=count):
            if row.kind == "tool_call" and row.tool_call_id:
                tool_names[row.tool_call_id] = row.tool_name
            rows.append(live_record(row, id=len(rows) + 1, conversation_id="bench", created_at=now))
    return tuple(rows)


def budget(window: int) -> Budget:
    """The budget a claude-sonnet-4-5 conversation with this window gets (default thresholds)."""
    return make_budget(
        context_window=window,
        output_reserve=output_reserve_for(MODEL, window),
        thresholds=Thresholds(),
        safety_factor=model_spec(MODEL).safety_factor,
    )


def timed(fn: Callable[[], object], runs: int, warmups: int) -> tuple[float, ...]:
    """Wall-clock seconds of ``runs`` calls after ``warmups`` untimed ones."""
    for _ in range(warmups):
        fn()
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return tuple(samples)


def describe(p: Plan) -> str:
    """The steps a plan takes, e.g. ``mask+summarize``, or ``noop``."""
    names = list(dict.fromkeys(s.step for s in p.steps))
    return "+".join(names) if names else "noop"


def plan_cases(records: tuple[MessageRecord, ...], n_messages: int, count: Count) -> list[Case]:
    """``plan()`` alone: sectioning, tool summaries, truncation, masking and the summary request."""
    snapshot = Snapshot("bench", 0, records[-1].seq, records)
    tokens = sum(r.live_tokens for r in records)
    cases = []
    for label, window, policy in PLAN_CASES:
        b = budget(window)
        p = plan(snapshot, b, policy, count)
        print(
            f"  {label}: usable {b.usable:,}, target {b.target:,} -> {describe(p)}, "
            f"{len(p.changes):,} row changes, ~{p.tokens_after:,} tokens after ({p.reason})"
        )
        samples = timed(functools.partial(plan, snapshot, b, policy, count), PLAN_RUNS, PLAN_WARMUPS)
        name = f"plan(), {label} (usable {b.usable // 1000}k): {describe(p)}"
        cases.append(Case(name, n_messages, tokens, samples))
    return cases


def service_cases(messages: list[dict[str, Any]], tokens: int) -> list[Case]:
    """``mem.compactions.compact`` on SQLite: a dry run, and a real compaction with the offline summarizer."""
    n = len(messages)
    with tempfile.TemporaryDirectory(prefix="sc-bench-") as tmp:
        mem = Memory(Settings(summarizer="offline"), database_url=f"sqlite:///{tmp}/bench.db")
        try:
            cid = mem.create_conversation(MODEL)
            start = time.perf_counter()
            mem.append_many(cid, messages)
            elapsed = time.perf_counter() - start
            append = Case("setup: append_many (normalize, count, insert)", n, tokens, (elapsed,))
            stored = mem.admin.conversation(cid).live_tokens
            dry = timed(lambda: mem.compactions.compact(cid, dry_run=True), DRY_RUNS, SERVICE_WARMUPS)
            compacts: list[float] = []
            restores: list[float] = []
            for i in range(SERVICE_WARMUPS + COMPACT_RUNS):
                t0 = time.perf_counter()
                outcome = mem.compactions.compact(cid)
                t1 = time.perf_counter()
                if outcome.status != "applied" or outcome.compaction_id is None:
                    raise RuntimeError(f"expected an applied compaction: {outcome.status}, {outcome.reason}")
                mem.compactions.restore(outcome.compaction_id)
                t2 = time.perf_counter()
                if mem.admin.conversation(cid).live_tokens != stored:
                    raise RuntimeError("restore did not bring back the live tokens of the original")
                if i >= SERVICE_WARMUPS:
                    compacts.append(t1 - t0)
                    restores.append(t2 - t1)
            steps = "+".join(dict.fromkeys(s["step"] for s in outcome.steps))
            print(f"  compact: {outcome.tokens_before:,} -> {outcome.tokens_after:,} tokens via {steps}")
        finally:
            mem.close()
    return [
        append,
        Case("compactions.compact(dry_run=True), SQLite, model window", n, tokens, dry),
        Case(f"compactions.compact(), SQLite, offline summarizer: {steps}", n, tokens, tuple(compacts)),
        Case("compactions.restore() of that compaction, SQLite", n, tokens, tuple(restores)),
    ]


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def report(cases: Sequence[Case], rows: int, tokenizer: str) -> str:
    """The Markdown report: an environment header and the table."""
    when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    header = (
        f"{when} · {platform.platform()} · CPU {cpu_model()} · Python {platform.python_version()} · "
        f"tokenizer {tokenizer} · {rows:,} stored rows"
    )
    table = [
        "| case | messages | tokens | median ms | p90 ms | runs |",
        "|---|---:|---:|---:|---:|---:|",
        *(c.row() for c in cases),
    ]
    return "\n".join([header, "", *table]) + "\n"


def main() -> None:
    configure_logging(Settings(log_level="WARNING"))
    counter = load_counter()
    messages = conversation()
    records = to_records(messages, counter.count)
    tokens = sum(r.token_count for r in records)
    print(
        f"conversation: {len(messages):,} messages ({len(records):,} rows), {tokens:,} tokens "
        f"({counter.name}), big_output_tokens={BIG_OUTPUT_TOKENS}"
    )
    cases = plan_cases(records, len(messages), counter.count)
    cases += service_cases(messages, tokens)
    text = report(cases, len(records), counter.name)
    publish(text, "ladder.md")


if __name__ == "__main__":
    main()
