"""The summarize stage of a compaction: ask the summarizer under an optional deadline, check what it
returned, and fall back to the offline summary when the caller allows it.

Only this stage talks to an LLM, and it does so outside any transaction. What it returns is a
``SummaryResult`` (and, after a fallback, why); what it raises tells ``compact`` how the compaction
ends: ``DeferToBatch`` (the request goes into a Message Batch) or ``SummarizerFailed`` (no fallback
allowed: the compaction is recorded as failed and the history stays untouched).
"""

from __future__ import annotations

import contextvars
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FuturesTimeout
from dataclasses import replace
from typing import Any

from sleepcompact.domain.errors import InvalidSummary
from sleepcompact.domain.ledger import with_ledger
from sleepcompact.domain.prompt import SummaryInput, SummaryPrompt, prepared_prompt
from sleepcompact.domain.summary import offline_summary
from sleepcompact.logs import get_logger
from sleepcompact.ports import Summarizer, SummaryResult

log = get_logger(__name__)

REFUSALS = ("i can't", "i cannot", "i'm sorry", "i am sorry", "i won't", "sorry,")


class DeferToBatch(Exception):
    """Raised by a batch-collecting summarizer: record the request and apply the result later."""

    def __init__(self, params: dict[str, Any], seqs: list[int]) -> None:
        super().__init__("deferred to a message batch")
        self.params = params
        self.seqs = seqs


class SummarizerFailed(Exception):
    """The summarizer failed and no fallback was allowed (``cause`` says how)."""

    def __init__(self, reason: str, cause: BaseException) -> None:
        super().__init__(reason)
        self.reason = reason
        self.cause = cause


def validate_summary(text: str, replaced_tokens: int, count: Callable[[str], int]) -> None:
    """Refuse empty, refusing or oversized summaries (DESIGN section 4 step 6)."""
    body = text.strip()
    if not body:
        raise InvalidSummary("the summary is empty")
    if body[:200].lower().startswith(REFUSALS):
        raise InvalidSummary("the summarizer refused")
    if count(body) >= replaced_tokens:
        raise InvalidSummary(f"the summary ({count(body)} tokens) is not shorter than what it replaces")


def summarize(
    summarizer: Summarizer,
    inp: SummaryInput,
    replaced: int,
    count: Callable[[str], int],
    *,
    instructions: str | None,
    fallback: bool,
    deadline_s: float | None = None,
) -> tuple[SummaryResult, str | None]:
    """The summarizer's checked result; on failure the offline summary (``fallback``) and why.

    The action ledger is built by rules, not asked of the model: the model gets it as data, writes the
    rest within what the ledger leaves of the budget, and the ledger is set into its summary."""
    narrative, prompt, ledger = prepared_prompt(inp, count, instructions)
    try:
        result = _call_with_deadline(summarizer, narrative, prompt, deadline_s)
        validate_summary(result.text, replaced, count)  # the model's own text: empty, refused, too long
        result = replace(result, text=with_ledger(result.text, ledger))
        validate_summary(result.text, replaced, count)  # and with the ledger set in
        return result, None
    except DeferToBatch:
        raise
    except Exception as exc:
        reason = f"{type(exc).__name__}: {exc}"
        if not fallback:
            raise SummarizerFailed(reason, exc) from exc
        # The type only: an exception's message may quote the prompt (the record keeps the full reason).
        log.warning("summarizer_fallback", provider=summarizer.provider, error=type(exc).__name__)
        return SummaryResult(text=offline_summary(inp, count), provider="offline", model="offline"), reason


def _call_with_deadline(
    summarizer: Summarizer, inp: SummaryInput, prompt: SummaryPrompt, deadline_s: float | None
) -> SummaryResult:
    """Call the summarizer; with a deadline, in a thread we stop waiting for when it passes.

    The summarizer is told the deadline too, so its own retries start no attempt past it. An abandoned
    call finishes (or times out) on its own; its result is dropped, never applied.
    """
    if deadline_s is None:
        return summarizer.summarize(inp, prompt)
    deadline = time.monotonic() + max(0.0, deadline_s)
    pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="summarize")
    # In the caller's context, so what the summarizer logs keeps the bound ids (task, conversation).
    call = contextvars.copy_context().run
    future = pool.submit(call, lambda: summarizer.summarize(inp, prompt, deadline=deadline))
    pool.shutdown(wait=False)
    try:
        return future.result(timeout=max(0.0, deadline - time.monotonic()))
    except FuturesTimeout as exc:
        raise TimeoutError(f"no summary within the {deadline_s:g} s deadline") from exc
