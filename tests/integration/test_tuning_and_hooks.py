"""Automatic compaction users can tune: custom summary instructions (deployment, tenant, conversation)
on every automatic path, the entry-count trigger and its floor, and hooks; the real SDK against the
local stand-in, and a real worker process for the worker's own path."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

from structlog.testing import capture_logs

from sleepcompact import Memory, Settings
from sleepcompact.demo.synthetic import coding_agent
from sleepcompact.hooks import BeforeCompaction, CompactionVerdict
from tests.support import hook_sample
from tests.support.fake_anthropic import FakeAnthropic
from tests.support.processes import Process, wait_for
from tests.support.queues import RecordingQueue

DEPLOYMENT = "Deployment rule: write amounts in EUR."
TENANT = "Tenant rule: name the customer account."
CONVERSATION = "Conversation rule: list every failing test by name."


def _settings(tmp_path: Path, fake: FakeAnthropic, **overrides: Any) -> Settings:
    return Settings(
        database_url=f"sqlite:///{tmp_path}/data.db",
        broker_url=f"sqla+sqlite:///{tmp_path}/broker.db",
        anthropic_api_key="sk-ant-test-key-not-a-secret",
        anthropic_base_url=fake.url,
        summarizer="anthropic",
        summary_instructions=DEPLOYMENT,
        tenant_summary_instructions=(("acme", TENANT),),
        **overrides,
    )


def _coding(mem: Memory, tenant: str = "acme", window: int = 8_000) -> str:
    conv = coding_agent(seed=0)
    cid = mem.create_conversation(
        "claude-sonnet-4-5",
        tenant_id=tenant,
        context_window=window,
        policy={"summary_instructions": CONVERSATION},
    )
    mem.append_many(cid, [{"role": "system", "content": conv.system}, *conv.messages])
    return cid


def _system_of(body: dict[str, Any]) -> str:
    system = body.get("system", "")
    return system if isinstance(system, str) else "".join(b.get("text", "") for b in system)


def test_custom_instructions_reach_the_sleep_tick_and_the_guards_requests(
    tmp_path: Path, fake_anthropic: FakeAnthropic
) -> None:
    mem = Memory(_settings(tmp_path, fake_anthropic), queue=RecordingQueue(), auto_migrate=True)
    try:
        ticked = _coding(mem)
        assert mem.sleep.tick(ticked).compaction.status == "applied"
        # The guard's emergency compaction: a conversation far over hard, compacted in the request path.
        guarded = _coding(mem, window=6_000)
        assert mem.prepare_context(guarded).action == "emergency_compacted"
        other = _coding(mem, tenant="globex")
        assert mem.compactions.compact(other, force=True).status == "applied"
    finally:
        mem.close()
    sent = [_system_of(b) for b in fake_anthropic.message_requests()]
    assert len(sent) >= 3
    for system in sent[:-1]:  # acme's: all three layers, broadest first
        assert DEPLOYMENT in system and TENANT in system and CONVERSATION in system
        assert system.index(DEPLOYMENT) < system.index(TENANT) < system.index(CONVERSATION)
    assert DEPLOYMENT in sent[-1] and TENANT not in sent[-1]  # another tenant's request


def test_custom_instructions_reach_a_nightly_batch(tmp_path: Path, fake_anthropic: FakeAnthropic) -> None:
    mem = Memory(_settings(tmp_path, fake_anthropic, nightly_batches=True), auto_migrate=True)
    try:
        cid = _coding(mem)
        assert mem.sleep.run_tick(cid, "night-1").compaction.status == "batched"
    finally:
        mem.close()
    batches = [r["body"] for r in fake_anthropic.requests if r["path"] == "/v1/messages/batches"]
    (params,) = [req["params"] for body in batches for req in body["requests"]]
    system = _system_of(params)
    assert DEPLOYMENT in system and TENANT in system and CONVERSATION in system


def test_the_worker_uses_the_instructions_and_loads_hooks_from_its_setting(
    tmp_path: Path, fake_anthropic: FakeAnthropic
) -> None:
    mem = Memory(_settings(tmp_path, fake_anthropic), auto_migrate=True)
    cid = _coding(mem)
    hook_log = tmp_path / "hooks.jsonl"
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("SLEEPCOMPACT_", "ANTHROPIC_"))},
        "SLEEPCOMPACT_DATABASE_URL": mem.settings.database_url,
        "SLEEPCOMPACT_BROKER_URL": mem.settings.broker_url,
        "SLEEPCOMPACT_SUMMARIZER": "anthropic",
        "SLEEPCOMPACT_SUMMARY_INSTRUCTIONS": DEPLOYMENT,
        "SLEEPCOMPACT_TENANT_SUMMARY_INSTRUCTIONS": json.dumps({"acme": TENANT}),
        "SLEEPCOMPACT_HOOKS": "tests.support.hook_sample:register",
        "HOOK_LOG": str(hook_log),
        "PYTHONPATH": str(Path(__file__).resolve().parents[2]),
        "ANTHROPIC_API_KEY": "sk-ant-test-key-not-a-secret",
        "ANTHROPIC_BASE_URL": fake_anthropic.url,
        "SLEEPCOMPACT_LOG_FORMAT": "json",
    }
    worker = Process.module("worker", env=env, log=tmp_path / "worker.log", cwd=tmp_path)
    try:
        mem.admin.producer.send("sleepcompact.sleep_tick", cid, "manual-1")
        wait_for(
            lambda: [h for h in mem.compactions.history(cid) if h.status == "applied"],
            timeout=120,
            what="the worker's compaction",
            log=worker.log,
        )
        logged = lambda: hook_log.exists() and len(hook_log.read_text().splitlines()) >= 2  # noqa: E731
        wait_for(logged, timeout=30, what="both hooks called")
    finally:
        worker.stop()
        mem.close()
    (system,) = [_system_of(b) for b in fake_anthropic.message_requests()]
    assert DEPLOYMENT in system and TENANT in system and CONVERSATION in system
    assert hook_sample.INSTRUCTION in system  # what the loaded before_compaction hook added
    events = [json.loads(line) for line in hook_log.read_text().splitlines()]
    assert [e["event"] for e in events] == ["before_compaction", "after_compaction"]
    assert events[1]["status"] == "applied"


def test_the_entry_count_trigger_is_off_by_default_and_never_fires_under_its_floor(tmp_path: Path) -> None:
    chatter = [{"role": r, "content": f"message {i}"} for i in range(150) for r in ("user", "assistant")]
    for settings, expected in (
        (Settings(database_url=f"sqlite:///{tmp_path}/a.db"), "not needed"),  # default: off
        (Settings(database_url=f"sqlite:///{tmp_path}/b.db", entry_trigger=100), "not needed"),  # under floor
        (
            Settings(database_url=f"sqlite:///{tmp_path}/c.db", entry_trigger=100, entry_trigger_floor=0.0),
            None,
        ),
    ):
        mem = Memory(settings, queue=RecordingQueue(), auto_migrate=True)
        try:
            cid = mem.create_conversation("claude-sonnet-4-5")  # 200k window: 300 short messages are ~1%
            mem.append_many(cid, chatter)
            status = mem.sleep.tick(cid).compaction.status
            assert status == expected if expected else status == "applied", (settings.entry_trigger, status)
        finally:
            mem.close()


def test_hooks_see_veto_add_and_never_break_history(tmp_path: Path) -> None:
    mem = Memory(
        Settings(database_url=f"sqlite:///{tmp_path}/h.db"), queue=RecordingQueue(), auto_migrate=True
    )
    seen: list[tuple[str, Any]] = []
    vetoing = {"on": True}

    @mem.hooks.before_compaction
    def before(event: BeforeCompaction) -> CompactionVerdict | None:
        seen.append(("before", event.trigger))
        return CompactionVerdict(veto="month-end freeze") if vetoing["on"] else None

    @mem.hooks.after_compaction
    def after(outcome: Any) -> None:
        seen.append(("after", outcome.status))

    @mem.hooks.message_appended
    def appended(event: Any) -> None:
        seen.append(("appended", len(event.seqs)))
        raise RuntimeError("a broken hook")  # logged, and the append stands

    @mem.hooks.conversation_cleared
    def cleared(event: Any) -> None:
        seen.append(("cleared", event.conversation_id))

    try:
        with capture_logs() as logs:
            cid = _coding_offline(mem)
        assert seen[0][0] == "appended" and seen[0][1] > 0 and len(mem.export(cid).appended) > 0
        assert any(e["event"] == "hook_failed" for e in logs)
        outcome = mem.compactions.compact(cid)
        assert outcome.status == "vetoed" and "month-end freeze" in outcome.reason
        assert [(h.status, "month-end freeze" in (h.error or "")) for h in mem.compactions.history(cid)] == [
            ("vetoed", True)
        ]
        vetoing["on"] = False
        assert mem.compactions.compact(cid).status == "applied"
        mem.clear(cid)
        assert seen[-3:] == [("before", "manual"), ("after", "applied"), ("cleared", cid)]
        assert ("after", "vetoed") in seen
    finally:
        mem.close()


def test_a_hanging_hook_does_not_hold_the_guard_past_its_deadline(tmp_path: Path) -> None:
    settings = Settings(database_url=f"sqlite:///{tmp_path}/g.db", guard_deadline_s=1.0)
    mem = Memory(settings, queue=RecordingQueue(), auto_migrate=True)

    @mem.hooks.before_compaction
    def slow(event: BeforeCompaction) -> None:
        time.sleep(5)  # past the 1 s deadline; short so the process does not wait long at exit

    try:
        cid = _coding_offline(mem, window=6_000)
        with capture_logs() as logs:
            ctx = mem.prepare_context(cid)
        # The hook had the whole deadline: the summary falls back to the offline one, and the call fits.
        assert ctx.action in ("emergency_compacted", "fallback_compacted") and ctx.tokens <= ctx.usable
        assert any(e["event"] == "hook_timeout" for e in logs)
    finally:
        mem.close()


def _coding_offline(mem: Memory, window: int = 8_000) -> str:
    conv = coding_agent(seed=0)
    cid = mem.create_conversation("claude-sonnet-4-5", context_window=window)
    mem.append_many(cid, [{"role": "system", "content": conv.system}, *conv.messages])
    return cid
