"""The application's say in a compaction (``sleepcompact.hooks``): asked after the plan, before anything
is written or paid for, and told after the outcome."""

from __future__ import annotations

import time

from sleepcompact.domain.ladder import Plan
from sleepcompact.hooks import BeforeCompaction
from sleepcompact.ports import Dependencies
from sleepcompact.services.compaction_writes import Loaded, bare_record, record_only
from sleepcompact.services.outcomes import CompactionOutcome, OutcomeReporter, plan_dict


def consult(
    deps: Dependencies,
    loaded: Loaded,
    p: Plan,
    trigger: str,
    deadline: float | None,
    report: OutcomeReporter,
) -> CompactionOutcome | str | None:
    """The ``before_compaction`` hooks' answer: a recorded ``vetoed`` outcome, instructions to add to the
    summary request, or None. In the request path each hook gets what is left of the guard's deadline."""
    event = BeforeCompaction(
        conversation_id=loaded.conv.id,
        tenant_id=loaded.conv.tenant_id,
        trigger=trigger,
        tokens_before=p.tokens_before,
        tokens_after=p.tokens_after,
        steps=tuple(dict.fromkeys(s.step for s in p.steps)),
        plan=plan_dict(p),
    )
    remaining = None if deadline is None else deadline - time.monotonic()
    verdict = deps.hooks.verdict(event, timeout_s=remaining)
    if verdict.veto is None:
        return verdict.instructions
    why = f"vetoed by a before_compaction hook: {verdict.veto}"
    record = bare_record(loaded, trigger, p.tokens_before)
    record_only(deps, record, "vetoed", why)
    return report.done(
        status="vetoed",
        compaction_id=record.id,
        tokens_before=p.tokens_before,
        tokens_after=p.tokens_before,
        reason=why,
    )


def told(deps: Dependencies, outcome: CompactionOutcome) -> CompactionOutcome:
    """Tell the ``after_compaction`` hooks (a dry run did nothing, and is not told)."""
    if outcome.status != "dry_run" and deps.hooks:
        deps.hooks.notify("after_compaction", outcome)
    return outcome
