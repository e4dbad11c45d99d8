"""A conversation's budget from its row, and the guard's decision from that budget.

The light half of the guard: ``Memory.check`` and ``sleepcompact check`` run before every model call,
so they load this (the row, the thresholds, ``decide``) and not the compaction pipeline that
``prepare_context`` may need above hard.
"""

from __future__ import annotations

from collections.abc import Mapping

from sleepcompact.domain.budget import Budget, Thresholds, make_budget, model_family, model_spec
from sleepcompact.domain.errors import ConversationNotFound
from sleepcompact.domain.guard import Check, decide
from sleepcompact.domain.records import ConversationRecord
from sleepcompact.ports import Dependencies


def conversation_thresholds(conv: ConversationRecord, defaults: Thresholds) -> Thresholds:
    """Per-conversation overrides on top of the global thresholds."""
    return Thresholds(
        soft=conv.soft_threshold if conv.soft_threshold is not None else defaults.soft,
        hard=conv.hard_threshold if conv.hard_threshold is not None else defaults.hard,
        target=conv.target_ratio if conv.target_ratio is not None else defaults.target,
    )


def budget_for(
    conv: ConversationRecord,
    defaults: Thresholds,
    factors: Mapping[str, float] | None = None,
    *,
    reserved: int = 0,
) -> Budget:
    """The budget of one conversation, from its own row (and the calibrated tokenizer factors, if known).

    ``reserved`` model tokens (the guard's system prompt, tools and memories) are set aside like the
    output reserve, so the thresholds apply to what is left for the conversation's own rows.
    """
    factor = (factors or {}).get(model_family(conv.model), model_spec(conv.model).safety_factor)
    return make_budget(
        context_window=conv.context_window,
        output_reserve=min(conv.context_window, conv.output_reserve + max(0, reserved)),
        thresholds=conversation_thresholds(conv, defaults),
        safety_factor=factor,
    )


def check(deps: Dependencies, conversation_id: str) -> Check:
    """The guard's decision from one indexed read (the conversation row by primary key).

    No unit of work: a single read needs no transaction, and this runs before every LLM call. The
    calibration factors come from the in-process cache.
    """
    conv = deps.read_conversation(conversation_id)
    if conv is None:
        raise ConversationNotFound(conversation_id)
    settings = deps.settings
    budget = budget_for(conv, settings.thresholds, deps.factors())
    tokens = budget.effective(conv.live_tokens)
    enabled = settings.auto_compact and conv.auto_compact is not False
    return Check(
        conversation_id=conversation_id,
        tokens=tokens,
        usable=budget.usable,
        soft=budget.soft,
        hard=budget.hard,
        target=budget.target,
        percent_of_usable=budget.percent_of_usable(conv.live_tokens),
        decision=decide(tokens, budget, auto_compact=enabled),
        auto_compact=enabled,
        sleep_requested=conv.sleep_requested_at is not None,
        compaction_epoch=conv.compaction_epoch,
    )
