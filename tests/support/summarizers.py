"""A summarizer that reports what a provider billed, for the tests of usage, cost and calibration."""

from __future__ import annotations

from typing import Any

from sleepcompact.ports.llm import SummaryResult

BODY = "## Task and goals\n- fix the parser in src/ledger/totals.py"


class Priced:
    """Bills 1,234 input tokens and 56 output tokens ($0.0123) for a prompt we counted at ``counted``
    (1,000; None: the provider's count only, which teaches no calibration); ``fail`` raises instead."""

    provider = "acme"
    model = "claude-sonnet-4-5"

    def __init__(self, *, counted: int | None = 1_000, fail: bool = False) -> None:
        self.counted, self.fail = counted, fail

    def summarize(self, request: Any, prompt: Any, *, deadline: float | None = None) -> SummaryResult:
        if self.fail:
            raise RuntimeError("the model is down")
        return SummaryResult(BODY, "acme", self.model, 1_234, 56, 0.0123, counted_input_tokens=self.counted)
