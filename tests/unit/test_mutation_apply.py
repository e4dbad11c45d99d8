"""What an applied compaction writes, as ``history``, the journal and the calibration show it, where
mutation testing found the suite blind (docs/mutation.md). On a throwaway SQLite file: no server.

* The record of an applied compaction: the rows it changed (first and last seq, how many), the live
  tokens before and after, its summary row, the compaction before it, the summarizer's provider, model,
  usage and cost, the fingerprint and epoch of the state it was planned on.
* An offline summary that stood in for a failed one is a ``fallback`` step naming why, and the error.
* The facts the summary folds are journaled (redacted) with the tick's tenant and agent, and the summary
  itself as an environmental ``context_synthesis`` entry naming its compaction.
* A summarizer's real usage calibrates its model family's tokenizer factor, halfway on the first call;
  a summarizer that reports no usage calibrates nothing.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest

from sleepcompact import Memory, Settings
from sleepcompact.demo.synthetic import coding_agent
from sleepcompact.domain.budget import model_spec
from tests.support.events import recorded
from tests.support.summarizers import BODY, Priced

HEX64 = re.compile(r"[0-9a-f]{64}")
TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"  # a GitHub token's shape


@pytest.fixture
def priced(sqlite_url: str) -> Iterator[Memory]:
    with Memory(Settings(database_url=sqlite_url), summarizer=Priced(), auto_migrate=True) as mem:
        yield mem


def _coding(mem: Memory, seed: int = 0) -> str:
    conv = coding_agent(seed=seed)
    cid = mem.create_conversation(
        "claude-sonnet-4-5", context_window=8_000, tenant_id="acme", agent_id="fixer"
    )
    mem.append_many(cid, [{"role": "system", "content": conv.system}, *conv.messages])
    return cid


def test_an_applied_compaction_records_what_it_changed_and_who_summarized(priced: Memory) -> None:
    mem = priced
    cid = _coding(mem)
    before = mem.admin.conversation(cid).live_tokens
    outcome = mem.compactions.compact(cid)
    assert outcome.status == "applied"
    (record,) = mem.compactions.history(cid)
    rows = mem.export(cid).messages
    changed = [r["seq"] for r in rows if r["compaction_id"] == record.id and r["kind"] != "summary"]
    (summary,) = [r for r in rows if r["kind"] == "summary"]
    assert (record.id, record.status, record.trigger) == (outcome.compaction_id, "applied", "manual")
    assert (record.first_seq, record.last_seq, record.messages_affected) == (
        min(changed),
        max(changed),
        len(changed),
    )
    assert record.tokens_before == outcome.tokens_before == before
    assert record.tokens_after == outcome.tokens_after == mem.admin.conversation(cid).live_tokens
    assert record.tokens_after < record.tokens_before
    assert record.steps == outcome.steps and record.steps[-1]["step"] == "summarize"
    assert record.summary_message_id == summary["id"] and record.summary == summary["content"]
    assert record.summary is not None and BODY in record.summary
    assert record.previous_compaction_id is None
    assert (record.summarizer_provider, record.summarizer_model) == ("acme", "claude-sonnet-4-5")
    assert (record.llm_input_tokens, record.llm_output_tokens, record.llm_cost_usd) == (1_234, 56, 0.0123)
    assert record.llm_batch is False and record.error is None
    assert isinstance(record.duration_ms, int) and 0 <= record.duration_ms < 600_000
    assert record.input_hash is not None and HEX64.fullmatch(record.input_hash)
    assert record.snapshot_epoch == 0 and record.flags == () and record.quarantined == ()
    assert mem.admin.conversation(cid).compaction_epoch == 1


def test_the_next_compaction_names_the_one_before_it(priced: Memory) -> None:
    mem = priced
    cid = _coding(mem)
    first = mem.compactions.compact(cid)
    mem.append_many(cid, coding_agent(seed=1).messages)
    second = mem.compactions.compact(cid)
    assert (first.status, second.status) == ("applied", "applied")
    older, newer = mem.compactions.history(cid)
    assert newer.previous_compaction_id == older.id == first.compaction_id
    assert newer.snapshot_epoch == 1 and newer.input_hash != older.input_hash
    assert newer.first_seq is not None and older.last_seq is not None


def test_an_offline_summary_standing_in_for_a_failed_one_says_why(sqlite_url: str) -> None:
    with Memory(Settings(database_url=sqlite_url), summarizer=Priced(fail=True), auto_migrate=True) as mem:
        cid = _coding(mem)
        outcome = mem.compactions.compact(cid, trigger="emergency")
        assert outcome.status == "applied" and outcome.fallback == "RuntimeError: the model is down"
        (record,) = mem.compactions.history(cid)
    assert record.steps[-1] == {
        "step": "fallback",
        "section": "HISTORY",
        "messages": 0,
        "tokens_saved": 0,
        "reason": "RuntimeError: the model is down",
    }
    assert [s["step"] for s in record.steps].count("fallback") == 1
    assert record.error == "RuntimeError: the model is down"
    assert (record.summarizer_provider, record.summarizer_model) == ("offline", "offline")
    assert (record.llm_input_tokens, record.llm_output_tokens, record.llm_cost_usd) == (0, 0, 0.0)


def test_a_compaction_journals_what_it_folds_and_its_summary_without_secrets(priced: Memory) -> None:
    mem = priced
    cid = _coding(mem)
    mem.append(cid, {"role": "user", "content": f"My name is Dana. Deploy with the token {TOKEN} please."})
    mem.append_many(cid, coding_agent(seed=1).messages)
    outcome = mem.compactions.compact(cid)
    assert outcome.status == "applied"
    entries = mem.journal.entries(cid)
    folded = [e for e in entries if e.origin == "pre_compaction"]
    (synthesis,) = [e for e in entries if e.origin == "context_synthesis"]
    assert folded and all(
        (e.tenant_id, e.agent_id, e.conversation_id) == ("acme", "fixer", cid) for e in entries
    )
    assert synthesis.content.startswith(f"[{outcome.compaction_id}] [Summary of earlier turns]")
    assert BODY in synthesis.content
    assert (synthesis.source_type, synthesis.tags, synthesis.provenance) == (
        "environmental",
        ("summary",),
        "environment",
    )
    assert all(e.status == "pending" for e in entries)
    assert not any(TOKEN in e.content or TOKEN[:12] in e.content for e in entries)
    assert any("[REDACTED:" in e.content for e in folded)


def test_real_usage_calibrates_the_model_family_halfway_on_its_first_call(priced: Memory) -> None:
    mem = priced
    cid = _coding(mem)
    assert mem.compactions.compact(cid).status == "applied"
    default = model_spec("claude-sonnet-4-5").safety_factor
    assert dict(mem.admin.factors()) == {"claude": round((default + 1_234 / 1_000) / 2, 4)}


def test_a_summarizer_that_counted_nothing_calibrates_nothing(sqlite_url: str) -> None:
    with Memory(Settings(database_url=sqlite_url), summarizer=Priced(counted=None), auto_migrate=True) as mem:
        cid = _coding(mem)
        assert mem.compactions.compact(cid).status == "applied"
        assert dict(mem.admin.factors()) == {}


@pytest.fixture
def events() -> Iterator[list[dict[str, Any]]]:
    """The fields of every canonical ``compaction`` event emitted during the test."""
    with recorded("compaction") as seen:
        yield seen


def test_the_compaction_event_reports_what_the_summary_cost(
    priced: Memory, events: list[dict[str, Any]]
) -> None:
    cid = _coding(priced)
    assert priced.compactions.compact(cid).status == "applied"
    (event,) = events
    assert (event["llm_model"], event["llm_input_tokens"], event["llm_output_tokens"], event["cost_usd"]) == (
        "claude-sonnet-4-5",
        1_234,
        56,
        0.0123,
    )
    assert (event["fallback"], event["error"]) == (False, None)


def test_the_compaction_event_says_when_the_offline_summary_stood_in(
    sqlite_url: str, events: list[dict[str, Any]]
) -> None:
    with Memory(Settings(database_url=sqlite_url), summarizer=Priced(fail=True), auto_migrate=True) as mem:
        cid = _coding(mem)
        assert mem.compactions.compact(cid, trigger="emergency").status == "applied"
    (event,) = events
    assert (event["outcome"], event["fallback"], event["error"]) == ("applied", True, "RuntimeError")
    assert event["llm_model"] == "offline"


def test_a_compaction_journals_a_secret_under_the_placeholder_the_summarizer_saw(sqlite_url: str) -> None:
    prompts: list[str] = []

    def llm(prompt: str) -> str:
        prompts.append(prompt)
        return BODY

    with Memory(Settings(database_url=sqlite_url), summarizer=llm, auto_migrate=True) as mem:
        cid = _coding(mem)
        mem.append(
            cid, {"role": "user", "content": f"My name is Dana. Deploy with the token {TOKEN} please."}
        )
        mem.append_many(cid, coding_agent(seed=1).messages)
        assert mem.compactions.compact(cid).status == "applied"
        (seen,) = set(re.findall(r"\[REDACTED:github_token:\d+\]", prompts[0]))
        (deploy,) = [e.content for e in mem.journal.entries(cid) if "Deploy with" in e.content]
        assert deploy.endswith(f"] Deploy with the token {seen} please.")
