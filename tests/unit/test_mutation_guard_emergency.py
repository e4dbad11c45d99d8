"""The guard's emergency path, where mutation testing found the suite blind (docs/mutation.md, fourth
session). On a throwaway SQLite file: no server.

* A compaction that still leaves the call over the window is an overflow named with its figures, and the
  guard's line says what the compaction did before it gave up.
* A request that carries more images than the provider takes is refused with the figures, even below
  the thresholds, once the compaction archived what it may.
* A worker's compaction that applied while the guard waited for the lease is reused, not paid twice: the
  call says so, names that compaction and whether it was an offline fallback; a restore meanwhile
  leaves nothing to reuse.
* A broker that refuses the guard's sleep request does not fail the call: a warning names the
  conversation and the error.
* An emergency compaction a hook vetoes gives the guard's lease back; on a call that still fits, the
  call goes as it is (action ``none``) and names the vetoed record; on a call an operator compacted by
  hand meanwhile, the smaller call goes, ``emergency_compacted``; so it does when the guard's own
  compaction lost its race to the operator's.
* A call of exactly the usable budget is sent; one token over is an overflow that writes nothing.
* An emergency compaction whose model failed applies the offline summary, ``fallback_compacted``.
* The emergency compaction leaves room for the recalled memories, plans with the calibration the guard
  decided with (not one another process taught since), and gives the lease back when it crashes.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from types import SimpleNamespace
from typing import Any

import pytest
from sqlalchemy.exc import OperationalError
from structlog.testing import capture_logs

import sleepcompact.services.guard as guard_service
from sleepcompact import ContextOverflow, Memory, RequestTooLarge, Settings
from sleepcompact.demo.synthetic import coding_agent
from sleepcompact.hooks import CompactionVerdict
from sleepcompact.services.clock import utcnow
from tests.support.events import recorded
from tests.support.png import blank
from tests.support.summarizers import Priced

REUSED = "a worker's compaction applied while the guard waited; reused"


def _coding(mem: Memory, window: int) -> str:
    cid = mem.create_conversation("claude-sonnet-4-5", context_window=window)
    mem.append_many(cid, coding_agent(seed=0).messages)
    return cid


def test_a_call_still_too_big_after_its_compaction_is_an_overflow_with_its_figures(mem: Memory) -> None:
    cid = _coding(mem, 16_000)  # 12,000 usable
    # The system prompt alone fits, barely: with the current turn it does not, whatever is compacted.
    system = "".join(f"Rule {i}: be careful. " for i in range(1_400))
    with recorded("guard") as events, pytest.raises(ContextOverflow) as raised:
        mem.prepare_context(cid, system=system)
    err = raised.value
    (event,) = events
    assert (event["conversation_id"], event["action"], event["decision"]) == (cid, "overflow", "compact_now")
    assert event["compaction"] == "applied" and event["tokens_before"] > event["tokens"] > 12_000
    (record,) = mem.compactions.history(cid)
    assert (record.status, record.trigger) == ("applied", "emergency")
    # The figures are those of the call after the compaction, not before it.
    assert (err.conversation_id, err.tokens, err.usable) == (cid, event["tokens"], 12_000)
    assert err.system_tokens <= 12_000 < err.fixed_tokens
    assert err.fixed_tokens == err.system_tokens + err.tools_tokens + err.current_turn_tokens
    assert err.tools_tokens == 0 and err.current_turn_tokens > 0


def test_more_images_than_the_provider_takes_are_refused_with_the_figures(mem: Memory) -> None:
    cid = _coding(mem, 200_000)  # far below soft: only the image count is over
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": blank(28, 28)}}
    mem.append(
        cid, {"role": "user", "content": [{"type": "text", "text": "What do these show?"}] + [image] * 101}
    )
    with recorded("guard") as events, pytest.raises(RequestTooLarge) as raised:
        mem.prepare_context(cid)
    err = raised.value
    assert (err.conversation_id, err.attachments, err.max_attachments) == (cid, 101, 100)
    assert err.max_bytes == 32 * 1024 * 1024 and 101 * len(image["source"]["data"]) < err.size < err.max_bytes
    (event,) = events
    assert (event["conversation_id"], event["action"], event["decision"]) == (cid, "overflow", "none")
    assert event["compaction"] == "noop" and event["tokens_before"] == event["tokens"]


def _failing(prompt: str) -> str:
    raise RuntimeError("the model is down")


@pytest.fixture
def offline(sqlite_url: str) -> Iterator[Memory]:
    """A Memory whose summarizer is down: every compaction that needs a summary falls back offline."""
    with Memory(Settings(database_url=sqlite_url), summarizer=_failing, auto_migrate=True) as memory:
        yield memory


def _while_the_guard_waits(monkeypatch: pytest.MonkeyPatch, worker: Callable[[], Any]) -> list[Any]:
    """Run ``worker`` once, the first time the guard pauses in its wait for the lease."""
    done: list[Any] = []

    def sleep(seconds: float) -> None:
        if not done:
            done.append(worker())
            return
        time.sleep(seconds)

    monkeypatch.setattr(guard_service, "time", SimpleNamespace(monotonic=time.monotonic, sleep=sleep))
    return done


def _hold_lease(mem: Memory, cid: str) -> None:
    with mem.admin.uow() as uow:  # a worker's tick holds the lease
        assert uow.ticks.acquire_lease(cid, "tick:night-1", utcnow(), 600)
        uow.commit()


def test_a_workers_fallback_compaction_applied_while_the_guard_waits_is_reused(
    offline: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    mem = offline
    cid = _coding(mem, 8_000)  # needs a summary: the worker's falls back offline
    _hold_lease(mem, cid)
    done = _while_the_guard_waits(monkeypatch, lambda: mem.compactions.compact(cid, trigger="emergency"))
    with recorded("guard") as events:
        ctx = mem.prepare_context(cid)
    (worker,) = done
    assert worker.status == "applied" and worker.fallback == "RuntimeError: the model is down"
    assert (ctx.action, ctx.compaction_id, ctx.reason) == ("fallback_compacted", worker.compaction_id, REUSED)
    assert [h.status for h in mem.compactions.history(cid)] == ["applied"]  # paid once
    (event,) = events
    assert (event["action"], event["decision"], event["compaction"]) == (
        "fallback_compacted",
        "compact_now",
        "reused",
    )
    assert event["tokens"] == ctx.tokens <= ctx.usable < event["tokens_before"]


def test_a_restore_while_the_guard_waits_leaves_nothing_to_reuse(
    offline: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    mem = offline
    cid = _coding(mem, 8_000)
    first = mem.compactions.compact(cid, trigger="emergency")
    assert first.status == "applied" and first.compaction_id
    mem.append_many(cid, coding_agent(seed=1).messages)
    _hold_lease(mem, cid)
    _while_the_guard_waits(monkeypatch, lambda: mem.compactions.restore(first.compaction_id))
    with recorded("guard") as events, pytest.raises(ContextOverflow) as raised:
        mem.prepare_context(cid)
    assert [h.status for h in mem.compactions.history(cid)] == ["reverted"]
    (event,) = events
    assert (event["action"], event["compaction"]) == ("overflow", "reused")
    assert raised.value.conversation_id == cid and raised.value.tokens == event["tokens"] > 8_000


class _DownBroker:
    def enqueue_tick(self, conversation_id: str, tick_key: str, *, urgent: bool = False) -> None:
        raise ConnectionError("broker down")

    def enqueue_ticks(self, ticks: Any) -> None:
        raise ConnectionError("broker down")


def test_a_broker_that_refuses_the_sleep_request_is_a_warning_not_an_error(sqlite_url: str) -> None:
    with Memory(Settings(database_url=sqlite_url), auto_migrate=True, queue=_DownBroker()) as mem:
        cid = _coding(mem, 70_000)  # over soft, under hard
        with capture_logs() as logs:
            ctx = mem.prepare_context(cid)
        assert ctx.action == "sleep_requested"
        assert mem.admin.conversation(cid).sleep_requested_at is not None
    warnings = [e for e in logs if e.get("log_level") == "warning"]
    assert warnings == [
        {
            "event": "guard_enqueue_failed",
            "log_level": "warning",
            "conversation_id": cid,
            "error": "ConnectionError",
        }
    ]


def test_a_vetoed_emergency_gives_the_lease_back_for_the_next_tick(sqlite_url: str) -> None:
    """An emergency compaction that applies nothing (a hook vetoed it) gives back the lease the guard
    took for it, in a transaction of its own: the call fails with the figures, and the conversation's
    sleep ticks are not held off until the lease expires."""
    with Memory(Settings(database_url=sqlite_url), auto_migrate=True) as mem:

        @mem.hooks.before_compaction
        def frozen(event: Any) -> CompactionVerdict:
            return CompactionVerdict(veto="frozen for audit")

        cid = _coding(mem, 8_000)
        with pytest.raises(ContextOverflow):
            mem.prepare_context(cid)
        (vetoed,) = mem.compactions.history(cid)
        assert (vetoed.status, vetoed.trigger) == ("vetoed", "emergency")
        assert mem.admin.conversation(cid).lease_owner is None


def test_a_vetoed_emergency_on_a_call_that_still_fits_sends_it_as_it_is(sqlite_url: str) -> None:
    """Over the hard threshold but within the window, an emergency compaction a hook vetoed leaves the
    call as it was: the action is ``none`` (nothing was compacted), naming the vetoed record and why."""
    with Memory(Settings(database_url=sqlite_url), auto_migrate=True) as mem:

        @mem.hooks.before_compaction
        def frozen(event: Any) -> CompactionVerdict:
            return CompactionVerdict(veto="frozen for audit")

        cid = _coding(mem, 60_000)
        before = mem.admin.conversation(cid).live_tokens
        with recorded("guard") as lines:
            prepared = mem.prepare_context(cid)
        (vetoed,) = mem.compactions.history(cid)
        assert (prepared.action, prepared.compaction_id) == ("none", vetoed.id)
        assert prepared.reason == "vetoed by a before_compaction hook: frozen for audit"
        assert mem.admin.conversation(cid).live_tokens == before
        (line,) = lines
        assert (line["action"], line["decision"], line["compaction"]) == ("none", "compact_now", "vetoed")
        assert mem.admin.conversation(cid).lease_owner is None


def test_a_call_of_exactly_the_usable_budget_is_sent_and_one_token_more_is_not(mem: Memory) -> None:
    """An agent's first call, before any message, with a system prompt that fills the usable budget
    exactly: it fits (over the hard threshold, so the guard tries, finds nothing to compact, and sends
    it). One token less room is an overflow that names the system prompt and writes nothing."""
    system = "".join(f"Rule {i}: be careful. " for i in range(300))
    tokens = mem.prepare_context(mem.create_conversation("claude-sonnet-4-5"), system=system).tokens
    exact = mem.create_conversation("claude-sonnet-4-5", context_window=tokens + 4_000, output_reserve=4_000)
    with recorded("guard") as lines:
        prepared = mem.prepare_context(exact, system=system)
    assert (prepared.action, prepared.tokens, prepared.usable) == ("none", tokens, tokens)
    assert prepared.system == system and prepared.messages == []
    (line,) = lines
    assert (line["action"], line["decision"], line["percent_of_usable"]) == ("none", "compact_now", 100.0)
    short = mem.create_conversation("claude-sonnet-4-5", context_window=tokens + 3_999, output_reserve=4_000)
    with pytest.raises(ContextOverflow) as raised:
        mem.prepare_context(short, system=system)
    err = raised.value
    assert (err.tokens, err.usable, err.system_tokens) == (tokens, tokens - 1, tokens)
    assert mem.compactions.history(short) == [] and mem.compactions.history(exact) == []


def test_an_emergency_compaction_leaves_room_for_the_memories_the_call_recalls(sqlite_url: str) -> None:
    """The recalled-notes block is sent with the compacted call, so the emergency compaction plans for a
    budget without it: its usable budget is the conversation's less the block's model tokens."""
    with Memory(Settings(database_url=sqlite_url), auto_migrate=True) as mem:
        told: list[Any] = []
        mem.hooks.after_compaction(told.append)
        cid = _coding(mem, 8_000)  # 6,000 usable
        mem.journal.add(cid, "The parser tests run with pytest -q from the repository root", tags=["fact"])
        mem.journal.add(cid, "The user prefers small focused commits", tags=["preference"])
        mem.memories.consolidate(cid)
        recalled = mem.context(cid).memory_tokens
        prepared = mem.prepare_context(cid)
        assert prepared.action == "emergency_compacted" and prepared.view.memory_tokens == recalled > 0
        (outcome,) = told
        assert outcome.usable == 6_000 - prepared.view.budget.effective(recalled)
        assert prepared.tokens <= 6_000


def test_an_emergency_compaction_that_crashes_gives_the_lease_back(
    mem: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The database failing under the guard's compaction fails the call with that error, and the lease
    the guard took is given back at once: the conversation's next sleep tick need not wait it out."""
    cid = _coding(mem, 8_000)

    def lost_connection(*args: Any, **kwargs: Any) -> Any:
        raise OperationalError("UPDATE message", {}, Exception("the database went away"))

    monkeypatch.setattr(guard_service, "compact", lost_connection)
    with pytest.raises(OperationalError):
        mem.prepare_context(cid)
    assert mem.admin.conversation(cid).lease_owner is None
    assert mem.compactions.history(cid) == []


def test_an_emergency_compaction_plans_with_the_calibration_the_guard_decided_with(sqlite_url: str) -> None:
    """Another process teaching a new calibration does not reach this one before its cache expires (60 s):
    until then the guard decides, and its compaction plans and reports, with the calibration it has, so
    two equal conversations compacted on either side of the lesson are measured the same."""

    with Memory(Settings(database_url=sqlite_url), auto_migrate=True) as mem:
        first, second = _coding(mem, 8_000), _coding(mem, 8_000)
        taught_before = mem.context(first).tokens
        with recorded("compaction") as lines:
            assert mem.prepare_context(first).action == "emergency_compacted"
            with Memory(Settings(database_url=sqlite_url), summarizer=Priced()) as other:
                assert other.compactions.compact(_coding(other, 8_000)).status == "applied"
            assert mem.prepare_context(second).action == "emergency_compacted"
    before, lesson, after = lines
    assert lesson["llm_input_tokens"] == 1_234
    keys = ("tokens_before", "tokens_after", "percent_of_usable")
    assert [after[k] for k in keys] == [before[k] for k in keys]
    with Memory(Settings(database_url=sqlite_url)) as fresh:  # its factors read from the database
        relearned = fresh.context(_coding(fresh, 8_000)).tokens
    assert relearned > taught_before  # the lesson was learned, and this process had not read it


def test_a_call_an_operator_compacted_while_the_guards_compaction_was_vetoed_is_compacted(
    sqlite_url: str,
) -> None:
    """The guard's own compaction applied nothing (a hook vetoed it), but an operator compacted the
    conversation by hand meanwhile (here, while the hook decided): the call that goes is the smaller
    one, and says so (``emergency_compacted``), naming the guard's vetoed record."""
    with (
        Memory(Settings(database_url=sqlite_url), auto_migrate=True) as mem,
        Memory(Settings(database_url=sqlite_url)) as operator,
    ):
        cid = _coding(mem, 8_000)
        by_hand: list[str] = []

        @mem.hooks.before_compaction
        def frozen(event: Any) -> CompactionVerdict:
            by_hand.append(operator.compactions.compact(cid).status)
            return CompactionVerdict(veto="frozen for audit")

        before = mem.context(cid).tokens
        with recorded("guard") as lines:
            prepared = mem.prepare_context(cid)
        manual, vetoed = mem.compactions.history(cid)
        assert by_hand == ["applied"] and (manual.trigger, vetoed.status) == ("manual", "vetoed")
        assert (prepared.action, prepared.compaction_id) == ("emergency_compacted", vetoed.id)
        assert prepared.tokens < prepared.usable < before
        (line,) = lines
        assert (line["action"], line["compaction"]) == ("emergency_compacted", "vetoed")
        assert line["tokens_before"] == before


def test_a_guard_compaction_that_lost_its_race_sends_the_call_the_winner_compacted(sqlite_url: str) -> None:
    """An operator's compaction commits while the guard's own is on its way (here, while the hook is
    asked): the guard's is discarded, writing nothing, and the call goes compacted by the operator's,
    ``emergency_compacted``, naming the discarded record and why."""
    with (
        Memory(Settings(database_url=sqlite_url), auto_migrate=True) as mem,
        Memory(Settings(database_url=sqlite_url)) as operator,
    ):
        cid = _coding(mem, 8_000)

        @mem.hooks.before_compaction
        def meanwhile(event: Any) -> None:
            operator.compactions.compact(cid)

        before = mem.context(cid).tokens
        prepared = mem.prepare_context(cid)
        manual, discarded = mem.compactions.history(cid)
        assert (manual.status, manual.trigger, discarded.status) == ("applied", "manual", "discarded")
        assert (prepared.action, prepared.compaction_id) == ("emergency_compacted", discarded.id)
        assert prepared.reason == "lost race: another compaction applied first; nothing written"
        assert prepared.tokens < prepared.usable < before
        assert mem.context(cid).messages == prepared.messages


def test_an_emergency_compaction_whose_model_failed_is_a_fallback(sqlite_url: str) -> None:
    """The model fails under the guard's deadline: the compaction applies with the offline summary, and
    the call says so (``fallback_compacted``, naming the compaction, in its guard line too)."""

    def down(prompt: str) -> str:
        raise ConnectionError("the model is down")

    with Memory(Settings(database_url=sqlite_url), summarizer=down, auto_migrate=True) as mem:
        cid = _coding(mem, 8_000)
        with recorded("guard") as lines:
            prepared = mem.prepare_context(cid)
        (applied,) = mem.compactions.history(cid)
        assert (applied.status, applied.summarizer_provider) == ("applied", "offline")
        assert (prepared.action, prepared.compaction_id) == ("fallback_compacted", applied.id)
        (line,) = lines
        assert (line["action"], line["compaction"]) == ("fallback_compacted", "applied")
