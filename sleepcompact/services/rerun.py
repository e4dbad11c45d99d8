"""The admin re-run: compact again from the archive with today's settings and summarizer.

``rerun(conversation)`` undoes every applied compaction since the last ``clear`` (a clear is the user's
own decision and is never undone) and compacts again; ``rerun(compaction_id=...)`` undoes that one and
every later one. Both record trigger ``admin_rerun``. ``preview`` does the same in memory: it plans
against exactly the rows the restore would bring back, asks the summarizer, and writes nothing.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from sleepcompact.domain.archive import Undo, restored_live_rows
from sleepcompact.domain.budget import Thresholds
from sleepcompact.domain.errors import ConversationNotFound, SleepcompactError
from sleepcompact.domain.ladder import Policy, Snapshot, plan
from sleepcompact.domain.messages import content_text
from sleepcompact.domain.prompt import SUMMARY_PREFIX, SummaryInput, build_prompt
from sleepcompact.domain.records import CompactionRecord
from sleepcompact.services import leases
from sleepcompact.services.compaction import CompactionNotFound, NotRestorable, compact
from sleepcompact.services.compaction_records import CompactionOutcome, conversation_policy
from sleepcompact.services.context import budget_for
from sleepcompact.services.history import restore
from sleepcompact.services.ports import Summarizer, TokenCounter, UnitOfWork


class NothingToRerun(SleepcompactError):
    """The conversation has no applied compaction since its last clear."""


@dataclass
class RerunPreview:
    """What a re-run would do: the compactions undone, the tokens, and the old and new summaries."""

    conversation_id: str
    undone: list[str]
    tokens_now: int
    tokens_restored: int
    tokens_after: int
    steps: list[str]
    old_summaries: list[str]
    new_summary: str | None
    reason: str
    changes: int = 0
    extra: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return {k: v for k, v in self.__dict__.items() if k != "extra"}


def _targets(
    history: list[tuple[CompactionRecord, dict[str, Any]]], compaction_id: str | None
) -> list[tuple[CompactionRecord, dict[str, Any]]]:
    """Applied compactions to undo, newest first (epoch order, like ``restore``)."""
    applied = [(r, m) for r, m in history if r.status == "applied"]
    applied.sort(key=lambda rm: rm[0].snapshot_epoch)
    if compaction_id is None:
        clears = [i for i, (r, _) in enumerate(applied) if r.trigger == "clear"]
        chosen = applied[clears[-1] + 1 :] if clears else applied
    else:
        index = next((i for i, (r, _) in enumerate(applied) if r.id == compaction_id), None)
        if index is None:
            raise NotRestorable(f"compaction {compaction_id} is not applied; only applied ones can be re-run")
        chosen = applied[index:]
        if any(r.trigger == "clear" for r, _ in chosen):
            raise NotRestorable(f"a clear came after {compaction_id}; re-running it would undo the clear")
    if not chosen:
        raise NothingToRerun("nothing to re-run: no applied compaction since the last clear")
    return list(reversed(chosen))


def _locate(uow: UnitOfWork, conversation_id: str | None, compaction_id: str | None) -> str:
    if compaction_id is not None:
        found = uow.repo.get_compaction(compaction_id)
        if found is None:
            raise CompactionNotFound(f"unknown compaction: {compaction_id!r}")
        return found[0].conversation_id
    if conversation_id is None or uow.repo.get_conversation(conversation_id) is None:
        raise ConversationNotFound(conversation_id or "")
    return conversation_id


def preview(
    uow_factory: Callable[[], UnitOfWork],
    counter: TokenCounter,
    summarizer: Summarizer,
    *,
    conversation_id: str | None = None,
    compaction_id: str | None = None,
    defaults: Thresholds,
    policy: Policy,
) -> RerunPreview:
    """The re-run's dry run: plan and summarize against the restored rows in memory; writes nothing."""
    with uow_factory() as uow:
        cid = _locate(uow, conversation_id, compaction_id)
        conv = uow.repo.get_conversation(cid)
        assert conv is not None
        history = uow.repo.compactions_with_meta(cid)
        rows = uow.repo.all_messages(cid)
        factors = uow.repo.calibrations()
    undo = _targets(history, compaction_id)
    live = restored_live_rows(rows, [Undo(m.get("prior", []), r.summary_message_id) for r, m in undo])
    remaining = sum(1 for r, _ in history if r.status == "applied" and r.summary_message_id) - sum(
        1 for r, _ in undo if r.summary_message_id
    )
    budget = budget_for(conv, defaults, factors)
    snapshot = Snapshot(cid, conv.compaction_epoch, conv.next_seq - 1, tuple(live), remaining)
    p = plan(snapshot, budget, conversation_policy(conv, policy), counter.count, force_summary=True)
    new_summary: str | None = None
    if p.summary is not None:
        previous = p.summary.previous
        body = content_text(previous.content).removeprefix(SUMMARY_PREFIX).strip() if previous else None
        inp = SummaryInput(p.summary.rows, body, p.summary.max_tokens)
        new_summary = summarizer.summarize(inp, build_prompt(inp, count=counter.count)).text
    return RerunPreview(
        conversation_id=cid,
        undone=[r.id for r, _ in undo],
        tokens_now=budget.effective(conv.live_tokens),
        tokens_restored=budget.effective(sum(r.live_tokens for r in live)),
        tokens_after=p.tokens_after,
        steps=list(dict.fromkeys(s.step for s in p.steps)),
        old_summaries=[str(m.get("summary")) for r, m in reversed(undo) if m.get("summary")],
        new_summary=new_summary,
        reason=p.reason,
        changes=len(p.changes),
    )


def rerun(
    uow_factory: Callable[[], UnitOfWork],
    counter: TokenCounter,
    summarizer: Summarizer,
    *,
    conversation_id: str | None = None,
    compaction_id: str | None = None,
    defaults: Thresholds,
    policy: Policy,
    lease_seconds: int = 420,
) -> tuple[list[str], CompactionOutcome]:
    """Undo (newest first) and compact again with trigger ``admin_rerun``; returns the ids undone and the
    outcome. Restoring archives nothing away and compacting archives, so nothing is lost either way."""
    with uow_factory() as uow:
        cid = _locate(uow, conversation_id, compaction_id)
        undo = _targets(uow.repo.compactions_with_meta(cid), compaction_id)
    # Under the lease, so no tick or guard compacts between the restore and the new compaction. If the
    # new compaction fails, the conversation stays restored: bigger, never missing anything.
    with leases.held(uow_factory, cid, f"rerun:{uuid.uuid4().hex}", lease_seconds):
        restored = restore(uow_factory(), undo[-1][0].id)
        outcome = compact(
            uow_factory,
            counter,
            summarizer,
            cid,
            trigger="admin_rerun",
            defaults=defaults,
            policy=policy,
            force=True,
        )
    return restored, outcome
