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

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

import structlog

from sleepcompact.domain.budget import Thresholds
from sleepcompact.domain.errors import LLMError, PermanentLLMError, SleepcompactError
from sleepcompact.domain.ladder import Policy
from sleepcompact.domain.prompt import SummaryInput, SummaryPrompt
from sleepcompact.services.compaction import DeferToBatch, Trigger, compact
from sleepcompact.services.compaction_records import CompactionOutcome
from sleepcompact.services.ports import SummaryResult, TokenCounter, UnitOfWork

log = structlog.get_logger(__name__)


class BatchSummarizer(Protocol):
    """A summarizer that can also work through a batch API."""

    provider: str
    model: str

    def summarize(self, request: SummaryInput, prompt: SummaryPrompt) -> SummaryResult:
        """A direct call."""
        ...

    def request_params(self, request: SummaryInput, prompt: SummaryPrompt) -> dict[str, Any]:
        """The parameters one batch request carries (redacted)."""
        ...

    def submit_batch(self, requests: list[tuple[str, dict[str, Any]]]) -> str:
        """Submit requests; returns the batch id."""
        ...

    def batch_ended(self, batch_id: str) -> bool:
        """Whether the batch's results can be read."""
        ...

    def batch_results(self, batch_id: str) -> dict[str, tuple[str, Any]]:
        """custom_id -> (result type, message or error)."""
        ...

    def parse(self, response: Any, params: dict[str, Any], *, batch: bool) -> SummaryResult:
        """Validate a response into a result."""
        ...


class _Collector:
    """Plans like a direct call, but hands the request to the batch instead of calling the API."""

    def __init__(self, inner: BatchSummarizer) -> None:
        self.inner = inner
        self.provider = inner.provider
        self.model = inner.model

    def summarize(self, request: SummaryInput, prompt: SummaryPrompt) -> SummaryResult:
        raise DeferToBatch(self.inner.request_params(request, prompt), [r.seq for r in request.rows])


class _Prefetched:
    """Returns a batch result, but only for the exact messages it summarized."""

    def __init__(self, result: SummaryResult, seqs: list[int], provider: str, model: str) -> None:
        self.result, self.seqs, self.provider, self.model = result, seqs, provider, model

    def summarize(self, request: SummaryInput, prompt: SummaryPrompt) -> SummaryResult:
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


def submit(
    uow_factory: Callable[[], UnitOfWork],
    counter: TokenCounter,
    summarizer: BatchSummarizer,
    conversation_ids: list[str],
    *,
    defaults: Thresholds,
    policy: Policy,
    trigger: Trigger = "sleep",
) -> BatchReport:
    """Plan every conversation; LLM-free ones apply now, the others go out as one batch."""
    if trigger == "emergency":
        raise SleepcompactError("emergency compactions never wait for a batch")
    collector = _Collector(summarizer)
    deferred: list[str] = []
    direct: list[CompactionOutcome] = []
    for cid in conversation_ids:
        outcome = compact(
            uow_factory,
            counter,
            collector,
            cid,
            trigger=trigger,
            defaults=defaults,
            policy=policy,
            fallback=False,
        )
        if outcome.status == "deferred" and outcome.compaction_id:
            deferred.append(outcome.compaction_id)
        else:
            direct.append(outcome)
    if not deferred:
        return BatchReport(applied_directly=direct)
    requests: list[tuple[str, dict[str, Any]]] = []
    with uow_factory() as uow:
        for compaction_id in deferred:
            found = uow.repo.get_compaction(compaction_id)
            assert found is not None
            requests.append((compaction_id, found[1]["batch"]["params"]))
    batch_id = summarizer.submit_batch(requests)
    with uow_factory() as uow:
        for compaction_id in deferred:
            _, meta = uow.repo.get_compaction(compaction_id) or (None, {})
            meta["batch"]["batch_id"] = batch_id
            uow.repo.set_compaction(compaction_id, meta=meta)
        uow.commit()
    log.info("batch_submitted", batch_id=batch_id, requests=len(deferred))
    return BatchReport(batch_id=batch_id, submitted=deferred, applied_directly=direct)


def poll(
    uow_factory: Callable[[], UnitOfWork],
    counter: TokenCounter,
    summarizer: BatchSummarizer,
    *,
    defaults: Thresholds,
    policy: Policy,
) -> BatchReport:
    """Apply every ended batch's results; safe to run any number of times."""
    with uow_factory() as uow:
        running = uow.repo.compactions_with_status("running")
    by_batch: dict[str, list[tuple[str, str, str, dict[str, Any]]]] = {}
    for record, meta in running:
        batch = meta.get("batch") or {}
        if batch.get("batch_id"):
            by_batch.setdefault(batch["batch_id"], []).append(
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
        for compaction_id, cid, trigger, meta in items:
            kind, payload = results.get(compaction_id, ("missing", None))
            outcome: CompactionOutcome | None = None
            reason = f"batch result {kind}"
            if kind == "succeeded":
                try:
                    result = summarizer.parse(payload, meta["batch"]["params"], batch=True)
                    prefetched = _Prefetched(
                        result, meta["batch"]["seqs"], summarizer.provider, summarizer.model
                    )
                    outcome = compact(
                        uow_factory,
                        counter,
                        prefetched,
                        cid,
                        trigger=_trigger(trigger),
                        defaults=defaults,
                        policy=policy,
                        fallback=False,
                        factors=meta["batch"].get("factors"),
                    )
                    reason = "applied from the batch" if outcome.status == "applied" else outcome.reason
                except (LLMError, SleepcompactError) as exc:
                    reason = f"batch result unusable: {exc}"
            _close(uow_factory, compaction_id, reason, outcome)
            if outcome is not None and outcome.status == "applied":
                applied.append(outcome)
                continue
            # Errored, expired, canceled, invalid or stale: the direct call does it now.
            retried.append(
                compact(
                    uow_factory,
                    counter,
                    summarizer,
                    cid,
                    trigger=_trigger(trigger),
                    defaults=defaults,
                    policy=policy,
                    fallback=False,
                )
            )
    return BatchReport(applied=applied, retried_directly=retried, pending_batches=pending)


def _trigger(value: str) -> Trigger:
    return "manual" if value not in ("sleep", "manual", "admin_rerun") else value  # type: ignore[return-value]


def _close(
    uow_factory: Callable[[], UnitOfWork], compaction_id: str, reason: str, outcome: CompactionOutcome | None
) -> None:
    """The batch's placeholder record is superseded by whatever compaction the result led to."""
    with uow_factory() as uow:
        found = uow.repo.get_compaction(compaction_id)
        if found is None or found[0].status != "running":
            return
        meta = dict(found[1])
        meta["batch"] = {
            **meta.get("batch", {}),
            "result": reason,
            "applied_as": outcome.compaction_id if outcome else None,
        }
        uow.repo.set_compaction(compaction_id, status="superseded", error=reason, meta=meta)
        uow.commit()


__all__ = ["BatchReport", "BatchSummarizer", "poll", "submit"]
