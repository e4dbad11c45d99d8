"""The sleep tick as its callers see it, where mutation testing found the suite blind (docs/mutation.md).
On a throwaway SQLite file: no server.

* A tick's stored result (what the tick row keeps and the worker's task returns) reads back exactly as
  it was written, rescoring and ``already_done`` included; an empty one reads as a tick that did nothing.
* A repeat of a finished tick answers with the stored result, rescoring included.
* Every tick emits one canonical ``sleep_tick`` event naming its conversation, tenant, key and outcome
  (done, already_done, busy, error), with the queue lag of a queued tick's first start (none for a
  redelivery or a direct run) and, when done, what the compaction did and how many memories it made.
* A tick that fails gives its lease back at once; a tick whose summarizer has no batch API refuses to
  run through batches, by name.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator, Sequence
from dataclasses import replace
from datetime import timedelta
from typing import Any

import pytest
import structlog

from sleepcompact import ConversationBusy, ConversationNotFound, InvalidSetting, Memory, Settings
from sleepcompact.demo.synthetic import coding_agent
from sleepcompact.domain.budget import model_spec
from sleepcompact.domain.errors import TransientLLMError
from sleepcompact.ports.llm import SummaryResult
from sleepcompact.services import leases, sweeps
from sleepcompact.services import sleep as sleep_service
from sleepcompact.services.budgets import budget_for
from sleepcompact.services.clock import utcnow
from sleepcompact.services.journal import RescoringReport
from sleepcompact.services.memories import ConsolidationReport
from sleepcompact.services.sleep import TickCompaction, TickResult
from tests.support.clock import StoppedClock
from tests.support.events import recorded

KEY = "night-2026-11-22"


@pytest.fixture
def ticks() -> Iterator[list[dict[str, Any]]]:
    """The fields of every ``sleep_tick`` event emitted during the test."""
    with recorded("sleep_tick") as seen:
        yield seen


class _Queue:
    """A broker that only records what it was sent (the tick stays queued until run by hand)."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, str]] = []

    def enqueue_tick(self, conversation_id: str, tick_key: str, *, urgent: bool = False) -> None:
        self.sent.append((conversation_id, tick_key))

    def enqueue_ticks(self, ticks: Sequence[tuple[str, str]]) -> None:
        self.sent.extend(ticks)


def _over_soft(mem: Memory, tenant_id: str = "acme") -> str:
    conv = coding_agent(seed=2)
    cid = mem.create_conversation("claude-sonnet-4-5", context_window=8_000, tenant_id=tenant_id)
    mem.append_many(cid, [{"role": "system", "content": conv.system}, *conv.messages])
    mem.journal.add(cid, "the user wants every public function typed", tags=["preference"])
    return cid


def _full_result(*, already_done: bool) -> TickResult:
    return TickResult(
        tick_key=KEY,
        consolidation=ConsolidationReport(entries=5, created=2, merged=1, below_floor=2),
        compaction=TickCompaction(
            "applied", "cmp_0123456789abcdef", 9_000, 3_000, 400, ("tool_output", "summary"), "over soft"
        ),
        trigger="soft threshold",
        rescoring=RescoringReport("rescored", entries=5, rescored=5, changed=2),
        already_done=already_done,
    )


@pytest.mark.parametrize("already_done", [False, True])
def test_a_stored_tick_result_reads_back_as_it_was_written(already_done: bool) -> None:
    result = _full_result(already_done=already_done)
    stored = json.loads(json.dumps(result.to_dict()))
    back = TickResult.from_dict(stored)
    assert back == result
    assert back.already_done is already_done
    assert back.rescoring == RescoringReport("rescored", entries=5, rescored=5, changed=2)
    assert back.compaction.steps == ("tool_output", "summary")


def test_an_empty_stored_result_reads_as_a_tick_that_did_nothing() -> None:
    back = TickResult.from_dict({})
    assert back == TickResult("", ConsolidationReport(), TickCompaction("not needed"))
    assert back.tick_key == "" and back.compaction.status == "not needed"
    assert back.rescoring is None and back.already_done is False
    assert back.to_dict() == {
        "tick_key": "",
        "consolidation": ConsolidationReport().to_dict(),
        "compaction": {"status": "not needed"},
        "trigger": None,
    }


def test_a_repeated_tick_answers_with_the_stored_rescoring(sqlite_url: str) -> None:
    def llm(prompt: str) -> str:
        if "</entry>" not in prompt:
            return "## Task and goals\nThe agent fixes the parser.\n"
        entries = re.findall(r"<entry[^>]*>\s*(.*?)\s*</entry>", prompt, re.S)
        return json.dumps([9 if "typed" in e else 2 for e in entries])

    with Memory(
        Settings(database_url=sqlite_url, llm_rescoring=True), summarizer=llm, auto_migrate=True
    ) as mem:
        cid = _over_soft(mem)
        first = mem.sleep.tick(cid, KEY)
        assert first.rescoring is not None and first.rescoring.rescored >= 1
        again = mem.sleep.tick(cid, KEY)
        assert again.already_done is True
        assert again.rescoring == first.rescoring
        assert again.consolidation == first.consolidation and again.compaction == first.compaction


def test_a_tick_emits_one_event_per_call_with_its_outcome(
    sqlite_memory: Memory, ticks: list[dict[str, Any]]
) -> None:
    mem = sqlite_memory
    cid = _over_soft(mem, tenant_id="acme")
    result = mem.sleep.tick(cid, KEY)
    assert result.compaction.status == "applied"
    (done,) = ticks
    assert {k: done[k] for k in ("conversation_id", "tenant_id", "tick_key", "outcome", "queue_lag_s")} == {
        "conversation_id": cid,
        "tenant_id": "acme",
        "tick_key": KEY,
        "outcome": "done",
        "queue_lag_s": None,  # run directly, never queued
    }
    assert (done["compaction"], done["memories_created"]) == ("applied", result.consolidation.created)
    assert result.consolidation.created >= 1
    assert isinstance(done["duration_ms"], int) and 0 <= done["duration_ms"] < 600_000
    mem.sleep.tick(cid, KEY)
    assert len(ticks) == 2
    repeat = ticks[1]
    assert (repeat["outcome"], repeat["conversation_id"], repeat["tenant_id"], repeat["tick_key"]) == (
        "already_done",
        cid,
        "acme",
        KEY,
    )
    assert repeat["queue_lag_s"] is None and "compaction" not in repeat


def test_a_tick_refused_for_a_held_lease_says_busy(
    sqlite_memory: Memory, ticks: list[dict[str, Any]]
) -> None:
    mem = sqlite_memory
    cid = _over_soft(mem, tenant_id="acme")
    leases.acquire(mem._deps, cid, "guard:someone-else")
    with pytest.raises(ConversationBusy, match=f"^conversation {cid} is being compacted") as busy_error:
        mem.sleep.tick(cid, KEY)
    assert busy_error.value.conversation_id == cid
    (busy,) = ticks
    assert (busy["outcome"], busy["conversation_id"], busy["tenant_id"], busy["tick_key"]) == (
        "busy",
        cid,
        "acme",
        KEY,
    )
    assert busy["queue_lag_s"] is None
    assert mem.admin.conversation(cid).lease_owner == "guard:someone-else"  # not taken over


def test_a_queued_tick_reports_its_queue_lag_and_a_failed_one_its_error_and_frees_the_lease(
    sqlite_url: str, ticks: list[dict[str, Any]]
) -> None:
    calls: list[str] = []

    def llm(prompt: str) -> str:
        calls.append(prompt)
        if len(calls) == 1:
            raise TransientLLMError("overloaded")
        return "## Task and goals\nThe agent fixes the parser.\n"

    with Memory(Settings(database_url=sqlite_url), summarizer=llm, auto_migrate=True) as mem:
        cid = _over_soft(mem, tenant_id="acme")
        queue = _Queue()
        # Queued two minutes ago, started now.
        sweeps.tick_now(mem._deps, queue, [cid], KEY, now=utcnow() - timedelta(seconds=120))
        assert queue.sent == [(cid, KEY)]
        with pytest.raises(TransientLLMError):
            mem.sleep.tick(cid, KEY)
        (failed,) = ticks
        assert (failed["outcome"], failed["error"], failed["conversation_id"], failed["tenant_id"]) == (
            "error",
            "TransientLLMError",
            cid,
            "acme",
        )
        assert failed["tick_key"] == KEY and 119.0 <= failed["queue_lag_s"] < 600.0
        assert isinstance(failed["queue_lag_s"], float)  # seconds, to the millisecond
        assert failed["queue_lag_s"] == round(failed["queue_lag_s"], 3)
        # The lease is given back at once: the guard (or a retry) need not wait for it to expire.
        conv = mem.admin.conversation(cid)
        assert conv.lease_owner is None and conv.lease_expires_at is None
        # The retry is a redelivery of a tick already started: no queue lag of its own.
        assert mem.sleep.tick(cid, KEY).compaction.status == "applied"
        assert [t["outcome"] for t in ticks] == ["error", "done"]
        assert ticks[1]["queue_lag_s"] is None
        assert mem.admin.conversation(cid).lease_owner is None


def test_a_queued_tick_started_before_its_queue_time_has_no_negative_lag(
    sqlite_memory: Memory, ticks: list[dict[str, Any]]
) -> None:
    mem = sqlite_memory
    cid = mem.create_conversation("claude-sonnet-4-5")
    mem.append(cid, {"role": "user", "content": "hello"})
    # A clock skewed between the sweep's host and the worker's: queued "in the future".
    sweeps.tick_now(mem._deps, _Queue(), [cid], KEY, now=utcnow() + timedelta(seconds=300))
    assert mem.sleep.tick(cid, KEY).compaction.status == "not needed"
    (done,) = ticks
    assert done["outcome"] == "done" and done["queue_lag_s"] == 0.0


def test_ticks_through_batches_need_a_summarizer_with_a_batch_api(sqlite_url: str) -> None:
    with Memory(Settings(database_url=sqlite_url, nightly_batches=True), auto_migrate=True) as mem:
        cid = mem.create_conversation("claude-sonnet-4-5")
        mem.append(cid, {"role": "user", "content": "hello"})
        with pytest.raises(
            InvalidSetting, match=r"^the offline summarizer has no batch API; use compact\(\)$"
        ):
            mem.sleep.run_tick(cid, KEY)
        # An inline tick never goes through batches.
        assert mem.sleep.tick(cid, "manual-1").compaction.status == "not needed"


def _rescoring_memory(sqlite_url: str, fail_on: set[int], calls: list[list[str]]) -> Memory:
    """A Memory whose LLM summarizes, and scores every journal entry 10, except on the rescoring calls
    numbered in ``fail_on`` (from 1), where it answers one score too few (an unusable reply)."""

    def llm(prompt: str) -> str:
        if "</entry>" not in prompt:
            return "## Task and goals\nThe agent fixes the parser.\n"
        entries = re.findall(r"<entry[^>]*>\s*(.*?)\s*</entry>", prompt, re.S)
        calls.append(entries)
        return json.dumps([10] * (len(entries) - (1 if len(calls) in fail_on else 0)))

    return Memory(Settings(database_url=sqlite_url, llm_rescoring=True), summarizer=llm, auto_migrate=True)


def _tick_over(mem: Memory, context_window: int) -> TickResult:
    conv = coding_agent(seed=2)
    cid = mem.create_conversation("claude-sonnet-4-5", context_window=context_window)
    mem.append_many(cid, [{"role": "system", "content": conv.system}, *conv.messages])
    mem.journal.add(cid, "the user wants every public function typed", tags=["preference"])
    return mem.sleep.tick(cid, KEY)


def test_a_ticks_rescoring_adds_up_its_two_passes(sqlite_url: str) -> None:
    calls: list[list[str]] = []
    with _rescoring_memory(sqlite_url, set(), calls) as mem:
        result = _tick_over(mem, 8_000)  # needs a summary: the compaction journals what it folds
    assert "summarize" in (result.compaction.steps or ())
    first, second = calls  # the journal entry, then the compaction's entries
    assert len(first) == 1 and len(second) > 1
    report = result.rescoring
    assert report is not None and (report.status, report.error) == ("rescored", None)
    assert report.entries == report.rescored == len(first) + len(second)
    assert 1 < report.changed <= report.entries


def test_a_ticks_rescoring_failed_in_its_first_pass_says_so(sqlite_url: str) -> None:
    calls: list[list[str]] = []
    with _rescoring_memory(sqlite_url, {1}, calls) as mem:
        result = _tick_over(mem, 8_000)
    first, second = calls
    report = result.rescoring
    assert report is not None
    assert (report.status, report.error) == ("heuristic kept", "InvalidScores")
    assert report.entries == len(first) + len(second) and report.rescored == len(second)
    assert 0 < report.changed <= len(second)
    assert result.to_dict()["rescoring"]["error"] == "InvalidScores"


def test_a_ticks_rescoring_failed_in_its_second_pass_says_so(sqlite_url: str) -> None:
    calls: list[list[str]] = []
    with _rescoring_memory(sqlite_url, {2}, calls) as mem:
        result = _tick_over(mem, 8_000)
    first, second = calls
    assert result.rescoring == RescoringReport(
        "heuristic kept", len(first) + len(second), rescored=1, changed=1, error="InvalidScores"
    )


def test_a_tick_whose_compaction_journals_nothing_keeps_its_first_rescoring(sqlite_url: str) -> None:
    calls: list[list[str]] = []
    with _rescoring_memory(sqlite_url, set(), calls) as mem:
        result = _tick_over(mem, 12_000)  # tool outputs truncated and masked: no summary, no new entries
    assert result.compaction.status == "applied" and "summarize" not in (result.compaction.steps or ())
    assert len(calls) == 1
    assert result.rescoring == RescoringReport("rescored", entries=1, rescored=1, changed=1)


class _BatchLLM:
    """A summarizer with a batch API that only records what it was sent (the batch never ends here)."""

    provider = "stub"
    model = "claude-sonnet-4-5"

    def __init__(self) -> None:
        self.batches: list[list[str]] = []

    def summarize(self, request: Any, prompt: Any, *, deadline: float | None = None) -> Any:
        raise AssertionError("a nightly tick through batches never calls the model directly")

    def request_params(self, request: Any, prompt: Any) -> dict[str, Any]:
        return {"rows": [r.seq for r in request.rows]}

    def submit_batch(self, requests: list[tuple[str, dict[str, Any]]]) -> str:
        self.batches.append([custom_id for custom_id, _ in requests])
        return f"batch_{len(self.batches)}"


def test_a_nightly_tick_hands_its_summary_to_a_batch_and_applies_what_needs_none(sqlite_url: str) -> None:
    llm = _BatchLLM()
    with Memory(
        Settings(database_url=sqlite_url, nightly_batches=True), summarizer=llm, auto_migrate=True
    ) as mem:
        needs_summary = _over_soft(mem)  # an 8,000-token window: only a summary fits it
        tick = mem.sleep.run_tick(needs_summary, KEY)
        (running,) = mem.compactions.history(needs_summary)
        assert running.status == "running"
        assert llm.batches == [[running.id]]
        assert tick.compaction == TickCompaction("batched", batch_id="batch_1")
        assert tick.trigger == "soft threshold"
        # Masking the tool output is enough at 12,000 tokens: applied at once, no batch.
        conv = coding_agent(seed=2)
        no_summary = mem.create_conversation("claude-sonnet-4-5", context_window=12_000)
        mem.append_many(no_summary, [{"role": "system", "content": conv.system}, *conv.messages])
        direct = mem.sleep.run_tick(no_summary, KEY)
        (applied,) = mem.compactions.history(no_summary)
        assert applied.status == "applied" and len(llm.batches) == 1
        assert direct.compaction == TickCompaction("applied", applied.id)


def test_a_tick_reports_its_compactions_figures(sqlite_memory: Memory) -> None:
    mem = sqlite_memory
    cid = _over_soft(mem)
    size = mem.admin.conversation(cid).live_tokens
    tick = mem.sleep.tick(cid, KEY).compaction
    (record,) = mem.compactions.history(cid)
    (summary,) = [r for r in mem.export(cid).messages if r["kind"] == "summary"]
    assert (tick.status, tick.compaction_id) == ("applied", record.id)
    assert (tick.tokens_before, tick.tokens_after) == (size, mem.admin.conversation(cid).live_tokens)
    assert (tick.tokens_before, tick.tokens_after) == (record.tokens_before, record.tokens_after)
    assert tick.summary_tokens == summary["token_count"] > 0
    assert tick.steps == tuple(dict.fromkeys(s["step"] for s in record.steps))
    assert tick.reason == "summarize the prefix outside the preserve window" and tick.batch_id is None


RESERVE = 4_000  # a fixed output reserve: the soft threshold is then a function of the window alone


def _window_with_soft_at(mem: Memory, cid: str, soft: int) -> int:
    """A context window whose soft threshold is exactly ``soft`` model tokens for this conversation."""
    conv = replace(mem.admin.conversation(cid), output_reserve=RESERVE)
    low, high = RESERVE + 1, 2_000_000
    while low < high:  # the smallest window whose soft threshold reaches ``soft``
        mid = (low + high) // 2
        if budget_for(replace(conv, context_window=mid), mem.admin.thresholds).soft < soft:
            low = mid + 1
        else:
            high = mid
    assert budget_for(replace(conv, context_window=low), mem.admin.thresholds).soft == soft
    return low


def _sized(mem: Memory, soft: int | None = None, probe: str | None = None) -> str:
    """The coding conversation, in a window whose soft threshold is ``soft`` (default: 200,000 tokens)."""
    window = _window_with_soft_at(mem, probe, soft) if probe and soft else None
    conv = coding_agent(seed=2)
    cid = mem.create_conversation("claude-sonnet-4-5", context_window=window, output_reserve=RESERVE)
    mem.append_many(cid, [{"role": "system", "content": conv.system}, *conv.messages])
    return cid


def test_a_tick_compacts_only_above_the_soft_threshold(sqlite_memory: Memory) -> None:
    mem = sqlite_memory
    probe = _sized(mem)
    size = budget_for(mem.admin.conversation(probe), mem.admin.thresholds).effective(
        mem.admin.conversation(probe).live_tokens
    )
    at = mem.sleep.tick(_sized(mem, size, probe), KEY)
    assert (at.compaction.status, at.trigger) == ("not needed", None)
    over = mem.sleep.tick(_sized(mem, size - 1, probe), KEY)
    assert (over.compaction.status, over.trigger) == ("applied", "soft threshold")


def test_a_tick_sizes_the_conversation_with_the_calibrated_tokenizer_factor(sqlite_url: str) -> None:
    """A summarizer billed twice the tokens we counted: the tokenizer undercounts this model family, so a
    conversation a little under the soft threshold by our count is over it by the model's."""

    class Billed:
        provider, model = "acme", "claude-sonnet-4-5"

        def summarize(self, request: Any, prompt: Any, *, deadline: float | None = None) -> SummaryResult:
            return SummaryResult(
                "## Task and goals\n- fix it", "acme", "claude-sonnet-4-5", 2_000, 10, 0.0, False, 1_000
            )

    with Memory(Settings(database_url=sqlite_url), summarizer=Billed(), auto_migrate=True) as mem:
        conv = coding_agent(seed=2)
        first = mem.create_conversation("claude-sonnet-4-5", context_window=8_000)
        mem.append_many(first, [{"role": "system", "content": conv.system}, *conv.messages])
        assert mem.compactions.compact(first).status == "applied"
        factor = mem.admin.factors()["claude"]
        default = model_spec("claude-sonnet-4-5").safety_factor
        assert factor > default
        # Under soft at the default factor, over it at the calibrated one.
        probe = _sized(mem)
        live = mem.admin.conversation(probe).live_tokens
        result = mem.sleep.tick(_sized(mem, math.ceil(live * default) + 1, probe), KEY)
        assert (result.trigger, result.compaction.status) == ("soft threshold", "applied")


def test_a_tick_decides_on_the_conversation_as_it_is_after_consolidating(sqlite_url: str) -> None:
    """Messages appended while the tick consolidates (its LLM rescoring takes seconds) count toward
    the compaction it then decides on."""
    conv = coding_agent(seed=2)

    def llm(prompt: str) -> str:
        if "</entry>" not in prompt:
            return "## Task and goals\n- fix the parser"
        entries = re.findall(r"<entry[^>]*>\s*(.*?)\s*</entry>", prompt, re.S)
        if not mem.admin.conversation(cid).live_messages > 2:
            mem.append_many(cid, conv.messages)  # the agent goes on meanwhile
        return json.dumps([5] * len(entries))

    with Memory(
        Settings(database_url=sqlite_url, llm_rescoring=True), summarizer=llm, auto_migrate=True
    ) as mem:
        cid = mem.create_conversation("claude-sonnet-4-5", context_window=8_000)
        mem.append(cid, {"role": "system", "content": conv.system})
        mem.journal.add(cid, "the user wants every public function typed", tags=["preference"])
        result = mem.sleep.tick(cid, KEY)
        assert (result.trigger, result.compaction.status) == ("soft threshold", "applied")


def test_over_soft_and_over_the_entry_count_a_tick_compacts_as_for_the_soft_threshold(
    sqlite_url: str,
) -> None:
    """The entry-count trigger forces a summary only when the conversation is not over soft anyway:
    over both, the ladder's LLM-free steps are enough when they fit (no summary paid for)."""
    settings = Settings(database_url=sqlite_url, entry_trigger=10, entry_trigger_floor=0.0)
    with Memory(settings, auto_migrate=True) as mem:
        conv = coding_agent(seed=2)
        cid = mem.create_conversation("claude-sonnet-4-5", context_window=12_000)
        mem.append_many(cid, [{"role": "system", "content": conv.system}, *conv.messages])
        assert mem.admin.conversation(cid).live_messages > 10
        result = mem.sleep.tick(cid, KEY)
        assert (result.trigger, result.compaction.status) == ("soft threshold", "applied")
        assert result.compaction.steps is not None and "summarize" not in result.compaction.steps


def test_without_llm_rescoring_a_tick_never_asks_the_model_to_score(sqlite_url: str) -> None:
    prompts: list[str] = []

    def llm(prompt: str) -> str:
        prompts.append(prompt)
        return "## Task and goals\n- fix the parser"

    with Memory(Settings(database_url=sqlite_url), summarizer=llm, auto_migrate=True) as mem:
        cid = _over_soft(mem)
        result = mem.sleep.tick(cid, KEY)
        assert result.rescoring is None and result.compaction.status == "applied"
        assert len(prompts) == 1 and "</entry>" not in prompts[0]  # the summary, nothing else
        assert {e.importance_method for e in mem.journal.entries(cid)} == {"heuristic"}


def test_a_long_tick_key_names_a_lease_owner_that_fits_its_column(sqlite_url: str) -> None:
    owners: list[str | None] = []
    key = "night-" + "x" * 100

    def llm(prompt: str) -> str:
        owners.append(mem.admin.conversation(cid).lease_owner)  # held while the tick works
        return "## Task and goals\n- fix the parser"

    with Memory(Settings(database_url=sqlite_url), summarizer=llm, auto_migrate=True) as mem:
        cid = _over_soft(mem)
        assert mem.sleep.tick(cid, key).compaction.status == "applied"
        assert owners == [f"tick:{key}"[:64]] and len(f"tick:{key}"[:64]) == 64
        assert mem.admin.conversation(cid).lease_owner is None


def test_a_tick_of_an_unknown_conversation_names_it(sqlite_memory: Memory) -> None:
    with pytest.raises(ConversationNotFound, match=r"^unknown conversation: 'conv_missing'$") as error:
        sqlite_memory.sleep.tick("conv_missing", KEY)
    assert error.value.conversation_id == "conv_missing"


def test_a_finished_tick_answers_again_even_while_another_owner_holds_the_lease(
    sqlite_memory: Memory,
) -> None:
    mem = sqlite_memory
    cid = _over_soft(mem)
    first = mem.sleep.tick(cid, KEY)
    leases.acquire(mem._deps, cid, "guard:someone-else")
    again = mem.sleep.tick(cid, KEY)  # a repeat needs no lease: it only reads the stored result
    assert again.already_done is True and again.compaction == first.compaction
    assert mem.admin.conversation(cid).lease_owner == "guard:someone-else"


def test_a_ticks_event_says_how_long_it_took_in_milliseconds(
    sqlite_url: str, ticks: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """On a clock that moves only when the summarizer takes its 1.25 s, the tick took exactly 1,250 ms."""
    clock = StoppedClock()
    monkeypatch.setattr(sleep_service, "time", clock)

    def slow(prompt: str) -> str:
        clock.now += 1.25
        return "## Task and goals\n- fix the parser"

    with Memory(Settings(database_url=sqlite_url), summarizer=slow, auto_migrate=True) as mem:
        mem.sleep.tick(_over_soft(mem), KEY)
    (done,) = ticks
    assert (done["outcome"], done["duration_ms"]) == ("done", 1_250)


def test_what_a_tick_logs_while_it_works_names_its_conversation_and_tenant(sqlite_url: str) -> None:
    """Log lines of the tick's work (here the rescoring call, outside any compaction) carry the
    conversation and tenant, bound for the whole tick."""
    bound: list[dict[str, Any]] = []

    def llm(prompt: str) -> str:
        if "</entry>" not in prompt:
            return "## Task and goals\n- fix the parser"
        bound.append(structlog.contextvars.get_contextvars())
        return json.dumps([5] * len(re.findall(r"<entry[^>]*>", prompt)))

    with Memory(
        Settings(database_url=sqlite_url, llm_rescoring=True), summarizer=llm, auto_migrate=True
    ) as mem:
        cid = _over_soft(mem, tenant_id="acme")
        mem.sleep.tick(cid, KEY)
    assert bound and all(b.get("conversation_id") == cid and b.get("tenant_id") == "acme" for b in bound)
    assert "conversation_id" not in structlog.contextvars.get_contextvars()  # unbound after the tick
