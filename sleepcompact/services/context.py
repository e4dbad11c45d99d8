"""What the next LLM call gets, and the budget figures around it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any, Literal

from sleepcompact.domain.budget import Budget, Thresholds, make_budget, model_family, model_spec
from sleepcompact.domain.errors import ConversationNotFound
from sleepcompact.domain.records import ConversationRecord
from sleepcompact.domain.rendering import render_anthropic, render_openai
from sleepcompact.services.ports import TokenCounter, UnitOfWork

RenderFormat = Literal["anthropic", "openai"]


def conversation_thresholds(conv: ConversationRecord, defaults: Thresholds) -> Thresholds:
    """Per-conversation overrides on top of the global thresholds."""
    return Thresholds(
        soft=conv.soft_threshold if conv.soft_threshold is not None else defaults.soft,
        hard=conv.hard_threshold if conv.hard_threshold is not None else defaults.hard,
        target=conv.target_ratio if conv.target_ratio is not None else defaults.target,
    )


def budget_for(
    conv: ConversationRecord, defaults: Thresholds, factors: Mapping[str, float] | None = None
) -> Budget:
    """The budget of one conversation, from its own row (and the calibrated tokenizer factors, if known)."""
    factor = (factors or {}).get(model_family(conv.model), model_spec(conv.model).safety_factor)
    return make_budget(
        context_window=conv.context_window,
        output_reserve=conv.output_reserve,
        thresholds=conversation_thresholds(conv, defaults),
        safety_factor=factor,
    )


@dataclass(frozen=True)
class ContextView:
    """Exactly what the next call would send, with its token figures (in the model's tokens)."""

    conversation_id: str
    format: RenderFormat
    system: str | None
    messages: list[dict[str, Any]]
    tokens: int
    counted_tokens: int
    budget: Budget
    live_messages: int

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (what ``sleepcompact context --json`` prints)."""
        b = self.budget
        return {
            "conversation_id": self.conversation_id,
            "format": self.format,
            "system": self.system,
            "messages": self.messages,
            "tokens": self.tokens,
            "counted_tokens": self.counted_tokens,
            "usable": b.usable,
            "soft": b.soft,
            "hard": b.hard,
            "target": b.target,
            "percent_of_usable": round(100.0 * self.tokens / b.usable, 1) if b.usable else 100.0,
            "budget": asdict(b),
            "live_messages": self.live_messages,
        }


def render_context(
    uow: UnitOfWork,
    counter: TokenCounter,
    conversation_id: str,
    *,
    defaults: Thresholds,
    system: str | None = None,
    fmt: RenderFormat = "anthropic",
) -> ContextView:
    """Render the live rows; ``system`` (the caller's prompt) counts against the budget too."""
    with uow:
        conv = uow.repo.get_conversation(conversation_id)
        if conv is None:
            raise ConversationNotFound(conversation_id)
        rows = uow.repo.live_messages(conversation_id)
        factors = uow.repo.calibrations()
    budget = budget_for(conv, defaults, factors)
    counted = conv.live_tokens + (counter.count(system) if system else 0)
    if fmt == "openai":
        messages = render_openai(rows, system)
        sys_text: str | None = None
    else:
        rendered = render_anthropic(rows, system)
        messages, sys_text = rendered.messages, rendered.system
    return ContextView(
        conversation_id=conversation_id,
        format=fmt,
        system=sys_text,
        messages=messages,
        tokens=budget.effective(counted),
        counted_tokens=counted,
        budget=budget,
        live_messages=conv.live_messages,
    )


def conversation_stats(uow: UnitOfWork, conversation_id: str | None, defaults: Thresholds) -> dict[str, Any]:
    """Counts and tokens; with a conversation, its budget figures as well."""
    with uow:
        conv = uow.repo.get_conversation(conversation_id) if conversation_id else None
        if conversation_id and conv is None:
            raise ConversationNotFound(conversation_id)
        stats = uow.repo.stats(conversation_id)
        factors = uow.repo.calibrations()
    if conv is not None:
        b = budget_for(conv, defaults, factors)
        stats.update(
            {
                "conversation_id": conv.id,
                "tenant_id": conv.tenant_id,
                "agent_id": conv.agent_id,
                "model": conv.model,
                "plan": conv.plan,
                "live_messages": conv.live_messages,
                "live_tokens": conv.live_tokens,
                "tokens": b.effective(conv.live_tokens),
                "context_window": b.context_window,
                "output_reserve": b.output_reserve,
                "usable": b.usable,
                "soft": b.soft,
                "hard": b.hard,
                "target": b.target,
                "safety_factor": b.safety_factor,
                "percent_of_usable": b.percent_of_usable(conv.live_tokens),
                "compaction_epoch": conv.compaction_epoch,
            }
        )
    return stats
