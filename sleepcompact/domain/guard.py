"""The guard's decision: what the request path does at these token figures (pure)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from sleepcompact.domain.budget import Budget

Decision = Literal["none", "request_sleep", "compact_now", "overflow"]
"""``none`` under soft; ``request_sleep`` between soft and hard; ``compact_now`` over hard;
``overflow`` over the usable budget with auto-compaction off (the call cannot be made as is)."""

Action = Literal["none", "sleep_requested", "emergency_compacted", "fallback_compacted"]
"""What ``prepare_context`` did: nothing, asked for a sleep tick, or compacted (with the LLM, or with the
offline summary because the LLM failed or ran out of time)."""


def decide(tokens: int, budget: Budget, *, auto_compact: bool = True) -> Decision:
    """The decision for ``tokens`` (model tokens, everything the call carries) against ``budget``.

    With auto-compaction off nothing is ever compacted or requested: the call goes out as is when it
    fits, and is an overflow when it does not.
    """
    if not auto_compact:
        return "overflow" if tokens > budget.usable else "none"
    if tokens > budget.hard:
        return "compact_now"
    if tokens > budget.soft:
        return "request_sleep"
    return "none"


@dataclass(frozen=True)
class Check:
    """The guard's decision alone (``Memory.check``): figures from one indexed read, no rendering."""

    conversation_id: str
    tokens: int  # the conversation's live tokens, in model tokens (system prompt and tools not included)
    usable: int
    soft: int
    hard: int
    target: int
    percent_of_usable: float
    decision: Decision
    auto_compact: bool
    sleep_requested: bool
    compaction_epoch: int
