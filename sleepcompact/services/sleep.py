"""A sleep tick for one conversation: consolidate the journal into memory, then compact if needed.

Facts are safe in memory before anything is folded into a summary (DESIGN
section 5). A tick is keyed (e.g. the night's date): the unique
(conversation_id, tick_key) row makes running the same tick twice a no-op, and a
tick that died half-way is simply run again (each step is itself idempotent).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import structlog

from sleepcompact.domain.budget import Thresholds
from sleepcompact.domain.errors import ConversationNotFound
from sleepcompact.domain.ladder import Policy
from sleepcompact.services.compaction import compact
from sleepcompact.services.context import budget_for
from sleepcompact.services.conversations import utcnow
from sleepcompact.services.memories import consolidate_agent
from sleepcompact.services.ports import Summarizer, TokenCounter, UnitOfWork

log = structlog.get_logger(__name__)

ENTRY_TRIGGER = 100
"""Live messages that trigger a compaction whatever the tokens (memory-manager seed; 0 turns it off)."""


def sleep_tick(
    uow_factory: Callable[[], UnitOfWork],
    counter: TokenCounter,
    summarizer: Summarizer,
    conversation_id: str,
    tick_key: str,
    *,
    defaults: Thresholds,
    policy: Policy,
    entry_trigger: int = ENTRY_TRIGGER,
) -> dict[str, Any]:
    """Run (or recognise as already run) one keyed tick; returns what it did."""
    with uow_factory() as uow:
        conv = uow.repo.get_conversation(conversation_id)
        if conv is None:
            raise ConversationNotFound(conversation_id)
        done = uow.repo.tick(conversation_id, tick_key)
        if done is not None and done["status"] == "done":
            return {**done["result"], "already_done": True}
        if done is None:
            uow.repo.start_tick(conversation_id, tick_key, utcnow())
            uow.commit()
    consolidation = consolidate_agent(uow_factory, conv.tenant_id, conv.agent_id)
    with uow_factory() as uow:
        conv = uow.repo.get_conversation(conversation_id) or conv
        budget = budget_for(conv, defaults, uow.repo.calibrations())
    over_soft = budget.effective(conv.live_tokens) > budget.soft
    too_many = entry_trigger > 0 and conv.live_messages > entry_trigger
    compaction: dict[str, Any] = {"status": "not needed"}
    if over_soft or too_many:
        outcome = compact(
            uow_factory,
            counter,
            summarizer,
            conversation_id,
            trigger="sleep",
            defaults=defaults,
            policy=policy,
            force=too_many and not over_soft,
        )
        compaction = {
            "status": outcome.status,
            "compaction_id": outcome.compaction_id,
            "tokens_before": outcome.tokens_before,
            "tokens_after": outcome.tokens_after,
            "reason": outcome.reason,
        }
    result = {
        "tick_key": tick_key,
        "consolidation": consolidation,
        "compaction": compaction,
        "trigger": "soft threshold" if over_soft else "entry count" if too_many else None,
    }
    with uow_factory() as uow:
        uow.repo.finish_tick(conversation_id, tick_key, result, utcnow())
        uow.commit()
    log.info(
        "sleep_tick",
        conversation_id=conversation_id,
        tick_key=tick_key,
        compaction=compaction["status"],
        memories_created=consolidation.get("created", 0),
    )
    return result
