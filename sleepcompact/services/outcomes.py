"""What a compaction reports: the ``CompactionOutcome`` an operator reads, the plan as JSON, and the
one canonical ``compaction`` line (and metrics observation) every call but a dry run emits.

``compact`` in ``sleepcompact.services.compaction`` runs the stages; every way it ends goes through
``OutcomeReporter.done``, so each call yields exactly one line with the same fields.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from typing import Any

from sleepcompact.domain.budget import Budget
from sleepcompact.domain.ladder import Plan
from sleepcompact.logs import bound_context
from sleepcompact.ports import SummaryResult
from sleepcompact.telemetry import emit


@dataclass(frozen=True)
class CompactionOutcome:
    """What a compaction did, in the figures an operator reads."""

    conversation_id: str
    status: str  # applied, noop, stalled, discarded, failed, backoff, deferred, dry_run (reused: the guard)
    trigger: str
    tokens_before: int
    tokens_after: int
    usable: int
    target: int
    reason: str
    compaction_id: str | None = None
    steps: list[dict[str, Any]] = field(default_factory=list)
    summary_tokens: int = 0
    summary: str | None = None
    fallback: str | None = None
    plan: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return asdict(self)


def plan_dict(p: Plan) -> dict[str, Any]:
    return {
        "tokens_before": p.tokens_before,
        "tokens_after_estimate": p.tokens_after,
        "target": p.target,
        "fits": p.fits,
        "reason": p.reason,
        "sections": p.sections,
        "steps": [asdict(s) for s in p.steps],
        "changes": [
            {"seq": c.seq, "state": c.state, "step": c.step, "live_tokens": c.live_tokens} for c in p.changes
        ],
        "summarize": None
        if p.summary is None
        else {
            "first_seq": p.summary.first_seq,
            "last_seq": p.summary.last_seq,
            "messages": len(p.summary.rows),
            "tokens_replaced": p.summary.tokens_replaced,
            "max_tokens": p.summary.max_tokens,
            "rolling": p.summary.previous is not None,
        },
    }


@dataclass
class OutcomeReporter:
    """Builds the outcomes of one ``compact`` call and emits its one canonical ``compaction`` event.

    Every way a compaction ends but the dry run goes through ``done``, so each call yields exactly one
    line (and one metrics observation) with the same fields, whatever the outcome.
    """

    conversation_id: str
    tenant_id: str | None
    trigger: str
    budget: Budget
    started: float
    llm_ms: int | None = None

    def outcome(self, **values: Any) -> CompactionOutcome:
        """The outcome, without an event (the dry run: nothing happened)."""
        return CompactionOutcome(
            conversation_id=self.conversation_id,
            trigger=self.trigger,
            usable=self.budget.usable,
            target=self.budget.target,
            **values,
        )

    def done(
        self, *, result: SummaryResult | None = None, fallback_reason: str | None = None, **values: Any
    ) -> CompactionOutcome:
        """The outcome, after emitting its canonical event (``result``: the summary, if one was paid for)."""
        out = self.outcome(**values)
        fields = compaction_fields(out, self, result, fallback_reason)
        emit("compaction", level="warning" if out.status == "failed" else "info", **fields)
        return out

    @contextmanager
    def llm(self) -> Iterator[None]:
        """Time the summarizer call, with the conversation bound to every line it logs (``llm_call``...)."""
        started = time.monotonic()
        try:
            with bound_context(conversation_id=self.conversation_id, tenant_id=self.tenant_id):
                yield
        finally:
            self.llm_ms = int((time.monotonic() - started) * 1000)


def compaction_fields(
    out: CompactionOutcome,
    reporter: OutcomeReporter,
    result: SummaryResult | None,
    fallback_reason: str | None,
) -> dict[str, Any]:
    """The canonical ``compaction`` line (DESIGN section 9): figures only, never message content.

    Failure reasons can quote whatever an exception carried (a custom summarizer's error may echo its
    prompt), so only the exception's type is logged; the full reason is in the compaction's record.
    """
    applied = out.status == "applied"
    steps_saved: dict[str, int] = {}
    for step in out.steps if applied else []:
        steps_saved[step["step"]] = steps_saved.get(step["step"], 0) + int(step.get("tokens_saved", 0))
    error = fallback_reason or (out.reason if out.status == "failed" else None)
    return {
        "conversation_id": out.conversation_id,
        "tenant_id": reporter.tenant_id,
        "trigger": out.trigger,
        "outcome": out.status,
        "compaction_id": out.compaction_id,
        "tokens_before": out.tokens_before,
        "tokens_after": out.tokens_after,
        "tokens_saved": max(0, out.tokens_before - out.tokens_after) if applied else 0,
        "percent_of_usable": reporter.budget.percent_of_usable(out.tokens_after),
        "token_basis": "calibrated",  # tokens_*: model tokens; llm_*_tokens: what the provider reported
        "steps": list(dict.fromkeys(s["step"] for s in out.steps)),
        "steps_saved": steps_saved,
        "duration_ms": int((time.monotonic() - reporter.started) * 1000),
        "llm_ms": reporter.llm_ms,
        "llm_model": result.model if result else None,
        "llm_input_tokens": result.input_tokens if result else 0,
        "llm_output_tokens": result.output_tokens if result else 0,
        "cost_usd": result.cost_usd if result else 0.0,
        "fallback": fallback_reason is not None,
        "error": error.split(":", 1)[0] if error else None,
        "reason": None if out.status == "failed" else out.reason,
    }
