"""One retry layer per path: what a 529 storm costs in requests, in a worker's tick and in the guard.

In the worker, the summarizer makes one attempt per task run and Celery's autoretry runs the task
again: a storm costs 1 + ``task_max_retries`` requests, never the product of two layers. In the
caller's process (the guard), the summarizer retries itself, at most ``summarizer_attempts`` times
and never past the guard's deadline. The real SDK talks to a local stand-in that answers 529 forever.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import redis

from sleepcompact import Memory, Settings
from sleepcompact.demo.synthetic import coding_agent
from tests.support.fake_anthropic import FakeAnthropic, Scripted
from tests.support.processes import Process, wait_for

OVERLOADED = Scripted(status=529, error_type="overloaded_error", headers={"retry-after": "0"})
TIMEOUT = 120  # bounds a hang; the retries take a few seconds


def _over_hard(mem: Memory) -> str:
    """A coding conversation far over its hard threshold at an 8k window: the LLM-free steps are not
    enough, only a summary brings it under its target."""
    cid = mem.create_conversation("claude-sonnet-4-5", context_window=8_000)
    mem.append_many(cid, coding_agent(seed=0).messages)
    return cid


def test_a_529_storm_in_a_worker_tick_costs_one_request_per_celery_run(
    fake_anthropic: FakeAnthropic, redis_url: str, tmp_path: Path
) -> None:
    fake_anthropic.set_default(OVERLOADED)
    redis.Redis.from_url(redis_url).flushdb()
    database_url = f"sqlite:///{tmp_path}/data.db"
    settings = Settings(database_url=database_url, broker_url=redis_url)
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("SLEEPCOMPACT_", "ANTHROPIC_"))},
        "SLEEPCOMPACT_DATABASE_URL": database_url,
        "SLEEPCOMPACT_BROKER_URL": redis_url,
        "SLEEPCOMPACT_LOG_FORMAT": "json",
        "SLEEPCOMPACT_SUMMARIZER": "anthropic",
        "ANTHROPIC_API_KEY": "sk-ant-test",
        "ANTHROPIC_BASE_URL": fake_anthropic.url,
        # In-process this would allow 4 attempts a call; the worker must still make one per run.
        "SLEEPCOMPACT_SUMMARIZER_ATTEMPTS": "4",
        "SLEEPCOMPACT_TASK_MAX_RETRIES": "2",
        "SLEEPCOMPACT_TASK_RETRY_BACKOFF": "1",
        "SLEEPCOMPACT_TASK_RETRY_BACKOFF_MAX": "1",
    }
    with Memory(settings) as mem:
        cid = _over_hard(mem)
        worker = Process.module("worker", "--concurrency", "1", env=env, log=tmp_path / "w.log", cwd=tmp_path)
        try:
            mem.sleep.tick_now([cid], "storm")

            def failed_runs() -> int:
                return sum(1 for h in mem.compactions.history(cid) if h.status == "failed")

            wait_for(lambda: failed_runs() >= 3, timeout=TIMEOUT, what="three failed runs", log=worker.log)
            # The last countdown is at most 1 s: wait past it, and for the worker to give the task up.
            wait_for(
                lambda: "TransientLLMError" in worker.output() and "raised unexpected" in worker.output(),
                timeout=TIMEOUT,
                what="Celery giving the task up",
                log=worker.log,
            )
            time.sleep(2)
        finally:
            worker.stop()
        assert failed_runs() == 3
        assert len(fake_anthropic.message_requests()) == 3  # 1 + task_max_retries, not 4 x 3
        assert mem.stats(cid).live_tokens == mem.admin.conversation(cid).live_tokens  # nothing applied
        assert all(h.status == "failed" for h in mem.compactions.history(cid))


def test_a_529_storm_in_the_guard_costs_at_most_the_attempts_then_falls_back(
    fake_anthropic: FakeAnthropic, sqlite_url: str
) -> None:
    fake_anthropic.set_default(OVERLOADED)
    settings = Settings(
        database_url=sqlite_url,
        summarizer="anthropic",
        anthropic_api_key="sk-ant-test",
        anthropic_base_url=fake_anthropic.url,
        summarizer_attempts=3,
    )
    with Memory(settings) as mem:
        cid = _over_hard(mem)
        ctx = mem.prepare_context(cid, system="You are a careful coding agent.")
    assert ctx.action == "fallback_compacted"
    assert ctx.tokens <= ctx.usable
    assert len(fake_anthropic.message_requests()) == 3  # the adapter's attempts, and no other layer


def test_the_guard_starts_no_retry_its_deadline_would_not_let_finish(
    fake_anthropic: FakeAnthropic, sqlite_url: str
) -> None:
    # Each 529 asks for a 2 s pause; with a 3 s deadline only the first retry fits before it. The deadline
    # runs from the call (rendering, the lease, the SDK's import on a process's first call: see
    # test_guard_deadline.py); the SDK is imported here first, so the first request goes out at once.
    import anthropic  # noqa: F401

    fake_anthropic.set_default(
        Scripted(status=529, error_type="overloaded_error", headers={"retry-after": "2"})
    )
    settings = Settings(
        database_url=sqlite_url,
        summarizer="anthropic",
        anthropic_api_key="sk-ant-test",
        anthropic_base_url=fake_anthropic.url,
        summarizer_attempts=10,
        guard_deadline_s=3.0,
    )
    with Memory(settings) as mem:
        cid = _over_hard(mem)
        ctx = mem.prepare_context(cid)
        time.sleep(3.0)  # an abandoned attempt would show up here
    assert ctx.action == "fallback_compacted"
    assert len(fake_anthropic.message_requests()) == 2
