"""Prometheus metrics: the observer in-process against its own registry, and a real worker's endpoint.

The worker runs tasks in prefork children; the test scrapes the main process's endpoint and finds
the children's counts there (prometheus_client's multiprocess mode).
"""

from __future__ import annotations

import json
import os
import urllib.request
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from sleepcompact import Memory, Settings, telemetry
from sleepcompact.adapters.metrics import Metrics, start_metrics_server
from sleepcompact.demo.synthetic import coding_agent
from sleepcompact.services.clock import utcnow
from tests.support.fake_anthropic import FakeAnthropic, Scripted
from tests.support.processes import Process, children_of, wait_for
from tests.support.queues import RecordingQueue
from tests.support.servers import free_port

TIMEOUT = 120  # bounds a hang; the tick takes a second or two
Sample = tuple[str, tuple[tuple[str, str], ...]]
"""A sample's name and its labels, sorted."""


@pytest.fixture
def metrics() -> Iterator[Metrics]:
    """A fresh registry, subscribed to the canonical events for the test only."""
    m = Metrics()
    telemetry.subscribe(m.observe)
    try:
        yield m
    finally:
        telemetry.unsubscribe(m.observe)


def _coding(mem: Memory, window: int = 8_000) -> str:
    conv = coding_agent(seed=0)
    cid = mem.create_conversation("claude-sonnet-4-5", context_window=window)
    mem.append_many(cid, [{"role": "system", "content": conv.system}, *conv.messages])
    return cid


def test_compactions_guard_calls_and_ticks_are_counted(sqlite_url: str, metrics: Metrics) -> None:
    value = metrics.registry.get_sample_value
    mem = Memory(Settings(database_url=sqlite_url), auto_migrate=True, queue=RecordingQueue())
    try:
        applied = mem.compactions.compact(_coding(mem))
        stalled = mem.create_conversation("claude-sonnet-4-5", context_window=4_096)
        mem.append(stalled, {"role": "system", "content": "rule " * 2_000})
        mem.append(stalled, {"role": "user", "content": "hello"})
        mem.compactions.compact(stalled, trigger="sleep")
        mem.compactions.compact(stalled, trigger="sleep")  # backoff
        mem.compactions.compact(_coding(mem), dry_run=True)  # not counted: nothing happened
        emergency = _coding(mem)
        mem.prepare_context(emergency)
        mem.prepare_context(emergency)  # now under soft: a plain read
        ticked = _coding(mem)
        with mem.admin.uow() as uow:  # queued by a sweep five minutes ago, as a busy broker would leave it
            uow.ticks.queue([(ticked, "night-1")], utcnow() - timedelta(minutes=5))
            uow.commit()
        mem.sleep.run_tick(ticked, "night-1")
        mem.sleep.run_tick(ticked, "night-1")  # already done
    finally:
        mem.close()
    assert value("sleepcompact_compactions_total", {"trigger": "manual", "outcome": "applied"}) == 1
    assert value("sleepcompact_compactions_total", {"trigger": "sleep", "outcome": "stalled"}) == 1
    assert value("sleepcompact_compactions_total", {"trigger": "sleep", "outcome": "backoff"}) == 1
    assert value("sleepcompact_compactions_total", {"trigger": "emergency", "outcome": "applied"}) == 1
    assert value("sleepcompact_compactions_total", {"trigger": "sleep", "outcome": "applied"}) == 1
    assert value("sleepcompact_compaction_seconds_count", {"trigger": "manual"}) == 1
    saved = sum(
        value("sleepcompact_tokens_saved_total", {"trigger": "manual", "step": s["step"]}) or 0
        for s in {s["step"]: s for s in applied.steps}.values()
    )
    assert saved == applied.tokens_before - applied.tokens_after > 0
    assert value("sleepcompact_tokens_saved_total", {"trigger": "manual", "step": "summarize"}) > 0
    assert value("sleepcompact_guard_decisions_total", {"action": "emergency_compacted"}) == 1
    assert value("sleepcompact_guard_decisions_total", {"action": "none"}) == 1
    assert value("sleepcompact_sleep_ticks_total", {"outcome": "done"}) == 1
    assert value("sleepcompact_sleep_ticks_total", {"outcome": "already_done"}) == 1
    assert value("sleepcompact_queue_lag_seconds_count") == 1  # the repeat waited in no queue
    assert value("sleepcompact_queue_lag_seconds_sum") >= 300  # the five minutes it waited, observed
    assert value("sleepcompact_compaction_seconds_sum", {"trigger": "manual"}) > 0  # real work took time


def test_llm_latency_tokens_and_cost_are_counted_per_model(
    sqlite_url: str, fake_anthropic: FakeAnthropic, metrics: Metrics
) -> None:
    value = metrics.registry.get_sample_value
    fake_anthropic.script(
        Scripted(status=529),  # retried: a failed call is counted, its latency too, but no tokens
        Scripted(text="## Task and goals\n- fix PAY rounding", input_tokens=9000, output_tokens=120),
    )
    settings = Settings(
        database_url=sqlite_url,
        anthropic_api_key="sk-ant-test-key-not-a-secret",
        anthropic_base_url=fake_anthropic.url,
        summarizer="anthropic",
        summarizer_model="claude-haiku-4-5",
    )
    mem = Memory(settings, auto_migrate=True, queue=RecordingQueue())
    try:
        assert mem.compactions.compact(_coding(mem)).status == "applied"
    finally:
        mem.close()
    model = {"model": "claude-haiku-4-5"}
    assert value("sleepcompact_llm_calls_total", {**model, "purpose": "summary", "outcome": "ok"}) == 1
    transient = {**model, "purpose": "summary", "outcome": "transient_error"}
    assert value("sleepcompact_llm_calls_total", transient) == 1
    assert value("sleepcompact_llm_seconds_count", model) == 2
    assert value("sleepcompact_llm_tokens_total", {**model, "direction": "input"}) == 9000
    assert value("sleepcompact_llm_tokens_total", {**model, "direction": "output"}) == 120
    assert value("sleepcompact_llm_cost_usd_total", model) == pytest.approx((9000 * 1.0 + 120 * 5.0) / 1e6)


def test_the_metrics_server_serves_its_registry(metrics: Metrics) -> None:
    telemetry.emit("guard", conversation_id="c", action="sleep_requested", decision="request_sleep")
    port = free_port()
    server, _ = start_metrics_server(port, metrics.registry, addr="127.0.0.1")
    try:
        samples = _scrape(port)
    finally:
        server.shutdown()
        server.server_close()
    assert samples[("sleepcompact_guard_decisions_total", (("action", "sleep_requested"),))] == 1


def _scrape(port: int) -> dict[Sample, float]:
    """Every sample the endpoint serves, keyed by name and sorted labels."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as response:
        text = response.read().decode()
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def _wait_for_samples(port: int, keys: list[Sample], log: Path) -> dict[Sample, float]:
    """Scrape until every sample in ``keys`` is there and non-zero (the endpoint may not be up yet)."""

    def scrape() -> dict[Sample, float] | None:
        try:
            samples = _scrape(port)
        except OSError:
            return None
        return samples if all(samples.get(k) for k in keys) else None

    return wait_for(scrape, timeout=TIMEOUT, what=f"{keys} on the metrics endpoint", log=log)


def test_a_prefork_worker_serves_its_childrens_metrics(tmp_path: Path) -> None:
    port = free_port()
    database_url = f"sqlite:///{tmp_path}/data.db"
    broker_url = f"sqla+sqlite:///{tmp_path}/broker.db"
    inherited = {k: v for k, v in os.environ.items() if not k.startswith(("SLEEPCOMPACT_", "ANTHROPIC_"))}
    env = {
        **inherited,
        "SLEEPCOMPACT_DATABASE_URL": database_url,
        "SLEEPCOMPACT_BROKER_URL": broker_url,
        "SLEEPCOMPACT_LOG_FORMAT": "json",
        "SLEEPCOMPACT_METRICS_PORT": str(port),
    }
    mem = Memory(Settings(database_url=database_url, broker_url=broker_url), auto_migrate=True)
    cid = _coding(mem)
    log = tmp_path / "worker.log"
    worker = Process.module("worker", "--concurrency", "2", env=env, log=log, cwd=tmp_path)
    applied: Sample = ("sleepcompact_compactions_total", (("outcome", "applied"), ("trigger", "sleep")))
    lag: Sample = ("sleepcompact_queue_lag_seconds_count", ())
    try:
        mem.sleep.tick_now([cid], "night-metrics")
        # The tick's compaction and its own line are counted in a pool child, served by the parent.
        samples = _wait_for_samples(port, [applied, lag], log)
        (line,) = [json.loads(x) for x in worker.output().splitlines() if '"metrics_server"' in x]
        writers = {int(f.stem.rsplit("_", 1)[1]) for f in Path(line["multiproc_dir"]).glob("counter_*.db")}
        assert writers & set(children_of(worker.pid)), (writers, worker.pid)  # a child counted it
    finally:
        code = worker.stop()
    assert [t.status for t in mem.sleep.ticks(cid)] == ["done"]
    mem.close()
    assert samples[applied] == 1.0
    assert samples[lag] == 1.0
    assert samples[("sleepcompact_sleep_ticks_total", (("outcome", "done"),))] == 1.0
    assert code == 0
    # The multiprocess directory was the worker's own: gone once it stopped.
    assert line["port"] == port and line["addr"] == "0.0.0.0"
    assert not Path(line["multiproc_dir"]).exists()
    # Off a terminal the worker's whole output is JSON, one object a line, Celery's own lines included,
    # and the tick's canonical line carries the ids bound by the task.
    lines = [json.loads(x) for x in worker.output().splitlines() if x.strip()]
    assert any(str(e.get("logger", "")).startswith("celery") for e in lines), lines[:5]
    (tick,) = [e for e in lines if e.get("event") == "sleep_tick"]
    assert tick["conversation_id"] == cid and tick.get("task_id")
