"""Replay conversations message by message under each policy and measure what the model kept.

Forward-reference recall: for every identifier (paths, names, ids, numbers, quoted strings, as
``domain.identifiers`` finds them) that an assistant message uses and an earlier message introduced,
was it in the context the model saw just before that assistant message? The model can only reuse
what it was shown, so this is what a context policy decides. A call over the usable budget is refused
by the API, so its references count as missed. Reported overall and by how many messages back the
identifier was introduced.

Every call is also priced (``evaluation.cost``): its request against the previous one, for the
provider's prompt cache (``evaluation.cache``), with the time between them from the messages'
``sent_at`` when they carry one.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from sleepcompact.domain.budget import Budget, Thresholds, make_budget, output_reserve_for
from sleepcompact.domain.identifiers import extract_identifiers
from sleepcompact.evaluation.cache import CallLog, CallRecord, Request
from sleepcompact.evaluation.cost import PolicyCost, Pricing, SummarizerTokens, price
from sleepcompact.evaluation.intervals import Difference, recall_difference
from sleepcompact.evaluation.policies import (
    PLACES,
    POLICIES,
    Costs,
    MaskThenSummarizeAll,
    MeteredSummarizer,
    Policy,
    Sleepcompact,
    SummarizeOnly,
    Truncate,
    all_text,
)
from sleepcompact.ports import Summarizer

# Token counts are compared as counted (cl100k): a model whose safety factor is 1.0, so sleepcompact's
# thresholds and the baselines' are in the same units.
EVAL_MODEL = "gpt-4o"
BASELINES: dict[str, Callable[[Budget, Callable[[str], int]], Policy]] = {
    "truncate": Truncate,
    "summarize-only": SummarizeOnly,
    "mask-then-summarize-all": MaskThenSummarizeAll,
}
BUCKETS: tuple[tuple[str, int, int], ...] = (
    ("1-5", 1, 5),
    ("6-20", 6, 20),
    ("21-100", 21, 100),
    (">100", 101, 10**9),
)


@dataclass
class PolicyResult:
    """One policy's figures over every replayed conversation."""

    policy: str
    conversations: int = 0
    calls: int = 0
    peak_tokens: int = 0
    overflows: int = 0
    references: int = 0
    recalled: int = 0
    by_distance: dict[str, list[int]] = field(default_factory=lambda: {b[0]: [0, 0] for b in BUCKETS})
    costs: Costs = field(default_factory=Costs)
    # Where each reference was: a place of the context (``PLACES``), "only via search" (not in the
    # context, but the recall tool finds it), or "missed".
    by_place: dict[str, int] = field(default_factory=dict)
    # Every call as the prompt cache saw it, for ``cost`` (kept out of ``to_dict``: one per call).
    call_log: list[CallRecord] = field(default_factory=list, repr=False)
    # (references in context, references) of each conversation, in replay order: for ``versus``.
    per_conversation: list[tuple[int, int]] = field(default_factory=list, repr=False)

    @property
    def recall(self) -> float:
        """Share of forward references that were in context."""
        return self.recalled / self.references if self.references else 1.0

    def merge_costs(self, costs: Costs) -> None:
        """Add one conversation's costs."""
        for k, v in costs.compactions.items():
            self.costs.compactions[k] = self.costs.compactions.get(k, 0) + v
        for k, v in costs.saved_by_step.items():
            self.costs.saved_by_step[k] = self.costs.saved_by_step.get(k, 0) + v
        self.costs.summarizer_in += costs.summarizer_in
        self.costs.summarizer_out += costs.summarizer_out
        self.costs.deferred_in += costs.deferred_in
        self.costs.deferred_out += costs.deferred_out

    def cost(self, pricing: Pricing | None = None) -> PolicyCost:
        """The run priced: the agent's input with the prompt cache, and the summarizer (sleep ticks'
        share at the batch price)."""
        c = self.costs
        tokens = SummarizerTokens(
            urgent_in=c.summarizer_in - c.deferred_in,
            urgent_out=c.summarizer_out - c.deferred_out,
            deferred_in=c.deferred_in,
            deferred_out=c.deferred_out,
        )
        return price(self.call_log, tokens, pricing or Pricing())

    def versus(self, other: PolicyResult) -> Difference:
        """This policy's recall minus ``other``'s over the same conversations, with a 95% interval."""
        return recall_difference(self.per_conversation, other.per_conversation)

    def to_dict(self, pricing: Pricing | None = None, baseline: PolicyResult | None = None) -> dict[str, Any]:
        """JSON-ready; ``cost`` priced with ``pricing`` (default: ``Pricing()``); with a ``baseline``,
        ``recall_vs_<its policy>``: the recall difference and its interval (``intervals``)."""
        compared = (
            {} if baseline is None else {f"recall_vs_{baseline.policy}": self.versus(baseline).to_dict()}
        )
        return {
            "policy": self.policy,
            "conversations": self.conversations,
            "calls": self.calls,
            "peak_tokens": self.peak_tokens,
            "overflows": self.overflows,
            "references": self.references,
            "recall": round(self.recall, 4),
            "recall_by_distance": {
                k: round(hit / total, 4) if total else None for k, (hit, total) in self.by_distance.items()
            },
            "references_by_distance": {k: total for k, (_, total) in self.by_distance.items()},
            "references_by_place": {
                p: self.by_place.get(p, 0) for p in (*PLACES, "only via search", "missed")
            },
            "compactions": dict(self.costs.compactions),
            "tokens_saved_by_step": dict(self.costs.saved_by_step),
            "summarizer_input_tokens": self.costs.summarizer_in,
            "summarizer_output_tokens": self.costs.summarizer_out,
            "summarizer_deferred_input_tokens": self.costs.deferred_in,
            "summarizer_deferred_output_tokens": self.costs.deferred_out,
            "cost": self.cost(pricing).to_dict(),
            **compared,
        }


def _bucket(distance: int) -> str:
    return next(name for name, lo, hi in BUCKETS if lo <= distance <= hi)


def replay(
    messages: Sequence[Mapping[str, Any]],
    policy: Policy,
    result: PolicyResult,
    *,
    tick_every: int,
    usable: int,
) -> None:
    """Feed ``messages`` to ``policy`` as a live agent would, measuring every assistant call."""
    first_seen: dict[str, int] = {}
    log, applied, last_time = CallLog(), _applied(policy), None
    for j, message in enumerate(messages):
        text = all_text(message.get("content"))
        found = set(extract_identifiers(text)) if text else set()
        if message.get("role") == "assistant" and j > 0:
            seen = policy.before_call()
            result.calls += 1
            result.peak_tokens = max(result.peak_tokens, seen.tokens)
            failed = seen.overflow or seen.tokens > usable
            result.overflows += int(failed)
            now, was = _sent_at(message), applied
            applied = _applied(policy)  # read after the call's own compaction, which changes its request
            gap = _seconds_between(last_time, now)
            request = seen.request or Request((hash(seen.text),), (seen.tokens,))
            log.call(request, tokens=seen.tokens, gap=gap, compacted=applied != was, refused=failed)
            last_time = now
            for ident in sorted(found):
                if ident not in first_seen:
                    continue
                hit = not failed and ident in seen.text  # an overflowing call is refused: nothing seen
                place = (seen.place_of(ident) or "summary text") if hit else _fallback(policy, ident)
                result.by_place[place] = result.by_place.get(place, 0) + 1
                bucket = result.by_distance[_bucket(j - first_seen[ident])]
                bucket[0] += int(hit)
                bucket[1] += 1
                result.references += 1
                result.recalled += int(hit)
        policy.append({k: v for k, v in message.items() if k != "sent_at"})
        for ident in found:
            first_seen.setdefault(ident, j)
        if tick_every and (j + 1) % tick_every == 0:
            policy.tick()
    result.call_log.extend(log.calls)


def _applied(policy: Policy) -> int:
    """Compactions the policy has applied so far (a policy that does not say: none)."""
    applied = getattr(policy, "applied", None)
    return int(applied()) if callable(applied) else 0


def _seconds_between(earlier: datetime | None, later: datetime | None) -> float | None:
    """Seconds from one message's time to the next (None when either is unknown or they cannot be
    compared: one with a time zone, one without)."""
    if earlier is None or later is None or (earlier.tzinfo is None) != (later.tzinfo is None):
        return None
    return max(0.0, (later - earlier).total_seconds())


def _sent_at(message: Mapping[str, Any]) -> datetime | None:
    """The message's time, when the log gives one (``sent_at``: ISO 8601 text or a datetime)."""
    sent = message.get("sent_at")
    if isinstance(sent, datetime):
        return sent
    try:
        return datetime.fromisoformat(sent) if isinstance(sent, str) else None
    except ValueError:
        return None


def _fallback(policy: Policy, identifier: str) -> str:
    """Where a reference the context lacked could still come from: the recall tool, for a policy that
    has one (sleepcompact), else nowhere."""
    find = getattr(policy, "find", None)
    return "only via search" if find is not None and find(identifier) else "missed"


def evaluate(
    conversations: Sequence[Sequence[Mapping[str, Any]]],
    *,
    window: int,
    policies: Sequence[str] = POLICIES,
    tick_every: int = 40,
    memory_factory: Callable[[str, Summarizer], Any],
    count: Callable[[str], int],
    progress: Callable[[int, int], None] | None = None,
) -> list[PolicyResult]:
    """Replay every conversation under every policy at one window; ``memory_factory(url, summarizer)``
    builds the ``Memory`` the sleepcompact policy runs on (that summarizer, no queue)."""
    budget = make_budget(
        context_window=window,
        output_reserve=output_reserve_for(EVAL_MODEL, window),
        thresholds=Thresholds(),
        safety_factor=1.0,
    )
    results = {name: PolicyResult(name) for name in policies}
    total, done = len(conversations) * len(policies), 0
    with tempfile.TemporaryDirectory(prefix="sleepcompact-eval-") as scratch:
        for n, messages in enumerate(conversations):
            for name in policies:
                result = results[name]
                result.conversations += 1
                before = (result.recalled, result.references)
                policy: Policy
                if name == "sleepcompact":
                    metered = MeteredSummarizer(count)
                    mem = memory_factory(f"sqlite:///{Path(scratch) / f'c{n}.db'}", metered)
                    cid = mem.create_conversation(EVAL_MODEL, context_window=window)
                    policy = Sleepcompact(mem, cid, metered)
                    replay(messages, policy, result, tick_every=tick_every, usable=budget.usable)
                    policy.finish()
                    mem.close()
                else:
                    policy = BASELINES[name](budget, count)
                    replay(messages, policy, result, tick_every=tick_every, usable=budget.usable)
                result.merge_costs(policy.costs)
                result.per_conversation.append((result.recalled - before[0], result.references - before[1]))
                done += 1
                if progress is not None:
                    progress(done, total)
    return [results[name] for name in policies]
