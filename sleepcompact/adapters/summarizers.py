"""Summarizers that need no network: the offline one (the default) and a custom callable."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from sleepcompact.config import Settings
from sleepcompact.domain.errors import InvalidSetting, LLMError, PermanentLLMError
from sleepcompact.domain.prompt import SummaryInput, SummaryPrompt
from sleepcompact.domain.rescoring import build_rescoring_prompt, parse_scores
from sleepcompact.domain.summary import offline_summary
from sleepcompact.logs import get_logger
from sleepcompact.ports import Summarizer, SummaryResult

log = get_logger(__name__)


class OfflineSummarizer:
    """Deterministic, structured, keeps identifiers verbatim; the default without an API key."""

    provider = "offline"
    model = "offline"

    def __init__(self, count: Callable[[str], int]) -> None:
        self._count = count

    def summarize(
        self, request: SummaryInput, prompt: SummaryPrompt, *, deadline: float | None = None
    ) -> SummaryResult:
        """The offline summary of the request (the prompt is not needed; it never waits)."""
        return SummaryResult(
            text=offline_summary(request, self._count), provider=self.provider, model=self.model
        )


class CallableSummarizer:
    """Any ``(prompt) -> str`` function, as the memory-manager seed allows.

    The function usually calls a model elsewhere, so what it is given is redacted like any request
    (``redaction_key``: the deployment's key, which ``bootstrap`` sets; without it placeholders are
    stable within one call only)."""

    provider = "custom"

    def __init__(self, fn: Callable[[str], str], model: str = "custom") -> None:
        self._fn = fn
        self.model = model
        self.redaction_key: Callable[[], bytes] | None = None

    def _redacted(self, text: str, scope: str) -> str:
        from sleepcompact.adapters.redaction import Redactor

        key = self.redaction_key() if self.redaction_key is not None else None
        return Redactor(key=key, scope=scope).redact(text)

    def summarize(
        self, request: SummaryInput, prompt: SummaryPrompt, *, deadline: float | None = None
    ) -> SummaryResult:
        """Call the function with the instructions followed by the delimited transcript (once: a custom
        function does its own retrying, if any)."""
        scope = request.rows[0].conversation_id if request.rows else ""
        text = self._fn(self._redacted(f"{prompt.system}\n\n{prompt.user}", scope))
        return SummaryResult(text=text, provider=self.provider, model=self.model)

    def rescore(self, texts: Sequence[str]) -> list[int]:
        """Call the function with the rescoring prompt and read one score 1..10 per text from its reply.

        The function's own ``LLMError`` subclasses pass through (a ``TransientLLMError`` gets the tick
        retried); any other exception counts as permanent, so a broken function keeps the heuristic
        scores instead of failing every tick. Its message is not kept: it may quote the prompt.
        """
        prompt = build_rescoring_prompt(texts)
        try:
            reply = self._fn(self._redacted(f"{prompt.system}\n\n{prompt.user}", ""))
        except LLMError:
            raise
        except Exception as exc:
            raise PermanentLLMError(f"the custom rescoring function raised {type(exc).__name__}") from exc
        return parse_scores(reply, len(texts))


def make_summarizer(
    settings: Settings, count: Callable[[str], int], *, redaction_key: Callable[[], bytes] | None = None
) -> Summarizer:
    """The summarizer the settings ask for; one log line says which, and with which model.

    ``redaction_key`` gives the deployment's key, read when the first request is redacted."""
    summarizer: Summarizer
    if settings.summarizer == "offline":
        summarizer = OfflineSummarizer(count)
    elif settings.summarizer == "openai":
        summarizer = _openai_summarizer(settings, count, redaction_key)
    else:
        if not settings.anthropic_api_key:
            raise InvalidSetting("SLEEPCOMPACT_SUMMARIZER=anthropic needs ANTHROPIC_API_KEY")
        from sleepcompact.adapters.anthropic_summarizer import AnthropicSummarizer
        from sleepcompact.adapters.redaction import RedactionPolicy
        from sleepcompact.adapters.retry import RetryPolicy

        summarizer = AnthropicSummarizer(
            api_key=settings.anthropic_api_key,
            model=settings.summarizer_model,
            base_url=settings.anthropic_base_url,
            timeout_s=settings.summarizer_timeout_s,
            retry=RetryPolicy(attempts=settings.summarizer_attempts),
            redaction=RedactionPolicy(
                emails=settings.redact_emails, card_numbers=settings.redact_card_numbers
            ),
            redaction_key=redaction_key,
            count=count,
        )
    log.info("summarizer", provider=summarizer.provider, model=summarizer.model)
    return summarizer


def _openai_summarizer(
    settings: Settings, count: Callable[[str], int], redaction_key: Callable[[], bytes] | None
) -> Summarizer:
    """The OpenAI-compatible summarizer; a local server (vLLM, Ollama) needs a base URL, not a key."""
    if not settings.openai_api_key and not settings.openai_base_url:
        raise InvalidSetting("SLEEPCOMPACT_SUMMARIZER=openai needs OPENAI_API_KEY or OPENAI_BASE_URL")
    from sleepcompact.adapters.openai_summarizer import OpenAISummarizer
    from sleepcompact.adapters.redaction import RedactionPolicy
    from sleepcompact.adapters.retry import RetryPolicy

    return OpenAISummarizer(
        api_key=settings.openai_api_key or "not-needed",  # local servers ignore it; the SDK wants one
        model=settings.summarizer_model,
        base_url=settings.openai_base_url,
        timeout_s=settings.summarizer_timeout_s,
        retry=RetryPolicy(attempts=settings.summarizer_attempts),
        redaction=RedactionPolicy(emails=settings.redact_emails, card_numbers=settings.redact_card_numbers),
        redaction_key=redaction_key,
        count=count,
    )
