"""The inline guard: called before every LLM call, it makes sure the call fits.

* ``check``: the decision alone, from one indexed read of the conversation row (the calibration
  factors come from the caller's in-process cache).
* ``prepare_context``: renders the call (system prompt, tools and recalled memories count against
  the budget), then below soft returns it; between soft and hard records a debounced sleep request
  and enqueues a tick on the ``emergency`` queue without waiting; above hard compacts synchronously
  (lease, LLM-free steps first, summary under a deadline, offline fallback) and returns a context
  that fits. The only error is ``ContextOverflow``, when what cannot be compacted alone is too big.
  Every call emits one canonical ``guard`` event (its action, decision and figures).
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import structlog

from sleepcompact.domain.budget import Thresholds
from sleepcompact.domain.errors import ContextOverflow, ConversationNotFound
from sleepcompact.domain.guard import Action, Check, decide
from sleepcompact.domain.ladder import Policy
from sleepcompact.domain.schedule import request_key
from sleepcompact.services.compaction import compact
from sleepcompact.services.compaction_records import CompactionOutcome
from sleepcompact.services.context import ContextView, RenderFormat, budget_for, render_context
from sleepcompact.services.conversations import utcnow
from sleepcompact.services.ports import ConversationLookup, Summarizer, TaskQueue, TokenCounter, UnitOfWork
from sleepcompact.telemetry import emit

log = structlog.get_logger(__name__)


@dataclass(frozen=True)
class GuardConfig:
    """The guard's knobs (from ``Settings``)."""

    defaults: Thresholds = field(default_factory=Thresholds)
    auto_compact: bool = True
    deadline_s: float = 20.0
    lease_wait_s: float = 10.0
    lease_seconds: int = 420
    request_interval_s: int = 300
    memory_budget: int = 512


@dataclass(frozen=True)
class PreparedContext:
    """What the next LLM call should send, how big it is, and what the guard did to get there."""

    view: ContextView
    tools: list[dict[str, Any]] | None
    action: Action
    compaction_id: str | None = None
    reason: str = ""

    @property
    def system(self) -> str | None:
        """The system prompt (Anthropic format; in OpenAI format it is the first message)."""
        return self.view.system

    @property
    def messages(self) -> list[dict[str, Any]]:
        """The messages, in the requested format."""
        return self.view.messages

    @property
    def tokens(self) -> int:
        """Everything the call carries (system, tools, memories, messages), in the model's tokens."""
        return self.view.tokens

    @property
    def usable(self) -> int:
        """The usable budget (window minus output reserve)."""
        return self.view.budget.usable

    def request(self) -> dict[str, Any]:
        """Keyword arguments for ``anthropic.Anthropic().messages.create`` (or OpenAI's ``messages``)."""
        if self.view.format == "openai":
            out: dict[str, Any] = {"messages": self.messages}
            if self.tools:
                out["tools"] = self.tools
            return out
        out = {"messages": self.messages}
        if self.system:
            out["system"] = self.system
        if self.tools:
            out["tools"] = self.tools
        return out

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return {
            **self.view.to_dict(),
            "tools": self.tools,
            "action": self.action,
            "compaction_id": self.compaction_id,
            "reason": self.reason,
        }


def check(
    read_conversation: ConversationLookup,
    conversation_id: str,
    *,
    defaults: Thresholds,
    factors: Mapping[str, float],
    auto_compact: bool = True,
) -> Check:
    """The guard's decision from one indexed read (the conversation row by primary key).

    No unit of work: a single read needs no transaction, and this runs before every LLM call.
    """
    conv = read_conversation(conversation_id)
    if conv is None:
        raise ConversationNotFound(conversation_id)
    budget = budget_for(conv, defaults, factors)
    tokens = budget.effective(conv.live_tokens)
    enabled = auto_compact and conv.auto_compact is not False
    return Check(
        conversation_id=conversation_id,
        tokens=tokens,
        usable=budget.usable,
        soft=budget.soft,
        hard=budget.hard,
        target=budget.target,
        percent_of_usable=budget.percent_of_usable(conv.live_tokens),
        decision=decide(tokens, budget, auto_compact=enabled),
        auto_compact=enabled,
        sleep_requested=conv.sleep_requested_at is not None,
        compaction_epoch=conv.compaction_epoch,
    )


def tool_tokens(counter: TokenCounter, tools: Sequence[Mapping[str, Any]] | None) -> int:
    """What the tool definitions cost (their JSON, as the API serializes them)."""
    if not tools:
        return 0
    return counter.count(json.dumps(list(tools), ensure_ascii=False, separators=(",", ":")))


def prepare_context(
    uow_factory: Callable[[], UnitOfWork],
    counter: TokenCounter,
    summarizer: Summarizer,
    queue: TaskQueue | None,
    conversation_id: str,
    cfg: GuardConfig,
    *,
    factors: Mapping[str, float],
    policy: Policy,
    system: str | None = None,
    tools: Sequence[Mapping[str, Any]] | None = None,
    fmt: RenderFormat = "anthropic",
    read_uow_factory: Callable[[], UnitOfWork] | None = None,
) -> PreparedContext:
    """The guard (see the module docstring). ``read_uow_factory`` gives read-only units of work for the
    rendering (on SQLite they never wait for the write lock); writes use ``uow_factory``."""
    reads = read_uow_factory or uow_factory
    tools_list = [dict(t) for t in tools] if tools else None
    extra = tool_tokens(counter, tools_list)

    def render() -> ContextView:
        view = render_context(
            reads(),
            counter,
            conversation_id,
            defaults=cfg.defaults,
            system=system,
            fmt=fmt,
            memory_budget=cfg.memory_budget,
            factors=factors,
        )
        counted = view.counted_tokens + extra
        return replace(view, counted_tokens=counted, tokens=view.budget.effective(counted))

    view = render()
    budget = view.budget
    enabled = cfg.auto_compact and view.auto_compact is not False
    decision = decide(view.tokens, budget, auto_compact=enabled)
    if decision == "none":
        _emit(view, "none", decision)
        return PreparedContext(view, tools_list, "none")
    # The system prompt and the tools are the caller's: no compaction can shrink them. (An oversized
    # current turn can still be truncated middle-out by the ladder's last rung, so it is tried.)
    fixed = (counter.count(system) if system else 0) + extra
    if decision == "overflow" or (decision == "compact_now" and budget.effective(fixed) > budget.usable):
        # Nothing compaction may touch would make room: say so with the numbers, and write nothing.
        _emit(view, "overflow", decision)
        raise _overflow(view, budget.usable, system, extra, counter)
    if decision == "request_sleep":
        _request_sleep(uow_factory, queue, conversation_id, cfg.request_interval_s)
        _emit(view, "sleep_requested", decision)
        return PreparedContext(view, tools_list, "sleep_requested")
    # Over hard: compact now. What is not the conversation's own rows is reserved out of the budget.
    reserved = (counter.count(system) if system else 0) + extra + view.memory_tokens
    outcome = _compact_now(
        uow_factory, counter, summarizer, conversation_id, cfg, factors, policy, budget.effective(reserved)
    )
    after = render()
    compaction = outcome.status if outcome else None
    if after.tokens > budget.usable:
        _emit(after, "overflow", decision, tokens_before=view.tokens, compaction=compaction)
        raise _overflow(after, budget.usable, system, extra, counter)
    action: Action = "fallback_compacted" if outcome and outcome.fallback else "emergency_compacted"
    if outcome is None or outcome.status not in ("applied", "discarded", "reused"):
        action = "emergency_compacted" if after.tokens < view.tokens else "none"
    _emit(after, action, decision, tokens_before=view.tokens, compaction=compaction)
    return PreparedContext(
        after,
        tools_list,
        action,
        compaction_id=outcome.compaction_id if outcome else None,
        reason=outcome.reason if outcome else "",
    )


def _emit(view: ContextView, action: str, decision: str, **extra: Any) -> None:
    """The canonical ``guard`` line: what the call carries (``tokens``) against ``usable``."""
    emit(
        "guard",
        conversation_id=view.conversation_id,
        action=action,
        decision=decision,
        tokens=view.tokens,
        usable=view.budget.usable,
        **extra,
    )


def _request_sleep(
    uow_factory: Callable[[], UnitOfWork], queue: TaskQueue | None, conversation_id: str, interval_s: int
) -> None:
    """Record a sleep request (at most one per interval) and enqueue its tick after the commit."""
    now = utcnow()
    with uow_factory() as uow:
        fresh = uow.repo.request_sleep_debounced(conversation_id, now, interval_s)
        key = request_key(now)
        queued = uow.repo.queue_ticks([(conversation_id, key)], now) if fresh else []
        uow.commit()
    if queued and queue is not None:
        try:
            queue.enqueue_tick(conversation_id, key, urgent=True)
        except Exception as exc:  # the request path never fails on the broker; the idle sweep re-sends
            log.warning("guard_enqueue_failed", conversation_id=conversation_id, error=type(exc).__name__)


def _compact_now(
    uow_factory: Callable[[], UnitOfWork],
    counter: TokenCounter,
    summarizer: Summarizer,
    conversation_id: str,
    cfg: GuardConfig,
    factors: Mapping[str, float],
    policy: Policy,
    reserved: int,
) -> CompactionOutcome | None:
    """Take the lease (waiting a bounded time for a worker that holds it), then compact as an emergency."""
    owner = f"guard:{uuid.uuid4().hex}"
    with uow_factory() as uow:
        conv = uow.repo.get_conversation(conversation_id)
        if conv is None:
            raise ConversationNotFound(conversation_id)
        epoch = conv.compaction_epoch
        got = uow.repo.acquire_lease(conversation_id, owner, utcnow(), cfg.lease_seconds)
        uow.commit()
    deadline = time.monotonic() + cfg.lease_wait_s
    while not got:
        # A worker is compacting this conversation: its result is what we want, if it comes in time.
        time.sleep(0.05)
        with uow_factory() as uow:
            conv = uow.repo.get_conversation(conversation_id)
            assert conv is not None
            if conv.compaction_epoch != epoch:
                applied = [c for c in uow.repo.compactions(conversation_id) if c.status == "applied"]
                done = applied[-1] if applied else None
                return CompactionOutcome(
                    conversation_id=conversation_id,
                    status="reused",
                    trigger="emergency",
                    tokens_before=done.tokens_before if done else conv.live_tokens,
                    tokens_after=conv.live_tokens,
                    usable=0,
                    target=0,
                    reason="a worker's compaction applied while the guard waited; reused",
                    compaction_id=done.id if done else None,
                    fallback=done.error if done else None,
                )
            if time.monotonic() > deadline:
                break  # compute our own; the epoch check keeps the result correct either way
            got = uow.repo.acquire_lease(conversation_id, owner, utcnow(), cfg.lease_seconds)
            uow.commit()
    try:
        return compact(
            uow_factory,
            counter,
            summarizer,
            conversation_id,
            trigger="emergency",
            defaults=cfg.defaults,
            policy=policy,
            fallback=True,
            factors=factors,
            reserved_tokens=reserved,
            deadline_s=cfg.deadline_s,
        )
    finally:
        if got:
            with uow_factory() as uow:
                uow.repo.release_lease(conversation_id, owner)
                uow.commit()


def _overflow(
    view: ContextView, usable: int, system: str | None, tools: int, counter: TokenCounter
) -> ContextOverflow:
    system_counted = counter.count(system) if system else 0
    fixed = system_counted + tools + view.current_turn_tokens
    return ContextOverflow(
        view.conversation_id,
        tokens=view.tokens,
        usable=usable,
        system_tokens=view.budget.effective(system_counted),
        tools_tokens=view.budget.effective(tools),
        current_turn_tokens=view.budget.effective(view.current_turn_tokens),
        fixed_tokens=view.budget.effective(fixed),
    )
