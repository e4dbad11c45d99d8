"""The in-process retry of an LLM call: bounded exponential backoff with full jitter, honouring
``retry-after``, within an optional deadline (tenacity does the looping).

This is one of the two places a transient LLM error is retried, and never on top of the other: in
the caller's process (the guard, ``compact`` from Python or the CLI) the adapter retries here; in the
worker the adapter makes one attempt per task run (``summarizer_attempts=1``) and Celery's autoretry
runs the task again. docs/operations.md says exactly what each path does.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

import tenacity

from sleepcompact.domain.errors import InvalidScores, InvalidSummary, LLMError, TransientLLMError
from sleepcompact.logs import get_logger

log = get_logger(__name__)

T = TypeVar("T")


@dataclass(frozen=True)
class RetryPolicy:
    """At most ``attempts`` calls; before attempt n+1 wait a random time in [0, min(cap, base * 2**n)]
    (full jitter), or what the server's ``retry-after`` asks for, capped the same way."""

    attempts: int = 4
    base_s: float = 0.5
    cap_s: float = 8.0


class _Wait(tenacity.wait.wait_base):
    """Full jitter, unless the transient error carries the server's ``retry-after``."""

    def __init__(self, policy: RetryPolicy, rng: random.Random) -> None:
        self.policy, self.rng = policy, rng

    def __call__(self, retry_state: tenacity.RetryCallState) -> float:
        outcome = retry_state.outcome
        error = outcome.exception() if outcome is not None else None
        retry_after = getattr(error, "retry_after", None)
        if retry_after is not None:
            return float(min(retry_after, self.policy.cap_s))
        ceiling = min(self.policy.cap_s, self.policy.base_s * 2 ** (retry_state.attempt_number - 1))
        return self.rng.uniform(0, ceiling)


class _PastDeadline(tenacity.stop.stop_base):
    """Stop when the wait before the next attempt would end past the monotonic deadline."""

    def __init__(self, deadline: float | None) -> None:
        self.deadline = deadline

    def __call__(self, retry_state: tenacity.RetryCallState) -> bool:
        return self.deadline is not None and time.monotonic() + retry_state.upcoming_sleep >= self.deadline


def with_retries(
    call: Callable[[], T],
    policy: RetryPolicy,
    classify: Callable[[BaseException], LLMError],
    *,
    deadline: float | None = None,
    sleep: Callable[[float], None] = time.sleep,
    rng: random.Random | None = None,
) -> T:
    """``call()``, retrying transient errors within ``policy`` and the optional monotonic ``deadline``
    (no attempt starts whose wait would end past it).

    Every failure leaves as the ``LLMError`` that ``classify`` maps it to; invalid replies
    (``InvalidSummary``, ``InvalidScores``) pass through unchanged and are never retried: the same
    prompt would most likely get the same answer.
    """

    def attempt() -> T:
        try:
            return call()
        except (InvalidSummary, InvalidScores):
            raise
        except Exception as exc:
            raise classify(exc) from exc

    def before_sleep(state: tenacity.RetryCallState) -> None:
        error = state.outcome.exception() if state.outcome is not None else None
        log.info(
            "llm_retry",
            attempt=state.attempt_number,
            wait_s=round(state.upcoming_sleep, 2),
            reason=str(error)[:200],
        )

    retrying = tenacity.Retrying(
        stop=tenacity.stop_any(tenacity.stop_after_attempt(max(1, policy.attempts)), _PastDeadline(deadline)),
        wait=_Wait(policy, rng or random.Random()),
        retry=tenacity.retry_if_exception_type(TransientLLMError),
        sleep=sleep,
        before_sleep=before_sleep,
        reraise=True,
    )
    return retrying(attempt)
