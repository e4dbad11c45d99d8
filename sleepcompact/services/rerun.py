"""The admin re-run: compact again from the archive with today's settings and summarizer.

``rerun(conversation)`` undoes every applied compaction since the last ``clear`` (a clear is the user's
own decision and is never undone) and compacts again; ``rerun(compaction_id=...)`` undoes that one and
every later one. Both record trigger ``admin_rerun``. ``preview`` does the same in memory: it plans
against exactly the rows the restore would bring back, asks the summarizer, and writes nothing.
"""

from __future__ import annotations

import difflib
import uuid
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from sleepcompact.domain.archive import Undo, restored_live_rows
from sleepcompact.domain.errors import CompactionNotFound, ConversationNotFound, NothingToRerun, NotRestorable
from sleepcompact.domain.ladder import Plan, Snapshot, conversation_policy, plan
from sleepcompact.domain.ledger import with_ledger
from sleepcompact.domain.messages import content_text, part_tokens
from sleepcompact.domain.prompt import SUMMARY_PREFIX, prepared_prompt
from sleepcompact.domain.records import CompactionRecord, MessageRecord, logical_order
from sleepcompact.ports import Dependencies, UnitOfWork
from sleepcompact.services import leases
from sleepcompact.services.budgets import budget_for
from sleepcompact.services.compaction import CompactRequest, compact, instructions_for, summary_input
from sleepcompact.services.compaction_settings import changed_settings, settings_used
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
    context_diff: str = ""  # unified diff of the live context, now against after the re-run
    settings_changed: dict[str, list[Any]] = field(default_factory=dict)  # name: [then, now]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return {k: list(v) if isinstance(v, tuple) else v for k, v in asdict(self).items()}


@dataclass(frozen=True)
class RerunResult:
    """What a re-run did: the compactions undone (newest first) and the new compaction's outcome."""

    undone: tuple[str, ...]
    outcome: CompactionOutcome
    settings_changed: dict[str, list[Any]] = field(default_factory=dict)  # name: [then, now]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return {
            "undone": list(self.undone),
            "outcome": self.outcome.to_dict(),
            "settings_changed": self.settings_changed,
        }


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
    instructions = instructions_for(deps, conv.tenant_id, policy, None)
    changed = changed_settings(undo[-1][1].get("settings"), settings_used(deps, conv, policy, instructions))
    p = plan(snapshot, budget, policy, counter.count, force_summary=_summarized(undo) and not changed)
    summary: str | None = None
    if p.summary is not None:
        inp, note = summary_input(snapshot, p, counter.count)
        narrative, prompt, ledger = prepared_prompt(inp, counter.count, instructions)
        text = with_ledger(deps.summarizer.summarize(narrative, prompt).text, ledger)
        summary = f"{SUMMARY_PREFIX}{note}{text.strip()}"
    now_live = [r for r in rows if r.state != "archived"]
    after = _after(live, p, summary, part_tokens(summary, counter.count) if summary else 0)
    return RerunPreview(
        conversation_id=cid,
        undone=tuple(r.id for r, _ in undo),
        tokens_now=budget.effective(conv.live_tokens),
        tokens_restored=budget.effective(sum(r.live_tokens for r in live)),
        tokens_after=p.tokens_after,
        steps=tuple(dict.fromkeys(s.step for s in p.steps)),
        old_summaries=tuple(str(m.get("summary")) for r, m in reversed(undo) if m.get("summary")),
        new_summary=summary.removeprefix(SUMMARY_PREFIX) if summary is not None else None,
        reason=p.reason,
        changes=len(p.changes),
        context_diff=_diff(now_live, after),
        settings_changed=changed,
    )


def _summarized(undo: list[tuple[CompactionRecord, dict[str, Any]]]) -> bool:
    """Whether the compactions a re-run replaces wrote a summary. With unchanged settings the re-run
    writes one exactly then (it never adds a summary step to an LLM-free compaction, nor drops one);
    once settings changed, the ladder decides under the new ones."""
    return any(r.summary_message_id is not None for r, _ in undo)


def _after(live: list[MessageRecord], p: Plan, summary: str | None, tokens: int) -> list[MessageRecord]:
    """The live rows once ``p`` is applied, in memory: changed views, archived rows gone, the summary."""
    changes = {c.message_id: c for c in p.changes}
    out = []
    for row in live:
        c = changes.get(row.id)
        if c is None:
            out.append(row)
        elif c.state != "archived":
            out.append(replace(row, state=c.state, live_content=c.live_content, live_tokens=c.live_tokens))
    if summary is not None:
        seq = max((r.seq for r in live), default=0) + 1
        row = replace(live[-1], id=-1, seq=seq, part=0, role="user", kind="summary", content=summary)
        out.append(replace(row, live_content=None, live_tokens=tokens, state="live", tool_name=None))
    return out


def _diff(before: list[MessageRecord], after: list[MessageRecord]) -> str:
    """A unified diff of two live contexts, one block per row in the order the model reads them."""

    def lines(rows: list[MessageRecord]) -> list[str]:
        out: list[str] = []
        for r in logical_order(rows):
            # A summary's seq is only known once it is written: it is named by what it is.
            where = "summary" if r.kind == "summary" else f"seq {r.seq} {r.role}/{r.kind}"
            out.append(f"@ {where} ({r.live_tokens:,} tokens)")
            out.extend(content_text(r.view).splitlines() or [""])
        return out

    diff = difflib.unified_diff(
        lines(before), lines(after), "live context now", "after the re-run", lineterm=""
    )
    return "\n".join(diff)


def rerun(
    deps: Dependencies, *, conversation_id: str | None = None, compaction_id: str | None = None
) -> RerunResult:
    """Undo (newest first) and compact again with trigger ``admin_rerun``; returns the ids undone and the
    outcome. Restoring archives nothing away and compacting archives, so nothing is lost either way."""
    with deps.read_uow() as uow:
        cid = _locate(uow, conversation_id, compaction_id)
        undo = _targets(uow.compactions.of(cid), compaction_id)
        conv = uow.conversations.get(cid)
        assert conv is not None
    policy = conversation_policy(conv, deps.policy)
    now = settings_used(deps, conv, policy, instructions_for(deps, conv.tenant_id, policy, None))
    changed = changed_settings(undo[-1][1].get("settings"), now)
    # Under the lease, so no tick or guard compacts between the restore and the new compaction. If the
    # new compaction fails, the conversation stays restored: bigger, never missing anything.
    with leases.held(deps, cid, f"rerun:{uuid.uuid4().hex}"):
        restored = restore(deps, undo[-1][0].id)
        request = CompactRequest(trigger="admin_rerun", force=_summarized(undo) and not changed)
        outcome = compact(deps, cid, request)
    return RerunResult(restored, outcome, changed)
