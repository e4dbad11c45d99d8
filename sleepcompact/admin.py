"""The admin side of the ``Memory`` facade: re-runs and Message Batches."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sleepcompact.config import Settings
from sleepcompact.domain.budget import Thresholds
from sleepcompact.domain.errors import InvalidSetting
from sleepcompact.domain.ladder import Policy
from sleepcompact.evaluation import POLICIES, PolicyResult, evaluate
from sleepcompact.services import batches
from sleepcompact.services import rerun as rerun_service
from sleepcompact.services.batches import BatchReport, BatchSummarizer
from sleepcompact.services.compaction import Trigger
from sleepcompact.services.ports import Summarizer, TokenCounter
from sleepcompact.store.uow import SqlUnitOfWork


class AdminMemory:
    """Mixed into ``Memory``: what an operator runs on compactions."""

    settings: Settings
    counter: TokenCounter
    policy: Policy

    if TYPE_CHECKING:  # provided by ``Memory``

        def uow(self) -> SqlUnitOfWork: ...
        @property
        def thresholds(self) -> Thresholds: ...
        def import_(self, data: Path, *, all_records: bool, tenant_id: str, agent_id: str) -> list[str]: ...
        def export(self, conversation_id: str) -> dict[str, Any]: ...
        @property
        def summarizer(self) -> Summarizer: ...

    def evaluate(
        self,
        files: Sequence[Path],
        *,
        windows: Sequence[int],
        policies: Sequence[str] = POLICIES,
        tick_every: int = 40,
        progress: Callable[[int, int], None] | None = None,
    ) -> dict[int, list[PolicyResult]]:
        """Replay every conversation in ``files`` (any format ``import`` reads) under each policy, per window.

        The files are read through this Memory's import (so ids are normalized the same way for every
        policy); each policy then runs on its own scratch copy with the offline summarizer.
        """
        conversations = []
        for path in files:
            for cid in self.import_(path, all_records=True, tenant_id="eval", agent_id=path.stem):
                conversations.append(self.export(cid)["appended"])
        offline = self.settings.with_overrides(summarizer="offline")

        def scratch_memory(url: str, summarizer: Summarizer) -> Any:
            # Another instance of the facade this is mixed into (``Memory``), without importing it.
            facade: Any = type(self)
            return facade(
                offline.with_overrides(database_url=url),
                counter=self.counter,
                queue=_NoQueue(),
                summarizer=summarizer,
            )

        return {
            window: evaluate(
                conversations,
                window=window,
                policies=policies,
                tick_every=tick_every,
                memory_factory=scratch_memory,
                count=self.counter.count,
                progress=progress,
            )
            for window in windows
        }

    def rerun(
        self,
        conversation_id: str | None = None,
        *,
        compaction_id: str | None = None,
        dry_run: bool = False,
    ) -> dict[str, Any]:
        """Compact again from the archive with today's settings and summarizer (trigger ``admin_rerun``).

        With a conversation, every applied compaction since its last clear is undone first; with
        ``compaction_id``, that one and every later one. ``dry_run`` plans and summarizes against the
        restored rows in memory and returns what would change (tokens, old and new summaries), writing
        nothing.
        """
        if dry_run:
            return rerun_service.preview(
                self.uow,
                self.counter,
                self.summarizer,
                conversation_id=conversation_id,
                compaction_id=compaction_id,
                defaults=self.thresholds,
                policy=self.policy,
            ).to_dict()
        undone, outcome = rerun_service.rerun(
            self.uow,
            self.counter,
            self.summarizer,
            conversation_id=conversation_id,
            compaction_id=compaction_id,
            defaults=self.thresholds,
            policy=self.policy,
            lease_seconds=self.settings.lease_seconds,
        )
        return {"undone": undone, "outcome": outcome.to_dict()}

    def submit_batch(self, conversation_ids: list[str], *, trigger: Trigger = "sleep") -> BatchReport:
        """Compact several conversations with their summaries requested as one Message Batch (half price).

        LLM-free compactions apply at once; the rest apply when ``poll_batches`` finds the batch ended.
        """
        return batches.submit(
            self.uow,
            self.counter,
            self._batch_summarizer(),
            conversation_ids,
            defaults=self.thresholds,
            policy=self.policy,
            trigger=trigger,
        )

    def poll_batches(self) -> BatchReport:
        """Apply the results of ended batches (each with the usual epoch check); retry failures directly."""
        return batches.poll(
            self.uow, self.counter, self._batch_summarizer(), defaults=self.thresholds, policy=self.policy
        )

    def _batch_summarizer(self) -> BatchSummarizer:
        summarizer = self.summarizer
        if not hasattr(summarizer, "submit_batch"):
            raise InvalidSetting(f"the {summarizer.provider} summarizer has no batch API; use compact()")
        return summarizer  # type: ignore[return-value]


class _NoQueue:
    """The evaluation runs sleep ticks itself (every K messages); the guard's requests go nowhere."""

    def enqueue_tick(self, conversation_id: str, tick_key: str, *, urgent: bool = False) -> None:
        """Drop the tick."""
