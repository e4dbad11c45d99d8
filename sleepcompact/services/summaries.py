"""The summarize stage of a compaction: ask the summarizer under an optional deadline, check what it
returned, and fall back to the offline summary when the caller allows it.

Only this stage talks to an LLM, and it does so outside any transaction. What it returns is a
``SummaryResult`` (and, after a fallback, why); what it raises tells ``compact`` how the compaction
ends: ``DeferToBatch`` (the request goes into a Message Batch) or ``SummarizerFailed`` (no fallback
allowed: the compaction is recorded as failed and the history stays untouched).
"""

from __future__ import annotations

import contextvars
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FuturesTimeout
from dataclasses import replace
from typing import Any

from sleepcompact.domain.errors import InvalidSummary
from sleepcompact.domain.ledger import with_ledger
from sleepcompact.domain.prompt import SummaryInput, SummaryPrompt, prepared_prompt
from sleepcompact.domain.quarantine import Screened, flagged_reason, screen_summary
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
    deadline: float | None = None,
    meanwhile: Callable[[], None] | None = None,
) -> tuple[SummaryResult, str | None]:
    """The summarizer's checked result; on failure the offline summary (``fallback``) and why.
    ``meanwhile`` (with a deadline) runs while the model is asked: the caller's own work for the write.

    The action ledger is built by rules, not asked of the model: the model gets it as data, writes the
    rest within what the ledger leaves of the budget, and the ledger is set into its summary."""
    narrative, prompt, ledger = prepared_prompt(inp, count, instructions)
    spare: list[SummaryResult] = []

    def during() -> None:
        # Under a deadline with a fallback allowed (the guard), the offline summary is written while the
        # model is asked, so a model that misses the deadline leaves only the write to do after it.
        if fallback:
            spare.append(_offline(inp, count))
        if meanwhile is not None:
            meanwhile()

    try:
        result = _call_with_deadline(summarizer, narrative, prompt, deadline, during)
        validate_summary(result.text, replaced, count)  # the model's own text: empty, refused, too long
        screened = screen_summary(result.text)
        if screened.flagged:
            return _quarantined(summarizer, inp, count, result, screened, spare)
        result = replace(result, text=with_ledger(screened.text, ledger), quarantined=screened.quarantined)
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
        return (spare[0] if spare else _offline(inp, count)), reason


def _offline(inp: SummaryInput, count: Callable[[str], int]) -> SummaryResult:
    return SummaryResult(text=offline_summary(inp, count), provider="offline", model="offline")


def _quarantined(
    summarizer: Summarizer,
    inp: SummaryInput,
    count: Callable[[str], int],
    result: SummaryResult,
    screened: Screened,
    spare: list[SummaryResult],
) -> tuple[SummaryResult, str]:
    """A flagged summary never goes live: the offline summary of the same span does, whatever the
    caller's fallback setting (it is not a failure to retry), and the record keeps the flagged lines.
    The model's usage and cost are kept (they were paid); its model is not calibrated on this call."""
    offline = spare[0] if spare else _offline(inp, count)
    # The reasons name rules and short excerpts; the lines themselves go only to the record.
    log.warning("summary_flagged", provider=summarizer.provider, lines=len(screened.quarantined))
    kept = replace(
        result,
        text=offline.text,
        provider=offline.provider,
        model=offline.model,
        counted_input_tokens=None,
        quarantined=screened.quarantined,
        flags=screened.flags,
    )
    return kept, flagged_reason(len(screened.quarantined))


def _call_with_deadline(
    summarizer: Summarizer,
    inp: SummaryInput,
    prompt: SummaryPrompt,
    deadline: float | None,
    meanwhile: Callable[[], None] | None = None,
) -> SummaryResult:
    """Call the summarizer; with a deadline (a ``time.monotonic()`` instant), in a thread we stop
    waiting for when it passes.

    Everything the first call of a process pays (the SDK's import, its client) happens in that thread,
    inside the deadline. The summarizer is told the deadline too, so its own retries start no attempt
    past it. An abandoned call finishes (or times out) on its own; its result is dropped, never applied.
    ``meanwhile`` runs on the calling thread while the call is on its way. The thread is a daemon: a
    call still hanging never keeps the process from exiting (a pool's worker would be joined at exit,
    holding a CLI command open until the SDK's own timeout).
    """
    if deadline is None:
        return summarizer.summarize(inp, prompt)
    started = time.monotonic()
    if started >= deadline:  # spent already (the guard's lease wait): a call nobody waits for is waste
        raise TimeoutError("no summary before the deadline (no time left to ask)")
    future: Future[SummaryResult] = Future()
    # In the caller's context, so what the summarizer logs keeps the bound ids (task, conversation).
    context = contextvars.copy_context()

    def run() -> None:
        try:
            future.set_result(context.run(summarizer.summarize, inp, prompt, deadline=deadline))
        except BaseException as exc:  # handed to the waiting caller, or dropped with the call
            future.set_exception(exc)

    threading.Thread(target=run, name="summarize", daemon=True).start()
    if meanwhile is not None:
        meanwhile()
    try:
        return future.result(timeout=max(0.0, deadline - time.monotonic()))
    except FuturesTimeout as exc:
        raise TimeoutError(f"no summary before the deadline ({time.monotonic() - started:.1f} s)") from exc
