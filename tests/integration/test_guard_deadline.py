"""The guard's deadline, measured as a caller sees it: in a fresh interpreter, against the local model.

Each case runs ``prepare_context`` once in a new Python process (so the first emergency pays for
everything a process pays once, the Anthropic SDK's import included) on a conversation the test
built beforehand, and times that call alone, not the process start. The promise (docs/guarantees.md)
is a time bound, so it is asserted as one: the call returns within ``guard_deadline_s`` plus 0.5 s.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

from sleepcompact import Memory, Settings
from sleepcompact.demo.synthetic import coding_agent
from sleepcompact.services.clock import utcnow
from tests.support.fake_anthropic import FakeAnthropic, Scripted

# The issue measured 6.7 s against 2 s; 5 s leaves the compaction's own CPU work (rendering, the offline
# summary and the journal written while the model is asked: about a second on an idle 2-core machine)
# room to finish before the deadline on a loaded one, where it takes several times as long.
DEADLINE_S = 5.0
SLACK_S = 0.5  # the promise: the deadline plus this, for the write after it
HANG_TIMEOUT_S = 120  # bounds a hung subprocess; not a speed assertion

# Run in the child: build the Memory (not timed), then time the one guarded call.
CALL = """
import json, sys, time
from sleepcompact import Memory, Settings
args = json.loads(sys.argv[1])
settings = Settings(
    database_url=args["db"],
    anthropic_api_key="sk-ant-test-key-not-a-secret",
    anthropic_base_url=args["url"],
    summarizer="anthropic",
    summarizer_timeout_s=300.0,
    guard_deadline_s=args["deadline"],
    guard_lease_wait_s=args["lease_wait"],
)
mem = Memory(settings)
sdk_before = "anthropic" in sys.modules
started = time.perf_counter()
ctx = mem.prepare_context(args["cid"], system="You are a careful coding agent.")
elapsed = time.perf_counter() - started
(record,) = mem.compactions.history(args["cid"])
print(json.dumps({
    "elapsed": elapsed, "sdk_before": sdk_before, "action": ctx.action, "tokens": ctx.tokens,
    "usable": ctx.usable, "provider": record.summarizer_provider, "error": record.error,
}))
"""


def _needs_summary(database_url: str) -> str:
    """A conversation over hard at an 8k window, where the LLM-free steps are not enough."""
    with Memory(Settings(database_url=database_url), auto_migrate=True) as mem:
        conv = coding_agent(seed=0)
        cid = mem.create_conversation("claude-sonnet-4-5", context_window=8_000)
        mem.append_many(cid, [{"role": "system", "content": conv.system}, *conv.messages])
    return cid


def _first_call(database_url: str, cid: str, fake: FakeAnthropic, *, lease_wait: float = 10.0) -> Any:
    """Run the guarded call in a fresh interpreter; what it measured and saw."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLEEPCOMPACT_", "ANTHROPIC_"))}
    args = {"db": database_url, "url": fake.url, "cid": cid, "deadline": DEADLINE_S, "lease_wait": lease_wait}
    proc = subprocess.run(
        [sys.executable, "-c", CALL, json.dumps(args)],
        env=env,
        capture_output=True,
        text=True,
        timeout=HANG_TIMEOUT_S,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    # The SDK was not imported before the call: its import is part of what the deadline covers.
    assert result["sdk_before"] is False
    assert result["tokens"] <= result["usable"]
    return result


def test_the_first_emergency_of_a_process_meets_the_deadline(
    sqlite_url: str, fake_anthropic: FakeAnthropic
) -> None:
    cid = _needs_summary(sqlite_url)
    result = _first_call(sqlite_url, cid, fake_anthropic)
    assert result["elapsed"] <= DEADLINE_S + SLACK_S, result
    # The model answered in time (the usual case) or, on a machine too slow to import the SDK within
    # the deadline, the offline summary stood in: either way the call fit and kept to its deadline.
    if result["provider"] == "anthropic":
        assert result["action"] == "emergency_compacted" and len(fake_anthropic.message_requests()) == 1
    else:
        assert result["action"] == "fallback_compacted" and "deadline" in (result["error"] or "")


def test_a_hanging_model_returns_within_the_deadline_and_the_process_exits(
    sqlite_url: str, fake_anthropic: FakeAnthropic
) -> None:
    # Far longer than the SDK's timeout in the child (300 s): the abandoned call never ends by itself,
    # so the child exiting at all shows it does not wait for it.
    fake_anthropic.set_default(Scripted(delay_s=3600))
    cid = _needs_summary(sqlite_url)
    result = _first_call(sqlite_url, cid, fake_anthropic)
    assert result["elapsed"] <= DEADLINE_S + SLACK_S, result
    assert result["action"] == "fallback_compacted" and result["provider"] == "offline"
    assert "deadline" in (result["error"] or "")


def test_waiting_for_a_dead_workers_lease_counts_against_the_deadline(
    sqlite_url: str, fake_anthropic: FakeAnthropic
) -> None:
    fake_anthropic.set_default(Scripted(delay_s=3600))
    cid = _needs_summary(sqlite_url)
    # A worker took the lease and died: it would expire long after the guard's deadline.
    with Memory(Settings(database_url=sqlite_url)) as mem, mem.admin.uow() as uow:
        assert uow.ticks.acquire_lease(cid, "tick:night-dead", utcnow(), 3600)
        uow.commit()
    result = _first_call(sqlite_url, cid, fake_anthropic, lease_wait=30.0)
    assert result["elapsed"] <= DEADLINE_S + SLACK_S, result
    # The wait for the lease took half the deadline, not the 30 s allowed; the model had the rest.
    assert result["action"] == "fallback_compacted" and result["provider"] == "offline"
    assert "deadline" in (result["error"] or "")
