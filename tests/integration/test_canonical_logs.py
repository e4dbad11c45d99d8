"""The canonical log lines (DESIGN section 9): one per compaction whatever its outcome, one per guard
call, one per sleep tick; the bound ids on every line; JSON off a terminal; never a secret."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import structlog
from structlog.testing import capture_logs

from sleepcompact import Memory, Settings, logs
from sleepcompact.demo.synthetic import coding_agent
from sleepcompact.logs import configure_logging
from tests.support.queues import RecordingQueue

CANARY = "sk-ant-api03-CANARYlogs0a1b2c3d4e5f6g7h8i9j0k1l2m3n4o5p6"
COMPACTION_FIELDS = {
    "conversation_id",
    "tenant_id",
    "trigger",
    "outcome",
    "tokens_before",
    "tokens_after",
    "tokens_saved",
    "percent_of_usable",
    "steps",
    "steps_saved",
    "llm_ms",
    "llm_input_tokens",
    "llm_output_tokens",
    "cost_usd",
    "fallback",
    "compaction_id",
}
GUARD_FIELDS = {"conversation_id", "action", "decision", "tokens", "usable"}
Summarize = Callable[[str], str]


@pytest.fixture
def captured() -> Iterator[list[dict[str, Any]]]:
    """Every structlog event, with the bound context variables merged in as the real pipeline does."""
    with capture_logs(processors=[structlog.contextvars.merge_contextvars]) as entries:
        yield entries


def _memory(url: str, summarizer: Summarize | None = None) -> Memory:
    settings = Settings(database_url=url)
    return Memory(settings, auto_migrate=True, summarizer=summarizer, queue=RecordingQueue())


def _coding(mem: Memory, *, window: int = 8_000, secret: bool = False) -> str:
    conv = coding_agent(seed=0)
    messages: list[dict[str, Any]] = [{"role": "system", "content": conv.system}, *conv.messages]
    if secret:
        messages.insert(2, {"role": "user", "content": f"the deploy key is {CANARY}, keep it safe"})
        messages.insert(3, {"role": "assistant", "content": "Noted."})
    cid = mem.create_conversation("claude-sonnet-4-5", context_window=window, tenant_id="t-acme")
    mem.append_many(cid, messages)
    return cid


def _events(entries: list[dict[str, Any]], name: str) -> list[dict[str, Any]]:
    return [e for e in entries if e["event"] == name]


def _one_compaction(entries: list[dict[str, Any]], cid: str) -> dict[str, Any]:
    (event,) = _events(entries, "compaction")
    assert event.keys() >= COMPACTION_FIELDS, COMPACTION_FIELDS - event.keys()
    assert event["conversation_id"] == cid and event["tenant_id"] == "t-acme"
    return event


def test_an_applied_compaction_logs_one_line_with_its_figures(
    sqlite_url: str, captured: list[dict[str, Any]]
) -> None:
    mem = _memory(sqlite_url)
    try:
        cid = _coding(mem)
        captured.clear()
        outcome = mem.compactions.compact(cid)
        event = _one_compaction(captured, cid)
    finally:
        mem.close()
    assert outcome.status == event["outcome"] == "applied" and event["trigger"] == "manual"
    assert event["compaction_id"] == outcome.compaction_id
    assert (event["tokens_before"], event["tokens_after"]) == (outcome.tokens_before, outcome.tokens_after)
    assert event["tokens_saved"] == outcome.tokens_before - outcome.tokens_after > 0
    assert 0 < event["percent_of_usable"] <= 100
    assert event["steps"] == list(dict.fromkeys(s["step"] for s in outcome.steps))
    assert "summarize" in event["steps_saved"] and sum(event["steps_saved"].values()) > 0
    assert isinstance(event["llm_ms"], int) and event["fallback"] is False
    assert event["log_level"] == "info"


def test_a_dry_run_logs_no_compaction_and_a_noop_logs_one(
    sqlite_url: str, captured: list[dict[str, Any]]
) -> None:
    mem = _memory(sqlite_url)
    try:
        cid = _coding(mem)
        mem.compactions.compact(cid, dry_run=True)
        assert _events(captured, "compaction") == []
        small = mem.create_conversation("claude-sonnet-4-5", tenant_id="t-acme")
        mem.append(small, {"role": "user", "content": "hello"})
        captured.clear()
        assert mem.compactions.compact(small).status == "noop"
        event = _one_compaction(captured, small)
    finally:
        mem.close()
    assert event["outcome"] == "noop" and event["tokens_saved"] == 0 and event["llm_ms"] is None


def test_a_stall_and_its_backoff_log_one_line_each(sqlite_url: str, captured: list[dict[str, Any]]) -> None:
    mem = _memory(sqlite_url)
    try:
        cid = mem.create_conversation("claude-sonnet-4-5", context_window=4_096, tenant_id="t-acme")
        mem.append(cid, {"role": "system", "content": "rule " * 2_000})
        mem.append(cid, {"role": "user", "content": "hello"})
        captured.clear()
        assert mem.compactions.compact(cid, trigger="sleep").status == "stalled"
        stalled = _one_compaction(captured, cid)
        captured.clear()
        assert mem.compactions.compact(cid, trigger="sleep").status == "backoff"
        backoff = _one_compaction(captured, cid)
    finally:
        mem.close()
    assert (stalled["outcome"], stalled["trigger"], stalled["tokens_saved"]) == ("stalled", "sleep", 0)
    assert stalled["compaction_id"] and stalled["steps_saved"] == {}
    assert backoff["outcome"] == "backoff" and backoff["compaction_id"] is None


def test_a_failing_summarizer_logs_one_warning_with_the_error_type_only(
    sqlite_url: str, captured: list[dict[str, Any]]
) -> None:
    def broken(prompt: str) -> str:
        raise ValueError(f"cannot summarize: {prompt}")  # the message quotes the prompt, secret included

    mem = _memory(sqlite_url, broken)
    try:
        cid = _coding(mem, secret=True)
        captured.clear()
        outcome = mem.compactions.compact(cid, trigger="manual")
        event = _one_compaction(captured, cid)
    finally:
        mem.close()
    assert outcome.status == event["outcome"] == "failed" and event["log_level"] == "warning"
    assert event["error"] == "ValueError" and event["tokens_saved"] == 0
    assert event["compaction_id"] == outcome.compaction_id and event["llm_ms"] is not None
    assert CANARY not in json.dumps(captured, default=str)


def test_a_lost_race_logs_one_discarded_line_and_the_rivals_applied_one(
    sqlite_url: str, captured: list[dict[str, Any]]
) -> None:
    rival = _memory(sqlite_url)
    calls: list[str] = []

    def slow_summarizer(prompt: str) -> str:
        if not calls:  # while this compaction waits for its LLM, another one applies
            calls.append("rival")
            assert rival.compactions.compact(cid).status == "applied"
        return "## Task and goals\n- fix the bug (summary from the slow worker)"

    mem = _memory(sqlite_url, slow_summarizer)
    try:
        cid = _coding(mem)
        captured.clear()
        assert mem.compactions.compact(cid).status == "discarded"
    finally:
        mem.close()
        rival.close()
    events = _events(captured, "compaction")
    assert [e["outcome"] for e in events] == ["applied", "discarded"]
    discarded = events[1]
    assert discarded.keys() >= COMPACTION_FIELDS and discarded["tokens_saved"] == 0
    assert discarded["steps_saved"] == {} and discarded["tenant_id"] == "t-acme"


def test_every_guard_call_logs_one_line(sqlite_url: str, captured: list[dict[str, Any]]) -> None:
    mem = _memory(sqlite_url)
    try:
        small = mem.create_conversation("claude-sonnet-4-5", tenant_id="t-acme")
        mem.append(small, {"role": "user", "content": "hello"})
        over = _coding(mem, window=8_000)
        captured.clear()
        assert mem.prepare_context(small).action == "none"
        ctx = mem.prepare_context(over, system="You are careful.")
    finally:
        mem.close()
    quiet, loud = _events(captured, "guard")
    assert quiet.keys() >= GUARD_FIELDS and loud.keys() >= GUARD_FIELDS
    assert (quiet["conversation_id"], quiet["action"], quiet["decision"]) == (small, "none", "none")
    assert quiet["tokens"] <= quiet["usable"]
    assert (loud["action"], loud["decision"]) == (ctx.action, "compact_now")
    assert loud["tokens"] == ctx.tokens <= loud["usable"] == ctx.usable < loud["tokens_before"]
    (compaction,) = _events(captured, "compaction")
    assert compaction["trigger"] == "emergency" and compaction["compaction_id"] == ctx.compaction_id


def test_lines_logged_during_a_compaction_carry_the_bound_ids(
    sqlite_url: str, captured: list[dict[str, Any]]
) -> None:
    def chatty(prompt: str) -> str:
        # Whatever the summarizer logs (the Anthropic adapter's llm_call, retries) is attributed.
        structlog.get_logger("test").info("summarizer_says_hello")
        return "## Task and goals\n- fix the bug"

    mem = _memory(sqlite_url, chatty)
    try:
        cid = _coding(mem)
        captured.clear()
        with structlog.contextvars.bound_contextvars(task_id="task-42"):
            assert mem.compactions.compact(cid).status == "applied"
            # The guard's summary runs in a thread under a deadline: the ids follow it there.
            over = _coding(mem)
            mem.prepare_context(over)
        mem.compactions.compact(_coding(mem))  # no task bound any more: none leaks
    finally:
        mem.close()
    hello, emergency_hello, unbound_hello = _events(captured, "summarizer_says_hello")
    assert hello["conversation_id"] == cid and hello["tenant_id"] == "t-acme"
    assert hello["task_id"] == emergency_hello["task_id"] == "task-42"
    assert emergency_hello["conversation_id"] == over and emergency_hello["tenant_id"] == "t-acme"
    assert "task_id" not in unbound_hello
    first, second, third = _events(captured, "compaction")
    assert first["task_id"] == second["task_id"] == "task-42" and "task_id" not in third
    (guard,) = _events(captured, "guard")
    assert guard["task_id"] == "task-42"


def test_a_sleep_tick_logs_one_line_with_its_queue_lag(
    sqlite_url: str, captured: list[dict[str, Any]]
) -> None:
    mem = _memory(sqlite_url)
    try:
        cid = _coding(mem, window=8_000)
        mem.journal.add(cid, "the user prefers metric units", tags=["preference"])
        captured.clear()
        mem.sleep.tick_now([cid], "night-1", queue=RecordingQueue())  # queued, never sent: run here instead
        result = mem.sleep.run_tick(cid, "night-1")
        again = mem.sleep.run_tick(cid, "night-1")
    finally:
        mem.close()
    assert result.compaction.status == "applied" and again.already_done
    done, repeat = _events(captured, "sleep_tick")
    assert (done["outcome"], done["conversation_id"], done["tenant_id"]) == ("done", cid, "t-acme")
    assert done["compaction"] == "applied" and done["queue_lag_s"] >= 0
    assert repeat["outcome"] == "already_done" and repeat["queue_lag_s"] is None
    (compaction,) = _events(captured, "compaction")
    assert compaction["trigger"] == "sleep" and compaction["tenant_id"] == "t-acme"


def test_off_a_terminal_every_line_is_one_json_object_with_the_ids_and_no_secret(
    sqlite_url: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def echoing(prompt: str) -> str:
        raise RuntimeError(prompt)  # an error quoting the prompt: the emergency fallback logs its type only

    monkeypatch.setattr(logs, "_configured", logs._configured)  # restored after the test
    saved = structlog.get_config()
    configure_logging(Settings(log_format="json"), force=True)  # writes to this test's captured stderr
    mem = _memory(sqlite_url, echoing)
    try:
        cid = _coding(mem, secret=True)
        capsys.readouterr()
        with structlog.contextvars.bound_contextvars(task_id="task-7"):
            ctx = mem.prepare_context(cid)
    finally:
        mem.close()
        structlog.configure(**saved)
    err = capsys.readouterr().err
    lines = [json.loads(line) for line in err.splitlines() if line.strip()]  # each line parses alone
    assert lines and all(isinstance(line, dict) for line in lines)
    assert ctx.action == "fallback_compacted"
    (compaction,) = [e for e in lines if e["event"] == "compaction"]
    assert compaction.keys() >= COMPACTION_FIELDS
    assert compaction["fallback"] is True and compaction["error"] == "RuntimeError"
    assert {"task_id", "timestamp", "level"} <= compaction.keys() and compaction["task_id"] == "task-7"
    (guard,) = [e for e in lines if e["event"] == "guard"]
    assert guard["action"] == "fallback_compacted" and guard["task_id"] == "task-7"
    assert CANARY not in err
