"""What a compaction that changes nothing records, where mutation testing found the suite blind
(docs/mutation.md). On a throwaway SQLite file: no server.

``history`` shows a stalled or failed compaction with its own id, its status and error, no steps, no
message affected, nothing saved, and the fingerprint and epoch of the state it was planned on (what a
later run compares against); a stall after the summary was paid for records how long it took. An
applied compaction without a summary names no summarizer and costs nothing; the facts a summary folds
are journaled in the user's name with their tags and provenance; undoing the guard's second emergency
compaction puts back the rows exactly as its first one left them.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest

from sleepcompact import Memory, Settings
from sleepcompact.demo.synthetic import coding_agent
from tests.support.clock import stopped_compaction_clock

HEX64 = re.compile(r"[0-9a-f]{64}")
BODY = "## Task and goals\n- fix the parser in src/ledger/totals.py"


@pytest.fixture
def summaries() -> list[str]:
    """What the summarizer answers, consumed in order: an empty answer is a failure."""
    return []


@pytest.fixture
def mem(sqlite_url: str, summaries: list[str]) -> Iterator[Memory]:
    memory = Memory(database_url=sqlite_url, summarizer=lambda prompt: summaries.pop(0), auto_migrate=True)
    try:
        yield memory
    finally:
        memory.close()


def _coding(mem: Memory) -> str:
    conv = coding_agent(seed=0)
    cid = mem.create_conversation("claude-sonnet-4-5", context_window=8_000)
    mem.append_many(cid, [{"role": "system", "content": conv.system}, *conv.messages])
    return cid


def test_a_stalled_compaction_records_that_nothing_changed(mem: Memory) -> None:
    cid = mem.create_conversation("claude-sonnet-4-5", context_window=4_096)
    mem.append(cid, {"role": "system", "content": "rule " * 2_000})
    mem.append(cid, {"role": "user", "content": "hello"})
    assert mem.compactions.compact(cid, trigger="sleep").status == "stalled"
    (record,) = mem.compactions.history(cid)
    assert record.id.startswith("cmp_") and len(record.id) == len("cmp_") + 16
    assert (record.status, record.trigger, record.steps, record.messages_affected) == (
        "stalled",
        "sleep",
        [],
        0,
    )
    assert record.tokens_before > 0 and record.tokens_after == record.tokens_before
    assert record.tokens_saved == 0 and record.error
    assert record.input_hash is not None and HEX64.fullmatch(record.input_hash)
    assert record.snapshot_epoch == 0
    (exported,) = mem.export(cid).compactions  # the export document says "no steps", not null
    assert (exported["steps"], exported["messages_affected"]) == ([], 0)
    shown = record.to_dict()
    assert (shown["status"], shown["tokens_saved"], shown["flagged"], shown["summary"]) == (
        "stalled",
        0,
        False,
        None,
    )


def test_a_failed_compaction_records_the_epoch_it_was_planned_on(mem: Memory, summaries: list[str]) -> None:
    cid = _coding(mem)
    summaries.append("The agent fixed the parser and ran the tests.")
    assert mem.compactions.compact(cid, trigger="manual").status == "applied"
    epoch = mem.admin.conversation(cid).compaction_epoch
    assert epoch >= 1
    mem.append_many(cid, coding_agent(seed=1).messages)
    summaries.append("")
    assert mem.compactions.compact(cid, trigger="sleep").status == "failed"
    failed = mem.compactions.history(cid)[-1]
    assert failed.status == "failed" and "empty" in (failed.error or "")
    assert (failed.steps, failed.messages_affected, failed.tokens_after) == ([], 0, failed.tokens_before)
    assert failed.snapshot_epoch == epoch
    assert failed.input_hash is not None and HEX64.fullmatch(failed.input_hash)


def test_a_compaction_that_lost_its_race_records_that_it_saved_nothing(sqlite_url: str) -> None:
    rival = Memory(database_url=sqlite_url, auto_migrate=True)

    def slow_summarizer(prompt: str) -> str:
        # While this compaction waits for its LLM, another worker compacts the same conversation.
        assert rival.compactions.compact(cid).status == "applied"
        return "## Task and goals\n- fix the bug (summary from the slow worker)"

    mem = Memory(database_url=sqlite_url, summarizer=slow_summarizer)
    try:
        cid = _coding(mem)
        assert mem.compactions.compact(cid).status == "discarded"
        applied, discarded = mem.compactions.history(cid)
        assert applied.status == "applied" and applied.tokens_saved > 0
        assert discarded.status == "discarded" and "lost race" in (discarded.error or "")
        assert discarded.tokens_after == discarded.tokens_before and discarded.tokens_saved == 0
    finally:
        mem.close()
        rival.close()


def test_the_summary_row_takes_one_seq_names_its_compaction_and_is_not_activity(
    mem: Memory, summaries: list[str]
) -> None:
    cid = _coding(mem)
    last_seq = max(r["seq"] for r in mem.export(cid).messages)
    active = mem.admin.conversation(cid).last_activity_at
    summaries.append("The agent fixed the parser and ran the tests.")
    outcome = mem.compactions.compact(cid, trigger="manual")
    assert outcome.status == "applied"
    (summary,) = [r for r in mem.export(cid).messages if r["kind"] == "summary"]
    assert summary["seq"] == last_seq + 1
    assert {
        k: summary["metadata"][k] for k in ("compaction_id", "provider", "model", "flagged", "quarantined")
    } == {
        "compaction_id": outcome.compaction_id,
        "provider": "custom",
        "model": "custom",
        "flagged": False,
        "quarantined": 0,
    }
    # Writing the summary is not the agent being active: the nightly sweep does not pick it up again.
    assert mem.admin.conversation(cid).last_activity_at == active
    mem.append(cid, {"role": "user", "content": "next question"})
    assert max(r["seq"] for r in mem.export(cid).messages) == last_seq + 2


def test_a_compaction_stalled_after_its_summary_records_how_long_it_took(
    sqlite_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = stopped_compaction_clock(monkeypatch)

    def summarizer(prompt: str) -> str:
        clock.now += 1.5  # the model answers in 1.5 s, and the layout still saves under 5%
        return "## Task and goals\n- answer the four short messages"

    with Memory(database_url=sqlite_url, summarizer=summarizer, auto_migrate=True) as mem:
        cid = mem.create_conversation("claude-sonnet-4-5", context_window=4_096)
        mem.append(cid, {"role": "system", "content": "rule " * 2_000})
        for i in range(4):
            role = "user" if i % 2 == 0 else "assistant"
            mem.append(cid, {"role": role, "content": f"message {i} " + "lorem ipsum dolor " * 10})
        assert mem.compactions.compact(cid).status == "stalled"
        (record,) = mem.compactions.history(cid)
    assert (record.status, record.duration_ms) == ("stalled", 1500)


def test_an_llm_free_compaction_records_no_summarizer_and_costs_nothing(mem: Memory) -> None:
    conv = coding_agent(seed=2)
    cid = mem.create_conversation("claude-sonnet-4-5", context_window=12_000)
    mem.append_many(cid, [{"role": "system", "content": conv.system}, *conv.messages])
    outcome = mem.compactions.compact(cid)
    (record,) = mem.compactions.history(cid)
    assert [s["step"] for s in record.steps] == ["truncate", "mask"]
    assert record.id == outcome.compaction_id and re.fullmatch(r"cmp_[0-9a-f]{16}", record.id)
    (exported,) = mem.export(cid).compactions  # the export keeps why the plan stopped where it did
    assert exported["metadata"]["reason"] == outcome.reason == "fits after LLM-free steps"
    assert (record.status, record.summary_message_id, record.error) == ("applied", None, None)
    assert (record.summarizer_provider, record.summarizer_model) == (None, None)
    assert (record.llm_input_tokens, record.llm_output_tokens, record.llm_cost_usd, record.llm_batch) == (
        0,
        0,
        0.0,
        False,
    )


def test_the_facts_a_summary_folds_are_journaled_in_the_users_name_with_their_provenance(
    sqlite_url: str,
) -> None:
    with Memory(
        database_url=sqlite_url, summarizer=lambda p: "## Task and goals\n- plan", auto_migrate=True
    ) as mem:
        cid = mem.create_conversation("claude-sonnet-4-5", context_window=4_096, metadata={"user": "Dana"})
        mem.append(cid, {"role": "system", "content": "You are a helpful companion."})
        mem.append(cid, {"role": "user", "content": "I moved to Lisbon last year and I work as a nurse."})
        for i in range(12):
            mem.append(
                cid, {"role": "user", "content": f"Message {i}: " + "we talked about small things " * 12}
            )
            mem.append(cid, {"role": "assistant", "content": f"Reply {i}: " + "that is good to hear " * 12})
        assert mem.compactions.compact(cid, force=True).status == "applied"
        entries = mem.journal.entries(cid)
        (moved,) = [e for e in entries if "Lisbon" in e.content and e.origin == "pre_compaction"]
    assert moved.content.endswith("] Dana moved to Lisbon last year and Dana works as a nurse.")
    assert (moved.source_type, moved.provenance) == ("direct", "user")
    assert moved.tags == ("event", "named", "dated")


def _views(mem: Memory, cid: str) -> list[tuple[Any, ...]]:
    """Every row's live view and the compaction that made it (what a restore must put back)."""
    rows = mem.export(cid).messages
    return [
        (r["id"], r["state"], r["live_content"], r["compaction_id"]) for r in rows if r["kind"] != "summary"
    ]


def test_undoing_the_guards_second_emergency_puts_back_what_its_first_left(sqlite_url: str) -> None:
    """The guard plans its second emergency on the rows its first one left, as it rendered them (not
    read back): the rows the first compaction changed must say so there, or undoing the second leaves
    them belonging to no compaction."""
    with Memory(Settings(database_url=sqlite_url), summarizer=lambda p: BODY, auto_migrate=True) as mem:
        cid = _coding(mem)
        first = mem.prepare_context(cid)
        mem.append_many(cid, coding_agent(seed=1).messages)
        before_second = _views(mem, cid)
        second = mem.prepare_context(cid)
        assert (first.action, second.action) == ("emergency_compacted", "emergency_compacted")
        assert first.compaction_id is not None and second.compaction_id is not None
        assert any(view[3] == first.compaction_id for view in before_second)
        assert mem.compactions.restore(second.compaction_id) == (second.compaction_id,)
        assert _views(mem, cid) == before_second
