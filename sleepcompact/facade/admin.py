"""``mem.admin``: what an operator runs: listing, the report, the evaluation, and low-level access."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import Engine

from sleepcompact.bootstrap import Container
from sleepcompact.config import Settings
from sleepcompact.domain.budget import Thresholds
from sleepcompact.domain.ladder import Policy
from sleepcompact.domain.records import ConversationRecord
from sleepcompact.ports import Summarizer, TaskQueue, TokenCounter
from sleepcompact.services import conversations, report, transfer
from sleepcompact.services.report import Report
from sleepcompact.store.export_rows import SqlExportStore
from sleepcompact.store.uow import SqlUnitOfWork

if TYPE_CHECKING:
    from sleepcompact.adapters.queue import CeleryQueue
    from sleepcompact.evaluation import PolicyResult
    from sleepcompact.evaluation.qa.run import QAResult

MemoryFactory = Callable[..., Any]
"""Builds another facade (``Memory(settings, counter=..., queue=..., summarizer=...)``) for the evaluation's
scratch databases; the facade passes its own constructor, so this module never imports it."""


class Admin:
    """Operator tools (reached as ``mem.admin``)."""

    def __init__(self, deps: Container, new_memory: MemoryFactory) -> None:
        self._deps = deps
        self._new_memory = new_memory

    @property
    def engine(self) -> Engine:
        """The SQLAlchemy engine (for one-off SQL; the services never need it)."""
        return self._deps.engine

    @property
    def counter(self) -> TokenCounter:
        """The token counter every figure is counted with."""
        return self._deps.counter

    @property
    def summarizer(self) -> Summarizer:
        """The summarizer in use (built from the settings on first use)."""
        return self._deps.summarizer

    @property
    def policy(self) -> Policy:
        """The ladder's default policy."""
        return self._deps.policy

    @property
    def thresholds(self) -> Thresholds:
        """The global default thresholds."""
        return self._deps.settings.thresholds

    @property
    def producer(self) -> CeleryQueue:
        """The Celery producer for ``settings.broker_url``: ``producer.send(task_name, *args)``."""
        return self._deps.producer

    def uow(self) -> SqlUnitOfWork:
        """A fresh unit of work (one transaction) over every repository."""
        return self._deps.uow()

    def read_uow(self) -> SqlUnitOfWork:
        """A unit of work for reads only; on SQLite it never waits for the write lock."""
        return self._deps.read_uow()

    def factors(self) -> Mapping[str, float]:
        """The calibrated tokenizer factors by model family (the in-process cache the guard reads)."""
        return self._deps.factors()

    def conversation(self, conversation_id: str) -> ConversationRecord:
        """The conversation's record (settings and running counters)."""
        return conversations.get_conversation(self._deps, conversation_id)

    def conversations(self, limit: int = 1000) -> list[ConversationRecord]:
        """Conversations, most recently active first."""
        return conversations.list_conversations(self._deps, limit)

    def report(self, conversation_id: str) -> Report:
        """The data of ``sleepcompact report``: live tokens over the conversation's life, compactions."""
        return report.build_report(self._deps, conversation_id)

    def evaluate(
        self,
        files: Sequence[Path],
        *,
        windows: Sequence[int],
        policies: Sequence[str] | None = None,
        tick_every: int = 40,
        progress: Callable[[int, int], None] | None = None,
    ) -> dict[int, list[PolicyResult]]:
        """Replay every conversation in ``files`` (any format ``import`` reads) under each policy, per window.

        The files are read through this database's import (so ids are normalized the same way for every
        policy); each policy then runs on its own scratch copy with the offline summarizer.
        """
        from sleepcompact.evaluation import POLICIES, evaluate  # the evaluation: only for this command

        deps = self._deps
        store = SqlExportStore(deps.engine)
        replayed: list[list[Any]] = []
        for path in files:
            raw, source = transfer.read_source(path)
            ids = transfer.import_bytes(
                deps, raw, source=source, store=store, all_records=True, tenant_id="eval", agent_id=path.stem
            )
            replayed.extend(
                list(transfer.export_conversation(deps, cid, store=store).appended) for cid in ids
            )
        scratch_memory = self._scratch_memories()
        return {
            window: evaluate(
                replayed,
                window=window,
                policies=POLICIES if policies is None else policies,
                tick_every=tick_every,
                memory_factory=scratch_memory,
                count=deps.counter.count,
                progress=progress,
            )
            for window in windows
        }

    def evaluate_qa(
        self,
        path: Path,
        *,
        windows: Sequence[int],
        policies: Sequence[str] | None = None,
        tick_every: int = 20,
        recall_budget: int | None = None,
        progress: Callable[[int, int], None] | None = None,
    ) -> dict[int, list[QAResult]]:
        """Ask a QA file's questions (``evaluation.qa.dataset``) at the end of each conversation, replayed
        under each policy, per window: is the gold answer in the context, and in the recall tool's first
        page? ``recall_budget`` overrides the setting for sleepcompact (0: no recall in the request)."""
        from sleepcompact.evaluation.qa.dataset import read_qa
        from sleepcompact.evaluation.qa.run import QA_POLICIES, evaluate_qa

        conversations = read_qa(path)
        scratch_memory = self._scratch_memories(recall_budget)
        count = self._deps.counter.count
        return {
            window: evaluate_qa(
                conversations,
                window=window,
                policies=QA_POLICIES if policies is None else policies,
                tick_every=tick_every,
                memory_factory=scratch_memory,
                count=count,
                progress=progress,
            )
            for window in windows
        }

    def _scratch_memories(self, recall_budget: int | None = None) -> Callable[[str, Summarizer], Any]:
        """Memories on scratch databases with the offline summarizer (and the given recall budget)."""
        deps = self._deps
        offline = deps.settings.with_overrides(summarizer="offline")
        if recall_budget is not None:
            offline = offline.with_overrides(recall_budget_tokens=recall_budget)

        def scratch_memory(url: str, summarizer: Summarizer) -> Any:
            settings: Settings = offline.with_overrides(database_url=url)
            return self._new_memory(settings, counter=deps.counter, queue=_NoQueue(), summarizer=summarizer)

        return scratch_memory


class _NoQueue(TaskQueue):
    """The evaluation runs sleep ticks itself (every K messages); the guard's requests go nowhere."""

    def enqueue_tick(self, conversation_id: str, tick_key: str, *, urgent: bool = False) -> None:
        """Drop the tick."""

    def enqueue_ticks(self, ticks: Sequence[tuple[str, str]]) -> None:
        """Drop the ticks."""
