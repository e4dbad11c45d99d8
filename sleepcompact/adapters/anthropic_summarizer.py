"""The Anthropic summarizer: the official SDK, redaction before anything leaves, one retry layer.

The SDK client is built with ``max_retries=0``: the SDK never retries. Errors are mapped to transient
(429, 529, 5xx, timeouts, connection errors) and permanent (400, 401, 403, 404, and a 429 that
reports a spend limit); only transient ones are retried, by ``adapters.retry`` within this instance's
``RetryPolicy`` (in the worker, one attempt: Celery's autoretry is the retry layer there).

Every request emits one canonical ``llm_call`` event (model, purpose, latency, usage, cost, outcome),
and every batch result read back one with ``batch=True`` (its latency is the batch's, so none).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from sleepcompact.adapters.llm_errors import classify_sdk_error
from sleepcompact.adapters.redaction import RedactionPolicy, Redactor
from sleepcompact.adapters.retry import RetryPolicy, with_retries
from sleepcompact.domain.errors import (
    InvalidScores,
    InvalidSummary,
    LLMError,
)
from sleepcompact.domain.prompt import SummaryInput, SummaryPrompt
from sleepcompact.domain.rescoring import build_rescoring_prompt, parse_scores
from sleepcompact.logs import get_logger
from sleepcompact.ports import SummaryResult
from sleepcompact.telemetry import emit

if TYPE_CHECKING:
    import anthropic

log = get_logger(__name__)

# USD per million tokens (input, output), the providers' list prices; the Batches API costs half.
PRICES: dict[str, tuple[float, float]] = {
    "claude-haiku-4-5": (1.0, 5.0),
    "claude-3-5-haiku": (0.8, 4.0),
    "claude-sonnet-4-5": (3.0, 15.0),
    "claude-sonnet-4": (3.0, 15.0),
    "claude-3-7-sonnet": (3.0, 15.0),
    "claude-opus-4-5": (5.0, 25.0),
    "claude-opus-4-1": (15.0, 75.0),
    "claude-opus-4": (15.0, 75.0),
}
DEFAULT_PRICE = (3.0, 15.0)
BATCH_DISCOUNT = 0.5
# Claude's tokenizer counts about 15% more than cl100k for the same text: ask for that much room.
CLAUDE_TOKEN_RATIO = 1.15
# Output room for a rescoring reply: "[10, " is at most 4 tokens a score, plus slack for a code fence.
RESCORE_TOKENS_PER_ENTRY = 4
RESCORE_TOKENS_EXTRA = 32


def price_for(model: str) -> tuple[float, float]:
    """List price (input, output) in USD per million tokens for the longest known prefix."""
    best = ""
    for prefix in PRICES:
        if model.startswith(prefix) and len(prefix) > len(best):
            best = prefix
    return PRICES[best] if best else DEFAULT_PRICE


def cost_usd(model: str, input_tokens: int, output_tokens: int, *, batch: bool = False) -> float:
    """Estimated cost of one call."""
    pin, pout = price_for(model)
    cost = (input_tokens * pin + output_tokens * pout) / 1_000_000
    return round(cost * (BATCH_DISCOUNT if batch else 1.0), 8)


def classify(exc: BaseException) -> LLMError:
    """Map a anthropic SDK exception to a transient or permanent error (``llm_errors``)."""
    import anthropic

    return classify_sdk_error(
        exc,
        timeout=anthropic.APITimeoutError,
        connection=anthropic.APIConnectionError,
        status=anthropic.APIStatusError,
    )


class AnthropicSummarizer:
    """``Summarizer`` over the Messages API."""

    provider = "anthropic"

    def __init__(
        self,
        *,
        api_key: str,
        model: str,
        base_url: str | None = None,
        timeout_s: float = 60.0,
        retry: RetryPolicy | None = None,
        redaction: RedactionPolicy | None = None,
        redaction_key: Callable[[], bytes] | None = None,
        count: Callable[[str], int] | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.model = model
        self._client_options: dict[str, Any] = {
            "api_key": api_key,
            "base_url": base_url,
            "max_retries": 0,
            "timeout": timeout_s,
        }
        self._built: anthropic.Anthropic | None = None
        self._building = threading.Lock()
        self._retry = retry or RetryPolicy()
        self._redaction = redaction or RedactionPolicy()
        self._redaction_key = redaction_key
        self._count = count
        self._sleep = sleep

    @property
    def _client(self) -> anthropic.Anthropic:
        """The SDK client, built on the first request rather than with the summarizer.

        Importing the SDK takes about a second (6.7 s was measured on a loaded machine). The guard's
        emergency compaction reaches the summarizer in the request path and bounds only the call with
        its deadline; built here, the import happens inside that bounded call (on the thread the guard
        stops waiting for), so the first emergency of a process meets its deadline like any other.
        Warming it in the background at startup instead would hold the import lock across a fork."""
        if self._built is None:
            with self._building:
                if self._built is None:
                    import anthropic

                    self._built = anthropic.Anthropic(**self._client_options)
        return self._built

    def _redactor(self, scope: str) -> Redactor:
        """A redactor keyed with the deployment's key (when given), so a secret's placeholder in this
        request is the one its conversation's journal, memories and earlier requests carry."""
        key = self._redaction_key() if self._redaction_key is not None else None
        return Redactor(self._redaction, key=key, scope=scope)

    def request_params(self, request: SummaryInput, prompt: SummaryPrompt) -> dict[str, Any]:
        """Messages API parameters: instructions as system, the redacted transcript as user data."""
        redactor = self._redactor(request.rows[0].conversation_id if request.rows else "")
        user = redactor.redact(prompt.user)
        if redactor.found:
            log.info("redacted", kinds=redactor.found)  # counts per kind only, never values
        return {
            "model": self.model,
            "max_tokens": max(64, int(request.max_tokens * CLAUDE_TOKEN_RATIO)),
            "system": redactor.redact(prompt.system),
            "messages": [{"role": "user", "content": user}],
        }

    def summarize(
        self, request: SummaryInput, prompt: SummaryPrompt, *, deadline: float | None = None
    ) -> SummaryResult:
        """One summary, retrying transient errors within the policy and the optional monotonic deadline."""
        params = self.request_params(request, prompt)
        return with_retries(
            lambda: self._summary_call(params), self._retry, classify, deadline=deadline, sleep=self._sleep
        )

    def _summary_call(self, params: dict[str, Any]) -> SummaryResult:
        """One Messages call for a summary; its ``llm_call`` event says whether the reply was usable."""
        started = time.monotonic()
        return self._checked(self._create(params, "summary", started), params, started, batch=False)

    def _checked(
        self, response: Any, params: dict[str, Any], started: float | None, *, batch: bool
    ) -> SummaryResult:
        """``_parse``, emitting the reply's ``llm_call`` event: usable or not, it was paid for."""
        try:
            result = self._parse(response, params, batch=batch)
        except InvalidSummary as exc:
            self._emit_call("summary", started, response, "invalid", batch=batch, error=type(exc).__name__)
            raise
        self._emit_call("summary", started, response, "ok", batch=batch)
        return result

    def _create(self, params: dict[str, Any], purpose: str, started: float) -> Any:
        """``messages.create``; a failed request emits its ``llm_call`` here (the error type, never text)."""
        try:
            return self._client.messages.create(**params)
        except Exception as exc:
            error = classify(exc)
            outcome = "transient_error" if error.transient else "permanent_error"
            self._emit_call(purpose, started, None, outcome, error=type(exc).__name__)
            raise

    def _emit_call(
        self,
        purpose: str,
        started: float | None,
        response: Any,
        outcome: str,
        *,
        batch: bool = False,
        error: str | None = None,
    ) -> None:
        """The canonical ``llm_call`` line; a reply that was paid for is counted even when unusable."""
        usage = getattr(response, "usage", None)
        tokens_in = int(getattr(usage, "input_tokens", 0) or 0)
        tokens_out = int(getattr(usage, "output_tokens", 0) or 0)
        emit(
            "llm_call",
            provider=self.provider,
            model=self.model,
            purpose=purpose,
            outcome=outcome,
            batch=batch,
            ms=None if started is None else int((time.monotonic() - started) * 1000),
            input_tokens=tokens_in,
            output_tokens=tokens_out,
            cost_usd=cost_usd(self.model, tokens_in, tokens_out, batch=batch),
            error=error,
        )

    def rescore(self, texts: Sequence[str]) -> list[int]:
        """Long-term importance 1..10 of each journal entry, in order, from one Messages call.

        Every entry is redacted before it is put into the prompt (one ``Redactor``, so a secret repeated
        across entries gets one placeholder); retries and error mapping are the summaries' own. Raises
        ``InvalidScores`` for a reply that is not one integer per entry (it is not retried: the same
        prompt would most likely get the same answer).
        """
        redactor = self._redactor("")
        prompt = build_rescoring_prompt([redactor.redact(t) for t in texts])
        if redactor.found:
            log.info("redacted", kinds=redactor.found)  # counts per kind only, never values
        params: dict[str, Any] = {
            "model": self.model,
            "max_tokens": RESCORE_TOKENS_PER_ENTRY * len(texts) + RESCORE_TOKENS_EXTRA,
            "system": prompt.system,
            "messages": [{"role": "user", "content": prompt.user}],
        }
        started = 0.0

        def call() -> Any:
            nonlocal started
            started = time.monotonic()
            return self._create(params, "rescore", started)

        response: Any = with_retries(call, self._retry, classify, sleep=self._sleep)
        stop = getattr(response, "stop_reason", None)
        text = "".join(getattr(b, "text", "") for b in response.content if getattr(b, "type", "") == "text")
        try:
            if stop in ("max_tokens", "refusal"):
                raise InvalidScores(f"the rescoring reply stopped early ({stop})")
            scores = parse_scores(text, len(texts))
        except InvalidScores as exc:
            self._emit_call("rescore", started, response, "invalid", error=type(exc).__name__)
            raise
        self._emit_call("rescore", started, response, "ok")
        return scores

    def parse(self, response: Any, params: dict[str, Any], *, batch: bool) -> SummaryResult:
        """Validate a Messages API response and turn it into a result (cut off, refusal or empty: invalid).

        A batch result is read back once, through here: its ``llm_call`` event (no latency) is emitted
        here; a direct call's is emitted by ``summarize``, which knows how long it took.
        """
        if batch:
            return self._checked(response, params, None, batch=True)
        return self._parse(response, params, batch=False)

    def _parse(self, response: Any, params: dict[str, Any], *, batch: bool) -> SummaryResult:
        """``parse`` without the event."""
        stop = getattr(response, "stop_reason", None)
        text = "".join(getattr(b, "text", "") for b in response.content if getattr(b, "type", "") == "text")
        if stop == "max_tokens":
            raise InvalidSummary("the summary was cut off at max_tokens")
        if stop == "refusal":
            raise InvalidSummary("the summarizer refused")
        if not text.strip():
            raise InvalidSummary("the summary is empty")
        usage = response.usage
        sent = params["system"] + "\n" + params["messages"][0]["content"]
        return SummaryResult(
            text=text,
            provider=self.provider,
            model=str(getattr(response, "model", self.model)),
            input_tokens=int(usage.input_tokens),
            output_tokens=int(usage.output_tokens),
            cost_usd=cost_usd(self.model, int(usage.input_tokens), int(usage.output_tokens), batch=batch),
            batch=batch,
            counted_input_tokens=self._count(sent) if self._count else None,
        )

    # -- Message Batches (half price; for nightly ticks) -----------------------------------------------

    def submit_batch(self, requests: list[tuple[str, dict[str, Any]]]) -> str:
        """Submit (custom_id, params) pairs as one batch; returns the batch id."""
        try:
            batch = self._client.messages.batches.create(
                requests=[{"custom_id": cid, "params": params} for cid, params in requests]  # type: ignore[typeddict-item]
            )
        except Exception as exc:
            raise classify(exc) from exc
        return str(batch.id)

    def batch_ended(self, batch_id: str) -> bool:
        """Whether the batch has finished processing (its results can be read)."""
        try:
            return str(self._client.messages.batches.retrieve(batch_id).processing_status) == "ended"
        except Exception as exc:
            raise classify(exc) from exc

    def batch_results(self, batch_id: str) -> dict[str, tuple[str, Any]]:
        """custom_id -> (result type, message or error text) for an ended batch."""
        out: dict[str, tuple[str, Any]] = {}
        try:
            for item in self._client.messages.batches.results(batch_id):
                kind = str(item.result.type)
                if kind == "succeeded":
                    out[item.custom_id] = (kind, item.result.message)  # type: ignore[union-attr]
                elif kind == "errored":
                    out[item.custom_id] = (kind, str(getattr(item.result, "error", "errored")))
                else:
                    out[item.custom_id] = (kind, None)
        except Exception as exc:
            raise classify(exc) from exc
        return out
