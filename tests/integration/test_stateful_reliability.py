"""The reliability guarantees (README "Guarantees", DESIGN sections 4 and 6) as one state machine.

``tests/integration/test_compaction_properties.py`` already interleaves appends, compactions, restores
and clears on SQLite. This machine adds what can go wrong around them, on SQLite and PostgreSQL:

* **a crash between any two statements of an apply**: the N-th SQL statement of one ``compact()`` (or
  of one sleep tick) raises, as if the process died there; the exception comes out and the
  transaction rolls back, so everything durable is exactly as before (or, for a tick, exactly as if it
  stopped after its last commit), and the tick, redelivered with the same key, completes;
* **a lost race**: while the summarizer "works" on a snapshot, another ``Memory`` on the same database
  appends and compacts first; the slow compaction loses the epoch compare-and-set and writes nothing
  but a ``discarded`` record, and what was appended meanwhile stays live and in order;
* **redelivered sleep ticks**: ticks keyed from a small set, so keys repeat; a done key runs once;
* **restore** of any applied compaction brings back the rows exactly as they were before it.

After every step: ``export()["appended"]`` is exactly what the machine appended, in order; ``live_tokens``
is the sum over live rows; the rendered context is a valid Anthropic request; every compaction status
is a known one; no two compactions that applied share a snapshot epoch; only a crashed tick holds the lease.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

import pytest
from hypothesis import HealthCheck, event, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    rule,
    run_state_machine_as_test,
)

from sleepcompact import ConversationBusy, Memory, Settings
from sleepcompact.adapters.tokenizer import load_counter
from sleepcompact.domain.records import COMPACTION_STATUSES, MESSAGE_STATES
from sleepcompact.domain.validation import anthropic_problems
from sleepcompact.services.history import CompactionInfo
from sleepcompact.services.sleep import lease_owner
from tests.support.faults import HookedSummarizer, InjectedCrash, StatementCrasher
from tests.support.hypothesis_stats import reported_statistics

MODEL = "claude-sonnet-4-5"
WINDOW = 4_000
TICK_KEYS = ("night-2026-11-21", "night-2026-11-22", "idle-0930")
COMPACTION_OK = ("applied", "noop", "stalled", "backoff")
TOOLS = ("bash", "read_file", "grep")
# Output sizes in characters: empty-ish, small, a screenful, over the truncation cap, a huge dump.
OUTPUT_SIZES = (0, 60, 600, 2_500, 9_000)

_chars = st.characters(codec="utf-8", exclude_categories=["Cs"], exclude_characters="\x00")
short_texts = st.text(_chars, min_size=1, max_size=60).map(lambda s: s if s.strip() else s + "x")
triggers = st.sampled_from(["manual", "sleep"])

_WORDS = (
    *("the", "parser", "drops", "the", "last", "token", "of", "src/billing/invoice.py;", "compute_tax_total"),
    *("rounds", "half-up;", "run", "pytest", "-k", "rounding;", "user", "prefers", "metric", "units;"),
    *("decided", "to", "keep", "Decimal;", "error:", "KeyError", "'HAT136'"),
)


def _dumps(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)


def _prose(chars: int, salt: int) -> str:
    """About ``chars`` characters of agent-like prose with identifiers (distinct per ``salt``)."""
    words = [_WORDS[(salt + i) % len(_WORDS)] for i in range(chars // 6 + 1)]
    return (f"[{salt}] " + " ".join(words))[:chars]


def _output(chars: int, salt: int) -> str:
    """Tool output of about ``chars`` characters (``ok`` for zero), distinct per call."""
    words = " ".join(f"row{salt}.{i} ünï src/mod_{i % 7}.py" for i in range(chars // 28 + 1))
    return words[:chars] if chars else "ok"


long_texts = st.builds(_prose, st.integers(200, 2_500), st.integers(0, 10_000))
texts = st.one_of(short_texts, short_texts, long_texts)


class World:
    """What every example of one test shares: the database, two ``Memory`` on it, the fault injectors."""

    def __init__(self, database_url: str) -> None:
        self.summarizer = HookedSummarizer(load_counter().count)
        self.mem = Memory(Settings(database_url=database_url), auto_migrate=True, summarizer=self.summarizer)
        # Another process on the same database (a worker, the guard): its own engine and pool.
        self.racer = Memory(Settings(database_url=database_url), auto_migrate=False)
        self.crasher = StatementCrasher(self.mem.admin.engine)

    def close(self) -> None:
        self.crasher.remove()
        self.racer.close()
        self.mem.close()


class ReliabilityMachine(RuleBasedStateMachine):
    """One fresh conversation (and agent) per example; faults injected between its steps."""

    def __init__(self, world: World) -> None:
        super().__init__()
        self.world = world
        self.mem = world.mem
        self.cid = ""
        self.appended: list[dict[str, Any]] = []
        self.calls = 0
        self.before_apply: dict[str, list[dict[str, Any]]] = {}  # compaction id -> rows just before it
        self.done_ticks: dict[str, dict[str, Any]] = {}  # tick key -> what it returned
        self.crashed_ticks: set[str] = set()  # keys whose tick died and was not run again since

    # -- helpers ------------------------------------------------------------------------------------------

    def _append(self, message: dict[str, Any]) -> int:
        appended = self.mem.append(self.cid, message)
        self.appended.append(message)
        return appended.seqs[0]

    def _rows(self) -> list[dict[str, Any]]:
        rows: list[dict[str, Any]] = list(self.mem.export(self.cid).messages)
        return rows

    def _history(self) -> list[CompactionInfo]:
        return self.mem.compactions.history(self.cid)

    def _state(self) -> dict[str, Any]:
        """The conversation's row, rows and compaction records (one read)."""
        exported = self.mem.export(self.cid).to_dict()
        state = {
            key: _dumps(exported[key]) for key in ("conversation", "appended", "messages", "compactions")
        }
        conv = self.mem.admin.conversation(self.cid)  # the lease is not exported: read it here
        return {**state, "lease": _dumps([conv.lease_owner, str(conv.lease_expires_at)])}

    def _durable(self) -> dict[str, Any]:
        """Everything the database holds about this conversation and its agent."""
        return {
            **self._state(),
            "history": _dumps([h.to_dict() for h in self._history()]),
            "journal": _dumps([e.to_dict() for e in self.mem.journal.entries(self.cid)]),
            "memories": _dumps([m.to_dict() for m in self.mem.memories.list(self.cid, include_invalid=True)]),
            "ticks": _dumps([t.to_dict() for t in self.mem.sleep.ticks(self.cid)]),
        }

    def _track(self, rows_before: list[dict[str, Any]]) -> None:
        """Remember, for each compaction that applied since, the rows as they were just before it."""
        for h in self._history():
            if h.status == "applied" and h.id not in self.before_apply:
                self.before_apply[h.id] = rows_before

    def _compacted(self, status: str, where: str) -> None:
        event(f"{where}: {status}")
        if status == "applied":
            event("applied compaction (any path)")

    def _tool_round(self, text: str | None, sizes: list[int], tool: str, together: bool) -> None:
        content: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
        results: list[dict[str, Any]] = []
        for size in sizes:
            self.calls += 1
            call_id = f"toolu_{self.calls:04d}"
            content.append({"type": "tool_use", "id": call_id, "name": tool, "input": {"n": self.calls}})
            results.append(
                {"type": "tool_result", "tool_use_id": call_id, "content": _output(size, self.calls)}
            )
        call = {"role": "assistant", "content": content}
        answer = {"role": "user", "content": results}
        if together:
            self.mem.append_many(self.cid, [call, answer])
            self.appended += [call, answer]
        else:
            self._append(call)
            self._append(answer)

    # -- the conversation -------------------------------------------------------------------------------

    @initialize(preserve=st.sampled_from([None, 6]), rounds=st.integers(0, 8), seed=st.integers(0, 10_000))
    def a_working_agent(self, preserve: int | None, rounds: int, seed: int) -> None:
        """A fresh conversation (the default preserve window, or a short one so summaries come sooner),
        mostly with some history already: requests, tool rounds and long explanations."""
        self.cid = self.mem.create_conversation(
            MODEL,
            context_window=WINDOW,
            # A fresh agent too, so journal entries and memories of earlier examples stay out of this one.
            agent_id=f"agent-{uuid.uuid4().hex[:8]}",
            policy={"preserve_messages": preserve} if preserve else None,
        )
        event(f"preserve_messages {preserve or 'default'}")
        for i in range(rounds):
            self._append({"role": "user", "content": _prose(300, seed + i)})
            self._tool_round(None, [OUTPUT_SIZES[(seed + i) % len(OUTPUT_SIZES)]], "bash", bool(i % 2))
            self._append({"role": "assistant", "content": _prose(900, seed + 7 * i)})

    @rule(text=texts)
    def append_user_text(self, text: str) -> None:
        self._append({"role": "user", "content": text})

    @rule(text=texts)
    def append_assistant_text(self, text: str) -> None:
        self._append({"role": "assistant", "content": text})

    @rule(
        text=st.none() | short_texts,
        sizes=st.lists(st.sampled_from(OUTPUT_SIZES), min_size=1, max_size=3),
        tool=st.sampled_from(TOOLS),
        together=st.booleans(),
    )
    def append_tool_round(self, text: str | None, sizes: list[int], tool: str, together: bool) -> None:
        """An assistant message with 1-3 tool_use blocks, answered by one user message of tool_results."""
        self._tool_round(text, sizes, tool, together)

    # -- compaction, restore ----------------------------------------------------------------------------

    @rule(trigger=triggers, force=st.booleans())
    def compact(self, trigger: Any, force: bool) -> None:
        rows = self._rows()
        outcome = self.mem.compactions.compact(self.cid, trigger=trigger, force=force)
        self._compacted(outcome.status, "compact")
        assert outcome.status in COMPACTION_OK, (outcome.status, outcome.reason)
        if outcome.status == "applied":
            assert outcome.compaction_id is not None
        self._track(rows)

    @rule(n=st.integers(1, 20), trigger=triggers, force=st.booleans())
    def crash_during_compact(self, n: int, trigger: Any, force: bool) -> None:
        """The N-th statement of one compaction raises: the error comes out and nothing durable changed."""
        rows = self._rows()
        before = self._durable()
        crasher = self.world.crasher
        crasher.arm(n)
        try:
            outcome = self.mem.compactions.compact(self.cid, trigger=trigger, force=force)
        except InjectedCrash:
            event("crash: compact interrupted")
            assert self._durable() == before, "a compaction that died mid-way left something behind"
            return
        finally:
            crasher.disarm()
        # The compaction sent fewer than n statements, or swallowed the crash (which would be a bug).
        assert crasher.fired is None, f"the injected crash was swallowed: {crasher.fired!r}"
        event("crash: compact finished before the N-th statement")
        self._compacted(outcome.status, "compact")
        assert outcome.status in COMPACTION_OK, (outcome.status, outcome.reason)
        self._track(rows)

    @rule(trigger=triggers, other=st.sampled_from(["compact", "restore"]))
    def lost_race(self, trigger: Any, other: str) -> None:
        """While this compaction summarizes its snapshot, another Memory appends and then compacts first
        (or restores the newest applied compaction: that moves the epoch on too)."""
        racer = self.world.racer
        seen: dict[str, Any] = {}

        def meanwhile() -> None:
            seen["first"] = self._append({"role": "user", "content": "meanwhile: also check the README"})
            rows = self._rows()
            applied = [h for h in self._history() if h.status == "applied"]
            if other == "restore" and applied:
                seen["restored"] = racer.compactions.restore(applied[-1].id)
            else:
                seen["racer"] = racer.compactions.compact(self.cid, trigger="manual", force=True)
                self._track(rows)
            seen["last"] = self._append({"role": "assistant", "content": "meanwhile: noted"})
            seen["state"] = self._durable()

        rows_before = self._rows()
        self.world.summarizer.before = meanwhile
        try:
            outcome = self.mem.compactions.compact(self.cid, trigger=trigger, force=True)
        finally:
            hook_ran = self.world.summarizer.before is None
            self.world.summarizer.before = None
        if not hook_ran:
            event("race: not reached (nothing to summarize)")
            self._compacted(outcome.status, "compact")
            assert outcome.status in COMPACTION_OK, (outcome.status, outcome.reason)
            self._track(rows_before)
            return
        if "restored" in seen:
            event("race: lost to a restore, discarded")
            assert outcome.status == "discarded", (outcome.status, outcome.reason)
        else:
            racer_outcome = seen["racer"]
            self._compacted(racer_outcome.status, "race: the other compaction")
            if racer_outcome.status != "applied":
                # Nobody moved the epoch: the slow compaction may apply (its snapshot is still current).
                assert outcome.status in COMPACTION_OK, (outcome.status, outcome.reason)
                self._track(rows_before)
                return
            event("race: lost to a compaction, discarded")
            assert outcome.status == "discarded", (outcome.status, outcome.reason)
        after = self._durable()
        for key in ("conversation", "appended", "messages", "journal", "memories", "ticks"):
            assert after[key] == seen["state"][key], f"the discarded compaction wrote {key}"
        (record,) = [h for h in self._history() if h.id == outcome.compaction_id]
        assert record.status == "discarded"
        assert record.summary_message_id is None
        if "racer" in seen:  # both planned from the same epoch; only the racer's CAS could succeed
            (winner,) = [h for h in self._history() if h.id == seen["racer"].compaction_id]
            assert (winner.status, winner.snapshot_epoch) == ("applied", record.snapshot_epoch)
        assert [h for h in json.loads(after["history"]) if h["id"] != outcome.compaction_id] == json.loads(
            seen["state"]["history"]
        ), "the discarded compaction changed another compaction's record"
        last = [r for r in self._rows() if r["seq"] == seen["last"]]
        assert [r["state"] for r in last] == ["live"], "a message appended during the race is not live"

    @rule(pick=st.integers(0, 50))
    def restore(self, pick: int) -> None:
        history = self._history()
        applied = [h for h in history if h.status == "applied"]
        if not applied:
            return
        target = applied[pick % len(applied)]
        later = [h.id for h in applied if h.snapshot_epoch > target.snapshot_epoch]
        order = self.mem.compactions.restore(target.id)
        event("restore: restored an applied compaction")
        if len(order) > 1:
            event("restore: later compactions undone first")
        assert list(order) == [*reversed(later), target.id]
        statuses = {h.id: h.status for h in self._history()}
        assert all(statuses[c] == "reverted" for c in order)
        before = self.before_apply[target.id]
        last_seq = max(r["seq"] for r in before)
        rows = self._rows()
        assert _dumps([r for r in rows if r["seq"] <= last_seq]) == _dumps(before), "restore is not exact"
        newer = [r for r in rows if r["seq"] > last_seq]
        assert all(r["kind"] != "summary" and r["state"] == "live" for r in newer), _dumps(newer)[:2000]

    @rule(pick=st.integers(0, 50), n=st.integers(1, 10))
    def crash_during_restore(self, pick: int, n: int) -> None:
        """A restore is one transaction too: dying half-way through it changes nothing."""
        applied = [h for h in self._history() if h.status == "applied"]
        if not applied:
            return
        before = self._durable()
        crasher = self.world.crasher
        crasher.arm(n)
        try:
            self.mem.compactions.restore(applied[pick % len(applied)].id)
        except InjectedCrash:
            event("crash: restore interrupted")
            assert self._durable() == before, "a restore that died mid-way left something behind"
            return
        finally:
            crasher.disarm()
        assert crasher.fired is None, f"the injected crash was swallowed: {crasher.fired!r}"
        event("crash: restore finished before the N-th statement")

    # -- sleep ticks ------------------------------------------------------------------------------------

    def _tick(self, key: str) -> None:
        before = self._state()
        rows: list[dict[str, Any]] = json.loads(before["messages"])
        holder = self.mem.admin.conversation(self.cid).lease_owner
        if key in self.done_ticks:
            # A done tick answers from its record, whoever holds the lease now.
            result = self.mem.sleep.run_tick(self.cid, key)
            event("tick: redelivered, already done")
            assert result.to_dict() == {**self.done_ticks[key], "already_done": True}
            assert self._state() == before, "a redelivered tick wrote something"
            return
        if holder is not None and holder != lease_owner(key):
            # A tick that died after its compaction still holds the lease (until it expires).
            with pytest.raises(ConversationBusy):
                self.mem.sleep.run_tick(self.cid, key)
            event("tick: busy (the lease of a crashed tick)")
            assert self._state() == before
            return
        result = self.mem.sleep.run_tick(self.cid, key)
        if key in self.crashed_ticks:
            event("tick: redelivered after a crash, completed")
            self.crashed_ticks.discard(key)
        assert "already_done" not in result.to_dict()
        status = result.compaction.status
        self._compacted(status, "tick")
        assert status in (*COMPACTION_OK, "not needed"), result
        self.done_ticks[key] = result.to_dict()
        self._track(rows)

    @rule(key=st.sampled_from(TICK_KEYS))
    def sleep_tick(self, key: str) -> None:
        self._tick(key)

    @rule(key=st.sampled_from(TICK_KEYS))
    def redelivered_tick(self, key: str) -> None:
        """The broker delivers the same task twice: it runs once."""
        event("tick: delivered twice")
        self._tick(key)
        self._tick(key)

    @rule(key=st.sampled_from(TICK_KEYS), n=st.integers(1, 40), redeliver=st.booleans())
    def crash_during_tick(self, key: str, n: int, redeliver: bool) -> None:
        """The worker dies at the N-th statement of a tick; the broker may redeliver it at once."""
        holder = self.mem.admin.conversation(self.cid).lease_owner
        if key in self.done_ticks or (holder is not None and holder != lease_owner(key)):
            return  # covered by sleep_tick: nothing would run
        rows = self._rows()
        before = self._durable()
        crasher = self.world.crasher
        crasher.arm(n)
        try:
            result = self.mem.sleep.run_tick(self.cid, key)
        except InjectedCrash:
            crashed = True
        else:
            crashed = False
        finally:
            crasher.disarm()
        if not crashed:
            assert crasher.fired is None, f"the injected crash was swallowed: {crasher.fired!r}"
            event("crash: tick finished before the N-th statement")
            self.crashed_ticks.discard(key)
            self.done_ticks[key] = result.to_dict()
            self._compacted(result.compaction.status, "tick")
            self._track(rows)
            return
        event("crash: tick interrupted")
        self.crashed_ticks.add(key)
        self._track(rows)
        after = self._durable()
        assert after["appended"] == before["appended"]
        assert all(t.status != "done" for t in self.mem.sleep.ticks(self.cid) if t.tick_key == key)
        known = {h["id"] for h in json.loads(before["history"])}
        added = [h for h in json.loads(after["history"]) if h["id"] not in known]
        if after["messages"] != before["messages"]:
            # It died after its compaction committed: exactly that one compaction is there, applied.
            assert [h["status"] for h in added] == ["applied"], added
            event("crash: tick died after its compaction committed")
        else:
            assert [h for h in added if h["status"] == "applied"] == [], added
        if redeliver:
            self._tick(key)

    # -- invariants -------------------------------------------------------------------------------------

    @invariant()
    def the_guarantees_hold(self) -> None:
        exported = self.mem.export(self.cid)
        # Nothing lost, nothing duplicated: the originals exactly as appended, in order.
        assert list(exported.appended) == self.appended
        rows = exported.messages
        keys = [(r["seq"], r["part"]) for r in rows]
        assert keys == sorted(set(keys))
        assert all(r["state"] in MESSAGE_STATES for r in rows)
        live = [r for r in rows if r["state"] != "archived"]
        assert len([r for r in live if r["kind"] == "summary"]) <= 1

        # The running totals are the sums over the live rows.
        stats = self.mem.stats(self.cid)
        assert stats.live_tokens == sum(r["live_tokens"] for r in live)
        assert stats.live_messages == len(live)

        # What the next call would get is a valid Anthropic request.
        view = self.mem.context(self.cid)
        if view.messages:
            assert anthropic_problems(view.messages) == [], _dumps(view.messages)[:3000]

        # Compaction records: known statuses; every apply moved the epoch on, so no two share one.
        history = exported.compactions
        assert all(h["status"] in COMPACTION_STATUSES for h in history), [h["status"] for h in history]
        applied = [h["snapshot_epoch"] for h in history if h["status"] == "applied"]
        assert len(applied) == len(set(applied)), f"two applied compactions share an epoch: {applied}"
        ever = [h["snapshot_epoch"] for h in history if h["status"] in ("applied", "reverted")]
        assert len(ever) == len(set(ever)), f"two applies share an epoch: {ever}"

        # Only a tick that died holds the lease.
        holder = self.mem.admin.conversation(self.cid).lease_owner
        assert holder is None or holder in {lease_owner(k) for k in self.crashed_ticks}, holder


MACHINE_SETTINGS = settings(
    max_examples=25,
    stateful_step_count=25,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def test_reliability_state_machine(database_url: str, request: pytest.FixtureRequest) -> None:
    """Appends, compactions, restores, ticks, crashes, lost races, redeliveries; SQLite and PostgreSQL."""
    world = World(database_url)

    class OnThisDatabase(ReliabilityMachine):
        def __init__(self) -> None:
            super().__init__(world)

    try:
        with reported_statistics(request):
            run_state_machine_as_test(OnThisDatabase, settings=MACHINE_SETTINGS)
    finally:
        world.close()
