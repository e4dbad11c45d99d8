"""``rerun --queue``: the re-run goes to the ``admin`` queue as the ``sleepcompact.admin_rerun`` task and a
real worker process applies it; a typo in the target fails at once, before anything is queued."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from sleepcompact import CompactionNotFound, ConversationNotFound, Memory, Settings
from sleepcompact.demo.synthetic import coding_agent
from tests.support.processes import Process, wait_for


def test_a_queued_rerun_is_applied_by_a_worker(tmp_path: Path) -> None:
    settings = Settings(
        database_url=f"sqlite:///{tmp_path}/data.db", broker_url=f"sqla+sqlite:///{tmp_path}/broker.db"
    )
    mem = Memory(settings, auto_migrate=True)
    conv = coding_agent(seed=0)
    cid = mem.create_conversation("claude-sonnet-4-5", context_window=8_000)
    mem.append_many(cid, [{"role": "system", "content": conv.system}, *conv.messages])
    first = mem.compactions.compact(cid).compaction_id
    with pytest.raises(ConversationNotFound):
        mem.compactions.queue_rerun("conv_missing")
    with pytest.raises(CompactionNotFound):
        mem.compactions.queue_rerun(compaction_id="cmp_missing")
    task_id = mem.compactions.queue_rerun(compaction_id=first)
    assert task_id
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("SLEEPCOMPACT_", "ANTHROPIC_"))},
        "SLEEPCOMPACT_DATABASE_URL": settings.database_url,
        "SLEEPCOMPACT_BROKER_URL": settings.broker_url,
        "SLEEPCOMPACT_LOG_FORMAT": "json",
    }
    worker = Process.module("worker", env=env, log=tmp_path / "worker.log", cwd=tmp_path)
    try:
        history = wait_for(
            lambda: [h for h in mem.compactions.history(cid) if h.trigger == "admin_rerun"],
            timeout=120,
            what="the worker's re-run",
            log=worker.log,
        )
    finally:
        worker.stop()
    assert history[0].status == "applied"
    assert [h.status for h in mem.compactions.history(cid) if h.id == first] == ["reverted"]
    mem.close()
