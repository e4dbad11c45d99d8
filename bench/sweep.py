"""The nightly sweep's selection at fleet scale: the row-value keyset against the OR keyset it replaced.

.venv/bin/python -m bench.sweep            # PostgreSQL, 1,000,000 conversations, 10,000 due (about 2 minutes)
.venv/bin/python -m bench.sweep --small    # also 10,000 and 100,000 conversations on SQLite and PostgreSQL
.venv/bin/python -m bench.sweep --fixed-due  # 1,000 due among 10,000 and 100,000; 10,000 ticks to Redis

Rows are generated with SQL (``generate_series`` on PostgreSQL, a recursive CTE on SQLite), never a Python
loop. One conversation in a hundred was active since its last sleep (due); the rest slept after their
last activity. Both selections page in batches of 500 through ``SqlTicks.due_nightly``'s cursor
protocol; the old one is rebuilt here from its OR condition, filtering due rows in Python as it did.
"""

from __future__ import annotations

import argparse
import platform
import statistics
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from sqlalchemy import and_, create_engine, or_, select, text
from sqlalchemy.engine import Engine
from sqlalchemy.orm import Session

from bench.ladder import cpu_model
from bench.results import publish
from sleepcompact.store.migrate import upgrade
from sleepcompact.store.models import Conversation
from sleepcompact.store.ticks import SqlTicks

NIGHT = datetime(2026, 11, 24, 3, 0, tzinfo=UTC)
BATCH = 500

_PG_FILL = """
INSERT INTO conversation (id, tenant_id, agent_id, model, context_window, output_reserve, live_tokens,
    live_messages, next_seq, compaction_epoch, last_activity_at, last_sleep_at, created_at, metadata)
SELECT 'conv_' || lpad(to_hex(g), 16, '0'), 't', 'a', 'claude-sonnet-4-5', 200000, 32000, 1000, 10, 11, 0,
    timestamptz '2026-11-01' + (g % 1000) * interval '1 minute'
        + CASE WHEN g % :every = 0 THEN interval '2 days' ELSE interval '0' END,
    timestamptz '2026-11-01' + (g % 1000) * interval '1 minute' + interval '1 day',
    timestamptz '2026-10-01', '{}'
FROM generate_series(1, :n) AS g
"""
_SQLITE_FILL = """
WITH RECURSIVE g(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM g WHERE x < :n)
INSERT INTO conversation (id, tenant_id, agent_id, model, context_window, output_reserve, live_tokens,
    live_messages, next_seq, compaction_epoch, last_activity_at, last_sleep_at, created_at, metadata)
SELECT printf('conv_%016x', x), 't', 'a', 'claude-sonnet-4-5', 200000, 32000, 1000, 10, 11, 0,
    datetime('2026-11-01', printf('+%d minutes', x % 1000),
        CASE WHEN x % :every = 0 THEN '+2 days' ELSE '+0 days' END),
    datetime('2026-11-01', printf('+%d minutes', x % 1000), '+1 day'),
    '2026-10-01 00:00:00', '{}'
FROM g
"""


def _fill(engine: Engine, n: int, every: int = 100) -> None:
    """``n`` conversations, one in ``every`` due."""
    upgrade(engine)
    fill = _PG_FILL if engine.dialect.name == "postgresql" else _SQLITE_FILL
    with engine.begin() as conn:
        conn.execute(text("DELETE FROM conversation"))
        conn.execute(text(fill), {"n": n, "every": every})
        if engine.dialect.name == "postgresql":
            conn.execute(text("ANALYZE conversation"))


def new_selection(engine: Engine) -> int:
    """Every due id through today's ``due_nightly`` (row-value keyset, due condition in SQL)."""
    found, cursor = 0, "slept:"
    with Session(engine) as session:
        ticks = SqlTicks(session)
        while cursor is not None:
            ids, cursor = ticks.due_nightly(NIGHT, cursor, BATCH)
            found += len(ids)
    return found


def old_selection(engine: Engine) -> int:
    """The same walk with the OR keyset bound and the due filter in Python (before this version)."""
    found, last = 0, None
    with Session(engine) as session:
        while True:
            query = select(Conversation.id, Conversation.last_sleep_at, Conversation.last_activity_at).where(
                Conversation.last_sleep_at < NIGHT
            )
            if last is not None:
                at, last_id = last
                query = query.where(
                    or_(
                        Conversation.last_sleep_at > at,
                        and_(Conversation.last_sleep_at == at, Conversation.id > last_id),
                    )
                )
            rows = session.execute(
                query.order_by(Conversation.last_sleep_at, Conversation.id).limit(BATCH)
            ).all()
            found += sum(1 for r in rows if r.last_activity_at > r.last_sleep_at)
            if len(rows) < BATCH:
                return found
            last = (rows[-1].last_sleep_at, rows[-1].id)


def timed(fn: Callable[[Engine], int], engine: Engine, runs: int) -> tuple[float, int]:
    samples, found = [], 0
    for _ in range(runs):
        start = time.perf_counter()
        found = fn(engine)
        samples.append(time.perf_counter() - start)
    return statistics.median(samples), found


FIXED_DUE = 1_000


def fixed_due(server: object, tmp: str) -> list[str]:
    """1,000 due among 10,000 and among 100,000: the selection should not grow with the fleet."""
    lines = ["", "| database | conversations | due | selection (s) |", "|---|---:|---:|---:|"]
    notes = []
    for backend in ("SQLite", "PostgreSQL"):
        times = []
        for n in (10_000, 100_000):
            url = str(server.create_database()) if backend == "PostgreSQL" else f"sqlite:///{tmp}/f{n}.db"  # type: ignore[attr-defined]
            engine = create_engine(url)
            _fill(engine, n, every=n // FIXED_DUE)
            took, due = timed(new_selection, engine, 5)
            assert due == FIXED_DUE, due
            times.append(took)
            lines.append(f"| {backend} | {n:,} | {due:,} | {took:.4f} |")
            print(lines[-1], flush=True)
            engine.dispose()
        notes.append(f"- {backend}: 100,000 / 10,000 conversations = {times[1] / times[0]:.2f}x")
    return [*lines, "", *notes]


def enqueue_redis(n: int = 10_000) -> list[str]:
    """Enqueueing ``n`` ticks to Redis through the producer the sweeps use: one publish each (the old
    way) against ``enqueue_ticks`` (pipelined batches), each into an empty Redis database."""
    import redis as redis_client

    from sleepcompact.adapters.queue import PUBLISH_BATCH, CeleryQueue
    from sleepcompact.config import Settings
    from tests.support.servers import start_redis

    server = start_redis(Path(tempfile.mkdtemp(prefix="sc-sweep-redis-")))
    ticks = [(f"conv_{i:016x}", "nightly-2026-11-24") for i in range(n)]
    took: dict[str, float] = {}
    try:
        for db, how in ((1, "one publish each"), (2, f"batches of {PUBLISH_BATCH}")):
            url = server.url.rsplit("/", 1)[0] + f"/{db}"
            queue = CeleryQueue(Settings(broker_url=url))
            queue.enqueue_tick("conv_warmup", "warmup")
            start = time.perf_counter()
            if db == 1:
                for conversation_id, key in ticks:
                    queue.enqueue_tick(conversation_id, key)
            else:
                queue.enqueue_ticks(ticks)
            took[how] = time.perf_counter() - start
            queue.close()
            assert redis_client.Redis.from_url(url).llen("sleep") == n + 1
    finally:
        server.stop()
    lines = [
        "",
        f"Enqueue of {n:,} ticks to Redis (loopback):",
        "",
        "| how | s | ticks/s |",
        "|---|---:|---:|",
    ]
    lines += [f"| {how} | {t:.2f} | {n / t:,.0f} |" for how, t in took.items()]
    return lines


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--small", action="store_true", help="also 10k and 100k on SQLite and PostgreSQL")
    parser.add_argument(
        "--old-max",
        type=int,
        default=1_000_000,
        help="time the OR keyset only up to this many (it takes minutes)",
    )
    parser.add_argument(
        "--fixed-due", action="store_true", help="1,000 due among 10k and 100k; Redis enqueue"
    )
    args = parser.parse_args()
    from tests.support.servers import start_postgres

    server = start_postgres(Path(tempfile.mkdtemp(prefix="sc-sweep-pg-")))
    when = f"{datetime.now(UTC):%Y-%m-%d %H:%M UTC}"
    lines = [
        f"{when} · {platform.platform()} · CPU {cpu_model()} · Python {platform.python_version()}",
        "",
        "| database | conversations | due | row-value keyset (s) | OR keyset (s) | old / new |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    cases: list[tuple[str, int]] = [("PostgreSQL", 1_000_000)]
    if args.small:
        cases = [
            ("SQLite", 10_000),
            ("SQLite", 100_000),
            ("PostgreSQL", 10_000),
            ("PostgreSQL", 100_000),
            *cases,
        ]
    if args.fixed_due:
        cases, lines = [], lines[:1]
    try:
        with tempfile.TemporaryDirectory(prefix="sc-sweep-") as tmp:
            for backend, n in cases:
                url = str(server.create_database()) if backend == "PostgreSQL" else f"sqlite:///{tmp}/s{n}.db"
                engine = create_engine(url)
                _fill(engine, n)
                runs = 1 if n >= 1_000_000 else 3
                new, due = timed(new_selection, engine, runs)
                assert due == n // 100, due
                if n <= args.old_max:
                    old, due_old = timed(old_selection, engine, 1 if n >= 100_000 else runs)
                    assert due_old == due, (due, due_old)
                    lines.append(
                        f"| {backend} | {n:,} | {due:,} | {new:.3f} | {old:.3f} | {old / new:.1f}x |"
                    )
                else:
                    lines.append(f"| {backend} | {n:,} | {due:,} | {new:.3f} | - | - |")
                print(lines[-1], flush=True)
                engine.dispose()
            if args.fixed_due:
                lines += fixed_due(server, tmp)
                lines += enqueue_redis()
    finally:
        server.stop()
    print(publish("\n".join(lines), "sweep"))


if __name__ == "__main__":
    main()
