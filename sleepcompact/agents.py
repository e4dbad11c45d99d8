"""The agent side of the ``Memory`` facade: journal, long-term memories, sleep ticks and sweeps."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from sleepcompact.adapters.queue import CeleryQueue
from sleepcompact.config import Settings, nightly_time
from sleepcompact.domain.budget import Thresholds
from sleepcompact.domain.ladder import Policy
from sleepcompact.domain.records import ConversationRecord
from sleepcompact.services import journal as journal_service
from sleepcompact.services import memories as memories_service
from sleepcompact.services import sleep as sleep_service
from sleepcompact.services import sweeps
from sleepcompact.services.batches import BatchSummarizer
from sleepcompact.services.conversations import utcnow
from sleepcompact.services.ports import Rescorer, Summarizer, TaskQueue, TokenCounter
from sleepcompact.store.uow import SqlUnitOfWork


class AgentMemory:
    """Mixed into ``Memory``: everything about an agent's journal, memories and sleep."""

    settings: Settings
    counter: TokenCounter
    policy: Policy
    _queue: CeleryQueue | None = None

    if TYPE_CHECKING:  # provided by ``Memory``

        def uow(self) -> SqlUnitOfWork: ...
        def read_uow(self) -> SqlUnitOfWork: ...
        def conversation(self, conversation_id: str) -> ConversationRecord: ...
        @property
        def thresholds(self) -> Thresholds: ...
        @property
        def summarizer(self) -> Summarizer: ...
        def _batch_summarizer(self) -> BatchSummarizer: ...

    def add_journal_entry(
        self,
        conversation_id: str,
        content: str,
        *,
        source_type: str = "direct",
        tags: Sequence[str] = (),
        origin: str = "agent",
    ) -> int:
        """Note something for the conversation's agent (scored now, consolidated into memory during sleep)."""
        return journal_service.add_entry(
            self.uow(), conversation_id, content, source_type=source_type, tags=tags, origin=origin
        )

    def journal_entries(
        self, conversation_id: str, statuses: Sequence[str] | None = None
    ) -> list[dict[str, Any]]:
        """The journal of the conversation's agent, oldest first."""
        return journal_service.list_entries(self.read_uow(), conversation_id, statuses)

    def consolidate(self, conversation_id: str) -> dict[str, Any]:
        """Promote the agent's pending journal entries into long-term memories now."""
        conv = self.conversation(conversation_id)
        return memories_service.consolidate_agent(self.uow, conv.tenant_id, conv.agent_id)

    def memories(self, conversation_id: str, *, include_invalid: bool = False) -> list[dict[str, Any]]:
        """What the conversation's agent remembers (superseded memories too with ``include_invalid``)."""
        conv = self.conversation(conversation_id)
        return memories_service.list_memories(
            self.read_uow(), conv.tenant_id, conv.agent_id, include_invalid=include_invalid
        )

    def search_memories(self, conversation_id: str, query: str) -> list[dict[str, Any]]:
        """Valid memories of the agent containing every word of the query."""
        conv = self.conversation(conversation_id)
        return memories_service.search_memories(self.read_uow(), conv.tenant_id, conv.agent_id, query)

    def sleep_tick(self, conversation_id: str, tick_key: str | None = None) -> dict[str, Any]:
        """Consolidate the journal, then compact if over the soft threshold or the entry-count trigger.

        The same ``tick_key`` runs once (sweeps pass the night's date); without one, every call runs.
        """
        key = tick_key or f"manual-{utcnow():%Y%m%dT%H%M%S%f}"
        return sleep_service.sleep_tick(
            self.uow, self.counter, self.summarizer, conversation_id, key, self._tick_options(batch=False)
        )

    def journal(self, conversation_id: str) -> list[dict[str, Any]]:
        """Journal entries written for this conversation (pre-compaction facts, summaries, notes)."""
        return [e for e in self.journal_entries(conversation_id) if e["conversation_id"] == conversation_id]

    # -- sweeps and the queue ---------------------------------------------------------------------------

    @property
    def queue(self) -> CeleryQueue:
        """The Celery producer for ``settings.broker_url`` (connects on first send)."""
        if self._queue is None:
            self._queue = CeleryQueue(self.settings)
        return self._queue

    def sweep_config(self) -> sweeps.SweepConfig:
        """The sweeps' schedule and thresholds, from the settings."""
        hour, minute = nightly_time(self.settings.nightly_cron)
        return sweeps.SweepConfig(
            timezone=self.settings.timezone,
            nightly_hour=hour,
            nightly_minute=minute,
            idle_minutes=self.settings.idle_minutes,
            batch_size=self.settings.sweep_batch_size,
            stale_after_s=self.settings.visibility_timeout,
            entry_trigger=self.settings.entry_trigger,
            defaults=self.thresholds,
        )

    def sweep_nightly(
        self,
        *,
        now: datetime | None = None,
        conversation_id: str | None = None,
        queue: TaskQueue | None = None,
    ) -> dict[str, object]:
        """Enqueue tonight's tick for every due conversation (once per night, however often it runs)."""
        return sweeps.sweep_nightly(
            self.uow,
            queue or self.queue,
            self.sweep_config(),
            now=now or utcnow(),
            conversation_id=conversation_id,
        ).as_dict()

    def sweep_idle(self, *, now: datetime | None = None, queue: TaskQueue | None = None) -> dict[str, object]:
        """Enqueue ticks for idle conversations over soft, those the guard asked for, and a missed night."""
        return sweeps.sweep_idle(
            self.uow, queue or self.queue, self.sweep_config(), now=now or utcnow()
        ).as_dict()

    def tick_now(
        self, conversation_ids: list[str], tick_key: str | None = None, *, queue: TaskQueue | None = None
    ) -> dict[str, object]:
        """Enqueue a tick for each conversation now, due or not (a fresh key unless one is given)."""
        now = utcnow()
        key = tick_key or f"manual-{now:%Y%m%dT%H%M%S%f}"
        return sweeps.tick_now(self.uow, queue or self.queue, conversation_ids, key, now=now).as_dict()

    def request_sleep(self, conversation_id: str) -> None:
        """Ask for a sleep tick soon: the next idle sweep enqueues it (the guard calls this over soft)."""
        sweeps.request_sleep(self.uow, conversation_id, now=utcnow())

    def ticks(self, conversation_id: str) -> list[dict[str, Any]]:
        """The conversation's sleep ticks (key, status, what each did), oldest first."""
        return sweeps.list_ticks(self.read_uow(), conversation_id)

    def _tick_options(self, *, batch: bool) -> sleep_service.TickOptions:
        return sleep_service.TickOptions(
            defaults=self.thresholds,
            policy=self.policy,
            entry_trigger=self.settings.entry_trigger,
            lease_seconds=self.settings.lease_seconds,
            batch_summarizer=self._batch_summarizer() if batch and self.settings.nightly_batches else None,
            rescorer=self._rescorer(),
            auto_compact=self.settings.auto_compact,
        )

    def run_tick(self, conversation_id: str, tick_key: str) -> dict[str, Any]:
        """What the worker's ``sleepcompact.sleep_tick`` does (via batches when nightly batches are on)."""
        return sleep_service.sleep_tick(
            self.uow, self.counter, self.summarizer, conversation_id, tick_key, self._tick_options(batch=True)
        )

    def _rescorer(self) -> Rescorer | None:
        """The summarizer as a rescorer when LLM rescoring is on and it can (the offline one cannot)."""
        summarizer = self.summarizer
        if self.settings.llm_rescoring and hasattr(summarizer, "rescore"):
            return summarizer  # type: ignore[return-value]
        return None


class InlineQueue:
    """A ``TaskQueue`` that runs each tick at once in this process (``sleepcompact sleep --inline``)."""

    def __init__(self, run: Callable[[str, str], dict[str, Any]]) -> None:
        self._run = run
        self.results: dict[str, dict[str, Any]] = {}

    def enqueue_tick(self, conversation_id: str, tick_key: str, *, urgent: bool = False) -> None:
        """Run the tick now and keep its result."""
        self.results[conversation_id] = self._run(conversation_id, tick_key)
