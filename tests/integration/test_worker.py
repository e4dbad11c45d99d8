"""The sleep pipeline with real Celery processes, on the embedded broker (SQLite) and on Redis.

The worker runs as its own process (``python -m worker``), exactly as deployed; the test enqueues
through the real broker and watches the database. Only the LLM is replaced, by the local fake
Anthropic server, where a test needs one.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

import pytest
import redis

from sleepcompact import Memory, Settings
from sleepcompact.demo.synthetic import coding_agent, personal_assistant
from sleepcompact.domain.schedule import TickRecord
from tests.support.fake_anthropic import FakeAnthropic, Scripted
from tests.support.nights import night_after
from tests.support.processes import Process, children_of, wait_for

TIMEOUT = 120  # bounds a hang; the pipeline takes a few seconds


@dataclass
class Pipeline:
    """A database, a broker, and the environment a worker process needs to use them."""

    settings: Settings
    env: dict[str, str]
    workdir: Path

    def memory(self) -> Memory:
        return Memory(self.settings, auto_migrate=True)

    def worker(self, *args: str, **env: str) -> Process:
        return Process.module(
            "worker",
            "--concurrency",
            "2",
            *args,
            env={**self.env, **env},
            log=self.workdir / "worker.log",
            cwd=self.workdir,
        )


@pytest.fixture(params=["sqlite-broker", "redis"])
def pipeline(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Pipeline]:
    """The embedded default (SQLite data, SQLite broker) or production (PostgreSQL data, Redis broker)."""
    drop: str | None = None
    if request.param == "sqlite-broker":
        database_url = f"sqlite:///{tmp_path}/data.db"
        broker_url = f"sqla+sqlite:///{tmp_path}/broker.db"
    else:
        server = request.getfixturevalue("postgres_server")
        database_url = server.create_database()
        drop = database_url.rsplit("/", 1)[1]
        broker_url = request.getfixturevalue("redis_url")
        redis.Redis.from_url(broker_url).flushdb()
    settings = Settings(database_url=database_url, broker_url=broker_url)
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("SLEEPCOMPACT_", "ANTHROPIC_"))},
        "SLEEPCOMPACT_DATABASE_URL": database_url,
        "SLEEPCOMPACT_BROKER_URL": broker_url,
        "SLEEPCOMPACT_LOG_FORMAT": "json",
        "SLEEPCOMPACT_BEAT_SCHEDULE": str(tmp_path / "beat-schedule"),
    }
    try:
        yield Pipeline(settings, env, tmp_path)
    finally:
        if drop:
            request.getfixturevalue("postgres_server").drop_database(drop)


def _ticks_done(mem: Memory, ids: list[str]) -> bool:
    return all(t and all(x.status == "done" for x in t) for t in (mem.sleep.ticks(c) for c in ids))


def test_a_nightly_sweep_runs_the_whole_pipeline_on_a_real_worker(pipeline: Pipeline) -> None:
    mem = pipeline.memory()
    coding = coding_agent(seed=0)
    code_id = mem.create_conversation("claude-sonnet-4-5", plan="free", agent_id="coder")
    mem.append_many(code_id, [{"role": "system", "content": coding.system}, *coding.messages])
    assistant = personal_assistant(seed=0)
    (old, new), *_ = assistant.contradicted
    pa_id = mem.create_conversation("claude-sonnet-4-5", agent_id="assistant")
    mem.append_many(pa_id, assistant.messages)
    for fact in assistant.facts:
        if fact != new:
            mem.journal.add(pa_id, fact, tags=["fact"])
    worker = pipeline.worker()
    try:
        # The sweep that beat sends at night, run for a night after these conversations were created.
        night1 = night_after(1)
        report = mem.sleep.sweep_nightly(now=night1)
        assert report.enqueued == 2
        # A second beat (or a redelivered sweep) the same night enqueues nothing.
        assert mem.sleep.sweep_nightly(now=night1 + timedelta(minutes=5)).enqueued == 0
        wait_for(lambda: _ticks_done(mem, [code_id, pa_id]), timeout=TIMEOUT, what="night 1", log=worker.log)
        if pipeline.settings.broker_url.startswith("redis"):
            # The container healthcheck: the running worker answers a control ping over the broker.
            ping = subprocess.run([sys.executable, "-m", "worker", "ping"], env=pipeline.env, timeout=60)
            assert ping.returncode == 0
        # The next day the user moves, an untrusted source says something odd, and the coder adds a turn.
        mem.journal.add(pa_id, new, tags=["fact"])
        rumour = "the weather feed says the user lives on Mars"
        mem.journal.add(pa_id, rumour, source_type="environmental")
        mem.append(code_id, {"role": "user", "content": "Also bump the version number, please."})
        # No sweep ran the next night (beat down); the one after catches both conversations up.
        report = mem.sleep.sweep_nightly(now=night_after(3))
        assert report.enqueued == 2
        wait_for(
            lambda: (
                all(len(mem.sleep.ticks(c)) == 2 for c in (code_id, pa_id))
                and _ticks_done(mem, [code_id, pa_id])
            ),
            timeout=TIMEOUT,
            what="the catch-up night",
            log=worker.log,
        )
    finally:
        worker.stop()
    # Each conversation was ticked once per night swept, never twice.
    for cid in (code_id, pa_id):
        assert len({t.tick_key for t in mem.sleep.ticks(cid)}) == len(mem.sleep.ticks(cid)) == 2
    # The coding agent was over its soft threshold: compacted once, nothing lost.
    record, *_ = mem.compactions.history(code_id)
    assert record.status == "applied" and record.trigger == "sleep"
    stats = mem.stats(code_id)
    assert stats.tokens <= stats.target
    assert len(mem.export(code_id).appended) == len(coding.messages) + 2  # every original, kept
    # The assistant's journal became memories; the move superseded the old home, and it was recorded.
    everything = mem.memories.list(pa_id, include_invalid=True)
    assert any(m.invalidated_at and old in m.content for m in everything)
    assert any(new in m.content and not m.invalidated_at for m in everything)
    assert any(m.kind == "contradiction" for m in everything)
    assert mem.journal.entries(pa_id, ["pending", "scored"]) == []
    # The low-trust claim never reaches the context the model sees.
    rendered = str(mem.context(pa_id).messages)
    assert "Mars" not in rendered
    mem.close()


def _summary_needed(mem: Memory) -> str:
    conv = coding_agent(seed=0)
    cid = mem.create_conversation("claude-sonnet-4-5", context_window=8_000)
    mem.append_many(cid, [{"role": "system", "content": conv.system}, *conv.messages])
    return cid


def test_a_worker_child_killed_mid_summary_is_redelivered_and_applied_once(
    pipeline: Pipeline, fake_anthropic: FakeAnthropic
) -> None:
    # The first summary request hangs (the child is killed while waiting); the retry is answered.
    fake_anthropic.script(Scripted(delay_s=30))
    llm = {
        "ANTHROPIC_API_KEY": "sk-ant-test-key-not-a-secret",
        "ANTHROPIC_BASE_URL": fake_anthropic.url,
        "SLEEPCOMPACT_SUMMARIZER": "anthropic",
    }
    mem = pipeline.memory()
    cid = _summary_needed(mem)
    rows_before = len(mem.export(cid).messages)
    worker = pipeline.worker("--concurrency", "1", **llm)
    try:
        mem.sleep.tick_now([cid], "night-kill")
        wait_for(fake_anthropic.message_requests, timeout=TIMEOUT, what="the summary call", log=worker.log)
        (child,) = children_of(worker.pid)
        os.kill(child, signal.SIGKILL)
        wait_for(
            lambda: _ticks_done(mem, [cid]), timeout=TIMEOUT, what="the redelivered tick", log=worker.log
        )
        # The killed child is gone; a fresh one ran the redelivered tick.
        assert child not in children_of(worker.pid)
    finally:
        worker.stop()
    assert len(fake_anthropic.message_requests()) == 2  # the killed call and the redelivered one
    # Exactly one compaction after the kill: applied, nothing else recorded (no discarded or failed
    # attempt), and the tick's recorded result names that one.
    history = mem.compactions.history(cid)
    assert [(h.status, h.trigger, h.summarizer_provider) for h in history] == [
        ("applied", "sleep", "anthropic")
    ]
    (tick,) = mem.sleep.ticks(cid)
    assert tick.status == "done" and tick.result["compaction"]["status"] == "applied"
    assert tick.result["compaction"]["compaction_id"] == history[0].id
    exported = mem.export(cid)
    summaries = [r for r in exported.messages if r["kind"] == "summary"]
    assert len(summaries) == 1 and summaries[0]["state"] == "live"
    # Every original row is still there (archived or live), plus the one summary row.
    assert len(exported.messages) == rows_before + 1
    conv = mem.admin.conversation(cid)
    assert conv.compaction_epoch == 1 and conv.lease_owner is None  # one apply, and the lease given back
    mem.close()


def test_run_starts_worker_and_scheduler_and_the_idle_sweep_answers_a_request(tmp_path: Path) -> None:
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("SLEEPCOMPACT_", "ANTHROPIC_"))},
        "SLEEPCOMPACT_DATABASE_URL": f"sqlite:///{tmp_path}/data.db",
        "SLEEPCOMPACT_BROKER_URL": f"sqla+sqlite:///{tmp_path}/broker.db",
        "SLEEPCOMPACT_LOG_FORMAT": "json",
        "SLEEPCOMPACT_IDLE_SWEEP_SECONDS": "1",
    }
    settings = Settings.from_env(env)
    mem = Memory(settings)
    cid = _summary_needed(mem)
    mem.sleep.request(cid)  # what the guard does above the soft threshold
    sleepcompact = str(Path(sys.executable).with_name("sleepcompact"))
    run = Process([sleepcompact, "run"], env, tmp_path / "run.log", tmp_path)
    try:
        ticks: list[TickRecord] = wait_for(
            lambda: [t for t in mem.sleep.ticks(cid) if t.status == "done"],
            timeout=TIMEOUT,
            what="the requested tick",
            log=run.log,
        )
    finally:
        code = run.stop()
    assert ticks[0].tick_key.startswith("request-")
    assert mem.admin.conversation(cid).sleep_requested_at is None
    assert [h.status for h in mem.compactions.history(cid)] == ["applied"]
    assert "beat: Starting" in run.output()
    assert code == 0
    mem.close()


def test_the_guard_waits_for_a_worker_mid_summary_and_reuses_its_compaction(
    pipeline: Pipeline, fake_anthropic: FakeAnthropic
) -> None:
    fake_anthropic.script(Scripted(delay_s=3))  # the worker's summary takes a while
    llm = {
        "ANTHROPIC_API_KEY": "sk-ant-test-key-not-a-secret",
        "ANTHROPIC_BASE_URL": fake_anthropic.url,
        "SLEEPCOMPACT_SUMMARIZER": "anthropic",
    }
    mem = Memory(pipeline.settings.with_overrides(guard_lease_wait_s=60.0), auto_migrate=True)
    cid = _summary_needed(mem)
    worker = pipeline.worker(**llm)
    try:
        mem.sleep.tick_now([cid], "night-race")
        wait_for(
            fake_anthropic.message_requests, timeout=TIMEOUT, what="the worker's summary call", log=worker.log
        )
        # A request arrives now, over the hard threshold: the worker holds the lease and is paying for
        # the summary, so the guard waits for it instead of paying again.
        ctx = mem.prepare_context(cid)
        wait_for(lambda: _ticks_done(mem, [cid]), timeout=TIMEOUT, what="the tick", log=worker.log)
    finally:
        worker.stop()
    history = mem.compactions.history(cid)
    assert [h.status for h in history] == ["applied"] and history[0].trigger == "sleep"
    assert ctx.action == "emergency_compacted" and ctx.compaction_id == history[0].id
    assert ctx.tokens <= ctx.usable
    assert len(fake_anthropic.message_requests()) == 1  # paid once
    mem.close()
