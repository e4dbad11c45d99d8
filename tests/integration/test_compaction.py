"""The compaction engine on real databases: fit, archive, restore, rolling summaries, races, search."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from sleepcompact import InvalidSetting, Memory
from sleepcompact.demo.synthetic import coding_agent
from sleepcompact.domain.errors import NotRestorable
from sleepcompact.domain.prompt import SUMMARY_PREFIX
from sleepcompact.domain.validation import anthropic_problems

DATA = Path(__file__).resolve().parents[3] / "shared" / "data" / "trajectories"
TRAJS = sorted((DATA / "swe-agent").glob("*.traj"))
MINI = DATA / "mini-swe-agent-dev.jsonl"
Snap = Callable[[Memory], dict[str, list[tuple[Any, ...]]]]


def _coding(memory: Memory, window: int = 8_000, seed: int = 0) -> str:
    conv = coding_agent(seed=seed)
    cid = memory.create_conversation("claude-sonnet-4-5", context_window=window)
    memory.append_many(cid, [{"role": "system", "content": conv.system}, *conv.messages])
    return cid


def _rows(memory: Memory, cid: str) -> list[dict[str, Any]]:
    return list(memory.export(cid).messages)


def _patch_identifiers(submission: str) -> list[str]:
    """File paths and function names a final patch touches."""
    paths = re.findall(r"^\+\+\+ b/(\S+)", submission, re.M)
    funcs = re.findall(r"^@@[^@]*@@\s*(?:def|class)\s+(\w+)", submission, re.M)
    return sorted(set(paths + funcs))


def test_compaction_fits_the_target_and_archives_instead_of_deleting(memory: Memory) -> None:
    cid = _coding(memory)
    before = memory.export(cid)
    outcome = memory.compactions.compact(cid)
    assert outcome.status == "applied", outcome.reason
    stats = memory.stats(cid)
    assert stats.tokens <= stats.target
    after = memory.export(cid)
    assert after.appended == before.appended  # every original is still there
    originals = [(r["seq"], r["content"]) for r in after.messages if r["kind"] != "summary"]
    assert originals == [(r["seq"], r["content"]) for r in before.messages]
    states = {r["state"] for r in after.messages}
    assert "archived" in states
    summary = [r for r in after.messages if r["kind"] == "summary"]
    assert len(summary) == 1 and summary[0]["content"].startswith(SUMMARY_PREFIX)
    view = memory.context(cid)
    assert anthropic_problems(view.messages) == []
    # The call carries the live rows and the archived snippets recalled for the newest user message.
    assert view.tokens == view.budget.effective(stats.live_tokens + view.recall_tokens)


def test_the_compaction_record_has_its_figures(memory: Memory) -> None:
    cid = _coding(memory)
    outcome = memory.compactions.compact(cid)
    (record,) = memory.compactions.history(cid)
    assert record.id == outcome.compaction_id
    assert record.status == "applied" and record.trigger == "manual"
    assert record.tokens_before > record.tokens_after == memory.admin.conversation(cid).live_tokens
    assert record.summary_message_id is not None
    assert record.summarizer_provider == "offline"
    assert record.messages_affected > 0
    assert record.first_seq <= record.last_seq
    assert {s["step"] for s in record.steps} >= {"summarize"}
    assert record.input_hash and len(record.input_hash) == 64
    journal = memory.journal.entries(cid, this_conversation=True)
    assert any(j.origin == "context_synthesis" for j in journal)
    assert any(j.origin == "pre_compaction" for j in journal)


def test_restore_brings_back_the_exact_prior_state(memory: Memory) -> None:
    cid = _coding(memory)
    before = memory.export(cid)
    outcome = memory.compactions.compact(cid)
    assert outcome.compaction_id
    memory.compactions.restore(outcome.compaction_id)
    after = memory.export(cid)
    assert json.dumps(after.messages, sort_keys=True) == json.dumps(before.messages, sort_keys=True)
    assert after.appended == before.appended
    assert memory.admin.conversation(cid).live_tokens == before.conversation["live_tokens"]
    with pytest.raises(NotRestorable, match="reverted"):
        memory.compactions.restore(outcome.compaction_id)


def test_restoring_an_older_compaction_restores_the_later_ones_first(memory: Memory) -> None:
    cid = _coding(memory, window=32_000)
    snapshots = [memory.export(cid).messages]
    ids = []
    for i in range(3):
        memory.append_many(cid, coding_agent(seed=10 + i, turns=15).messages)
        snapshots.append(memory.export(cid).messages)
        ids.append(memory.compactions.compact(cid).compaction_id)
    assert all(ids)
    undone = memory.compactions.restore(str(ids[1]))
    assert list(undone) == [ids[2], ids[1]]
    rows = _rows(memory, cid)
    # Exactly the state before the second compaction, plus what was appended after it, still live.
    before_second = snapshots[2]
    assert json.dumps(rows[: len(before_second)], sort_keys=True) == json.dumps(before_second, sort_keys=True)
    later = rows[len(before_second) :]
    assert later and all(r["state"] == "live" and r["kind"] != "summary" for r in later)
    assert [h.status for h in memory.compactions.history(cid)] == ["applied", "reverted", "reverted"]


def test_rolling_summaries_keep_lineage_and_note_repeated_summarization(memory: Memory) -> None:
    cid = _coding(memory, window=32_000)
    outcomes = []
    for i in range(3):
        outcomes.append(memory.compactions.compact(cid, force=True))
        memory.append_many(cid, coding_agent(seed=20 + i, turns=15).messages)
    assert [o.status for o in outcomes] == ["applied"] * 3
    hist = memory.compactions.history(cid)
    assert hist[1].previous_compaction_id == hist[0].id
    assert hist[2].previous_compaction_id == hist[1].id
    live_summaries = [r for r in _rows(memory, cid) if r["kind"] == "summary" and r["state"] != "archived"]
    assert len(live_summaries) == 1  # one rolling summary, the older ones folded in
    assert "summarized 3 times" in live_summaries[0]["content"]
    assert "summarized" not in str(outcomes[0].summary).split("\n")[1]


def test_a_lost_race_applies_nothing_and_says_so(database_url: str, db_snapshot: Snap) -> None:
    rival = Memory(database_url=database_url, auto_migrate=True)
    calls: list[str] = []

    def slow_summarizer(prompt: str) -> str:
        # While this compaction waits for its LLM, another worker compacts the same conversation.
        if not calls:
            calls.append("rival")
            assert rival.compactions.compact(cid).status == "applied"
        return "## Task and goals\n- fix the bug (summary from the slow worker)"

    mem = Memory(database_url=database_url, summarizer=slow_summarizer)
    try:
        cid = _coding(mem)
        outcome = mem.compactions.compact(cid)
        assert outcome.status == "discarded"
        assert "lost race" in outcome.reason
        hist = mem.compactions.history(cid)
        assert [h.status for h in hist] == ["applied", "discarded"]
        summaries = [r for r in _rows(mem, cid) if r["kind"] == "summary"]
        assert len(summaries) == 1 and "slow worker" not in summaries[0]["content"]
    finally:
        mem.close()
        rival.close()


def test_appends_during_a_compaction_stay_live_and_in_order(database_url: str) -> None:
    appended: list[int] = []

    def summarizer_that_sees_an_append(prompt: str) -> str:
        appended.extend(mem.append(cid, {"role": "user", "content": "a message sent mid-compaction"}).seqs)
        return "## Task and goals\n- fix the rounding bug"

    mem = Memory(database_url=database_url, summarizer=summarizer_that_sees_an_append, auto_migrate=True)
    try:
        cid = _coding(mem)
        assert mem.compactions.compact(cid).status == "applied"
        rows = {r["seq"]: r for r in _rows(mem, cid)}
        assert rows[appended[0]]["state"] == "live"
        view = mem.context(cid)
        assert view.messages[-1]["content"] == "a message sent mid-compaction"
        live = sum(r["live_tokens"] for r in rows.values() if r["state"] != "archived")
        assert mem.admin.conversation(cid).live_tokens == live
    finally:
        mem.close()


def test_a_failing_summarizer_falls_back_offline_and_history_stays_intact(database_url: str) -> None:
    def broken(prompt: str) -> str:
        raise TimeoutError("the LLM did not answer")

    mem = Memory(database_url=database_url, summarizer=broken, auto_migrate=True)
    try:
        cid = _coding(mem)
        before = mem.export(cid).appended
        outcome = mem.compactions.compact(cid, trigger="emergency")
        assert outcome.status == "applied"
        assert outcome.fallback and "TimeoutError" in outcome.fallback
        assert mem.compactions.history(cid)[0].summarizer_provider == "offline"
        assert mem.export(cid).appended == before
    finally:
        mem.close()


def test_an_oversized_summary_is_refused_for_the_offline_one(database_url: str) -> None:
    mem = Memory(database_url=database_url, summarizer=lambda prompt: "word " * 50_000, auto_migrate=True)
    try:
        cid = _coding(mem)
        outcome = mem.compactions.compact(cid, fallback=True)
        assert outcome.status == "applied"
        assert outcome.fallback and "not shorter" in outcome.fallback
    finally:
        mem.close()


def test_dry_run_prints_the_plan_and_writes_nothing(memory: Memory, db_snapshot: Snap) -> None:
    cid = _coding(memory)
    before = db_snapshot(memory)
    outcome = memory.compactions.compact(cid, dry_run=True)
    assert outcome.status == "dry_run"
    assert outcome.plan is not None and outcome.plan["summarize"] is not None
    assert outcome.plan["steps"]
    assert db_snapshot(memory) == before


def test_every_placeholder_names_the_original_the_recall_tool_reads(memory: Memory) -> None:
    cid = _coding(memory, window=64_000)
    memory.compactions.compact(cid, force=True)
    masked = [r for r in _rows(memory, cid) if r["state"] in ("masked", "truncated")]
    assert masked, "a 64k window with ~40k tokens of tool output masks or truncates some"
    for row in masked:
        ref = re.search(r"read_archived\(seq=(\d+)\)", str(row["live_content"]))
        assert ref, row["live_content"]
        call = {"type": "tool_use", "id": "r", "name": "read_archived", "input": {"seq": int(ref.group(1))}}
        assert int(ref.group(1)) == row["seq"]
        (hit,) = memory.search_history(cid, f"seq:{ref.group(1)}")
        assert hit.seq == row["seq"] and hit.content == row["content"]
        assert memory.handle_tool_call(cid, call)["content"].startswith(f"[seq {row['seq']}, ")


def test_full_text_search_finds_archived_originals(memory: Memory) -> None:
    conv = coding_agent(seed=0)
    cid = _coding(memory)
    memory.compactions.compact(cid)
    archived = [r for r in _rows(memory, cid) if r["state"] == "archived" and r["kind"] == "tool_result"]
    assert archived
    path = next(i for i in conv.identifiers if "/" in i and i.endswith(".py"))
    hits = memory.search_history(cid, path)
    assert hits and all(path.split("/")[-1].split(".")[0] in json.dumps(h.content) for h in hits)


def test_a_stalled_compaction_is_recorded_and_backed_off(database_url: str) -> None:
    mem = Memory(database_url=database_url, auto_migrate=True)
    try:
        cid = mem.create_conversation("claude-sonnet-4-5", context_window=4_096)
        # System instructions are never compacted; alone they exceed the target, so nothing can help.
        mem.append(cid, {"role": "system", "content": "rule " * 2_000})
        mem.append(cid, {"role": "user", "content": "hello"})
        first = mem.compactions.compact(cid, trigger="sleep")
        assert first.status == "stalled"
        assert mem.compactions.history(cid)[0].status == "stalled"
        assert mem.compactions.compact(cid, trigger="sleep").status == "backoff"
    finally:
        mem.close()


def test_clear_is_restorable(memory: Memory) -> None:
    cid = _coding(memory)
    before = memory.export(cid).messages
    record = memory.clear(cid)
    assert memory.admin.conversation(cid).live_messages == 0
    memory.compactions.restore(record)
    assert json.dumps(memory.export(cid).messages, sort_keys=True) == json.dumps(before, sort_keys=True)


def test_real_trajectories_fit_and_keep_their_patch_identifiers(sqlite_memory: Memory) -> None:
    # At 16k most of each run is folded, the hard case for the patch's names (at 32k, less is folded;
    # test_shared_data checks that every one of these fits and renders at 32k too).
    window = 16_000
    records = [json.loads(line) for line in MINI.read_text().splitlines() if line.strip()]
    ids = sqlite_memory.import_(MINI, all_records=True, model="claude-sonnet-4-5", context_window=window)
    ids += [sqlite_memory.import_(p, model="claude-sonnet-4-5", context_window=window)[0] for p in TRAJS]
    for cid, record in zip(ids, records + [None] * len(TRAJS), strict=True):
        outcome = sqlite_memory.compactions.compact(cid)
        stats = sqlite_memory.stats(cid)
        assert stats.tokens <= stats.target or outcome.status in ("noop",), (cid, outcome.reason)
        view = sqlite_memory.context(cid)
        assert anthropic_problems(view.messages) == [], cid
        if record is None:
            continue
        # What the agent sees next names every file and function its final patch touches: the archive
        # always has them, so finding them there proves nothing.
        context_text = json.dumps(view.messages, ensure_ascii=False)
        missing = [i for i in _patch_identifiers(record["submission"]) if i not in context_text]
        assert missing == [], (record["instance_id"], missing)


def test_ladder_defaults_can_be_overridden_per_conversation(memory: Memory) -> None:
    conv = coding_agent(seed=0)
    tight = memory.create_conversation(
        "claude-sonnet-4-5", context_window=64_000, policy={"tool_output_cap": 300}
    )
    loose = memory.create_conversation("claude-sonnet-4-5", context_window=64_000)
    for cid in (tight, loose):
        memory.append_many(cid, [{"role": "system", "content": conv.system}, *conv.messages])
        memory.compactions.compact(cid, force=True)
    truncated = {cid: [r for r in _rows(memory, cid) if r["state"] == "truncated"] for cid in (tight, loose)}
    assert truncated[tight] and all(r["live_tokens"] <= 300 for r in truncated[tight])
    assert all(r["live_tokens"] > 300 for r in truncated[loose])
    with pytest.raises(InvalidSetting, match="unknown policy"):
        memory.create_conversation("claude-sonnet-4-5", policy={"tool_output_capp": 1})


def test_outside_an_emergency_a_failing_summarizer_fails_the_compaction_and_changes_nothing(
    database_url: str, db_snapshot: Snap
) -> None:
    mem = Memory(database_url=database_url, summarizer=lambda prompt: "", auto_migrate=True)
    try:
        cid = _coding(mem)
        before = mem.export(cid).messages
        outcome = mem.compactions.compact(cid, trigger="sleep")
        assert outcome.status == "failed"
        assert "empty" in outcome.reason
        assert mem.export(cid).messages == before
        (record,) = mem.compactions.history(cid)
        assert record.status == "failed" and "empty" in record.error
    finally:
        mem.close()
