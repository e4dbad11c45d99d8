"""The main job: synthetic agents live through two nights on the real worker and scheduler.

Day 1 the agents work (a coding agent under three budgets, a personal assistant whose user states
facts). The nightly sweep ticks each conversation on the worker: the journal becomes memories, and
what is over its soft threshold is compacted. Day 2 the user contradicts a fact, one coding agent is
pushed over its soft threshold (the guard asks for a tick, the scheduler's idle sweep sends it) and
another over its hard threshold (the guard compacts at once). Night 2 folds the contradiction in.

The sweeps run "tonight" by passing the next sweep time as ``now``: the demo fast-forwards the clock
instead of waiting for 03:00. Everything else is what a deployment runs.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import asdict, dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, Protocol

from sleepcompact.api import Memory
from sleepcompact.config import Settings
from sleepcompact.demo.synthetic import SyntheticConversation, coding_agent, personal_assistant
from sleepcompact.services.clock import utcnow
from sleepcompact.services.sleep import TickResult
from sleepcompact.services.sweeps import night_for

Progress = Callable[[str, int, int], None]
"""``progress(stage, done, total)``: called while the demo waits on the worker."""


class Processes(Protocol):
    """The worker and the scheduler the demo runs against (started and stopped by the caller)."""

    def running(self) -> bool:
        """Whether every process is still alive."""
        ...


StartProcesses = Callable[[Settings, Path], AbstractContextManager[Processes]]
"""``start(settings, log)``: the worker and the scheduler for ``settings``, logging to ``log``."""

CODING_BUDGETS: tuple[tuple[str, str | None], ...] = (
    ("coder, free 16k", "free"),
    ("coder, pro 32k", "pro"),
    ("coder, model 200k", None),
)
WAIT_S = 90.0  # a hang guard; the ticks take a few seconds
DEMO_SYSTEM = "You are a careful coding agent working in a Python repository."


@dataclass
class DemoRow:
    """One conversation's story: its tokens before and after, what ran, and what its agent remembers."""

    label: str
    conversation_id: str
    usable: int
    tokens_before: int
    tokens_after: int = 0
    percent_after: float = 0.0
    events: list[str] = field(default_factory=list)
    summary_tokens: int = 0
    memories_created: int = 0
    memories_superseded: int = 0
    compaction_id: str | None = None

    @property
    def percent_before(self) -> float:
        """Tokens before as a percentage of the usable window."""
        return round(100.0 * self.tokens_before / self.usable, 1) if self.usable else 0.0

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return {**asdict(self), "percent_before": self.percent_before}


@dataclass
class DemoReport:
    """Every row, plus where the worker's log went."""

    rows: list[DemoRow]
    log: Path
    recall: dict[str, Any] = field(default_factory=dict)  # the agent's recall tool, asked about the archive

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return {
            "conversations": [r.to_dict() for r in self.rows],
            "log": str(self.log),
            "recall": self.recall,
        }


def _split_assistant(conv: SyntheticConversation) -> tuple[list[dict[str, Any]], list[dict[str, Any]], str]:
    """Day 1 ends just before the user reports the move (the contradiction)."""
    _, moved = conv.contradicted[0]
    cut = next(
        i for i, m in enumerate(conv.messages) if isinstance(m["content"], str) and moved in m["content"]
    )
    return conv.messages[:cut], conv.messages[cut:], moved


def _big_tool_turn(n: int, lines: int) -> list[dict[str, Any]]:
    """One more turn with a large tool output (a log dump), to push a conversation up."""
    tid = f"toolu_demo_{n}"
    output = "\n".join(
        f"2026-11-2{n % 10} 10:{i % 60:02d}:00 INFO payments.worker job {i} ok" for i in range(lines)
    )
    return [
        {"role": "user", "content": f"Check the payment worker logs (pass {n})."},
        {
            "role": "assistant",
            "content": [
                {"type": "tool_use", "id": tid, "name": "bash", "input": {"command": "tail -n 2000 pay.log"}}
            ],
        },
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": tid, "content": output}]},
        {"role": "assistant", "content": f"The logs of pass {n} show no errors."},
    ]


def _push_to(mem: Memory, cid: str, threshold: str, start: int) -> int:
    """Append log-dump turns until over ``threshold`` (soft or hard); returns the next turn number."""
    n = start
    while True:
        stats = mem.stats(cid)
        limit = stats.soft if threshold == "soft" else stats.hard
        if stats.tokens > limit:
            return n
        missing = limit - stats.tokens
        mem.append_many(cid, _big_tool_turn(n, max(20, min(400, missing // 15 + 10))))
        n += 1


def _wait_ticks(mem: Memory, ids: list[str], key: str, stage: str, progress: Progress) -> None:
    deadline = time.monotonic() + WAIT_S
    while True:
        done = sum(any(t.tick_key == key and t.status == "done" for t in mem.sleep.ticks(c)) for c in ids)
        progress(stage, done, len(ids))
        if done == len(ids):
            return
        if time.monotonic() > deadline:
            raise TimeoutError(f"{stage}: {len(ids) - done} tick(s) not done after {WAIT_S:.0f} s")
        time.sleep(0.1)


def _night(mem: Memory, when: datetime, ids: list[str], stage: str, progress: Progress) -> str:
    """Run tonight's sweep (as beat would at the sweep time) and wait for the worker to tick ``ids``."""
    key = night_for(mem.settings, when).key
    mem.sleep.sweep_nightly(now=when)
    _wait_ticks(mem, ids, key, stage, progress)
    return key


def _record(row: DemoRow, result: TickResult | None, prefix: str) -> None:
    if result is None:
        return
    compaction, consolidation = result.compaction, result.consolidation
    row.memories_created += consolidation.created
    row.memories_superseded += consolidation.superseded
    if compaction.status == "applied":
        why = " (entry count)" if result.trigger == "entry count" else ""
        row.events.append(f"{prefix}{why}: {'+'.join(compaction.steps or ()) or 'compacted'}")
        row.summary_tokens += compaction.summary_tokens or 0
        row.compaction_id = compaction.compaction_id or row.compaction_id
    elif consolidation.created or consolidation.superseded:
        row.events.append(f"{prefix}: memories")


def run_demo(
    mem: Memory,
    start: StartProcesses,
    *,
    seed: int = 0,
    progress: Progress | None = None,
    log: Path | None = None,
) -> DemoReport:
    """Generate the agents, run two nights and a day of guard decisions on real processes, report.

    ``start`` runs the worker and the scheduler (the CLI passes its child processes).
    """
    progress = progress or (lambda stage, done, total: None)
    log = log or Path("sleepcompact-demo.log")
    assistant = personal_assistant(seed=seed)
    day1, day2, moved = _split_assistant(assistant)
    rows = _day_one(mem, coding_agent(seed=seed), assistant, day1)
    pa = rows[-1].conversation_id
    tonight = night_for(mem.settings, utcnow()).start + timedelta(days=1)
    settings = mem.settings.with_overrides(idle_sweep_seconds=1, worker_concurrency=2)
    with start(settings, log) as processes:
        key1 = _night(
            mem,
            tonight + timedelta(minutes=1),
            [r.conversation_id for r in rows],
            "night 1: sleep ticks",
            progress,
        )
        for row in rows:
            _record(row, _tick(mem, row.conversation_id, key1), "night 1")
        # Day 2. The user moves; the assistant notes it.
        mem.append_many(pa, day2)
        mem.journal.add(pa, moved, tags=["fact"])
        n = _over_soft(mem, rows[1], processes, progress)
        _over_hard(mem, rows[0], n)
        key2 = _night(
            mem, tonight + timedelta(days=1, minutes=1), [pa, rows[0].conversation_id], "night 2", progress
        )
        for row in (rows[-1], rows[0]):
            _record(row, _tick(mem, row.conversation_id, key2), "night 2")
    for row in rows:
        s = mem.stats(row.conversation_id)
        row.tokens_after, row.percent_after = s.tokens, s.percent_of_usable
        row.events = row.events or ["under soft: nothing to do"]
    return DemoReport(rows, log, _ask_archive(mem, rows[0].conversation_id))


DEMO_QUESTION = "Which assertion failed when the tests first ran?"


def _ask_archive(mem: Memory, cid: str) -> dict[str, Any]:
    """The free coder's model, its early turns compacted away, asks its recall tool what it no longer
    sees: the call, as the model sends it, and the best results (each with the seq of its original)."""
    call = {
        "type": "tool_use",
        "id": "toolu_demo",
        "name": "search_history",
        "input": {"query": DEMO_QUESTION, "limit": 3},
    }
    answer = str(mem.handle_tool_call(cid, call)["content"])
    results = [line for line in answer.splitlines() if line[:3] in ("1. ", "2. ", "3. ")]
    return {"conversation_id": cid, "question": DEMO_QUESTION, "call": call, "results": results}


def _day_one(
    mem: Memory, coder: SyntheticConversation, assistant: SyntheticConversation, day1: list[dict[str, Any]]
) -> list[DemoRow]:
    """The coders under their three budgets and the assistant's first day, with the facts it noted."""
    tenant = f"demo-{utcnow():%Y%m%d%H%M%S}"
    rows: list[DemoRow] = []
    for label, plan in CODING_BUDGETS:
        cid = mem.create_conversation(None, tenant_id=tenant, agent_id=f"coder-{plan or 'model'}", plan=plan)
        mem.append_many(cid, [{"role": "system", "content": coder.system}, *coder.messages])
        s = mem.stats(cid)
        rows.append(DemoRow(label, cid, s.usable, s.tokens))
    pa = mem.create_conversation(None, tenant_id=tenant, agent_id="assistant", plan="free")
    mem.append_many(pa, [{"role": "system", "content": assistant.system}, *day1])
    said = " ".join(m["content"] for m in day1 if isinstance(m["content"], str))
    for fact in assistant.facts:
        if fact in said:
            mem.journal.add(pa, fact, tags=["fact"])
    s = mem.stats(pa)
    rows.append(DemoRow("assistant, free 16k", pa, s.usable, s.tokens))
    return rows


def _over_soft(mem: Memory, pro: DemoRow, processes: Processes, progress: Progress) -> int:
    """The pro coder grows over soft: the guard asks for a tick (emergency queue) and answers at once;
    the worker runs that tick. Returns the next log-dump turn number."""
    n = _push_to(mem, pro.conversation_id, "soft", 1)
    ctx = mem.prepare_context(pro.conversation_id, system=DEMO_SYSTEM)
    pro.events.append(f"day 2: over soft, guard: {ctx.action}")
    stage = "day 2: the worker answers the guard's sleep request"
    deadline = time.monotonic() + WAIT_S
    while True:
        requested = [t for t in mem.sleep.ticks(pro.conversation_id) if t.tick_key.startswith("request-")]
        if requested and requested[-1].status == "done":
            break
        progress(stage, 0, 1)
        if time.monotonic() > deadline or not processes.running():
            raise TimeoutError("the worker did not run the tick the guard asked for")
        time.sleep(0.1)
    progress(stage, 1, 1)
    _record(pro, TickResult.from_dict(requested[-1].result), "tick")
    pro.events[-2:] = [" -> ".join(pro.events[-2:])]
    return n


def _over_hard(mem: Memory, free: DemoRow, n: int) -> None:
    """The free coder blows through its hard threshold mid-session: the guard compacts before the call."""
    _push_to(mem, free.conversation_id, "hard", n)
    ctx = mem.prepare_context(free.conversation_id, system=DEMO_SYSTEM)
    done = next((h for h in mem.compactions.history(free.conversation_id) if h.id == ctx.compaction_id), None)
    if done is not None:
        steps = "+".join(dict.fromkeys(step["step"] for step in done.steps))
        free.events.append(f"day 2: over hard, guard: {ctx.action} ({steps})")
        free.summary_tokens += mem.admin.counter.count(done.summary) if done.summary else 0
        free.compaction_id = ctx.compaction_id


def _tick(mem: Memory, cid: str, key: str) -> TickResult | None:
    found = next((t for t in mem.sleep.ticks(cid) if t.tick_key == key), None)
    return TickResult.from_dict(found.result) if found is not None else None
