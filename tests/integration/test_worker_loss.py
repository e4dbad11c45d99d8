"""A whole worker killed mid-tick (SIGKILL of its process group: the parent and every child) and the
tick recovered by the next worker and the scheduler's idle sweep, applied exactly once.

Nothing is left to report the loss: no parent survives to see a child die (the case Celery's
``reject_on_worker_lost`` covers, in ``test_worker.py``), and Kombu's SQLAlchemy transport never
redelivers a message it handed out. The tick row is what remains: ``running`` since before the lease
ran out, so the idle sweep sends it again (``services.sweeps._requeue_stale``). The lease is short here
(hard limit 10 s plus 2 s of grace) and the idle sweep runs every second, so the bound documented in
docs/guarantees.md (lease plus one idle sweep interval) is a few seconds.
"""

from __future__ import annotations

import os
import signal
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

import pytest
import redis

from sleepcompact import Memory, Settings
from sleepcompact.demo.synthetic import coding_agent
from sleepcompact.domain.schedule import TickRecord
from tests.support.fake_anthropic import FakeAnthropic, Scripted
from tests.support.processes import Process, children_of, wait_for

TIMEOUT = 180  # bounds a hang; recovery takes the lease (12 s) plus a sweep and a tick
SHORT_LEASE = {
    "SLEEPCOMPACT_TASK_SOFT_TIME_LIMIT": "8",
    "SLEEPCOMPACT_TASK_TIME_LIMIT": "10",
    "SLEEPCOMPACT_LEASE_GRACE": "2",
    "SLEEPCOMPACT_IDLE_SWEEP_SECONDS": "1",
}


@dataclass
class Deployment:
    """A database, a broker, the model stand-in, and the environment every process gets."""

    env: dict[str, str]
    workdir: Path

    def memory(self) -> Memory:
        return Memory(Settings.from_env(self.env), auto_migrate=True)

    def start(self, *args: str, log: str) -> Process:
        return Process(list(args), self.env, self.workdir / log, self.workdir)


@pytest.fixture(params=["sqlite-broker", "redis"])
def deployment(
    request: pytest.FixtureRequest, tmp_path: Path, fake_anthropic: FakeAnthropic
) -> Iterator[Deployment]:
    """The embedded default (SQLite data and broker) or production (PostgreSQL and Redis)."""
    drop: str | None = None
    if request.param == "sqlite-broker":
        database_url, broker_url = f"sqlite:///{tmp_path}/data.db", f"sqla+sqlite:///{tmp_path}/broker.db"
    else:
        server = request.getfixturevalue("postgres_server")
        database_url = server.create_database()
        drop = database_url.rsplit("/", 1)[1]
        broker_url = request.getfixturevalue("redis_url")
        redis.Redis.from_url(broker_url).flushdb()
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("SLEEPCOMPACT_", "ANTHROPIC_"))},
        "SLEEPCOMPACT_DATABASE_URL": database_url,
        "SLEEPCOMPACT_BROKER_URL": broker_url,
        "SLEEPCOMPACT_LOG_FORMAT": "json",
        "SLEEPCOMPACT_BEAT_SCHEDULE": str(tmp_path / "beat-schedule"),
        "SLEEPCOMPACT_SUMMARIZER": "anthropic",
        "ANTHROPIC_API_KEY": "sk-ant-test-key-not-a-secret",
        "ANTHROPIC_BASE_URL": fake_anthropic.url,
        **SHORT_LEASE,
    }
    try:
        yield Deployment(env, tmp_path)
    finally:
        if drop:
            request.getfixturevalue("postgres_server").drop_database(drop)


def _summary_needed(mem: Memory) -> str:
    conv = coding_agent(seed=0)
    cid = mem.create_conversation("claude-sonnet-4-5", context_window=8_000)
    mem.append_many(cid, [{"role": "system", "content": conv.system}, *conv.messages])
    return cid


def _tick(mem: Memory, cid: str) -> TickRecord:
    (tick,) = mem.sleep.ticks(cid)
    return tick


def test_a_whole_worker_killed_mid_tick_is_recovered_and_applied_once(
    deployment: Deployment, fake_anthropic: FakeAnthropic
) -> None:
    # The first summary request hangs (the worker dies waiting for it); every later one is answered.
    fake_anthropic.script(Scripted(delay_s=3600))
    mem = deployment.memory()
    cid = _summary_needed(mem)
    rows_before = len(mem.export(cid).messages)
    first = deployment.start(sys.executable, "-m", "worker", "--concurrency", "1", log="worker-1.log")
    try:
        mem.sleep.tick_now([cid], "night-lost")
        wait_for(fake_anthropic.message_requests, timeout=TIMEOUT, what="the summary call", log=first.log)
        running = _tick(mem, cid)
        assert running.status == "running" and running.started_at is not None
        assert children_of(first.pid), "the prefork child that runs the tick"
        os.killpg(first.pid, signal.SIGKILL)  # the parent and its children, at once
        killed_at = time.monotonic()
        first.popen.wait()
    finally:
        first.stop()
    assert mem.admin.conversation(cid).lease_owner == "tick:night-lost"  # left behind by the dead tick
    # A new worker and the scheduler come up; nothing but the tick row says a tick was lost.
    run = deployment.start(str(Path(sys.executable).with_name("sleepcompact")), "run", log="run.log")
    try:
        done = wait_for(
            lambda: _tick(mem, cid).status == "done", timeout=TIMEOUT, what="the recovered tick", log=run.log
        )
        recovered_s = time.monotonic() - killed_at
    finally:
        run.stop()
    assert done
    print(f"\nrecovered {recovered_s:.1f} s after the kill (lease {mem.settings.lease_seconds} s)")
    tick = _tick(mem, cid)
    # The idle sweep sent it again once the lease had run out, not before (the clock restarted then).
    assert tick.queued_at >= running.started_at + timedelta(seconds=mem.settings.lease_seconds)
    assert tick.result["compaction"]["status"] == "applied"
    # Applied exactly once, by the model's reply to the second request; nothing lost, nothing doubled.
    applied = [h for h in mem.compactions.history(cid) if h.status == "applied"]
    assert len(applied) == 1 and applied[0].trigger == "sleep"
    assert applied[0].summarizer_provider == "anthropic"
    assert len(fake_anthropic.message_requests()) == 2
    exported = mem.export(cid)
    assert [r["kind"] for r in exported.messages].count("summary") == 1
    assert len(exported.messages) == rows_before + 1
    assert len(exported.appended) == len(coding_agent(seed=0).messages) + 1
    conv = mem.admin.conversation(cid)
    assert conv.lease_owner is None and conv.compaction_epoch == 1
    assert mem.stats(cid).tokens <= mem.stats(cid).target
    mem.close()
