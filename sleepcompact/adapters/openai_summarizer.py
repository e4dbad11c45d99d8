"""A summarizer over any OpenAI-compatible Chat Completions endpoint (OpenAI, vLLM, Ollama, LiteLLM).

The official ``openai`` SDK, built lazily on the first request (``import sleepcompact`` never imports
it) with ``max_retries=0``: the one retry layer is ``adapters.retry``, as for the Anthropic summarizer,
with the same error mapping (429, 5xx, 408, 409, timeouts and connection errors are transient; a 429
that reports a quota and any other 4xx are permanent) and the same deadline. The prompt is the shared
one (instructions as the system message, the redacted transcript as the user message); the reply is
validated the same way (cut off at the length limit, a refusal, or empty: ``InvalidSummary``).

Cost comes from a small price table; a model it does not know (a local vLLM or Ollama name) costs 0
and is logged once per process. Every request emits one canonical ``llm_call`` event.
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
    import openai

log = get_logger(__name__)

DEFAULT_BASE_URL = "https://api.openai.com/v1"
# USD per million tokens (input, output), OpenAI's list prices; the longest matching prefix wins.
PRICES: dict[str, tuple[float, float]] = {
    "gpt-4o": (2.5, 10.0),
    "gpt-4o-mini": (0.15, 0.6),
    "gpt-4.1": (2.0, 8.0),
    "gpt-4.1-mini": (0.4, 1.6),
    "gpt-4.1-nano": (0.1, 0.4),
    "gpt-5": (1.25, 10.0),
    "gpt-5-mini": (0.25, 2.0),
    "gpt-5-nano": (0.05, 0.4),
}
# Models that take ``max_completion_tokens`` and reject ``max_tokens`` (OpenAI's reasoning models).
COMPLETION_TOKENS_PREFIXES = ("gpt-5", "o1", "o3", "o4")
# Tokenizers differ from cl100k across models and servers: ask for this much more room than counted.
OUTPUT_TOKEN_RATIO = 1.15
RESCORE_TOKENS_PER_ENTRY = 4
RESCORE_TOKENS_EXTRA = 32

_warned: set[str] = set()
_warned_lock = threading.Lock()


def price_for(model: str) -> tuple[float, float] | None:
    """List price (input, output) in USD per million tokens, or None for a model the table lacks."""
    best = ""
    for prefix in PRICES:
        if model.startswith(prefix) and len(prefix) > len(best):
            best = prefix
    return PRICES[best] if best else None


def cost_usd(model: str, input_tokens: int, output_tokens: int) -> float:
    """Estimated cost of one call; 0 for an unknown model (one warning per model and process)."""
    price = price_for(model)
    if price is None:
        with _warned_lock:
            first = model not in _warned
            _warned.add(model)
        if first:
            log.warning("unknown_model_price", model=model, cost_usd=0.0)
        return 0.0
    return round((input_tokens * price[0] + output_tokens * price[1]) / 1_000_000, 8)


def classify(exc: BaseException) -> LLMError:
    """Map a openai SDK exception to a transient or permanent error (``llm_errors``)."""
    import openai

    return classify_sdk_error(
        exc,
        timeout=openai.APITimeoutError,
        connection=openai.APIConnectionError,
        status=openai.APIStatusError,
    )


def _usage(response: Any) -> tuple[int, int]:
    """(prompt, completion) tokens; 0 when the server reports no usage (some local servers)."""
    usage = getattr(response, "usage", None)
    return int(getattr(usage, "prompt_tokens", 0) or 0), int(getattr(usage, "completion_tokens", 0) or 0)


def _choice(response: Any) -> tuple[str, str | None, str | None]:
    """(text, finish_reason, refusal) of the first choice."""
    choices = getattr(response, "choices", None) or []
    if not choices:
        return "", None, None
    message = getattr(choices[0], "message", None)
    text = getattr(message, "content", None) or ""
    return str(text), getattr(choices[0], "finish_reason", None), getattr(message, "refusal", None)


class OpenAISummarizer:
    """``Summarizer`` (and ``Rescorer``) over the Chat Completions API of any compatible server."""

    provider = "openai"

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
            "base_url": base_url or DEFAULT_BASE_URL,
            "max_retries": 0,
            "timeout": timeout_s,
        }
        self._built: openai.OpenAI | None = None
        self._building = threading.Lock()
        self._retry = retry or RetryPolicy()
        self._redaction = redaction or RedactionPolicy()
        self._redaction_key = redaction_key
        self._count = count
        self._sleep = sleep

    @property
    def _client(self) -> openai.OpenAI:
        """The SDK client, built on the first request: inside the guard's bounded call, as for the
        Anthropic summarizer (``AnthropicSummarizer._client`` says why)."""
        if self._built is None:
            with self._building:
                if self._built is None:
                    import openai

                    self._built = openai.OpenAI(**self._client_options)
        return self._built

    def _redactor(self, scope: str) -> Redactor:
        key = self._redaction_key() if self._redaction_key is not None else None
        return Redactor(self._redaction, key=key, scope=scope)

    def _params(self, system: str, user: str, max_tokens: int) -> dict[str, Any]:
        limit = "max_completion_tokens" if self.model.startswith(COMPLETION_TOKENS_PREFIXES) else "max_tokens"
        return {
            "model": self.model,
            limit: max_tokens,
            "messages": [{"role": "system", "content": system}, {"role": "user", "content": user}],
        }

    def request_params(self, request: SummaryInput, prompt: SummaryPrompt) -> dict[str, Any]:
        """Chat Completions parameters: instructions as system, the redacted transcript as user data."""
        redactor = self._redactor(request.rows[0].conversation_id if request.rows else "")
        user = redactor.redact(prompt.user)
        system = redactor.redact(prompt.system)
        if redactor.found:
            log.info("redacted", kinds=redactor.found)  # counts per kind only, never values
        return self._params(system, user, max(64, int(request.max_tokens * OUTPUT_TOKEN_RATIO)))

    def summarize(
        self, request: SummaryInput, prompt: SummaryPrompt, *, deadline: float | None = None
    ) -> SummaryResult:
        """One summary, retrying transient errors within the policy and the optional monotonic deadline."""
        params = self.request_params(request, prompt)
        return with_retries(
            lambda: self._summary_call(params), self._retry, classify, deadline=deadline, sleep=self._sleep
        )

    def _summary_call(self, params: dict[str, Any]) -> SummaryResult:
        started = time.monotonic()
        response = self._create(params, "summary", started)
        try:
            result = self._parse(response, params)
        except InvalidSummary as exc:
            self._emit_call("summary", started, response, "invalid", error=type(exc).__name__)
            raise
        self._emit_call("summary", started, response, "ok")
        return result

    def _create(self, params: dict[str, Any], purpose: str, started: float) -> Any:
        """``chat.completions.create``; a failed request emits its ``llm_call`` here (never its text)."""
        try:
            return self._client.chat.completions.create(**params)
        except Exception as exc:
            error = classify(exc)
            outcome = "transient_error" if error.transient else "permanent_error"
            self._emit_call(purpose, started, None, outcome, error=type(exc).__name__)
            raise

    def _emit_call(
        self, purpose: str, started: float, response: Any, outcome: str, *, error: str | None = None
    ) -> None:
        """The canonical ``llm_call`` line; a reply that was paid for is counted even when unusable."""
        tokens_in, tokens_out = _usage(response)
        emit(
            "llm_call",
            provider=self.provider,
            model=self.model,
            purpose=purpose,
            outcome=outcome,
            batch=False,
            ms=int((time.monotonic() - started) * 1000),
            input_tokens=tokens_in,
            output_tokens=tokens_out,
            cost_usd=cost_usd(self.model, tokens_in, tokens_out),
            error=error,
        )

    def _parse(self, response: Any, params: dict[str, Any]) -> SummaryResult:
        """Validate a completion (cut off, refused or empty: invalid) and turn it into a result."""
        text, finish, refusal = _choice(response)
        if finish == "length":
            raise InvalidSummary("the summary was cut off at max_tokens")
        if refusal or finish == "content_filter":
            raise InvalidSummary("the summarizer refused")
        if not text.strip():
            raise InvalidSummary("the summary is empty")
        tokens_in, tokens_out = _usage(response)
        sent = "\n".join(m["content"] for m in params["messages"])
        return SummaryResult(
            text=text,
            provider=self.provider,
            model=str(getattr(response, "model", None) or self.model),
            input_tokens=tokens_in,
            output_tokens=tokens_out,
            cost_usd=cost_usd(self.model, tokens_in, tokens_out),
            counted_input_tokens=self._count(sent) if self._count and tokens_in else None,
        )

    def rescore(self, texts: Sequence[str]) -> list[int]:
        """Long-term importance 1..10 of each journal entry, in order, from one call (every entry
        redacted first; retries and error mapping as for summaries; ``InvalidScores`` is not retried)."""
        redactor = self._redactor("")
        prompt = build_rescoring_prompt([redactor.redact(t) for t in texts])
        if redactor.found:
            log.info("redacted", kinds=redactor.found)
        params = self._params(
            prompt.system, prompt.user, RESCORE_TOKENS_PER_ENTRY * len(texts) + RESCORE_TOKENS_EXTRA
        )
        started = 0.0

        def call() -> Any:
            nonlocal started
            started = time.monotonic()
            return self._create(params, "rescore", started)

        response: Any = with_retries(call, self._retry, classify, sleep=self._sleep)
        text, finish, refusal = _choice(response)
        try:
            if finish == "length" or refusal:
                raise InvalidScores(f"the rescoring reply stopped early ({finish or 'refusal'})")
            scores = parse_scores(text, len(texts))
        except InvalidScores as exc:
            self._emit_call("rescore", started, response, "invalid", error=type(exc).__name__)
            raise
        self._emit_call("rescore", started, response, "ok")
        return scores
