"""LLM rescoring of journal entries during a sleep tick: the real SDK against the local fake API.

The summarizer's model rescores the pending journal before consolidation, so the importance floor
works on its judgement; redaction, the retry policy and the error mapping are the summaries' own.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from structlog.testing import capture_logs

from sleepcompact import Memory, Settings
from sleepcompact.domain.errors import TransientLLMError
from sleepcompact.domain.journal import JournalEntryRecord
from sleepcompact.ports import Rescorer
from sleepcompact.services.journal import rescore_pending
from tests.support.fake_anthropic import FakeAnthropic, Scripted

CANARIES = {
    "anthropic": "sk-ant-api03-CANARYa1b2c3d4e5f6g7h8i9j0k1l2m3n4o5p6q7r8s9t0",
    "aws": "AKIACANARY1234567890",
}
RESCORED = ("importance", "importance_method", "status")


def _settings(database_url: str, fake: FakeAnthropic, **overrides: Any) -> Settings:
    return Settings(
        database_url=database_url,
        anthropic_api_key="sk-ant-test-key-not-a-secret",
        anthropic_base_url=fake.url,
        summarizer="anthropic",
        **{"llm_rescoring": True, **overrides},
    )


@pytest.fixture
def llm_memory(sqlite_url: str, fake_anthropic: FakeAnthropic) -> Iterator[Memory]:
    """A Memory with LLM rescoring on, its summarizer the real SDK talking to the fake server."""
    mem = Memory(_settings(sqlite_url, fake_anthropic, summarizer_attempts=2), auto_migrate=True)
    try:
        yield mem
    finally:
        mem.close()


def _journal(mem: Memory) -> tuple[str, list[int]]:
    """A conversation whose agent noted three things: a fact, an observation, an environmental note."""
    cid = mem.create_conversation("claude-sonnet-4-5", tenant_id="t1", agent_id="assistant")
    ids = [
        mem.journal.add(cid, "The user said the office plant is called Gerald", tags=["fact"]),
        mem.journal.add(
            cid, "Bob moved the release of billing-api v4.2 to 2026-12-04", source_type="environmental"
        ),
        mem.journal.add(cid, "The user prefers answers in metric units", source_type="observation"),
    ]
    return cid, ids


def _rescorer(mem: Memory) -> Rescorer:
    rescorer: Rescorer = mem.admin.summarizer  # type: ignore[assignment]
    return rescorer


def _without(entries: list[JournalEntryRecord], fields: tuple[str, ...]) -> list[dict[str, Any]]:
    return [{k: v for k, v in e.to_dict().items() if k not in fields} for e in entries]


def test_llm_scores_replace_the_heuristic_and_decide_what_is_promoted(
    llm_memory: Memory, fake_anthropic: FakeAnthropic
) -> None:
    cid, (plant, release, units) = _journal(llm_memory)
    before = llm_memory.journal.entries(cid)
    assert [e.importance for e in before] == [8, 4, 6]
    fake_anthropic.script(Scripted(text="[2, 9, 7]"))
    conv = llm_memory.admin.conversation(cid)
    report = rescore_pending(llm_memory._deps, _rescorer(llm_memory), conv.tenant_id, conv.agent_id)
    assert report.to_dict() == {"status": "rescored", "entries": 3, "rescored": 3, "changed": 3}
    after = llm_memory.journal.entries(cid)
    assert [(e.importance, e.importance_method, e.status) for e in after] == [
        (2, "llm", "scored"),
        (9, "llm", "scored"),
        (7, "llm", "scored"),
    ]
    # Nothing else about an entry changes.
    assert _without(after, RESCORED) == _without(before, RESCORED)
    (request,) = fake_anthropic.message_requests()
    assert request["max_tokens"] <= 64
    assert "Gerald" not in request["system"] and "Gerald" in request["messages"][0]["content"]

    # The tick finds nothing left to rescore and consolidates with the LLM's scores.
    result = llm_memory.sleep.tick(cid, "night-1")
    assert result.rescoring.entries == 0
    assert len(fake_anthropic.message_requests()) == 1
    status = {e.id: e.status for e in llm_memory.journal.entries(cid)}
    assert status == {plant: "pruned", release: "consolidated", units: "consolidated"}
    remembered = " ".join(m.content for m in llm_memory.memories.list(cid))
    assert "billing-api v4.2" in remembered and "metric" in remembered and "Gerald" not in remembered


def test_a_tick_rescores_then_consolidates_and_running_again_sends_nothing(
    llm_memory: Memory, fake_anthropic: FakeAnthropic
) -> None:
    cid, _ = _journal(llm_memory)
    fake_anthropic.script(Scripted(text="```json\n[9, 9, 1]\n```"))
    result = llm_memory.sleep.tick(cid, "night-1")
    assert result.rescoring.rescored == 3
    assert result.consolidation.below_floor == 1 and result.consolidation.created == 2
    # The same tick is done; a new tick finds nothing pending; only new entries are sent next time.
    assert llm_memory.sleep.tick(cid, "night-1").already_done is True
    assert llm_memory.sleep.tick(cid, "night-2").rescoring.entries == 0
    assert len(fake_anthropic.message_requests()) == 1
    llm_memory.journal.add(cid, "Carol approved the migration to PostgreSQL 17", tags=["decision"])
    fake_anthropic.script(Scripted(text="[10]"))
    assert llm_memory.sleep.tick(cid, "night-3").rescoring.rescored == 1
    second = fake_anthropic.message_requests()[1]["messages"][0]["content"]
    assert "PostgreSQL 17" in second and "billing-api" not in second


def test_secrets_in_entries_are_redacted_before_they_leave(
    llm_memory: Memory, fake_anthropic: FakeAnthropic
) -> None:
    cid = llm_memory.create_conversation("claude-sonnet-4-5", tenant_id="t1", agent_id="assistant")
    llm_memory.journal.add(cid, f"The deploy key is {CANARIES['anthropic']}", tags=["fact"])
    llm_memory.journal.add(cid, f"aws_access_key_id = {CANARIES['aws']} for the backup bucket")
    fake_anthropic.script(Scripted(text="[8, 8]"))
    with capture_logs() as logs:
        result = llm_memory.sleep.tick(cid, "night-1")
    assert result.rescoring.rescored == 2
    sent = json.dumps([r["raw"] for r in fake_anthropic.requests])
    logged = json.dumps(logs, default=str)
    assert "[REDACTED:" in sent
    for kind, secret in CANARIES.items():
        assert secret not in sent, kind
        assert secret not in logged, kind
    # The journal never held them: entries are redacted when written (they become memories).
    journal = json.dumps([e.to_dict() for e in llm_memory.journal.entries(cid)])
    assert "[REDACTED:aws_access_key:" in journal
    assert all(secret not in journal for secret in CANARIES.values())


@pytest.mark.parametrize(
    "reply",
    [
        Scripted(text="They all look important to me!"),
        Scripted(text="[5, 5]"),  # three entries, two scores
        Scripted(text="[5, 5, 5", stop_reason="max_tokens"),
        Scripted(status=401, error_type="authentication_error"),
    ],
)
def test_an_unusable_reply_or_a_permanent_error_keeps_the_heuristic_and_the_tick_goes_on(
    llm_memory: Memory, fake_anthropic: FakeAnthropic, reply: Scripted
) -> None:
    cid, _ = _journal(llm_memory)
    fake_anthropic.set_default(reply)
    with capture_logs() as logs:
        result = llm_memory.sleep.tick(cid, "night-1")
    assert result.rescoring.status == "heuristic kept"
    assert result.consolidation.created == 2 and result.consolidation.below_floor == 1
    entries = llm_memory.journal.entries(cid)
    assert [(e.importance, e.importance_method) for e in entries] == [
        (8, "heuristic"),
        (4, "heuristic"),
        (6, "heuristic"),
    ]
    assert len(fake_anthropic.message_requests()) == 1  # not retried: the answer would be the same
    (warning,) = [e for e in logs if e["event"] == "rescoring_failed"]
    assert warning["log_level"] == "warning"
    assert "Gerald" not in json.dumps(logs, default=str)


def test_an_api_that_stays_overloaded_fails_the_tick_and_changes_nothing(
    llm_memory: Memory, fake_anthropic: FakeAnthropic
) -> None:
    cid, _ = _journal(llm_memory)
    before = llm_memory.journal.entries(cid)
    fake_anthropic.set_default(
        Scripted(status=529, error_type="overloaded_error", headers={"retry-after": "0"})
    )
    with pytest.raises(TransientLLMError, match="529"):
        llm_memory.sleep.tick(cid, "night-1")
    assert len(fake_anthropic.message_requests()) == 2  # summarizer_attempts
    assert llm_memory.journal.entries(cid) == before
    assert llm_memory.memories.list(cid) == []
    # The worker's retry of the same tick goes through once the API is back.
    fake_anthropic.set_default(Scripted(text="[1, 9, 9]"))
    result = llm_memory.sleep.tick(cid, "night-1")
    assert result.rescoring.rescored == 3 and result.consolidation.created == 2


def test_the_offline_summarizer_keeps_the_heuristic(sqlite_url: str) -> None:
    mem = Memory(Settings(database_url=sqlite_url, llm_rescoring=True), auto_migrate=True)
    try:
        cid, _ = _journal(mem)
        result = mem.sleep.tick(cid, "night-1")
        assert result.rescoring is None
        assert {e.importance_method for e in mem.journal.entries(cid)} == {"heuristic"}
    finally:
        mem.close()


def test_rescoring_off_sends_nothing(sqlite_url: str, fake_anthropic: FakeAnthropic) -> None:
    mem = Memory(_settings(sqlite_url, fake_anthropic, llm_rescoring=False), auto_migrate=True)
    try:
        cid, _ = _journal(mem)
        assert mem.sleep.tick(cid, "night-1").rescoring is None
        assert fake_anthropic.message_requests() == []
    finally:
        mem.close()


# -- the service with a custom callable, on SQLite and PostgreSQL ------------------------------------


def test_batches_are_scored_in_order_and_each_applied_on_its_own(database_url: str) -> None:
    calls: list[int] = []

    def fn(prompt: str) -> str:
        count = prompt.count("</entry>")
        calls.append(count)
        return json.dumps([len(calls) + 1] * count)  # batch 1 scores 2, batch 2 scores 3, ...

    mem = Memory(Settings(database_url=database_url, llm_rescoring=True), summarizer=fn, auto_migrate=True)
    try:
        cid = mem.create_conversation("claude-sonnet-4-5", tenant_id="t1", agent_id="a1")
        for i in range(5):
            mem.journal.add(cid, f"note number {i}")
        conv = mem.admin.conversation(cid)
        report = rescore_pending(mem._deps, _rescorer(mem), "t1", "a1", batch_size=2)
        assert calls == [2, 2, 1]
        assert report.rescored == 5
        assert [e.importance for e in mem.journal.entries(cid)] == [2, 2, 3, 3, 4]
        assert rescore_pending(mem._deps, _rescorer(mem), conv.tenant_id, conv.agent_id).entries == 0
        assert calls == [2, 2, 1]
    finally:
        mem.close()


def test_entries_consolidated_while_the_llm_thinks_are_left_alone(database_url: str) -> None:
    """The LLM call runs outside any transaction; scores for entries that moved on meanwhile are dropped."""
    holder: dict[str, Any] = {}

    def fn(prompt: str) -> str:
        # Another tick of the same agent consolidates the entries while this one waits for its reply.
        holder["racing"] = holder["mem"].memories.consolidate(holder["cid"])
        return json.dumps([10] * prompt.count("</entry>"))

    mem = Memory(Settings(database_url=database_url, llm_rescoring=True), summarizer=fn, auto_migrate=True)
    holder["mem"] = mem
    try:
        cid, _ = _journal(mem)
        holder["cid"] = cid
        before = mem.journal.entries(cid)
        result = mem.sleep.tick(cid, "night-1")
        assert holder["racing"].entries == 3
        assert result.rescoring.entries == 3 and result.rescoring.rescored == 0
        assert result.consolidation.entries == 0
        after = mem.journal.entries(cid)
        assert [(e.importance, e.importance_method) for e in after] == [
            (e.importance, "heuristic") for e in before
        ]
        assert {e.status for e in after} == {"consolidated", "pruned"}
    finally:
        mem.close()
