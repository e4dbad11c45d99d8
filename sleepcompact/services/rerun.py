"""The admin re-run: compact again from the archive with today's settings and summarizer.

``rerun(conversation)`` undoes every applied compaction since the last ``clear`` (a clear is the user's
own decision and is never undone) and compacts again; ``rerun(compaction_id=...)`` undoes that one and
every later one. Both record trigger ``admin_rerun``. ``preview`` does the same in memory: it plans
against exactly the rows the restore would bring back, asks the summarizer, and writes nothing.
"""

from __future__ import annotations

import uuid
from dataclasses import asdict, dataclass
from typing import Any

from sleepcompact.domain.archive import Undo, restored_live_rows
from sleepcompact.domain.errors import CompactionNotFound, ConversationNotFound, NothingToRerun, NotRestorable
from sleepcompact.domain.ladder import Snapshot, conversation_policy, plan
from sleepcompact.domain.ledger import with_ledger
from sleepcompact.domain.messages import content_text
from sleepcompact.domain.prompt import SUMMARY_PREFIX, SummaryInput, prepared_prompt
from sleepcompact.domain.records import CompactionRecord
from sleepcompact.ports import Dependencies, UnitOfWork
from sleepcompact.services import leases
from sleepcompact.services.compaction import CompactRequest, compact, instructions_for
from sleepcompact.services.context import budget_for
from sleepcompact.services.history import restore
from sleepcompact.services.outcomes import CompactionOutcome


@dataclass(frozen=True)
class RerunPreview:
    """What a re-run would do: the compactions undone, the tokens, and the old and new summaries."""

    conversation_id: str
    undone: tuple[str, ...]
    tokens_now: int
    tokens_restored: int
    tokens_after: int
    steps: tuple[str, ...]
    old_summaries: tuple[str, ...]
    new_summary: str | None
    reason: str
    changes: int = 0

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return {k: list(v) if isinstance(v, tuple) else v for k, v in asdict(self).items()}


@dataclass(frozen=True)
class RerunResult:
    """What a re-run did: the compactions undone (newest first) and the new compaction's outcome."""

    undone: tuple[str, ...]
    outcome: CompactionOutcome

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return {"undone": list(self.undone), "outcome": self.outcome.to_dict()}


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


def locate(deps: Dependencies, conversation_id: str | None, compaction_id: str | None) -> str:
    """The conversation a re-run targets; ``ConversationNotFound`` or ``CompactionNotFound`` when there
    is none (checked before a re-run is queued, so a typo fails at once, not in the worker)."""
    with deps.read_uow() as uow:
        return _locate(uow, conversation_id, compaction_id)


def _locate(uow: UnitOfWork, conversation_id: str | None, compaction_id: str | None) -> str:
    if compaction_id is not None:
        found = uow.compactions.get(compaction_id)
        if found is None:
            raise CompactionNotFound(f"unknown compaction: {compaction_id!r}")
        return found[0].conversation_id
    if conversation_id is None or uow.conversations.get(conversation_id) is None:
        raise ConversationNotFound(conversation_id or "")
    return conversation_id


def preview(
    deps: Dependencies, *, conversation_id: str | None = None, compaction_id: str | None = None
) -> RerunPreview:
    """The re-run's dry run: plan and summarize against the restored rows in memory; writes nothing."""
    counter = deps.counter
    with deps.read_uow() as uow:
        cid = _locate(uow, conversation_id, compaction_id)
        conv = uow.conversations.get(cid)
        assert conv is not None
        history = uow.compactions.of(cid)
        rows = uow.conversations.all_messages(cid)
        factors = uow.calibration.factors()
    undo = _targets(history, compaction_id)
    live = restored_live_rows(rows, [Undo(m.get("prior", []), r.summary_message_id) for r, m in undo])
    remaining = sum(1 for r, _ in history if r.status == "applied" and r.summary_message_id) - sum(
        1 for r, _ in undo if r.summary_message_id
    )
    budget = budget_for(conv, deps.settings.thresholds, factors)
    snapshot = Snapshot(cid, conv.compaction_epoch, conv.next_seq - 1, tuple(live), remaining)
    policy = conversation_policy(conv, deps.policy)
    p = plan(snapshot, budget, policy, counter.count, force_summary=True)
    new_summary: str | None = None
    if p.summary is not None:
        previous = p.summary.previous
        body = content_text(previous.content).removeprefix(SUMMARY_PREFIX).strip() if previous else None
        inp = SummaryInput(p.summary.rows, body, p.summary.max_tokens)
        instructions = instructions_for(deps, conv.tenant_id, policy, None)
        narrative, prompt, ledger = prepared_prompt(inp, counter.count, instructions)
        new_summary = with_ledger(deps.summarizer.summarize(narrative, prompt).text, ledger)
    return RerunPreview(
        conversation_id=cid,
        undone=tuple(r.id for r, _ in undo),
        tokens_now=budget.effective(conv.live_tokens),
        tokens_restored=budget.effective(sum(r.live_tokens for r in live)),
        tokens_after=p.tokens_after,
        steps=tuple(dict.fromkeys(s.step for s in p.steps)),
        old_summaries=tuple(str(m.get("summary")) for r, m in reversed(undo) if m.get("summary")),
        new_summary=new_summary,
        reason=p.reason,
        changes=len(p.changes),
    )


def rerun(
    deps: Dependencies, *, conversation_id: str | None = None, compaction_id: str | None = None
) -> RerunResult:
    """Undo (newest first) and compact again with trigger ``admin_rerun``; returns the ids undone and the
    outcome. Restoring archives nothing away and compacting archives, so nothing is lost either way."""
    with deps.read_uow() as uow:
        cid = _locate(uow, conversation_id, compaction_id)
        undo = _targets(uow.compactions.of(cid), compaction_id)
    # Under the lease, so no tick or guard compacts between the restore and the new compaction. If the
    # new compaction fails, the conversation stays restored: bigger, never missing anything.
    with leases.held(deps, cid, f"rerun:{uuid.uuid4().hex}"):
        restored = restore(deps, undo[-1][0].id)
        outcome = compact(deps, cid, CompactRequest(trigger="admin_rerun", force=True))
    return RerunResult(restored, outcome)
