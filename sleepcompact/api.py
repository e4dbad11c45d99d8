"""``Memory``: the facade applications import in their request path."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import fields
from pathlib import Path
from typing import Any

from sqlalchemy import Engine

from sleepcompact.adapters.summarizers import CallableSummarizer, make_summarizer
from sleepcompact.adapters.tokenizer import load_counter
from sleepcompact.admin import AdminMemory
from sleepcompact.agents import AgentMemory
from sleepcompact.config import Settings
from sleepcompact.domain.budget import Thresholds
from sleepcompact.domain.errors import ImportFormatError, InvalidSetting, SleepcompactError
from sleepcompact.domain.guard import Check
from sleepcompact.domain.ladder import Policy
from sleepcompact.domain.messages import MessageFormat
from sleepcompact.domain.records import ConversationRecord
from sleepcompact.services import compaction, conversations, guard, transfer
from sleepcompact.services import context as context_service
from sleepcompact.services import history as history_service
from sleepcompact.services.compaction import Trigger
from sleepcompact.services.compaction_records import CompactionOutcome
from sleepcompact.services.context import ContextView, RenderFormat
from sleepcompact.services.conversations import Appended, ConversationSpec
from sleepcompact.services.guard import PreparedContext
from sleepcompact.services.ports import Summarizer, TaskQueue, TokenCounter
from sleepcompact.store import migrate
from sleepcompact.store.conversation_reader import ConversationReader
from sleepcompact.store.engine import is_sqlite, make_engine, make_session_factory
from sleepcompact.store.uow import SqlUnitOfWork


class DatabaseNotInitialized(SleepcompactError):
    """The database has not been migrated to this version's schema; run ``sleepcompact init``."""


class Memory(AgentMemory, AdminMemory):
    """Conversations, their budgets and their history, on one database.

    Build it with ``Memory.from_env()`` or ``Memory(settings)``. Engines are
    created here, never at import time. An embedded SQLite database is
    migrated automatically; other databases must be initialized with
    ``sleepcompact init`` (so a fleet of workers never races on DDL).
    """

    def __init__(
        self,
        settings: Settings | None = None,
        *,
        database_url: str | None = None,
        broker_url: str | None = None,
        counter: TokenCounter | None = None,
        summarizer: Summarizer | Callable[[str], str] | None = None,
        policy: Policy | None = None,
        auto_migrate: bool | None = None,
        queue: TaskQueue | None = None,
    ) -> None:
        settings = settings or Settings()
        if database_url is not None:
            settings = settings.with_overrides(database_url=database_url)
        if broker_url is not None:
            settings = settings.with_overrides(broker_url=broker_url)
        self.settings = settings
        self.counter: TokenCounter = counter or load_counter()
        self.policy = policy or Policy()
        if summarizer is not None and not hasattr(summarizer, "summarize"):
            summarizer = CallableSummarizer(summarizer)
        self._summarizer: Summarizer | None = summarizer  # type: ignore[assignment]
        self._task_queue = queue  # where the guard sends its ticks (default: the Celery broker)
        self._factors: tuple[float, dict[str, float]] | None = None
        self.engine: Engine = make_engine(settings.database_url)
        self._sessions = make_session_factory(self.engine)
        self._read_sessions = make_session_factory(self.engine, readonly=True)
        self._conversation_reader = ConversationReader(self.engine)
        should_migrate = is_sqlite(self.engine) if auto_migrate is None else auto_migrate
        if should_migrate:
            migrate.upgrade(self.engine)
        elif migrate.current_revision(self.engine) != migrate.head_revision():
            raise DatabaseNotInitialized(
                f"the database at {self.engine.url.render_as_string(hide_password=True)} is not at schema "
                f"{migrate.head_revision()}; run `sleepcompact init`"
            )

    @classmethod
    def from_env(cls, **kwargs: Any) -> Memory:
        """A Memory configured from the environment (see ``Settings.from_env``)."""
        return cls(Settings.from_env(), **kwargs)

    # -- units of work --------------------------------------------------------------------------------

    def uow(self) -> SqlUnitOfWork:
        """A fresh unit of work (one transaction)."""
        return SqlUnitOfWork(self._sessions)

    def read_uow(self) -> SqlUnitOfWork:
        """A unit of work for reads only; on SQLite it never waits for the write lock."""
        return SqlUnitOfWork(self._read_sessions)

    @property
    def thresholds(self) -> Thresholds:
        """The global default thresholds."""
        return self.settings.thresholds

    # -- conversations ----------------------------------------------------------------------------------

    def create_conversation(
        self,
        model: str | None = None,
        *,
        tenant_id: str = "default",
        agent_id: str = "default",
        plan: str | None = None,
        context_window: int | None = None,
        output_reserve: int | None = None,
        thresholds: Thresholds | None = None,
        auto_compact: bool | None = None,
        conversation_id: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        policy: Mapping[str, Any] | None = None,
    ) -> str:
        """Create a conversation and return its id. ``plan`` caps the window (free 16k, pro 32k, ultra).

        ``policy`` overrides ladder defaults for this conversation only, e.g.
        ``{"tool_output_cap": 1000, "preserve_messages": 40}`` (names of ``Policy`` fields).
        """
        if policy:
            known = {f.name for f in fields(Policy)}
            unknown = sorted(set(policy) - known)
            if unknown:
                raise InvalidSetting(f"unknown policy settings {unknown}; known: {sorted(known)}")
            metadata = {**dict(metadata or {}), "policy": dict(policy)}
        spec = ConversationSpec(
            model=model or self.settings.default_model,
            tenant_id=tenant_id,
            agent_id=agent_id,
            plan=plan,
            context_window=context_window,
            output_reserve=output_reserve,
            thresholds=thresholds,
            auto_compact=auto_compact,
            conversation_id=conversation_id,
            metadata=metadata,
        )
        return conversations.create_conversation(self.uow(), spec)

    def append(
        self, conversation_id: str, message: Mapping[str, Any], *, fmt: MessageFormat = "auto"
    ) -> Appended:
        """Append an Anthropic- or OpenAI-shaped message; a typed error and no write if invalid."""
        return conversations.append(
            self.uow(),
            self.counter,
            conversation_id,
            message,
            fmt=fmt,
            max_bytes=self.settings.max_message_bytes,
        )

    def append_many(
        self, conversation_id: str, messages: Iterable[Mapping[str, Any]], *, fmt: MessageFormat = "auto"
    ) -> list[Appended]:
        """Append several messages in one transaction: all or none."""
        return conversations.append_many(
            self.uow(),
            self.counter,
            conversation_id,
            messages,
            fmt=fmt,
            max_bytes=self.settings.max_message_bytes,
        )

    def conversation(self, conversation_id: str) -> ConversationRecord:
        """The conversation's record (settings and running counters)."""
        return conversations.get_conversation(self.read_uow(), conversation_id)

    def list_conversations(self, limit: int = 1000) -> list[ConversationRecord]:
        """Conversations, most recently active first."""
        return conversations.list_conversations(self.read_uow(), limit)

    def context(
        self, conversation_id: str, *, system: str | None = None, fmt: RenderFormat = "anthropic"
    ) -> ContextView:
        """Exactly what the next LLM call would get (recalled memories included), without compacting."""
        return context_service.render_context(
            self.read_uow(),
            self.counter,
            conversation_id,
            defaults=self.thresholds,
            system=system,
            fmt=fmt,
            memory_budget=self.settings.memory_budget_tokens,
        )

    def stats(self, conversation_id: str | None = None) -> dict[str, Any]:
        """Counts and tokens for one conversation (with its budget) or for the whole database."""
        return context_service.conversation_stats(self.read_uow(), conversation_id, self.thresholds)

    def clear(self, conversation_id: str) -> str:
        """Archive the whole live context (nothing is deleted); returns the id of the clear record."""
        return conversations.clear(self.uow(), conversation_id)

    # -- the guard --------------------------------------------------------------------------------------

    def factors(self) -> dict[str, float]:
        """The calibrated tokenizer factors, cached in-process (``calibration_cache_s``): the guard's
        decision stays one indexed read."""
        now = time.monotonic()
        if self._factors is None or now - self._factors[0] > self.settings.calibration_cache_s:
            with self.read_uow() as uow:
                self._factors = (now, uow.repo.calibrations())
        return self._factors[1]

    def check(self, conversation_id: str) -> Check:
        """The guard's decision alone (tokens, thresholds, what it would do): one indexed read."""
        return guard.check(
            self._conversation_reader.read,
            conversation_id,
            defaults=self.thresholds,
            factors=self.factors(),
            auto_compact=self.settings.auto_compact,
        )

    def prepare_context(
        self,
        conversation_id: str,
        *,
        system: str | None = None,
        tools: Sequence[Mapping[str, Any]] | None = None,
        fmt: RenderFormat = "anthropic",
    ) -> PreparedContext:
        """The guard, before every LLM call: a context that fits, and what it took (``ctx.action``).

        Below soft: a read and the rendering. Between soft and hard: a debounced sleep request and a tick
        on the ``emergency`` queue, without waiting. Above hard: emergency compaction now (lease, LLM-free
        steps first, the summary under ``guard_deadline_s``, else the offline one). Raises
        ``ContextOverflow`` only when the system prompt, tools and current turn alone do not fit (or
        auto-compaction is off and the context does not fit).
        """
        s = self.settings
        cfg = guard.GuardConfig(
            defaults=self.thresholds,
            auto_compact=s.auto_compact,
            deadline_s=s.guard_deadline_s,
            lease_wait_s=s.guard_lease_wait_s,
            lease_seconds=s.lease_seconds,
            request_interval_s=s.sleep_request_interval_s,
            memory_budget=s.memory_budget_tokens,
        )
        queue = self._task_queue if self._task_queue is not None else self.queue
        return guard.prepare_context(
            self.uow,
            self.counter,
            self.summarizer,
            queue,
            conversation_id,
            cfg,
            factors=self.factors(),
            policy=self.policy,
            system=system,
            tools=tools,
            fmt=fmt,
            read_uow_factory=self.read_uow,
        )

    # -- compaction -------------------------------------------------------------------------------------

    @property
    def summarizer(self) -> Summarizer:
        """The summarizer in use (chosen from the settings on first use)."""
        if self._summarizer is None:
            self._summarizer = make_summarizer(self.settings, self.counter.count)
        return self._summarizer

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

        When the summarizer fails or returns something invalid, an ``emergency`` compaction falls back to the
        offline summary (the guard must fit its request); any other trigger records a ``failed``
        compaction and leaves the history untouched, raising ``TransientLLMError`` when a retry may help.
        ``fallback`` overrides that choice.
        """
        return compaction.compact(
            self.uow,
            self.counter,
            self.summarizer,
            conversation_id,
            trigger=trigger,
            defaults=self.thresholds,
            policy=self.policy,
            dry_run=dry_run,
            force=force,
            instructions=instructions,
            fallback=fallback,
        )

    def restore(self, compaction_id: str) -> list[str]:
        """Undo a compaction (and any later ones, newest first); returns the ids restored."""
        return history_service.restore(self.uow(), compaction_id)

    def history(self, conversation_id: str) -> list[dict[str, Any]]:
        """Compactions of a conversation with their figures, summaries and flags."""
        return history_service.history(self.read_uow(), conversation_id)

    def search_history(self, conversation_id: str, query: str, limit: int = 20) -> list[dict[str, Any]]:
        """Full-text search over every original; ``seq:N`` fetches what a placeholder points to."""
        return history_service.search_history(self.read_uow(), conversation_id, query, limit)

    # -- export / import --------------------------------------------------------------------------------

    def export(self, conversation_id: str) -> dict[str, Any]:
        """Every message ever appended (exactly as received), every row with its state, and compactions."""
        return transfer.export_conversation(self.read_uow(), conversation_id)

    def import_(
        self,
        data: bytes | str | Path | Mapping[str, Any] | list[Any],
        *,
        fmt: MessageFormat = "auto",
        conversation_id: str | None = None,
        model: str | None = None,
        context_window: int | None = None,
        plan: str | None = None,
        tenant_id: str | None = None,
        agent_id: str | None = None,
        all_records: bool = False,
        record: int | None = None,
    ) -> list[str]:
        """Import conversations from a file, its bytes, or parsed JSON; returns their ids.

        Reads JSON arrays, ``{"messages": [...]}`` objects, JSONL, SWE-agent
        ``.traj`` files, mini-swe-agent records and sleepcompact exports. Each
        conversation is all-or-nothing.
        """
        source = "<input>"
        if isinstance(data, Path):
            source = str(data)
            try:
                raw = data.read_bytes()
            except OSError as exc:
                raise ImportFormatError(f"cannot read the file: {exc.strerror}", source=source) from exc
        elif isinstance(data, str):
            raw = data.encode("utf-8", errors="surrogateescape")
        elif isinstance(data, bytes):
            raw = data
        else:
            raw = json.dumps(data, ensure_ascii=False).encode("utf-8")
        return transfer.import_bytes(
            self.uow,
            self.counter,
            raw,
            source=source,
            default_model=self.settings.default_model,
            max_bytes=self.settings.max_message_bytes,
            fmt=fmt,
            all_records=all_records,
            record=record,
            conversation_id=conversation_id,
            model=model,
            context_window=context_window,
            plan=plan,
            tenant_id=tenant_id,
            agent_id=agent_id,
        )

    def close(self) -> None:
        """Release the connection pool (and the broker connection, if a task was sent)."""
        if self._queue is not None:
            self._queue.close()
        self.engine.dispose()

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
