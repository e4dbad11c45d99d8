"""What a compaction that changes nothing records, where mutation testing found the suite blind
(docs/mutation.md). On a throwaway SQLite file: no server.

``history`` shows a stalled or failed compaction with its own id, its status and error, no steps, no
message affected, nothing saved, and the fingerprint and epoch of the state it was planned on (what a
later run compares against).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest

from sleepcompact import Memory
from sleepcompact.demo.synthetic import coding_agent

HEX64 = re.compile(r"[0-9a-f]{64}")


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
