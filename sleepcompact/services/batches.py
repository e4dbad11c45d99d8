"""Summaries through the Message Batches API (half price), for nightly ticks.

``submit`` plans each conversation exactly as a direct compaction would; the
ones that need a summary record a ``running`` compaction holding the request,
and all requests go out as one batch. ``poll`` reads ended batches and applies
each result through the ordinary ``compact`` path, so the same epoch check
guards it: the prefetched summary is used only if the plan still folds exactly
the messages it was written for. Errored, expired or stale results are retried
with a direct call. Emergencies never wait for a batch.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sleepcompact.domain.errors import LLMError, PermanentLLMError, SleepcompactError
from sleepcompact.domain.prompt import SummaryInput, SummaryPrompt
from sleepcompact.logs import get_logger
from sleepcompact.ports import BatchSummarizer, Dependencies, SummaryResult
from sleepcompact.services.compaction import CompactRequest, Trigger, compact
from sleepcompact.services.outcomes import CompactionOutcome
from sleepcompact.services.summaries import DeferToBatch

log = get_logger(__name__)


class _Collector:
    """Plans like a direct call, but hands the request to the batch instead of calling the API."""

    def __init__(self, inner: BatchSummarizer) -> None:
        self.inner = inner
        self.provider = inner.provider
        self.model = inner.model

    def summarize(
        self, request: SummaryInput, prompt: SummaryPrompt, *, deadline: float | None = None
    ) -> SummaryResult:
        raise DeferToBatch(self.inner.request_params(request, prompt), [r.seq for r in request.rows])


class _Prefetched:
    """Returns a batch result, but only for the exact messages it summarized."""

    def __init__(self, result: SummaryResult, seqs: list[int], provider: str, model: str) -> None:
        self.result, self.seqs, self.provider, self.model = result, seqs, provider, model

    def summarize(
        self, request: SummaryInput, prompt: SummaryPrompt, *, deadline: float | None = None
    ) -> SummaryResult:
        if [r.seq for r in request.rows] != self.seqs:
            raise PermanentLLMError("the conversation changed since the batch was submitted")
        return self.result


@dataclass(frozen=True)
class BatchReport:
    """What a submit or a poll did."""

    batch_id: str | None = None
    submitted: list[str] = field(default_factory=list)
    applied_directly: list[CompactionOutcome] = field(default_factory=list)
    applied: list[CompactionOutcome] = field(default_factory=list)
    retried_directly: list[CompactionOutcome] = field(default_factory=list)
    pending_batches: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready (outcomes as their own dicts)."""
        return {
            "batch_id": self.batch_id,
            "submitted": list(self.submitted),
            "applied_directly": [o.to_dict() for o in self.applied_directly],
            "applied": [o.to_dict() for o in self.applied],
            "retried_directly": [o.to_dict() for o in self.retried_directly],
            "pending_batches": list(self.pending_batches),
        }


def submit(
    deps: Dependencies,
    summarizer: BatchSummarizer,
    conversation_ids: list[str],
    *,
    trigger: Trigger = "sleep",
) -> BatchReport:
    """Plan every conversation; LLM-free ones apply now, the others go out as one batch."""
    if trigger == "emergency":
        raise SleepcompactError("emergency compactions never wait for a batch")
    request = CompactRequest(trigger=trigger, fallback=False, summarizer=_Collector(summarizer))
    deferred: list[str] = []
    direct: list[CompactionOutcome] = []
    for cid in conversation_ids:
        outcome = compact(deps, cid, request)
        if outcome.status == "deferred" and outcome.compaction_id:
            deferred.append(outcome.compaction_id)
        else:
            direct.append(outcome)
    if not deferred:
        return BatchReport(applied_directly=direct)
    with deps.read_uow() as uow:
        requests = [(cid, _meta(uow.compactions.get(cid))["batch"]["params"]) for cid in deferred]
    batch_id = summarizer.submit_batch(requests)
    with deps.uow() as uow:
        for compaction_id in deferred:
            meta = _meta(uow.compactions.get(compaction_id))
            meta["batch"]["batch_id"] = batch_id
            uow.compactions.update(compaction_id, meta=meta)
        uow.commit()
    log.info("batch_submitted", batch_id=batch_id, requests=len(deferred))
    return BatchReport(batch_id=batch_id, submitted=deferred, applied_directly=direct)


def _meta(found: tuple[Any, dict[str, Any]] | None) -> dict[str, Any]:
    assert found is not None
    return dict(found[1])


_Item = tuple[str, str, str, dict[str, Any]]  # compaction id, conversation id, trigger, metadata


def poll(deps: Dependencies, summarizer: BatchSummarizer) -> BatchReport:
    """Apply every ended batch's results; safe to run any number of times."""
    with deps.read_uow() as uow:
        running = uow.compactions.with_status("running")
    by_batch: dict[str, list[_Item]] = {}
    for record, meta in running:
        batch_id = (meta.get("batch") or {}).get("batch_id")
        if batch_id:
            by_batch.setdefault(batch_id, []).append(
                (record.id, record.conversation_id, record.trigger, meta)
            )
    applied: list[CompactionOutcome] = []
    retried: list[CompactionOutcome] = []
    pending: list[str] = []
    for batch_id, items in by_batch.items():
        if not summarizer.batch_ended(batch_id):
            pending.append(batch_id)
            continue
        results = summarizer.batch_results(batch_id)
        for item in items:
            outcome = _apply_result(deps, summarizer, item, results.get(item[0], ("missing", None)))
            if outcome is not None:
                applied.append(outcome)
                continue
            # Errored, expired, canceled, invalid or stale: the direct call does it now.
            request = CompactRequest(trigger=_trigger(item[2]), fallback=False, summarizer=summarizer)
            retried.append(compact(deps, item[1], request))
    return BatchReport(applied=applied, retried_directly=retried, pending_batches=pending)


def _apply_result(
    deps: Dependencies, summarizer: BatchSummarizer, item: _Item, found: tuple[str, Any]
) -> CompactionOutcome | None:
    """Apply one batch result through the ordinary compaction path; the outcome if it applied.

    Whatever happens, the batch's placeholder record is closed (superseded) with the reason.
    """
    compaction_id, cid, trigger, meta = item
    kind, payload = found
    outcome: CompactionOutcome | None = None
    reason = f"batch result {kind}"
    if kind == "succeeded":
        try:
            batch = meta["batch"]
            result = summarizer.parse(payload, batch["params"], batch=True)
            prefetched = _Prefetched(result, batch["seqs"], summarizer.provider, summarizer.model)
            request = CompactRequest(
                trigger=_trigger(trigger), fallback=False, factors=batch.get("factors"), summarizer=prefetched
            )
            outcome = compact(deps, cid, request)
            reason = "applied from the batch" if outcome.status == "applied" else outcome.reason
        except (LLMError, SleepcompactError) as exc:
            reason = f"batch result unusable: {exc}"
    _close(deps, compaction_id, reason, outcome)
    return outcome if outcome is not None and outcome.status == "applied" else None


def _trigger(value: str) -> Trigger:
    return "manual" if value not in ("sleep", "manual", "admin_rerun") else value  # type: ignore[return-value]


def _close(deps: Dependencies, compaction_id: str, reason: str, outcome: CompactionOutcome | None) -> None:
    """The batch's placeholder record is superseded by whatever compaction the result led to."""
    with deps.uow() as uow:
        found = uow.compactions.get(compaction_id)
        if found is None or found[0].status != "running":
            return
        meta = dict(found[1])
        meta["batch"] = {
            **meta.get("batch", {}),
            "result": reason,
            "applied_as": outcome.compaction_id if outcome else None,
        }
        uow.compactions.update(compaction_id, status="superseded", error=reason, meta=meta)
        uow.commit()
