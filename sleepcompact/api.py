"""``Memory``: the facade applications import in their request path.

A thin object over the dependencies ``bootstrap`` builds once: the request path (create, append, check,
prepare_context, context, search, export, import, clear, stats) is on ``Memory`` itself; the rest is in
namespaces (``mem.compactions``, ``mem.journal``, ``mem.memories``, ``mem.sleep``, ``mem.admin``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import fields
from datetime import date, datetime
from functools import cached_property
from typing import TYPE_CHECKING, Any, Literal, overload

from sleepcompact.bootstrap import Container, bootstrap
from sleepcompact.config import Settings
from sleepcompact.domain.budget import Thresholds
from sleepcompact.domain.errors import InvalidSetting
from sleepcompact.domain.guard import Check
from sleepcompact.domain.ladder import Policy
from sleepcompact.domain.messages import MessageFormat
from sleepcompact.domain.recall_tools import tool_definitions
from sleepcompact.facade.moved import Moved, dicts, old_rerun
from sleepcompact.hooks import Hooks
from sleepcompact.ports import Summarizer, TaskQueue, TokenCounter
from sleepcompact.services import budgets, context, conversations, guard, history, recall_tools, transfer
from sleepcompact.services.context import ContextView, ConversationStats, DatabaseStats, RenderFormat
from sleepcompact.services.conversations import Appended, ConversationSpec
from sleepcompact.services.history import SearchHit
from sleepcompact.services.prepared import PreparedContext
from sleepcompact.services.transfer import AgentExport, ConversationExport, ImportSource
from sleepcompact.store.export_rows import SqlExportStore

if TYPE_CHECKING:
    from sleepcompact.facade import Admin, Compactions, Journal, Memories, Sleep


class Memory:
    """Conversations, their budgets and their history, on one database.

    Build it with ``Memory.from_env()`` or ``Memory(settings)``. Engines are created here, never at
    import time. An embedded SQLite database is migrated automatically; other databases must be
    initialized with ``sleepcompact init`` (so a fleet of workers never races on DDL).
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
        deps = bootstrap(
            settings,
            counter=counter,
            summarizer=summarizer,
            policy=policy,
            queue=queue,
            auto_migrate=auto_migrate,
        )
        self._deps: Container = deps

    # The namespaces are built on first use, and their modules imported then: a process that only asks
    # the guard (``sleepcompact check``, an agent's request path) never loads the admin's, the
    # evaluation's or the batches' code (issue 18, item 5: lighter start-up).

    @cached_property
    def compactions(self) -> Compactions:
        """Compact, restore, history, re-run, Message Batches (``facade.compactions``)."""
        from sleepcompact.facade.compactions import Compactions

        return Compactions(self._deps)

    @cached_property
    def journal(self) -> Journal:
        """The agent's journal (``facade.agent``)."""
        from sleepcompact.facade.agent import Journal

        return Journal(self._deps)

    @cached_property
    def memories(self) -> Memories:
        """The agent's long-term memories (``facade.agent``)."""
        from sleepcompact.facade.agent import Memories

        return Memories(self._deps)

    @cached_property
    def sleep(self) -> Sleep:
        """Sleep ticks and sweeps (``facade.sleep``)."""
        from sleepcompact.facade.sleep import Sleep

        return Sleep(self._deps)

    @cached_property
    def admin(self) -> Admin:
        """Evaluation, report, listing, low-level access (``facade.admin``)."""
        from sleepcompact.facade.admin import Admin

        return Admin(self._deps, new_memory=type(self))

    @classmethod
    def from_env(cls, **kwargs: Any) -> Memory:
        """A Memory configured from the environment (see ``Settings.from_env``)."""
        return cls(Settings.from_env(), **kwargs)

    @property
    def settings(self) -> Settings:
        """The settings this Memory was built with."""
        return self._deps.settings

    @property
    def hooks(self) -> Hooks:
        """Register callbacks: ``@mem.hooks.before_compaction``, ``after_compaction``,
        ``message_appended``, ``conversation_cleared`` (``sleepcompact.hooks``)."""
        return self._deps.hooks

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
            unknown = sorted(set(policy) - {f.name for f in fields(Policy)})
            if unknown:
                raise InvalidSetting(
                    f"unknown policy settings {unknown}; known: {sorted(f.name for f in fields(Policy))}"
                )
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
        return conversations.create_conversation(self._deps, spec)

    def append(
        self,
        conversation_id: str,
        message: Mapping[str, Any],
        *,
        fmt: MessageFormat = "auto",
        sent_at: datetime | None = None,
    ) -> Appended:
        """Append an Anthropic- or OpenAI-shaped message; a typed error and no write if invalid.

        ``sent_at`` dates the message when it was written earlier than now (a history being replayed):
        memories, search's date filters and recalled snippets show that date."""
        return conversations.append(self._deps, conversation_id, message, fmt=fmt, sent_at=sent_at)

    def append_many(
        self, conversation_id: str, messages: Iterable[Mapping[str, Any]], *, fmt: MessageFormat = "auto"
    ) -> list[Appended]:
        """Append several messages in one transaction: all or none."""
        return conversations.append_many(self._deps, conversation_id, messages, fmt=fmt)

    def clear(self, conversation_id: str) -> str:
        """Archive the whole live context (nothing is deleted); returns the id of the clear record."""
        return conversations.clear(self._deps, conversation_id)

    def pop(self, conversation_id: str) -> tuple[str, dict[str, Any]] | None:
        """Archive the newest live message (nothing is deleted; ``compactions.restore(id)`` brings it
        back); returns the record's id and the message as appended, or None when nothing is live."""
        return conversations.pop_newest(self._deps, conversation_id)

    # -- the request path -------------------------------------------------------------------------------

    def check(self, conversation_id: str) -> Check:
        """The guard's decision alone (tokens, thresholds, what it would do): one indexed read."""
        return budgets.check(self._deps, conversation_id)

    def prepare_context(
        self,
        conversation_id: str,
        *,
        system: str | None = None,
        tools: Sequence[Mapping[str, Any]] | None = None,
        fmt: RenderFormat = "anthropic",
        recall_tools: bool = False,
    ) -> PreparedContext:
        """The guard, before every LLM call: a context that fits, and what it took (``ctx.action``).

        Below soft: a read and the rendering. Between soft and hard: a debounced sleep request and a tick
        on the ``emergency`` queue, without waiting. Above hard: emergency compaction now (lease, LLM-free
        steps first, the summary under ``guard_deadline_s``, else the offline one). Raises
        ``ContextOverflow`` only when the system prompt, tools and current turn alone do not fit (or
        auto-compaction is off and the context does not fit). ``recall_tools`` adds the agent's recall
        tools to ``tools`` (answer their calls with ``handle_tool_call``).
        """
        return guard.prepare_context(
            self._deps, conversation_id, system=system, tools=tools, fmt=fmt, recall_tools=recall_tools
        )

    def handle_tool_call(self, conversation_id: str, tool_call: Mapping[str, Any]) -> dict[str, Any]:
        """Answer one of the agent's recall tool calls (``search_history``, ``read_archived``) from the
        archive of this conversation: an Anthropic ``tool_use`` block gets a ``tool_result`` block, an
        OpenAI tool call a ``role: tool`` message, a Responses ``function_call`` a ``function_call_output``.
        A call the model got wrong is answered with an error result it can read."""
        return recall_tools.handle_tool_call(self._deps, conversation_id, tool_call)

    @staticmethod
    def recall_tools(fmt: Literal["anthropic", "openai", "responses"] = "anthropic") -> list[dict[str, Any]]:
        """The recall tool definitions for ``fmt``, to pass with your own tools (``prepare_context(...,
        recall_tools=True)`` adds them for you)."""
        return tool_definitions(fmt)

    def context(
        self, conversation_id: str, *, system: str | None = None, fmt: RenderFormat = "anthropic"
    ) -> ContextView:
        """Exactly what the next LLM call would get (recalled memories included), without compacting."""
        return context.render_context(self._deps, conversation_id, system=system, fmt=fmt)

    def search_history(
        self,
        conversation_id: str,
        query: str,
        limit: int = 10,
        *,
        role: str | None = None,
        tool: str | None = None,
        seq_from: int | None = None,
        seq_to: int | None = None,
        since: date | None = None,
        until: date | None = None,
        budget_tokens: int | None = None,
        include_live: bool = True,
    ) -> list[SearchHit]:
        """Ranked search over every original, best first, one snippet per hit.

        Any content word of the query may match (stop words dropped); identifiers and quoted
        phrases match exactly. Filters: role, tool name, seq range, date range (``since``/``until``
        inclusive), ``include_live=False`` to skip what the next call already carries;
        ``budget_tokens`` caps the snippets' tokens. ``seq:N`` fetches what a placeholder points to.
        """
        return history.search_history(
            self._deps,
            conversation_id,
            query,
            limit,
            role=role,
            tool=tool,
            seq_from=seq_from,
            seq_to=seq_to,
            since=since,
            until=until,
            budget_tokens=budget_tokens,
            include_live=include_live,
        )

    @overload
    def stats(self, conversation_id: str) -> ConversationStats: ...
    @overload
    def stats(self, conversation_id: None = None) -> DatabaseStats: ...
    def stats(self, conversation_id: str | None = None) -> DatabaseStats:
        """Counts and tokens for one conversation (with its budget figures) or for the whole database."""
        if conversation_id is None:
            return context.database_stats(self._deps)
        return context.conversation_stats(self._deps, conversation_id)

    # -- export / import --------------------------------------------------------------------------------

    def export(
        self, conversation_id: str, *, shareable: bool = False, with_memory: bool = False
    ) -> ConversationExport:
        """The lossless export (``sleepcompact.export/2``, docs/export.md): the conversation's settings
        and counters, every message ever appended (exactly as received), every row with its state, and
        every compaction; ``import_`` restores exactly that. ``with_memory`` adds the journal and
        memories of its agent.

        ``shareable=True`` redacts every string in it (secrets become placeholders): for sharing, not
        for restoring, which needs the exact export."""
        return transfer.export_conversation(
            self._deps,
            conversation_id,
            store=self._export_store(),
            shareable=shareable,
            with_memory=with_memory,
        )

    def export_agent(
        self, agent_id: str, *, tenant_id: str = "default", shareable: bool = False
    ) -> AgentExport:
        """One document with every conversation of an agent (each lossless, as ``export``), its journal
        and its memories; ``import_`` restores them all in one transaction."""
        return transfer.export_agent(
            self._deps, tenant_id, agent_id, store=self._export_store(), shareable=shareable
        )

    def import_(
        self,
        data: ImportSource,
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
        new_ids: bool = False,
        tenant_map: Mapping[str, str] | None = None,
    ) -> list[str]:
        """Import conversations from a file, its bytes, or parsed JSON; returns their ids.

        Reads JSON arrays, ``{"messages": [...]}`` objects, JSONL, SWE-agent ``.traj`` files,
        mini-swe-agent records, Claude Code transcripts, Responses API / Agents SDK items, LangChain
        ``messages_to_dict`` output, MemoryBank histories and sleepcompact exports
        (``sleepcompact.domain.formats``). Each conversation is all-or-nothing.

        A lossless export (``export``, ``export_agent``) is restored exactly, in one transaction, under
        its own ids (an id already in the database is an error) or, with ``new_ids``, as a copy under
        new ones (``conversation_id``: a copy under that id); ``tenant_id``/``agent_id`` move it to that
        tenant/agent, ``tenant_map`` ({old: new}) renames its tenant (docs/export.md).
        """
        raw, source = transfer.read_source(data)
        return transfer.import_bytes(
            self._deps,
            raw,
            source=source,
            store=self._export_store(),
            new_ids=new_ids,
            tenant_map=tenant_map,
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

    def _export_store(self) -> SqlExportStore:
        """Whole-row transactions for the lossless export and import."""
        return SqlExportStore(self._deps.engine)

    # -- lifetime ---------------------------------------------------------------------------------------

    def close(self) -> None:
        """Release the connection pool (and the broker connection, if a task was sent)."""
        self._deps.close()

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- names that moved to the namespaces (one release with a DeprecationWarning) ---------------------

    compact = Moved("compactions.compact")
    restore = Moved("compactions.restore", legacy=list)
    history = dicts("compactions.history")
    rerun = Moved("compactions.rerun", build=old_rerun)
    submit_batch = Moved("compactions.submit_batch")
    poll_batches = Moved("compactions.poll_batches")
    add_journal_entry = Moved("journal.add")
    journal_entries = dicts("journal.entries")
    search_memories = dicts("memories.search")
    consolidate = dicts("memories.consolidate")
    sleep_tick = dicts("sleep.tick")
    run_tick = dicts("sleep.run_tick")
    sweep_nightly = dicts("sleep.sweep_nightly")
    sweep_idle = dicts("sleep.sweep_idle")
    tick_now = dicts("sleep.tick_now")
    request_sleep = Moved("sleep.request")
    ticks = dicts("sleep.ticks")
    evaluate = Moved("admin.evaluate")
    conversation = Moved("admin.conversation")
    list_conversations = Moved("admin.conversations")
    uow = Moved("admin.uow")
    read_uow = Moved("admin.read_uow")
    engine = Moved("admin.engine")
    factors = Moved("admin.factors")
    counter = Moved("admin.counter")
    summarizer = Moved("admin.summarizer")
    policy = Moved("admin.policy")
    thresholds = Moved("admin.thresholds")
    queue = Moved("admin.producer")
