"""Nightly batches: with the switch on, a sleep tick requests its summary through the Message Batches API
(half price) and the ``poll_batches`` task applies it, on a real worker, with the real SDK against the
local fake Anthropic server."""

from __future__ import annotations

import os
from pathlib import Path

from sleepcompact import Memory, Settings
from sleepcompact.demo.synthetic import coding_agent
from tests.support.fake_anthropic import FakeAnthropic
from tests.support.processes import Process, wait_for

TIMEOUT = 120  # bounds a hang


def _settings(tmp_path: Path, fake: FakeAnthropic, **overrides: object) -> Settings:
    return Settings(
        database_url=f"sqlite:///{tmp_path}/data.db",
        broker_url=f"sqla+sqlite:///{tmp_path}/broker.db",
        anthropic_api_key="sk-ant-test-key-not-a-secret",
        anthropic_base_url=fake.url,
        summarizer="anthropic",
        **overrides,  # type: ignore[arg-type]
    )


def _over_soft(mem: Memory) -> str:
    conv = coding_agent(seed=0)
    cid = mem.create_conversation("claude-sonnet-4-5", context_window=8_000)
    mem.append_many(cid, [{"role": "system", "content": conv.system}, *conv.messages])
    return cid


def test_a_nightly_tick_goes_through_a_batch_and_the_poll_applies_it(
    tmp_path: Path, fake_anthropic: FakeAnthropic
) -> None:
    fake_anthropic.polls_until_ended = 1
    mem = Memory(_settings(tmp_path, fake_anthropic, nightly_batches=True), auto_migrate=True)
    cid = _over_soft(mem)
    tick = mem.sleep.run_tick(cid, "night-1")
    # The tick consolidated, then handed its summary to a batch: no direct Messages call, nothing applied.
    assert tick.compaction.status == "batched" and tick.compaction.batch_id
    assert fake_anthropic.message_requests() == []
    assert [h.status for h in mem.compactions.history(cid)] == ["running"]
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("SLEEPCOMPACT_", "ANTHROPIC_"))},
        "SLEEPCOMPACT_DATABASE_URL": mem.settings.database_url,
        "SLEEPCOMPACT_BROKER_URL": mem.settings.broker_url,
        "SLEEPCOMPACT_SUMMARIZER": "anthropic",
        "SLEEPCOMPACT_NIGHTLY_BATCHES": "true",
        "ANTHROPIC_API_KEY": "sk-ant-test-key-not-a-secret",
        "ANTHROPIC_BASE_URL": fake_anthropic.url,
        "SLEEPCOMPACT_LOG_FORMAT": "json",
    }
    worker = Process.module("worker", env=env, log=tmp_path / "worker.log", cwd=tmp_path)
    try:
        # What beat sends every SLEEPCOMPACT_BATCH_POLL_SECONDS when nightly batches are on.
        mem.admin.producer.send("sleepcompact.poll_batches")  # the batch is still running: nothing applied
        mem.admin.producer.send("sleepcompact.poll_batches")  # ended now: applied with the epoch check
        applied = wait_for(
            lambda: [h for h in mem.compactions.history(cid) if h.status == "applied"],
            timeout=TIMEOUT,
            what="the batch result applied by the worker",
            log=worker.log,
        )
    finally:
        worker.stop()
    assert applied[0].llm_batch is True and applied[0].trigger == "sleep"
    assert fake_anthropic.message_requests() == []  # half price: no direct call was needed
    stats = mem.stats(cid)
    assert stats.tokens <= stats.soft
    mem.close()


def test_the_beat_schedule_polls_batches_only_when_nightly_batches_are_on(tmp_path: Path) -> None:
    from sleepcompact.adapters.queue import beat_schedule

    off = beat_schedule(Settings())
    on = beat_schedule(Settings(nightly_batches=True, batch_poll_seconds=120))
    assert set(off) == {"nightly-sweep", "idle-sweep"}
    assert on["poll-batches"] == {"task": "sleepcompact.poll_batches", "schedule": 120.0}
