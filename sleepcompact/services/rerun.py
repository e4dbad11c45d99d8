"""The admin re-run: compact a conversation again, optionally after undoing a given compaction first."""

from __future__ import annotations

from collections.abc import Callable

from sleepcompact.domain.budget import Thresholds
from sleepcompact.domain.errors import ConversationNotFound
from sleepcompact.domain.ladder import Policy
from sleepcompact.services.compaction import CompactionNotFound, compact
from sleepcompact.services.compaction_records import CompactionOutcome
from sleepcompact.services.history import restore
from sleepcompact.services.ports import Summarizer, TokenCounter, UnitOfWork


def rerun(
    uow_factory: Callable[[], UnitOfWork],
    counter: TokenCounter,
    summarizer: Summarizer,
    *,
    conversation_id: str | None = None,
    compaction_id: str | None = None,
    defaults: Thresholds,
    policy: Policy,
    dry_run: bool = False,
) -> tuple[list[str], CompactionOutcome]:
    """Restore ``compaction_id`` (and any later ones), then compact with trigger ``admin_rerun``.

    Returns the ids restored and the new outcome. With only a conversation, nothing is restored.
    ``dry_run`` restores nothing and returns the plan the re-run would apply to the current state.
    Restoring archives nothing away and compacting archives, so a re-run loses nothing either way.
    """
    if compaction_id is not None:
        with uow_factory() as uow:
            found = uow.repo.get_compaction(compaction_id)
        if found is None:
            raise CompactionNotFound(f"unknown compaction: {compaction_id!r}")
        conversation_id = found[0].conversation_id
    if conversation_id is None:
        raise ConversationNotFound("a re-run needs a conversation or a compaction id")
    restored: list[str] = []
    if compaction_id is not None and not dry_run:
        restored = restore(uow_factory(), compaction_id)
    outcome = compact(
        uow_factory,
        counter,
        summarizer,
        conversation_id,
        trigger="admin_rerun",
        defaults=defaults,
        policy=policy,
        dry_run=dry_run,
        force=True,
    )
    return restored, outcome
