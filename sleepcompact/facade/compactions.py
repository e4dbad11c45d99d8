"""``mem.compactions``: run, undo, list and re-run compactions, and summaries through Message Batches."""

from __future__ import annotations

from sleepcompact.bootstrap import Container
from sleepcompact.services import batches, compaction, history, rerun, sleep
from sleepcompact.services.batches import BatchReport
from sleepcompact.services.compaction import CompactRequest, Trigger
from sleepcompact.services.history import CompactionInfo
from sleepcompact.services.outcomes import CompactionOutcome
from sleepcompact.services.rerun import RerunPreview, RerunResult


class Compactions:
    """Compactions of conversations (reached as ``mem.compactions``)."""

    def __init__(self, deps: Container) -> None:
        self._deps = deps

    def compact(
        self,
        conversation_id: str,
        *,
        trigger: Trigger = "manual",
        dry_run: bool = False,
        force: bool = False,
        instructions: str | None = None,
        fallback: bool | None = None,
    ) -> CompactionOutcome:
        """Run the compaction ladder now. ``dry_run`` returns the plan and writes nothing.

        When the summarizer fails or returns something invalid, an ``emergency`` compaction falls back to
        the offline summary (the guard must fit its request); any other trigger records a ``failed``
        compaction and leaves the history untouched, raising ``TransientLLMError`` when a retry may help.
        ``fallback`` overrides that choice; ``instructions`` are added to the summarizer's prompt.
        """
        request = CompactRequest(
            trigger=trigger, dry_run=dry_run, force=force, instructions=instructions, fallback=fallback
        )
        return compaction.compact(self._deps, conversation_id, request)

    def restore(self, compaction_id: str) -> tuple[str, ...]:
        """Undo a compaction (and any later ones, newest first); returns the ids restored."""
        return history.restore(self._deps, compaction_id)

    def history(self, conversation_id: str) -> list[CompactionInfo]:
        """Compactions of a conversation with their figures, summaries and flags, oldest first."""
        return history.history(self._deps, conversation_id)

    def rerun(self, conversation_id: str | None = None, *, compaction_id: str | None = None) -> RerunResult:
        """Compact again from the archive with today's settings and summarizer (trigger ``admin_rerun``).

        With a conversation, every applied compaction since its last clear is undone first; with
        ``compaction_id``, that one and every later one.
        """
        return rerun.rerun(self._deps, conversation_id=conversation_id, compaction_id=compaction_id)

    def queue_rerun(self, conversation_id: str | None = None, *, compaction_id: str | None = None) -> str:
        """Enqueue the re-run as the ``sleepcompact.admin_rerun`` task on the ``admin`` queue (a worker
        runs it); returns the Celery task id. The target is checked first: a typo fails here."""
        rerun.locate(self._deps, conversation_id, compaction_id)
        return self._deps.producer.send("sleepcompact.admin_rerun", conversation_id, compaction_id)

    def preview_rerun(
        self, conversation_id: str | None = None, *, compaction_id: str | None = None
    ) -> RerunPreview:
        """The re-run's dry run: plans and summarizes against the restored rows in memory; writes nothing."""
        return rerun.preview(self._deps, conversation_id=conversation_id, compaction_id=compaction_id)

    def submit_batch(self, conversation_ids: list[str], *, trigger: Trigger = "sleep") -> BatchReport:
        """Compact several conversations with their summaries requested as one Message Batch (half price).

        LLM-free compactions apply at once; the rest apply when ``poll_batches`` finds the batch ended.
        """
        return batches.submit(
            self._deps, sleep.batch_summarizer_of(self._deps), conversation_ids, trigger=trigger
        )

    def poll_batches(self) -> BatchReport:
        """Apply the results of ended batches (each with the usual epoch check); retry failures directly."""
        return batches.poll(self._deps, sleep.batch_summarizer_of(self._deps))
