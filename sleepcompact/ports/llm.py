"""The LLM-side ports: token counting, summarizers (direct and batched) and journal rescoring."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:  # only annotations: the prompt module pulls in the injection detector's rule tables
    from sleepcompact.domain.prompt import SummaryInput, SummaryPrompt


class TextRedactor(Protocol):
    """Replaces secrets with placeholders whose numbers are stable within one scope (a conversation)."""

    def redact(self, text: str) -> str:
        """``text`` with every detected secret replaced."""
        ...

    def redact_value(self, value: Any, label: str | None = None) -> Any:
        """A JSON-like value with every string redacted at any depth (keys label their values)."""
        ...


class TokenCounter(Protocol):
    """Counts tokens of text (cl100k_base, or bytes/4 when tiktoken cannot load)."""

    @property
    def name(self) -> str:
        """Which counter this is (``cl100k_base``, ``bytes/4``)."""
        ...

    def count(self, text: str) -> int:
        """Tokens in ``text``."""
        ...


@dataclass(frozen=True)
class SummaryResult:
    """A summary and what producing it cost."""

    text: str
    provider: str
    model: str
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    batch: bool = False
    counted_input_tokens: int | None = None  # our count of what was sent, to calibrate against input_tokens
    # Lines taken out of the model's summary (its report of instructions found, or what the detector
    # flagged) and the detector's reasons when it flagged it: kept in the compaction record, never live.
    quarantined: tuple[str, ...] = ()
    flags: tuple[str, ...] = ()


class Summarizer(Protocol):
    """Turns a prompt about some messages into a summary body (LLM, offline, or a custom callable)."""

    provider: str
    model: str

    def summarize(
        self, request: SummaryInput, prompt: SummaryPrompt, *, deadline: float | None = None
    ) -> SummaryResult:
        """Summarize; raise on failure (the caller decides about the offline fallback).

        ``deadline`` (a ``time.monotonic()`` value) is when the caller stops waiting: a summarizer that
        retries starts no attempt it could not finish by then.
        """
        ...


class Rescorer(Protocol):
    """Judges journal entries' long-term importance with an LLM (the summarizers that can)."""

    def rescore(self, texts: Sequence[str]) -> list[int]:
        """One score 1..10 per text, in order.

        Raises ``TransientLLMError`` or ``PermanentLLMError`` when the call fails and ``InvalidScores``
        when the reply is not one integer per text.
        """
        ...


class BatchSummarizer(Summarizer, Protocol):
    """A summarizer that can also work through a batch API (half price, results later)."""

    def request_params(self, request: SummaryInput, prompt: SummaryPrompt) -> dict[str, Any]:
        """The parameters one batch request carries (redacted)."""
        ...

    def submit_batch(self, requests: list[tuple[str, dict[str, Any]]]) -> str:
        """Submit requests; returns the batch id."""
        ...

    def batch_ended(self, batch_id: str) -> bool:
        """Whether the batch's results can be read."""
        ...

    def batch_results(self, batch_id: str) -> dict[str, tuple[str, Any]]:
        """custom_id -> (result type, message or error)."""
        ...

    def parse(self, response: Any, params: dict[str, Any], *, batch: bool) -> SummaryResult:
        """Validate a response into a result."""
        ...
