"""Conversational QA under each context policy: is the answer in what the model gets?

Each conversation is replayed as a live agent would (the guard, or the baseline's rule, before every
assistant message; sleep ticks every K messages). Then each question is asked on its own copy of the
state: it becomes the newest user message, the context for the next call is built, and the answer
counts as recalled when its every group is in that context (``answer_present``). For sleepcompact
the recall tool is asked too (``search_history`` with the question, its first page), which the
baselines do not have. Questions never see each other: every one starts from the same replayed state.
"""

from __future__ import annotations

import copy
import shutil
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from sleepcompact.domain.budget import Thresholds, make_budget, output_reserve_for
from sleepcompact.evaluation.policies import MeteredSummarizer, Policy, Sleepcompact, context_seen
from sleepcompact.evaluation.qa.dataset import QAConversation, QAQuestion
from sleepcompact.evaluation.qa.memorybank import answer_present
from sleepcompact.evaluation.replay import BASELINES, EVAL_MODEL
from sleepcompact.ports import Summarizer

QA_POLICIES = ("truncate", "summarize-only", "sleepcompact")


@dataclass
class QAResult:
    """One policy's answers: in context, and (sleepcompact) in the recall tool's first page, by split."""

    policy: str
    asked: dict[str, int] = field(default_factory=dict)
    in_context: dict[str, int] = field(default_factory=dict)
    in_tool: dict[str, int] = field(default_factory=dict)
    overflows: int = 0
    context_tokens: int = 0

    def add(self, split: str, context_hit: bool, tool_hit: bool | None, tokens: int) -> None:
        """Record one question's outcome."""
        self.asked[split] = self.asked.get(split, 0) + 1
        self.in_context[split] = self.in_context.get(split, 0) + int(context_hit)
        if tool_hit is not None:
            self.in_tool[split] = self.in_tool.get(split, 0) + int(tool_hit)
        self.context_tokens += tokens

    def rate(self, split: str, tool: bool = False) -> float | None:
        """Share of the split's questions answered in context (or in the tool); None when not asked."""
        hits = (self.in_tool if tool else self.in_context).get(split)
        asked = self.asked.get(split, 0)
        return None if not asked or (tool and hits is None) else (hits or 0) / asked

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        splits = sorted(self.asked)
        return {
            "policy": self.policy,
            "questions": dict(self.asked),
            "answer_in_context": {s: _round(self.rate(s)) for s in splits},
            "answer_in_recall_tool": {s: _round(self.rate(s, tool=True)) for s in splits},
            "overflows": self.overflows,
            "mean_context_tokens": round(self.context_tokens / max(1, sum(self.asked.values()))),
        }


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


MemoryFactory = Callable[[str, Summarizer], Any]


def evaluate_qa(
    conversations: Sequence[QAConversation],
    *,
    window: int,
    policies: Sequence[str] = QA_POLICIES,
    tick_every: int = 20,
    memory_factory: MemoryFactory,
    count: Callable[[str], int],
    progress: Callable[[int, int], None] | None = None,
) -> list[QAResult]:
    """Replay every conversation under every policy at one window, then ask its questions."""
    budget = make_budget(
        context_window=window,
        output_reserve=output_reserve_for(EVAL_MODEL, window),
        thresholds=Thresholds(),
        safety_factor=1.0,
    )
    results = {name: QAResult(name) for name in policies}
    total, done = len(conversations) * len(policies), 0
    with tempfile.TemporaryDirectory(prefix="sleepcompact-qa-") as scratch:
        for n, conv in enumerate(conversations):
            for name in policies:
                if name == "sleepcompact":
                    _ask_sleepcompact(
                        conv,
                        Path(scratch) / f"c{n}",
                        window,
                        tick_every,
                        memory_factory,
                        count,
                        results[name],
                    )
                else:
                    _ask_baseline(
                        conv, BASELINES[name](budget, count), tick_every, budget.usable, results[name]
                    )
                done += 1
                if progress is not None:
                    progress(done, total)
    return [results[name] for name in policies]


def _replay(policy: Policy | Sleepcompact, messages: Sequence[dict[str, Any]], tick_every: int) -> None:
    for j, message in enumerate(messages):
        if message.get("role") == "assistant" and j > 0:
            policy.before_call()
        policy.append(message)
        if tick_every and (j + 1) % tick_every == 0:
            policy.tick()


def _ask_baseline(
    conv: QAConversation, policy: Policy, tick_every: int, usable: int, result: QAResult
) -> None:
    _replay(policy, [_plain(m) for m in conv.messages], tick_every)
    for q in conv.questions:
        asked = copy.deepcopy(policy)
        asked.append({"role": "user", "content": q.question})
        seen = asked.before_call()
        failed = seen.overflow or seen.tokens > usable
        result.overflows += int(failed)
        result.add(q.split, not failed and answer_present(seen.text, q.answers), None, seen.tokens)


def _ask_sleepcompact(
    conv: QAConversation,
    stem: Path,
    window: int,
    tick_every: int,
    memory_factory: MemoryFactory,
    count: Callable[[str], int],
    result: QAResult,
) -> None:
    metered = MeteredSummarizer(count)
    replayed = stem.with_suffix(".db")
    mem = memory_factory(f"sqlite:///{replayed}", metered)
    cid = mem.create_conversation(EVAL_MODEL, context_window=window)
    _replay(_Dated(mem, cid, metered), conv.messages, tick_every)
    mem.close()
    for i, q in enumerate(conv.questions):
        copy_path = stem.with_name(f"{stem.name}-q{i}.db")
        shutil.copyfile(replayed, copy_path)
        asked = memory_factory(f"sqlite:///{copy_path}", MeteredSummarizer(count))
        try:
            _ask_one(asked, cid, q, result)
        finally:
            asked.close()
            copy_path.unlink(missing_ok=True)


def _ask_one(mem: Any, cid: str, q: QAQuestion, result: QAResult) -> None:
    mem.append(cid, {"role": "user", "content": q.question})
    seen = context_seen(mem, cid)
    result.overflows += int(seen.overflow)
    call = {"type": "tool_use", "id": "qa", "name": "search_history", "input": {"query": q.question}}
    tool_text = str(mem.handle_tool_call(cid, call).get("content", ""))
    result.add(
        q.split,
        not seen.overflow and answer_present(seen.text, q.answers),
        answer_present(tool_text, q.answers),
        seen.tokens,
    )


class _Dated(Sleepcompact):
    """The sleepcompact policy appending each message with its own date when the file gives one."""

    def append(self, message: Any) -> None:
        sent = message.get("sent_at")
        when = datetime.fromisoformat(sent) if isinstance(sent, str) else None
        self.memory.append(self.cid, _plain(message), sent_at=when)


def _plain(message: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in message.items() if k != "sent_at"}
