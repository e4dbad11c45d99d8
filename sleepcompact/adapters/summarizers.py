"""Summarizers that need no network: the offline one (the default) and a custom callable."""

from __future__ import annotations

from collections.abc import Callable

from sleepcompact.config import Settings
from sleepcompact.domain.errors import InvalidSetting
from sleepcompact.domain.prompt import SummaryInput, SummaryPrompt
from sleepcompact.domain.summary import offline_summary
from sleepcompact.services.ports import Summarizer, SummaryResult


class OfflineSummarizer:
    """Deterministic, structured, keeps identifiers verbatim; the default without an API key."""

    provider = "offline"
    model = "offline"

    def __init__(self, count: Callable[[str], int]) -> None:
        self._count = count

    def summarize(self, request: SummaryInput, prompt: SummaryPrompt) -> SummaryResult:
        """The offline summary of the request (the prompt is not needed)."""
        return SummaryResult(
            text=offline_summary(request, self._count), provider=self.provider, model=self.model
        )


class CallableSummarizer:
    """Any ``(prompt) -> str`` function, as the memory-manager seed allows."""

    provider = "custom"

    def __init__(self, fn: Callable[[str], str], model: str = "custom") -> None:
        self._fn = fn
        self.model = model

    def summarize(self, request: SummaryInput, prompt: SummaryPrompt) -> SummaryResult:
        """Call the function with the instructions followed by the delimited transcript."""
        return SummaryResult(
            text=self._fn(f"{prompt.system}\n\n{prompt.user}"), provider=self.provider, model=self.model
        )


def make_summarizer(settings: Settings, count: Callable[[str], int]) -> Summarizer:
    """The summarizer the settings ask for."""
    if settings.summarizer == "offline":
        return OfflineSummarizer(count)
    # The Anthropic adapter is its own piece of work (DESIGN section 7); until it lands, say so plainly
    # instead of quietly summarizing offline while the operator believes an LLM is in use.
    raise InvalidSetting(
        "SLEEPCOMPACT_SUMMARIZER=anthropic is not available in this version; "
        "set SLEEPCOMPACT_SUMMARIZER=offline or pass summarizer= to Memory"
    )
