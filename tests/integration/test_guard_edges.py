"""The guard at its edges, on both databases: exactly on a threshold and one token either side, and
the conversation free for its sleep ticks right after an emergency compaction.

Thresholds are strict (``domain.guard.decide``): a conversation exactly at soft needs nothing, exactly
at hard it asks for a sleep tick and is not compacted in the request path; one token over hard it is.
Each case gets a conversation whose window is chosen so that its live tokens land exactly where the
case says (the thresholds are ``round(usable x fraction)``, and a step of one usable token moves them by
less than one, so every value is reachable).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from sleepcompact import Memory, Settings
from sleepcompact.demo.synthetic import coding_agent
from sleepcompact.domain.budget import Budget, Thresholds, make_budget
from sleepcompact.domain.errors import PermanentLLMError
from tests.support.queues import RecordingQueue

MODEL = "claude-sonnet-4-5"
RESERVE = 1_000  # output reserve of every conversation here; the usable budget is set by the window
MESSAGES = [
    {"role": "system", "content": coding_agent(seed=0, turns=15, big_output_tokens=400).system},
    *coding_agent(seed=0, turns=15, big_output_tokens=400).messages,
]


@pytest.fixture
def queue() -> RecordingQueue:
    return RecordingQueue()


@pytest.fixture
def mem(database_url: str, queue: RecordingQueue) -> Iterator[Memory]:
    memory = Memory(Settings(database_url=database_url), auto_migrate=True, queue=queue)
    try:
        yield memory
    finally:
        memory.close()


def _budget(usable: int) -> Budget:
    return make_budget(
        context_window=usable + RESERVE, output_reserve=RESERVE, thresholds=Thresholds(), safety_factor=1.0
    )


def _usable_where(threshold: Callable[[Budget], int], value: int) -> int:
    """The smallest usable budget whose threshold is exactly ``value``."""
    usable = value
    while threshold(_budget(usable)) < value:
        usable += 1
    assert threshold(_budget(usable)) == value
    return usable


def _conversation(mem: Memory, usable: int) -> str:
    cid = mem.create_conversation(MODEL, context_window=usable + RESERVE, output_reserve=RESERVE)
    mem.append_many(cid, MESSAGES)
    return cid


@pytest.fixture
def tokens(mem: Memory) -> int:
    """What the guard weighs for MESSAGES (model tokens), whatever the window."""
    probe = _conversation(mem, 50_000)
    assert mem.check(probe).tokens == mem.context(probe).tokens
    return mem.check(probe).tokens


CASES = [
    # (threshold, where the conversation sits relative to it, the decision, what prepare_context does)
    ("soft", -1, "none", "none"),
    ("soft", 0, "none", "none"),
    ("soft", +1, "request_sleep", "sleep_requested"),
    ("hard", -1, "request_sleep", "sleep_requested"),
    ("hard", 0, "request_sleep", "sleep_requested"),
    ("hard", +1, "compact_now", "emergency_compacted"),
]


@pytest.mark.parametrize(("threshold", "offset", "decision", "action"), CASES)
def test_the_decision_on_and_one_token_either_side_of_each_threshold(
    mem: Memory, queue: RecordingQueue, tokens: int, threshold: str, offset: int, decision: str, action: str
) -> None:
    def at(b: Budget) -> int:
        return b.soft if threshold == "soft" else b.hard

    cid = _conversation(mem, _usable_where(at, tokens - offset))
    check = mem.check(cid)
    assert check.tokens - (check.soft if threshold == "soft" else check.hard) == offset  # the setup
    assert check.soft < check.hard
    assert check.decision == decision

    prepared = mem.prepare_context(cid)
    assert prepared.action == action
    history = mem.compactions.history(cid)
    if action == "emergency_compacted":
        assert [(h.status, h.trigger) for h in history] == [("applied", "emergency")]
        assert prepared.view.tokens <= check.hard
    else:  # nothing compacted in the request path, and a sleep tick asked for only over soft
        assert history == []
        assert all(r["state"] == "live" for r in mem.export(cid).messages)
        assert prepared.view.tokens == check.tokens
        requested = mem.admin.conversation(cid).sleep_requested_at is not None
        assert requested == (action == "sleep_requested")
        assert [c for c, _key in queue.urgent] == ([cid] if requested else [])


def _failing_llm(prompt: str) -> str:
    raise PermanentLLMError("the provider is down")


@pytest.mark.parametrize("summarizer", [None, _failing_llm], ids=["summary", "llm-down-fallback"])
def test_right_after_an_emergency_compaction_a_sleep_tick_runs_at_once(
    database_url: str, summarizer: Callable[[str], str] | None
) -> None:
    """The guard gives its lease back when its compaction ends (also on the offline fallback): the
    conversation's own sleep tick is not turned away as busy."""
    with Memory(
        Settings(database_url=database_url), auto_migrate=True, queue=RecordingQueue(), summarizer=summarizer
    ) as memory:
        cid = _conversation(memory, 2_400)  # small enough that the LLM-free steps do not fit it
        assert memory.check(cid).decision == "compact_now"
        prepared = memory.prepare_context(cid)
        assert prepared.action == ("emergency_compacted" if summarizer is None else "fallback_compacted")
        assert memory.admin.conversation(cid).lease_owner is None
        memory.append(cid, {"role": "user", "content": "Thanks. Now tidy up the changelog, please."})
        tick = memory.sleep.tick(cid, "night-2026-11-23")  # would raise ConversationBusy
        assert tick.already_done is False
        assert [t.status for t in memory.sleep.ticks(cid)] == ["done"]
        assert memory.admin.conversation(cid).lease_owner is None
