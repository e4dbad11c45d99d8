"""The compaction pipeline's outcomes and records, where mutation testing found the suite blind
(docs/mutation.md). On a throwaway SQLite file: no server.

* A conversation under its target is a no-op that says so, with its size.
* A summary deferred to a Message Batch is a ``running`` compaction that changed nothing yet and names
  the summarizer, carrying the request and the rows it folds; the poll applies the batch's summary
  through the ordinary path (recorded as a batch call) and closes the placeholder.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from sqlalchemy import event

from sleepcompact import ConversationNotFound, Memory, Settings
from sleepcompact.adapters.tokenizer import load_counter
from sleepcompact.demo.synthetic import coding_agent
from sleepcompact.domain.prompt import SUMMARY_PREFIX
from sleepcompact.hooks import CompactionVerdict
from sleepcompact.ports.llm import SummaryResult
from sleepcompact.services import compaction
from tests.support.events import recorded

BODY = "## Task and goals\n- fix the parser (from the batch)"


def _coding(mem: Memory, window: int, *, seed: int = 0, policy: dict[str, Any] | None = None) -> str:
    """A synthetic coding agent's conversation (its system prompt and turns) in a window of ``window``."""
    conv = coding_agent(seed=seed)
    cid = mem.create_conversation("claude-sonnet-4-5", context_window=window, policy=policy)
    mem.append_many(cid, [{"role": "system", "content": conv.system}, *conv.messages])
    return cid


@pytest.fixture
def events() -> Iterator[list[dict[str, Any]]]:
    """The fields of every canonical ``compaction`` event emitted during the test."""
    with recorded("compaction") as seen:
        yield seen


class _Batches:
    """A summarizer with a batch API: every batch has ended when polled, and each request's summary is
    ``BODY``. It is never asked directly."""

    provider = "stub"
    model = "claude-sonnet-4-5"

    def __init__(self) -> None:
        self.sent: dict[str, list[tuple[str, dict[str, Any]]]] = {}

    def summarize(self, request: Any, prompt: Any, *, deadline: float | None = None) -> Any:
        raise AssertionError("the batch path never calls the model directly")

    def request_params(self, request: Any, prompt: Any) -> dict[str, Any]:
        return {"seqs": [r.seq for r in request.rows]}

    def submit_batch(self, requests: list[tuple[str, dict[str, Any]]]) -> str:
        batch_id = f"batch_{len(self.sent) + 1}"
        self.sent[batch_id] = requests
        return batch_id

    def batch_ended(self, batch_id: str) -> bool:
        return True

    def batch_results(self, batch_id: str) -> dict[str, tuple[str, Any]]:
        return {custom_id: ("succeeded", BODY) for custom_id, _ in self.sent[batch_id]}

    def parse(self, response: Any, params: dict[str, Any], *, batch: bool) -> SummaryResult:
        return SummaryResult(response, "stub", "claude-sonnet-4-5", 900, 40, 0.001, batch=batch)


def test_a_conversation_under_its_target_is_a_noop_with_its_size(sqlite_memory: Memory) -> None:
    mem = sqlite_memory
    cid = mem.create_conversation("claude-sonnet-4-5")
    mem.append(cid, {"role": "user", "content": "hello there"})
    size = mem.admin.conversation(cid).live_tokens
    outcome = mem.compactions.compact(cid)
    assert (outcome.status, outcome.tokens_before, outcome.tokens_after) == ("noop", size, size)
    assert outcome.reason == "already under the target" and outcome.compaction_id is None
    assert mem.compactions.history(cid) == []


def test_a_summary_deferred_to_a_batch_is_recorded_then_applied_by_the_poll(
    sqlite_url: str, events: list[dict[str, Any]]
) -> None:
    llm = _Batches()
    with Memory(Settings(database_url=sqlite_url), summarizer=llm, auto_migrate=True) as mem:
        cid = _coding(mem, 8_000)
        size = mem.admin.conversation(cid).live_tokens
        report = mem.compactions.submit_batch([cid])
        (running,) = mem.compactions.history(cid)
        assert report.batch_id == "batch_1" and report.submitted == [running.id]
        assert (running.status, running.trigger, running.llm_batch) == ("running", "sleep", True)
        assert (running.summarizer_provider, running.summarizer_model) == ("stub", "claude-sonnet-4-5")
        assert running.tokens_before == running.tokens_after == size
        assert (running.steps, running.messages_affected, running.first_seq) == ([], 0, None)
        ((custom_id, params),) = llm.sent["batch_1"]
        assert custom_id == running.id and len(params["seqs"]) > 1
        (deferred,) = events
        assert (deferred["outcome"], deferred["compaction_id"]) == ("deferred", running.id)
        assert deferred["tokens_before"] == deferred["tokens_after"] == size
        assert deferred["reason"] == "summary requested through a message batch"
        assert mem.admin.conversation(cid).live_tokens == size  # nothing written yet
        (exported,) = mem.export(cid).compactions  # the export names the batch the record waits for
        assert sorted(exported["metadata"]["batch"]) == ["batch_id", "factors", "params", "seqs"]
        assert exported["metadata"]["batch"]["batch_id"] == "batch_1"

        polled = mem.compactions.poll_batches()
        (outcome,) = polled.applied
        assert outcome.status == "applied" and polled.retried_directly == []
        closed, applied = mem.compactions.history(cid)
        assert (closed.id, closed.status, closed.error) == (
            running.id,
            "superseded",
            "applied from the batch",
        )
        assert (applied.id, applied.status, applied.llm_batch) == (outcome.compaction_id, "applied", True)
        assert applied.summary is not None and BODY in applied.summary
        assert applied.tokens_after < size


def test_a_conversation_that_cannot_fit_is_a_recorded_stall_named_in_the_outcome(
    sqlite_memory: Memory,
) -> None:
    mem = sqlite_memory
    cid = mem.create_conversation("claude-sonnet-4-5", context_window=4_096)
    mem.append(cid, {"role": "system", "content": "rule " * 2_000})  # the system prompt alone is too big
    mem.append(cid, {"role": "user", "content": "hello"})
    size = mem.admin.conversation(cid).live_tokens
    outcome = mem.compactions.compact(cid, trigger="sleep")
    (record,) = mem.compactions.history(cid)
    assert (outcome.status, record.status) == ("stalled", "stalled")
    assert outcome.compaction_id == record.id
    assert outcome.tokens_before == outcome.tokens_after == record.tokens_before == size
    assert outcome.reason and outcome.reason == record.error


def test_the_guards_emergency_journals_a_secret_under_the_placeholder_the_summarizer_saw(
    sqlite_url: str,
) -> None:
    """Under the guard's deadline the folded rows are journaled while the model is asked; they are
    redacted in the conversation's own scope, so one secret has one placeholder number throughout."""
    token = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    prompts: list[str] = []

    def llm(prompt: str) -> str:
        prompts.append(prompt)
        return "## Task and goals\n- fix the parser"

    with Memory(Settings(database_url=sqlite_url), summarizer=llm, auto_migrate=True) as mem:
        conv = coding_agent(seed=0)
        cid = mem.create_conversation("claude-sonnet-4-5", context_window=8_000)
        mem.append(cid, {"role": "system", "content": conv.system})
        mem.append(
            cid, {"role": "user", "content": f"My name is Dana. Deploy with the token {token} please."}
        )
        mem.append_many(cid, conv.messages)
        assert mem.prepare_context(cid).action == "emergency_compacted"
        (prompt,) = prompts
        (seen,) = re.findall(r"\[REDACTED:github_token:\d+\]", prompt)
        journaled = [e.content for e in mem.journal.entries(cid) if e.origin == "pre_compaction"]
        (deploy,) = [e for e in journaled if "Deploy with" in e]
        assert deploy.endswith(f"] Deploy with the token {seen} please.")
        assert not any(token in e for e in journaled)


def _unfittable(mem: Memory, policy: dict[str, float] | None = None) -> str:
    cid = mem.create_conversation("claude-sonnet-4-5", context_window=4_096, policy=policy)
    mem.append(cid, {"role": "system", "content": "rule " * 2_000})  # never compacted, alone over target
    mem.append(cid, {"role": "user", "content": "hello"})
    return cid


def test_after_a_stall_sleep_backs_off_until_the_conversation_grows(sqlite_memory: Memory) -> None:
    mem = sqlite_memory
    cid = _unfittable(mem)
    assert mem.compactions.compact(cid, trigger="sleep").status == "stalled"
    size = mem.admin.conversation(cid).live_tokens
    backoff = mem.compactions.compact(cid, trigger="sleep")
    assert (backoff.status, backoff.tokens_before, backoff.tokens_after) == ("backoff", size, size)
    assert backoff.reason == "the last compaction stalled and the conversation has not grown since"
    assert backoff.compaction_id is None and len(mem.compactions.history(cid)) == 1
    # Forced, or asked by hand, it runs (and stalls again, recorded).
    assert mem.compactions.compact(cid, trigger="sleep", force=True).status != "backoff"
    assert mem.compactions.compact(cid, trigger="manual").status == "stalled"
    assert len(mem.compactions.history(cid)) == 3
    # Grown by a little: still backed off; by more than the stall ratio (5%): it runs again.
    mem.append(cid, {"role": "user", "content": "one more line"})
    grown = mem.admin.conversation(cid).live_tokens
    assert grown < size * 1.05
    assert mem.compactions.compact(cid, trigger="sleep").status == "backoff"
    mem.append(cid, {"role": "user", "content": "word " * 200})
    assert mem.admin.conversation(cid).live_tokens >= size * 1.05
    assert mem.compactions.compact(cid, trigger="sleep").status != "backoff"  # it plans again


def _grown_unfittable(mem: Memory, policy: dict[str, float] | None = None) -> tuple[str, int, int]:
    """An unfittable conversation stalled by a sleep compaction, then grown by one message: (its id,
    its size at the stall, its size now)."""
    cid = _unfittable(mem, policy)
    assert mem.compactions.compact(cid, trigger="sleep").status == "stalled"
    stalled_at = mem.admin.conversation(cid).live_tokens
    mem.append(cid, {"role": "user", "content": "word " * 40})
    return cid, stalled_at, mem.admin.conversation(cid).live_tokens


@pytest.mark.parametrize(("extra", "backs_off"), [(0, False), (1, True)])
def test_sleep_plans_again_once_grown_by_exactly_the_stall_ratio(
    sqlite_memory: Memory, extra: int, backs_off: bool
) -> None:
    """Grown by exactly the stall ratio, the conversation is planned again (here its summary would not
    be shorter than the two short turns: a recorded failure); one token short of it, the sleep
    compaction still backs off. The ratio is set so that the threshold falls on a token."""
    mem = sqlite_memory
    _, before, grown = _grown_unfittable(mem)  # a probe: the same rows give the same counts
    ratio = (grown + extra) / before - 1
    assert before * (1 + ratio) == grown + extra
    cid, *sizes = _grown_unfittable(mem, {"stall_ratio": ratio})
    assert sizes == [before, grown]
    outcome = mem.compactions.compact(cid, trigger="sleep")
    assert (outcome.status == "backoff") is backs_off
    assert len(mem.compactions.history(cid)) == (1 if backs_off else 2)


def test_a_dry_run_reports_the_plan_with_its_figures(
    sqlite_memory: Memory, events: list[dict[str, Any]]
) -> None:
    mem = sqlite_memory
    cid = _coding(mem, 8_000)
    size = mem.admin.conversation(cid).live_tokens
    outcome = mem.compactions.compact(cid, dry_run=True)
    assert outcome.status == "dry_run" and outcome.plan is not None
    assert outcome.tokens_before == outcome.plan["tokens_before"] == size
    assert outcome.tokens_after == outcome.plan["tokens_after_estimate"] < size
    assert outcome.reason == outcome.plan["reason"] == "summarize the prefix outside the preserve window"
    assert outcome.compaction_id is None and events == []  # a dry run emits no canonical line
    assert mem.compactions.history(cid) == []


@pytest.mark.parametrize("fmt", ["anthropic", "openai"])
def test_the_guards_compacted_context_is_the_one_a_fresh_call_renders(sqlite_url: str, fmt: str) -> None:
    """After an emergency compaction the guard renders the call from the rows the apply left (not read
    back); the next call, with nothing to do, reads them: both must send the same messages."""
    with Memory(Settings(database_url=sqlite_url), summarizer=lambda p: BODY, auto_migrate=True) as mem:
        cid = _coding(mem, 8_000)
        compacted = mem.prepare_context(cid, fmt=fmt)  # type: ignore[arg-type]
        assert compacted.action == "emergency_compacted"
        fresh = mem.prepare_context(cid, fmt=fmt)  # type: ignore[arg-type]
        assert fresh.action == "none"
        assert compacted.messages == fresh.messages and compacted.system == fresh.system
        assert compacted.tokens == fresh.tokens
        assert "fix the parser (from the batch)" in json.dumps(compacted.messages)


def test_the_guard_journals_the_folded_rows_while_its_model_writes_the_summary(
    sqlite_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Under the guard's deadline the folded rows' journal entries are extracted while the model is
    asked, so that only the transaction is left once it answers. The model here answers only once
    they are (or gives up after 5 s, then says it waited in vain)."""
    extracted = threading.Event()
    extract = compaction.folded_entries
    waited: list[bool] = []

    def folded_entries(*args: Any) -> Any:
        entries = extract(*args)
        extracted.set()
        return entries

    def llm(prompt: str) -> str:
        waited.append(extracted.wait(timeout=5))
        return BODY

    monkeypatch.setattr(compaction, "folded_entries", folded_entries)
    with Memory(Settings(database_url=sqlite_url), summarizer=llm, auto_migrate=True) as mem:
        cid = _coding(mem, 8_000)
        prepared = mem.prepare_context(cid)
        assert prepared.action == "emergency_compacted"
        (record,) = mem.compactions.history(cid)
        assert waited == [True]
        assert (record.summarizer_provider, record.error) == ("custom", None)
        assert any(e.origin == "pre_compaction" for e in mem.journal.entries(cid))


@pytest.mark.parametrize(
    ("trigger", "fallback", "status"), [("manual", True, "applied"), ("emergency", False, "failed")]
)
def test_the_caller_chooses_whether_a_failed_summary_falls_back(
    sqlite_url: str, trigger: Any, fallback: bool, status: str
) -> None:
    """By default only an emergency falls back to the offline summary; ``fallback=`` overrides that."""

    def down(prompt: str) -> str:
        raise RuntimeError("the model is down")

    with Memory(Settings(database_url=sqlite_url), summarizer=down, auto_migrate=True) as mem:
        cid = _coding(mem, 8_000)
        size = mem.admin.conversation(cid).live_tokens
        outcome = mem.compactions.compact(cid, trigger=trigger, fallback=fallback)
        (record,) = mem.compactions.history(cid)
    assert (outcome.status, outcome.compaction_id, outcome.tokens_before) == (status, record.id, size)
    if fallback:
        assert outcome.fallback == "RuntimeError: the model is down"
        return
    # The failure names the summarizer that failed and the size it left untouched.
    assert (record.status, record.summarizer_provider, record.summarizer_model) == (
        "failed",
        "custom",
        "custom",
    )
    assert (record.tokens_before, record.tokens_after, outcome.tokens_after) == (size, size, size)
    assert record.error == outcome.reason == "RuntimeError: the model is down"


def test_the_third_summary_in_a_row_says_how_often_the_history_was_summarized(sqlite_url: str) -> None:
    """Each rolling summary is asked with the previous one's body (without the prefix the model reads
    it under); from the third on, the summary opens with a note that details may have been lost."""
    prompts: list[str] = []

    def llm(prompt: str) -> str:
        prompts.append(prompt)
        return f"## Task and goals\n- summary number {len(prompts)}"

    with Memory(Settings(database_url=sqlite_url), summarizer=llm, auto_migrate=True) as mem:
        cid = mem.create_conversation("claude-sonnet-4-5", context_window=32_000)
        mem.append_many(cid, coding_agent(seed=0).messages)
        for i in range(3):
            assert mem.compactions.compact(cid, force=True).status == "applied"
            mem.append_many(cid, coding_agent(seed=20 + i, turns=15).messages)
        summaries = [h.summary or "" for h in mem.compactions.history(cid)]
    note = "Note: earlier turns of this conversation have been summarized 3 times; details may be lost."
    assert [SUMMARY_PREFIX in text for text in summaries] == [True, True, True]
    assert [note in text for text in summaries] == [False, False, True]
    assert summaries[2].startswith(f"{SUMMARY_PREFIX}{note}\n\n## Task and goals\n- summary number 3")
    assert "- summary number 1" in prompts[1] and SUMMARY_PREFIX.strip() not in prompts[1]
    assert "summarized" not in summaries[1]


def test_a_model_that_writes_its_whole_stated_budget_still_fits_the_room_the_plan_made(
    sqlite_url: str,
) -> None:
    """The model is told the room the summary message leaves for its own text (the prefix, the note
    and the action ledger taken out): writing all of it, the message stays within the plan's cap."""
    count = load_counter().count
    asked: list[int] = []

    def llm(prompt: str) -> str:
        found = re.search(r"Stay under (\d+) tokens", prompt)
        assert found is not None
        asked.append(int(found.group(1)))
        text = "## Task and goals\n-"
        while count(text + " word") <= asked[-1]:
            text += " word"
        return text

    with Memory(Settings(database_url=sqlite_url), summarizer=llm, auto_migrate=True) as mem:
        cid = mem.create_conversation("claude-sonnet-4-5", context_window=8_000)
        mem.append_many(cid, coding_agent(seed=0).messages)
        cap = mem.compactions.compact(cid, dry_run=True).plan["summarize"]["max_tokens"]
        outcome = mem.compactions.compact(cid)
        (summary,) = [r["content"] for r in mem.export(cid).messages if r["kind"] == "summary"]
    assert (outcome.status, outcome.fallback, len(asked)) == ("applied", None, 1)
    assert outcome.summary == summary  # the outcome carries the summary it applied
    assert cap - 8 <= count(summary) <= cap


def test_a_request_folded_without_its_answer_is_answered_in_the_ledger(sqlite_url: str) -> None:
    """The fold may end on a request whose answer stays live (five messages preserved): the ledger
    reads the rows after the fold to say what became of it, so it is "answered", not "pending"."""
    with Memory(Settings(database_url=sqlite_url), summarizer=lambda p: BODY, auto_migrate=True) as mem:
        cid = mem.create_conversation(
            "claude-sonnet-4-5", context_window=16_000, policy={"preserve_messages": 5}
        )
        for i in range(8):
            mem.append(
                cid, {"role": "user", "content": f"Please rename report_{i}.txt to summary_{i}.txt. " * 12}
            )
            mem.append(
                cid, {"role": "assistant", "content": f"I renamed report_{i}.txt to summary_{i}.txt. " * 12}
            )
        assert mem.compactions.compact(cid, force=True).status == "applied"
        rows = mem.export(cid).messages
    (summary,) = [r["content"] for r in rows if r["kind"] == "summary"]
    live = [(r["seq"], r["role"]) for r in rows if r["state"] != "archived" and r["kind"] != "summary"]
    assert live[0] == (12, "assistant")  # seq 11, the request it answers, is folded
    (line,) = [line for line in summary.splitlines() if line.startswith("- seq 11 request")]
    assert line.endswith("→ answered")


def test_rows_appended_while_the_guard_summarized_are_in_its_compacted_context(sqlite_url: str) -> None:
    conv = coding_agent(seed=0)

    def llm(prompt: str) -> str:
        mem.append(cid, {"role": "user", "content": "and also check the rounding module"})  # meanwhile
        return BODY

    with Memory(Settings(database_url=sqlite_url), summarizer=llm, auto_migrate=True) as mem:
        cid = mem.create_conversation("claude-sonnet-4-5", context_window=8_000)
        mem.append_many(cid, [{"role": "system", "content": conv.system}, *conv.messages])
        compacted = mem.prepare_context(cid)
        assert compacted.action == "emergency_compacted"
        assert "and also check the rounding module" in json.dumps(compacted.messages)
        assert compacted.messages == mem.prepare_context(cid).messages


def test_summary_instructions_go_broadest_first_blank_ones_dropped(sqlite_url: str) -> None:
    prompts: list[str] = []

    def llm(prompt: str) -> str:
        prompts.append(prompt)
        return "## Task and goals\n- fix the parser"

    settings = Settings(
        database_url=sqlite_url,
        summary_instructions=" Keep file paths. ",
        tenant_summary_instructions=(("acme", "Name the ticket."), ("other", "Not for acme.")),
    )
    with Memory(settings, summarizer=llm, auto_migrate=True) as mem:
        conv = coding_agent(seed=0)
        cid = mem.create_conversation(
            "claude-sonnet-4-5",
            context_window=8_000,
            tenant_id="acme",
            policy={"summary_instructions": "Mention the tests."},
        )
        mem.append_many(cid, [{"role": "system", "content": conv.system}, *conv.messages])
        assert mem.compactions.compact(cid, instructions="Quote the error.").status == "applied"
        mem.append_many(cid, coding_agent(seed=1).messages)
        assert mem.compactions.compact(cid, instructions="   ").status == "applied"
    first, second = prompts
    assert "\n\nKeep file paths.\n\nName the ticket.\n\nMention the tests.\n\nQuote the error.\n\n" in first
    assert "\n\nKeep file paths.\n\nName the ticket.\n\nMention the tests.\n\nMerge the previous" in second
    assert "Not for acme" not in first + second


def test_a_batch_result_is_applied_with_the_calibration_it_was_planned_with(sqlite_url: str) -> None:
    """The tokenizer factor moves between the submit and the poll (other summaries report their usage):
    the poll plans again with the factors of the submit, so the batch's summary still folds the rows it
    was written for, and applies."""

    class Billed:
        provider, model = "acme", "claude-sonnet-4-5"
        billed = 3_000  # input tokens the provider reports for the 1,000 we counted

        def summarize(self, request: Any, prompt: Any, *, deadline: float | None = None) -> SummaryResult:
            return SummaryResult(
                "## Task and goals\n- other", "acme", self.model, self.billed, 10, 0.0, False, 1_000
            )

    def compact_elsewhere(other: Memory) -> None:
        cid = other.create_conversation("claude-sonnet-4-5", context_window=8_000)
        other.append_many(cid, [{"role": "system", "content": conv.system}, *conv.messages])
        assert other.compactions.compact(cid).status == "applied"

    conv = coding_agent(seed=0)
    llm, billed = _Batches(), Billed()
    with (
        Memory(Settings(database_url=sqlite_url), summarizer=llm, auto_migrate=True) as mem,
        Memory(Settings(database_url=sqlite_url), summarizer=billed) as other,
    ):
        compact_elsewhere(other)  # the tokenizer undercounts: the factor goes up (to 1.375)
        # At 10,000 tokens the conversation needs a summary at that factor, and none at the default.
        cid = mem.create_conversation("claude-sonnet-4-5", context_window=10_000)
        mem.append_many(cid, [{"role": "system", "content": conv.system}, *conv.messages])
        assert mem.compactions.submit_batch([cid]).batch_id == "batch_1"
        billed.billed = 900  # now it overcounts: the factor comes back down, below the default
        compact_elsewhere(other)
        compact_elsewhere(other)
        assert other.compactions.compact(cid, dry_run=True).plan["summarize"] is None  # type: ignore[index]
        polled = mem.compactions.poll_batches()
        assert [o.status for o in polled.applied] == ["applied"] and polled.retried_directly == []
        closed, applied = mem.compactions.history(cid)
        assert closed.error == "applied from the batch"
        assert applied.summary is not None and "fix the parser (from the batch)" in applied.summary


@pytest.mark.parametrize("fmt", ["anthropic", "openai"])
def test_the_guard_renders_its_compacted_call_without_reading_the_rows_back(
    sqlite_url: str, fmt: Any
) -> None:
    """The rows an emergency compaction leaves are rendered into the guard's cache (each format has its
    own): the compacted call, and the next call, read the live rows only from the conversation's next seq
    on (none)."""
    with Memory(Settings(database_url=sqlite_url), summarizer=lambda p: BODY, auto_migrate=True) as mem:
        cid = _coding(mem, 8_000)
        reads: list[tuple[str, Any]] = []

        def record(conn: Any, cursor: Any, statement: str, parameters: Any, context: Any, many: bool) -> None:
            if statement.startswith("SELECT message.id AS id"):  # the live rows (not the search index)
                reads.append((statement, parameters))

        event.listen(mem.admin.engine, "before_cursor_execute", record)
        try:
            assert mem.prepare_context(cid, fmt=fmt).action == "emergency_compacted"
            # The compaction plans on the rows the rendering read: the whole history is read once.
            assert sum(1 for statement, parameters in reads if parameters[-1] == 0) == 1
            after_compaction = reads[-1]
            reads.clear()
            assert mem.prepare_context(cid, fmt=fmt).action == "none"
        finally:
            event.remove(mem.admin.engine, "before_cursor_execute", record)
        next_seq = mem.admin.conversation(cid).next_seq
        for statement, parameters in (after_compaction, *reads):
            assert "message.seq >= ?" in statement
            assert parameters[-1] == next_seq  # nothing at or after it yet
        assert len(reads) == 1


def test_a_compaction_records_its_summary_instructions_for_the_rerun_to_compare(sqlite_url: str) -> None:
    """The record keeps the instructions the summary was written with (the deployment's, the tenant's
    and the call's); a re-run, which has no call of its own, says they changed and how."""
    settings = Settings(
        database_url=sqlite_url,
        summary_instructions="Keep file paths.",
        tenant_summary_instructions=(("acme", "Name the ticket."),),
    )
    with Memory(settings, summarizer=lambda p: BODY, auto_migrate=True) as mem:
        conv = coding_agent(seed=0)
        cid = mem.create_conversation("claude-sonnet-4-5", context_window=8_000, tenant_id="acme")
        mem.append_many(cid, [{"role": "system", "content": conv.system}, *conv.messages])
        assert mem.compactions.compact(cid, instructions="Quote the error.").status == "applied"
        preview = mem.compactions.preview_rerun(cid)
    assert preview.settings_changed == {
        "summary_instructions": [
            "Keep file paths.\n\nName the ticket.\n\nQuote the error.",
            "Keep file paths.\n\nName the ticket.",
        ]
    }


def _little_to_save(mem: Memory) -> str:
    """A system prompt the ladder never touches, over the target alone, and four short turns: a
    summary of them saves less than 5%."""
    cid = mem.create_conversation("claude-sonnet-4-5", context_window=4_096)
    mem.append(cid, {"role": "system", "content": "rule " * 2_000})
    for i in range(4):
        role = "user" if i % 2 == 0 else "assistant"
        mem.append(cid, {"role": role, "content": f"message {i} " + "lorem ipsum dolor " * 10})
    return cid


def test_a_layout_that_saves_under_5_percent_is_recorded_as_a_stall_not_applied(
    sqlite_url: str, events: list[dict[str, Any]]
) -> None:
    with Memory(Settings(database_url=sqlite_url), summarizer=lambda p: BODY, auto_migrate=True) as mem:
        cid = _little_to_save(mem)
        size = mem.admin.conversation(cid).live_tokens
        outcome = mem.compactions.compact(cid)
        (record,) = mem.compactions.history(cid)
        assert (outcome.status, outcome.tokens_before, outcome.tokens_after) == ("stalled", size, size)
        assert outcome.reason == "the layout would save less than 5%; backing off"
        assert outcome.compaction_id == record.id and outcome.summary is None
        found = re.fullmatch(rf"saved (\d+) of {size} tokens \(< 5%\)", record.error or "")
        assert found and 0 < int(found.group(1)) < 0.05 * size
        assert (record.status, record.tokens_after, record.summary_message_id) == ("stalled", size, None)
        assert record.steps and record.steps[-1]["step"] == "summarize"  # what it would have done
        (stalled,) = events  # the summary was asked for (and paid for): the event says from which model
        assert (stalled["outcome"], stalled["llm_model"]) == ("stalled", "custom")
        assert (
            mem.admin.conversation(cid).live_tokens == size
            and mem.admin.conversation(cid).compaction_epoch == 0
        )
        # Forced, the same layout is applied.
        forced = mem.compactions.compact(cid, force=True)
        assert forced.status == "applied" and forced.tokens_after < size


@pytest.mark.parametrize("extra", [0, 1])
def test_a_layout_saving_exactly_the_stall_ratio_is_applied_and_one_token_short_stalls(
    sqlite_memory: Memory, extra: int
) -> None:
    """The stall threshold is "saves less than": at exactly the ratio (a conversation's policy sets
    it) the layout is applied; a ratio one token higher stalls, and says which ratio it missed."""
    mem = sqlite_memory
    probe = _coding(mem, 12_000, seed=2)
    dry = mem.compactions.compact(probe, dry_run=True)  # an LLM-free plan: the dry run is exact
    before, saved = dry.tokens_before, dry.tokens_before - dry.tokens_after
    ratio = (saved + extra) / before
    assert ratio * before == saved + extra  # the threshold is exactly on a token
    cid = _coding(mem, 12_000, seed=2, policy={"stall_ratio": ratio})
    outcome = mem.compactions.compact(cid)
    if extra == 0:
        assert (outcome.status, outcome.tokens_after) == ("applied", dry.tokens_after)
        return
    least = f"{ratio * 100:g}%"
    assert (outcome.status, outcome.tokens_after) == ("stalled", before)
    assert outcome.reason == f"the layout would save less than {least}; backing off"
    assert mem.compactions.history(cid)[-1].error == f"saved {saved} of {before} tokens (< {least})"


def test_a_compaction_that_lost_its_race_says_so_and_writes_nothing_of_its_own(
    sqlite_url: str, events: list[dict[str, Any]]
) -> None:
    rival = Memory(database_url=sqlite_url, auto_migrate=True)

    def slow(prompt: str) -> str:
        assert rival.compactions.compact(cid).status == "applied"  # another worker, meanwhile
        return BODY

    try:
        with Memory(database_url=sqlite_url, summarizer=slow) as mem:
            cid = _coding(mem, 8_000)
            size = mem.admin.conversation(cid).live_tokens
            outcome = mem.compactions.compact(cid)
            rivals, discarded = mem.compactions.history(cid)
            assert rivals.status == "applied"
            assert (outcome.status, outcome.compaction_id) == ("discarded", discarded.id)
            assert outcome.reason == "lost race: another compaction applied first; nothing written"
            assert (outcome.tokens_before, outcome.tokens_after) == (size, size)
            assert outcome.summary is None and outcome.summary_tokens == 0
            assert discarded.error == "lost race: the conversation was compacted meanwhile"
            assert [(e["outcome"], e["llm_model"]) for e in events] == [
                ("applied", "offline"),  # the rival, with the offline summarizer
                ("discarded", "custom"),
            ]
            assert mem.admin.conversation(cid).compaction_epoch == 1  # the rival's apply only
            assert not any(
                "fix the parser (from the batch)" in json.dumps(r["content"])
                for r in mem.export(cid).messages
            )
    finally:
        rival.close()


def test_an_llm_free_compaction_reports_no_summary(
    sqlite_memory: Memory, events: list[dict[str, Any]]
) -> None:
    mem = sqlite_memory
    conv = coding_agent(seed=2)
    cid = mem.create_conversation("claude-sonnet-4-5", context_window=12_000, tenant_id="acme")
    mem.append_many(cid, [{"role": "system", "content": conv.system}, *conv.messages])
    outcome = mem.compactions.compact(cid, trigger="sleep")
    assert (outcome.status, outcome.conversation_id, outcome.trigger) == ("applied", cid, "sleep")
    assert (outcome.summary, outcome.summary_tokens, outcome.fallback) == (None, 0, None)
    assert [s["step"] for s in outcome.steps] == ["truncate", "mask"]
    (event,) = events
    assert (event["conversation_id"], event["tenant_id"], event["outcome"]) == (cid, "acme", "applied")
    assert event["trigger"] == "sleep"
    assert (event["llm_model"], event["llm_input_tokens"], event["cost_usd"]) == (None, 0, 0.0)


def test_a_before_compaction_hook_adds_instructions_after_the_calls_or_vetoes(sqlite_url: str) -> None:
    prompts: list[str] = []
    answers = [
        CompactionVerdict(instructions="Mention the hook."),
        CompactionVerdict(veto="frozen for audit"),
    ]

    def llm(prompt: str) -> str:
        prompts.append(prompt)
        return BODY

    with Memory(Settings(database_url=sqlite_url), summarizer=llm, auto_migrate=True) as mem:

        @mem.hooks.before_compaction
        def hook(event: Any) -> CompactionVerdict:
            return answers.pop(0)

        cid = _coding(mem, 8_000)
        assert mem.compactions.compact(cid, instructions="Quote the error.").status == "applied"
        assert "\n\nQuote the error.\n\nMention the hook.\n\n" in prompts[0]
        mem.append_many(cid, coding_agent(seed=1).messages)
        vetoed = mem.compactions.compact(cid)
        assert (vetoed.status, vetoed.reason) == (
            "vetoed",
            "vetoed by a before_compaction hook: frozen for audit",
        )
        assert len(prompts) == 1 and mem.compactions.history(cid)[-1].status == "vetoed"


def test_on_the_request_path_a_hook_slower_than_the_guards_deadline_is_ignored(sqlite_url: str) -> None:
    settings = Settings(database_url=sqlite_url, guard_deadline_s=0.05)
    with Memory(settings, summarizer=lambda p: BODY, auto_migrate=True) as mem:

        @mem.hooks.before_compaction
        def slow_veto(event: Any) -> CompactionVerdict:
            time.sleep(0.3)  # past the guard's deadline: its answer comes too late to count
            return CompactionVerdict(veto="too late")

        cid = _coding(mem, 8_000)
        ctx = mem.prepare_context(cid)
        assert ctx.action in ("emergency_compacted", "fallback_compacted")
        assert [h.status for h in mem.compactions.history(cid)] == ["applied"]


def test_compacting_an_unknown_conversation_names_it(sqlite_memory: Memory) -> None:
    with pytest.raises(ConversationNotFound, match=r"^unknown conversation: 'conv_missing'$"):
        sqlite_memory.compactions.compact("conv_missing")
