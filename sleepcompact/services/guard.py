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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from functools import partial
from typing import Any

from sleepcompact.domain.attachments import MAX_IMAGES_PER_REQUEST, MAX_REQUEST_BYTES, request_weight
from sleepcompact.domain.blocks import MAX_DEPTH
from sleepcompact.domain.cache_breakpoints import CacheTTL
from sleepcompact.domain.errors import (
    ContextOverflow,
    ConversationNotFound,
    MalformedContent,
    RequestTooLarge,
)
from sleepcompact.domain.guard import Action, decide
from sleepcompact.domain.json_shapes import json_problem
from sleepcompact.domain.recall_tools import anthropic_tools, openai_tools
from sleepcompact.domain.render_cache import CachedRendering
from sleepcompact.domain.rerendering import recompacted
from sleepcompact.domain.schedule import request_key
from sleepcompact.logs import get_logger
from sleepcompact.ports import Dependencies, TokenCounter
from sleepcompact.services.clock import utcnow
from sleepcompact.services.compaction import CompactRequest, compact
from sleepcompact.services.compaction_writes import LiveRows
from sleepcompact.services.context import ContextView, RenderFormat, anchor_text, render_context
from sleepcompact.services.outcomes import CompactionOutcome
from sleepcompact.services.prepared import PreparedContext
from sleepcompact.telemetry import emit

log = get_logger(__name__)


def _recall_tools(fmt: RenderFormat) -> list[dict[str, Any]]:
    return anthropic_tools() if fmt == "anthropic" else openai_tools()


def tool_tokens(counter: TokenCounter, tools: Sequence[Mapping[str, Any]] | None) -> int:
    """What the tool definitions cost (their JSON, as the API serializes them)."""
    if not tools:
        return 0
    return counter.count(json.dumps(list(tools), ensure_ascii=False, separators=(",", ":")))


@dataclass(frozen=True)
class _Call:
    """One guarded call: what the caller sends besides the conversation's rows."""

    conversation_id: str
    system: str | None
    tools: list[dict[str, Any]] | None
    fmt: RenderFormat
    tools_tokens: int
    system_tokens: int
    # time.monotonic() by which an emergency compaction must stop waiting (lease, LLM): set when the
    # guard is called, so the whole call, not just the LLM request, keeps to guard_deadline_s.
    deadline: float

    @property
    def fixed(self) -> int:
        """Counted tokens no compaction can shrink: the caller's system prompt and tools."""
        return self.system_tokens + self.tools_tokens


def prepare_context(
    deps: Dependencies,
    conversation_id: str,
    *,
    system: str | None = None,
    tools: Sequence[Mapping[str, Any]] | None = None,
    fmt: RenderFormat = "anthropic",
    recall_tools: bool = False,
) -> PreparedContext:
    """The guard (see the module docstring): a context that fits, and what it took to get it.

    ``recall_tools`` adds the agent's recall tools (``search_history``, ``read_archived``) to ``tools``,
    in ``fmt``'s shape, counted like the caller's own."""
    deadline = time.monotonic() + deps.settings.guard_deadline_s
    wanted = [*(tools or ()), *(_recall_tools(fmt) if recall_tools else ())]
    tools_list = [dict(t) for t in wanted] if wanted else None
    if tools_list and (problem := json_problem(tools_list, MAX_DEPTH)) is not None:
        raise MalformedContent(f"tools: {problem}")  # they are sent as JSON: refuse them before anything
    counter = deps.counter
    call = _Call(
        conversation_id,
        system,
        tools_list,
        fmt,
        tool_tokens(counter, tools_list),
        counter.count(system) if system else 0,
        deadline,
    )
    view = _render(deps, call)
    budget = view.budget
    enabled = deps.settings.auto_compact and view.auto_compact is not False
    # Decided without the recalled snippets: they only fill the room under hard that is free anyway.
    own = budget.effective(view.counted_tokens - view.recall_tokens)
    decision = decide(own, budget, auto_compact=enabled)
    over_limits = request_load(view) is not None
    if decision == "none" and not over_limits:
        _emit(view, "none", decision)
        return PreparedContext(view, tools_list, "none", cache_ttl=_cache_ttl(deps, fmt))
    if decision == "overflow" or (decision == "compact_now" and budget.effective(call.fixed) > budget.usable):
        # Nothing compaction may touch would make room: say so with the numbers, and write nothing.
        # (An oversized current turn can still be truncated middle-out by the ladder's last rung.)
        _emit(view, "overflow", decision)
        raise _overflow(view, call)
    if decision == "request_sleep" and not over_limits:
        _request_sleep(deps, conversation_id)
        _emit(view, "sleep_requested", decision)
        return PreparedContext(view, tools_list, "sleep_requested", cache_ttl=_cache_ttl(deps, fmt))
    return _emergency(deps, call, view, decision)


def _render(deps: Dependencies, call: _Call) -> ContextView:
    """The call as it would be sent, the tool definitions counted in."""
    view = render_context(
        deps,
        call.conversation_id,
        system=call.system,
        fmt=call.fmt,
        factors=deps.factors(),
        tools_tokens=call.tools_tokens,
    )
    counted = view.counted_tokens + call.tools_tokens
    return replace(view, counted_tokens=counted, tokens=view.budget.effective(counted))


def _emergency(deps: Dependencies, call: _Call, view: ContextView, decision: str) -> PreparedContext:
    """Over hard: compact now, with what is not the conversation's own rows reserved out of the budget."""
    budget = view.budget
    # The recalled snippets are left out: they take only the room the compacted call leaves under hard.
    reserved = budget.effective(call.fixed + view.memory_tokens)
    outcome = _compact_now(deps, call, reserved)
    after = _render(deps, call)
    compaction = outcome.status
    if after.tokens > budget.usable:
        _emit(after, "overflow", decision, tokens_before=view.tokens, compaction=compaction)
        raise _overflow(after, call)
    if (load := request_load(after)) is not None:
        _emit(after, "overflow", decision, tokens_before=view.tokens, compaction=compaction)
        raise RequestTooLarge(
            after.conversation_id,
            attachments=load[0],
            size=load[1],
            max_attachments=MAX_IMAGES_PER_REQUEST,
            max_bytes=MAX_REQUEST_BYTES,
        )
    action: Action
    if outcome.status in ("applied", "reused"):
        action = "fallback_compacted" if outcome.fallback else "emergency_compacted"
    else:
        # Nothing of ours applied (vetoed, stalled, a race lost): another writer's compaction meanwhile
        # may still have shrunk the call, and the action says what happened to the call.
        action = "emergency_compacted" if after.tokens < view.tokens else "none"
    _emit(after, action, decision, tokens_before=view.tokens, compaction=compaction)
    return PreparedContext(
        after,
        call.tools,
        action,
        compaction_id=outcome.compaction_id,
        reason=outcome.reason,
        cache_ttl=_cache_ttl(deps, call.fmt),
    )


def _cache_ttl(deps: Dependencies, fmt: RenderFormat) -> CacheTTL | None:
    """The breakpoints' TTL for this call: Anthropic format with prompt caching on, else none."""
    ttl = deps.settings.prompt_cache
    return None if fmt != "anthropic" or ttl == "off" else ttl


def request_load(view: ContextView) -> tuple[int, int] | None:
    """(attachments, bytes) of the rendered request when over the provider's per-request limits, else
    None. The request is weighed by a walk over its values; only when that estimate comes within half
    of the byte limit is it serialized, to be exact."""
    body = {"system": view.system, "messages": view.messages}
    # The rendering weighs each turn once, when it is first rendered: no walk over the whole history.
    attachments, size = view.request_weight or request_weight(body)
    if size * 2 >= MAX_REQUEST_BYTES:
        size = len(json.dumps(body, ensure_ascii=False).encode("utf-8"))
    if attachments <= MAX_IMAGES_PER_REQUEST and size <= MAX_REQUEST_BYTES:
        return None
    return attachments, size


def _emit(view: ContextView, action: str, decision: str, **extra: Any) -> None:
    """The canonical ``guard`` line: what the call carries (``tokens``) against ``usable``, and how full
    that is. ``token_basis`` says what the figures are: ``calibrated`` model tokens (our count times the
    model family's learned factor), except ``tokens_raw``, our own count before the factor."""
    emit(
        "guard",
        conversation_id=view.conversation_id,
        action=action,
        decision=decision,
        tokens=view.tokens,
        tokens_raw=view.counted_tokens,
        usable=view.budget.usable,
        percent_of_usable=round(100.0 * view.tokens / view.budget.usable, 1) if view.budget.usable else 100.0,
        token_basis="calibrated",
        **extra,
    )


def _request_sleep(deps: Dependencies, conversation_id: str) -> None:
    """Record a sleep request (at most one per interval) and enqueue its tick after the commit."""
    now = utcnow()
    with deps.uow() as uow:
        fresh = uow.ticks.request_sleep_debounced(
            conversation_id, now, deps.settings.sleep_request_interval_s
        )
        key = request_key(now)
        queued = uow.ticks.queue([(conversation_id, key)], now) if fresh else []
        uow.commit()
    if queued:
        try:
            deps.queue.enqueue_tick(conversation_id, key, urgent=True)
        except Exception as exc:  # the request path never fails on the broker; the idle sweep re-sends
            log.warning("guard_enqueue_failed", conversation_id=conversation_id, error=type(exc).__name__)


def _compact_now(deps: Dependencies, call: _Call, reserved: int) -> CompactionOutcome:
    """Take the lease (waiting a bounded time for a worker that holds it), then compact as an emergency.

    The compaction plans on the rows the call's rendering just read, and the rows it leaves are
    rendered into the cache (``_seed``), so the call after it reads nothing back but its epoch."""
    cid = call.conversation_id
    owner = f"guard:{uuid.uuid4().hex}"
    got, reused = _wait_for_lease(deps, cid, owner, call.deadline)
    if reused is not None:
        return reused
    cached = deps.render_cache.get(cid, call.fmt == "openai")
    released = False
    try:
        request = CompactRequest(
            trigger="emergency",
            fallback=True,
            factors=deps.factors(),
            reserved_tokens=reserved,
            deadline=call.deadline,
            live=None if cached is None else _live(cached),
            on_applied=None if cached is None else partial(_seed, deps, cid, cached),
            lease_owner=owner if got else None,
        )
        outcome = compact(deps, cid, request)
        released = got and outcome.status == "applied"  # given back in the apply's transaction
        return outcome
    finally:
        if got and not released:
            with deps.uow() as uow:
                uow.ticks.release_lease(cid, owner)
                uow.commit()


def _live(cached: CachedRendering) -> LiveRows:
    return LiveRows(cached.epoch, cached.created_at, cached.next_seq, cached.history.rows)


def _seed(deps: Dependencies, conversation_id: str, before: CachedRendering, after: LiveRows) -> None:
    """Cache the rendering of the rows a compaction left (it re-renders only the turns it changed)."""
    history = recompacted(before.history, after.rows)
    entry = CachedRendering(
        after.epoch, after.created_at, after.next_seq, history, *anchor_text(history.rows)
    )
    deps.render_cache.put(conversation_id, history.openai, entry)


def _wait_for_lease(
    deps: Dependencies, conversation_id: str, owner: str, until: float
) -> tuple[bool, CompactionOutcome | None]:
    """(whether we hold the lease, a worker's compaction that applied while we waited, if any).

    A worker compacting this conversation makes the result we want; we wait for it up to
    ``guard_lease_wait_s``, then compute our own (the epoch check keeps the result correct either way).
    The wait takes at most half of what is left before the guard's deadline (``until``): our own
    compaction needs the rest (a worker that died holding the lease would otherwise use it all up).
    """
    settings = deps.settings
    with deps.uow() as uow:
        conv = uow.conversations.get(conversation_id)
        if conv is None:
            raise ConversationNotFound(conversation_id)
        epoch = conv.compaction_epoch
        got = uow.ticks.acquire_lease(conversation_id, owner, utcnow(), settings.lease_seconds)
        uow.commit()
    now = time.monotonic()
    deadline = min(now + settings.guard_lease_wait_s, now + (until - now) / 2)
    while not got:
        time.sleep(0.05)
        with deps.uow() as uow:
            conv = uow.conversations.get(conversation_id)
            assert conv is not None
            if conv.compaction_epoch != epoch:
                return False, _reused(conversation_id, conv.live_tokens, uow.compactions.of(conversation_id))
            if time.monotonic() > deadline:
                return False, None
            got = uow.ticks.acquire_lease(conversation_id, owner, utcnow(), settings.lease_seconds)
            uow.commit()
    return True, None


def _reused(conversation_id: str, live_tokens: int, history: Sequence[tuple[Any, Any]]) -> CompactionOutcome:
    """The outcome of a worker's compaction the guard reuses instead of paying for its own."""
    applied = [c for c, _ in history if c.status == "applied"]
    done = applied[-1] if applied else None
    return CompactionOutcome(
        conversation_id=conversation_id,
        status="reused",
        trigger="emergency",
        tokens_before=done.tokens_before if done else live_tokens,
        tokens_after=live_tokens,
        usable=0,
        target=0,
        reason="a worker's compaction applied while the guard waited; reused",
        compaction_id=done.id if done else None,
        fallback=done.error if done else None,
    )


def _overflow(view: ContextView, call: _Call) -> ContextOverflow:
    fixed = call.fixed + view.current_turn_tokens
    return ContextOverflow(
        view.conversation_id,
        tokens=view.tokens,
        usable=view.budget.usable,
        system_tokens=view.budget.effective(call.system_tokens),
        tools_tokens=view.budget.effective(call.tools_tokens),
        current_turn_tokens=view.budget.effective(view.current_turn_tokens),
        fixed_tokens=view.budget.effective(fixed),
    )
