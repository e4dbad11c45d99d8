"""A worker process under load: sleep ticks per second, queue lag and per-tick overhead (issue 18, item 4).

.venv/bin/python -m bench.worker            # embedded (SQLite + SQLite broker) and Redis + PostgreSQL
.venv/bin/python -m bench.worker --small    # 40 conversations instead of 200, to try it out

Each backend gets a fresh database holding 200 (``--small``: 40) coding-agent conversations of about
``--messages`` (200) messages, each over its soft threshold (a 16k window), and one real worker process
(``python -m worker --concurrency 1``: one child, so the figures are per process) with the offline
summarizer. After one warm-up tick (the worker's start) and one tick on the idle worker (its idle lag),
all ticks are queued in one transaction and enqueued in one ``enqueue_ticks`` call, as a sweep does.
From the ``sleep_tick`` and ``compaction`` rows:

- ticks/s: ticks over the time from the first tick's start to the last one's end;
- queue lag: a tick's start minus its queueing;
- overhead: a tick's duration minus its compaction's own ``duration_ms`` (what the tick spends on
  consolidation, the lease and its bookkeeping).

Nothing here asserts on time; the table goes to ``bench/results/worker``.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from sqlalchemy import create_engine, text

from bench.ladder import cpu_model
from bench.results import publish
from sleepcompact import Memory, Settings
from sleepcompact.demo.synthetic import coding_agent, scaled
from sleepcompact.services.clock import utcnow
from tests.support.processes import Process, wait_for
from tests.support.servers import start_postgres, start_redis

WINDOW = 16_000
KEY = "bench-2026-11-24"


@dataclass(frozen=True)
class Result:
    """One backend's run."""

    backend: str
    idle_lag_ms: float  # one tick sent to a worker that is up and idle
    ticks: int
    per_second: float
    inline_per_second: float  # the same ticks run in this process, one after another: no broker, no worker
    lag_ms: list[float]
    overhead_ms: list[float]
    compaction_ms: list[float]


def _fill(mem: Memory, n: int, messages: int) -> list[str]:
    ids = []
    for i in range(n):
        conv = coding_agent(seed=i)
        cid = mem.create_conversation("claude-sonnet-4-5", context_window=WINDOW)
        mem.append_many(cid, [{"role": "system", "content": conv.system}, *scaled(conv, messages)[:messages]])
        if mem.check(cid).decision == "none":
            raise RuntimeError(f"conversation {i} is below soft; raise --messages")
        ids.append(cid)
    return ids


def _enqueue(mem: Memory, ids: list[str]) -> None:
    """What a sweep does (``services.sweeps._send``): queue the ticks in one transaction, then send."""
    deps = mem._deps
    orders = [(cid, KEY) for cid in ids]
    with deps.uow() as uow:
        uow.ticks.queue(orders, utcnow())
        uow.commit()
    deps.queue.enqueue_ticks(orders)


def _done(database_url: str, ids: list[str]) -> bool:
    engine = create_engine(database_url)
    try:
        with engine.connect() as conn:
            done = conn.execute(
                text("SELECT count(*) FROM sleep_tick WHERE tick_key = :k AND status = 'done'"), {"k": KEY}
            ).scalar_one()
    finally:
        engine.dispose()
    return int(done) >= len(ids)


def _aware(value: datetime | str) -> datetime:
    moment = value if isinstance(value, datetime) else datetime.fromisoformat(value)
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _figures(backend: str, database_url: str, inline_per_second: float) -> Result:
    engine = create_engine(database_url)
    idle = text("SELECT created_at, started_at FROM sleep_tick WHERE tick_key = 'idle-probe'")
    query = text(
        "SELECT t.created_at, t.started_at, t.finished_at, c.duration_ms FROM sleep_tick t "
        "LEFT JOIN compaction c ON c.conversation_id = t.conversation_id AND c.trigger = 'sleep' "
        "WHERE t.tick_key = :k"
    )
    try:
        with engine.connect() as conn:
            rows = conn.execute(query, {"k": KEY}).all()
            warm = conn.execute(idle).one()
    finally:
        engine.dispose()
    starts = [_aware(r[1]) for r in rows]
    ends = [_aware(r[2]) for r in rows]
    span = (max(ends) - min(starts)).total_seconds()
    lag = [(_aware(r[1]) - _aware(r[0])).total_seconds() * 1000 for r in rows]
    took = [(_aware(r[2]) - _aware(r[1])).total_seconds() * 1000 for r in rows]
    compaction = [float(r[3] or 0) for r in rows]
    overhead = [t - c for t, c in zip(took, compaction, strict=True)]
    idle_lag = (_aware(warm[1]) - _aware(warm[0])).total_seconds() * 1000
    return Result(
        backend, idle_lag, len(rows), len(rows) / span, inline_per_second, lag, overhead, compaction
    )


@contextmanager
def _worker(database_url: str, broker_url: str, workdir: Path) -> Iterator[Process]:
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("SLEEPCOMPACT_", "ANTHROPIC_"))},
        "SLEEPCOMPACT_DATABASE_URL": database_url,
        "SLEEPCOMPACT_BROKER_URL": broker_url,
        "SLEEPCOMPACT_SUMMARIZER": "offline",
        "SLEEPCOMPACT_LOG_LEVEL": "WARNING",
        "SLEEPCOMPACT_BEAT_SCHEDULE": str(workdir / "beat-schedule"),
    }
    worker = Process.module("worker", "--concurrency", "1", env=env, log=workdir / "worker.log", cwd=workdir)
    try:
        yield worker
    finally:
        worker.stop()


def run(backend: str, database_url: str, broker_url: str, workdir: Path, n: int, messages: int) -> Result:
    settings = Settings(database_url=database_url, broker_url=broker_url, summarizer="offline")
    with Memory(settings, auto_migrate=True) as mem:
        print(f"  {backend}: filling {n} conversations of ~{messages} messages")
        warm = _fill(mem, 1, messages)
        ids = _fill(mem, n, messages)
        inline = _inline(mem, _fill(mem, n, messages))  # the same conversations again, before the worker
        with _worker(database_url, broker_url, workdir) as worker:
            for key in ("warm-up", "idle-probe"):  # the worker's start, then one tick on an idle worker
                _enqueue_one(mem, warm[0], key)
                wait_for(
                    lambda key=key: _one_done(mem, warm[0], key),
                    timeout=300,
                    what=f"the {key} tick",
                    log=worker.log,
                )
            _enqueue(mem, ids)
            wait_for(lambda: _done(database_url, ids), timeout=1800, what="every tick", log=worker.log)
    return _figures(backend, database_url, inline)


def _inline(mem: Memory, ids: list[str]) -> float:
    """Ticks per second of the same work in this process (``Memory.sleep.tick``, what ``sleepcompact sleep
    --inline`` runs): the alternative with no broker and no worker process."""
    mem.sleep.tick(ids[0], "inline-warm-up")
    start = time.perf_counter()
    for cid in ids[1:]:
        mem.sleep.tick(cid, "inline")
    return (len(ids) - 1) / (time.perf_counter() - start)


def _enqueue_one(mem: Memory, cid: str, key: str) -> None:
    deps = mem._deps
    with deps.uow() as uow:
        uow.ticks.queue([(cid, key)], utcnow())
        uow.commit()
    deps.queue.enqueue_ticks([(cid, key)])


def _one_done(mem: Memory, cid: str, key: str) -> bool:
    return any(t.tick_key == key and t.status == "done" for t in mem.sleep.ticks(cid))


def _p(values: list[float], q: int) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1] if len(values) > 1 else values[0]


def table(results: list[Result], n: int, messages: int) -> str:
    when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    head = (
        f"Worker throughput, {when}, {platform.machine()} {cpu_model()}, {os.cpu_count()} CPUs, load "
        f"{os.getloadavg()[0]:.1f}; {n} conversations of ~{messages} messages over soft (window {WINDOW:,}),"
        " offline summarizer, one worker process with one child.\n\n"
    )
    lines = [
        "| backend | idle lag ms | ticks | ticks/s | inline ticks/s | lag p50 ms | lag p95 ms "
        "| overhead p50 ms | overhead p95 ms | compaction p50 ms |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in results:
        lines.append(
            f"| {r.backend} | {r.idle_lag_ms:,.0f} | {r.ticks} | {r.per_second:.1f} "
            f"| {r.inline_per_second:.1f} "
            f"| {_p(r.lag_ms, 50):,.0f} | {_p(r.lag_ms, 95):,.0f} "
            f"| {_p(r.overhead_ms, 50):.1f} | {_p(r.overhead_ms, 95):.1f} | {_p(r.compaction_ms, 50):.1f} |"
        )
    return head + "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--small", action="store_true", help="40 conversations instead of 200")
    parser.add_argument("--messages", type=int, default=200)
    args = parser.parse_args()
    n = 40 if args.small else 200
    results = []
    with tempfile.TemporaryDirectory(prefix="sc-worker-") as tmp:
        root = Path(tmp)
        embedded = root / "embedded"
        embedded.mkdir()
        results.append(
            run(
                "SQLite + embedded broker",
                f"sqlite:///{embedded}/data.db",
                f"sqla+sqlite:///{embedded}/broker.db",
                embedded,
                n,
                args.messages,
            )
        )
        server, redis = start_postgres(root / "pg"), start_redis(root / "redis")
        try:
            prod = root / "prod"
            prod.mkdir()
            url = server.create_database()
            results.append(run("PostgreSQL + Redis", url, redis.url, prod, n, args.messages))
        finally:
            server.stop()
            redis.stop()
    publish(table(results, n, args.messages), "worker")


if __name__ == "__main__":
    main()
