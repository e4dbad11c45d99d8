"""What the next LLM call gets, and the budget figures around it."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from sleepcompact.domain.budget import Budget
from sleepcompact.domain.errors import ConversationNotFound
from sleepcompact.domain.journal import MemoryRecord
from sleepcompact.domain.messages import MESSAGE_OVERHEAD, content_text
from sleepcompact.domain.recall import Candidate, memory_block, recall
from sleepcompact.domain.records import ConversationRecord, MessageRecord
from sleepcompact.domain.render_cache import CachedRendering, MemoryChoice
from sleepcompact.domain.rendering import extended, finish, history_of
from sleepcompact.ports import AgentMemoryRepository, ConversationRepository, Dependencies
from sleepcompact.services.budgets import budget_for
from sleepcompact.services.history_recall import recalled_history

RenderFormat = Literal["anthropic", "openai"]

MEMORY_SHARE = 0.05
"""The memory block never takes more than this share of the usable budget, whatever the setting."""
ANCHOR_ROWS = 12
ANCHOR_CHARS = 20_000
"""What memories are ranked against: the summary and the oldest 12 live rows, their first 20,000
characters (one huge tool output must not drown the task)."""


@dataclass(frozen=True)
class ContextView:
    """Exactly what the next call would send, with its token figures (in the model's tokens)."""

    conversation_id: str
    format: RenderFormat
    system: str | None
    messages: list[dict[str, Any]]
    tokens: int
    counted_tokens: int
    budget: Budget
    live_messages: int
    memories: list[dict[str, Any]] = field(default_factory=list)  # id, kind, content; best first
    memory_tokens: int = 0  # counted tokens of the recalled-notes block (included in the two above)
    auto_compact: bool | None = None  # the conversation's own switch (None: the global setting)
    current_turn_tokens: int = 0  # counted tokens of the newest user message onwards (never compacted)
    recalled: list[dict[str, Any]] = field(
        default_factory=list
    )  # archived snippets: seq, snippet; best first
    recall_tokens: int = 0  # counted tokens of the recalled-history block (included in tokens above)
    request_weight: tuple[int, int] | None = None  # (attachments, bytes) of the request, when known
    marked: tuple[int, ...] | None = None  # messages carrying a stored cache_control, when known

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (what ``sleepcompact context --json`` prints)."""
        b = self.budget
        return {
            "conversation_id": self.conversation_id,
            "format": self.format,
            "system": self.system,
            "messages": self.messages,
            "tokens": self.tokens,
            "counted_tokens": self.counted_tokens,
            "usable": b.usable,
            "soft": b.soft,
            "hard": b.hard,
            "target": b.target,
            "percent_of_usable": round(100.0 * self.tokens / b.usable, 1) if b.usable else 100.0,
            "budget": asdict(b),
            "live_messages": self.live_messages,
            "memories": self.memories,
            "memory_tokens": self.memory_tokens,
            "recalled": self.recalled,
            "recall_tokens": self.recall_tokens,
        }


def render_context(
    deps: Dependencies,
    conversation_id: str,
    *,
    system: str | None = None,
    fmt: RenderFormat = "anthropic",
    factors: Mapping[str, float] | None = None,
    tools_tokens: int = 0,
) -> ContextView:
    """Render the live rows; ``system`` (the caller's prompt) counts against the budget too.

    With ``settings.memory_budget_tokens`` > 0 the agent's most relevant valid memories join the call
    as one recalled-notes block (``domain.recall``), costing at most min(that budget, 5% of usable)
    model tokens; they are read in the same read-only transaction as the rows. Once something is
    archived, the snippets of it that best match the newest user message join that message's turn
    (``history_recall``; the recall budget, 0 turns it off). ``factors``: the calibration the guard
    caches; else read in that transaction. ``tools_tokens``: the counted tool definitions the call
    carries, which the recalled snippets leave room for (they are not added to the view's figures).
    """
    counter, memory_budget = deps.counter, deps.settings.memory_budget_tokens
    with deps.read_uow() as tx:
        conv = tx.conversations.get(conversation_id)
        if conv is None:
            raise ConversationNotFound(conversation_id)
        entry = _rendering(deps, tx.conversations, conv, fmt == "openai")
        if factors is None:
            factors = tx.calibration.factors()
        rows = entry.history.rows
        budget = budget_for(conv, deps.settings.thresholds, factors)
        recalls = memory_budget > 0 and bool(rows)
        choice = _memories(deps, tx.memories, conv, entry.anchor, budget) if recalls else None
    deps.render_cache.put(conversation_id, fmt == "openai", entry)
    chosen, block, memory_tokens = (choice.chosen, choice.block, choice.tokens) if choice else ((), "", 0)
    counted = conv.live_tokens + (counter.count(system) if system else 0) + memory_tokens
    recalled_block, recalled, recall_tokens = recalled_history(
        deps, conv, rows, budget, counted + tools_tokens
    )
    counted += recall_tokens
    done = finish(entry.history, system, block, recalled_block)
    return ContextView(
        conversation_id=conversation_id,
        format=fmt,
        system=done.system,
        messages=done.messages,
        tokens=budget.effective(counted),
        counted_tokens=counted,
        budget=budget,
        live_messages=conv.live_messages,
        memories=[{"id": r.id, "kind": r.kind, "content": r.content} for r in chosen],
        memory_tokens=memory_tokens,
        auto_compact=conv.auto_compact,
        current_turn_tokens=current_turn_tokens(rows),
        recalled=[{"seq": r.seq, "snippet": r.snippet} for r in recalled],
        recall_tokens=recall_tokens,
        request_weight=done.weight,
        marked=done.marked,
    )


def _rendering(
    deps: Dependencies, conversations: ConversationRepository, conv: ConversationRecord, openai: bool
) -> CachedRendering:
    """The conversation's rendering in this snapshot: the cached one with the rows appended since, when
    the cache holds one for this epoch (``domain.render_cache``), else every live row rendered."""
    cached = deps.render_cache.get(conv.id, openai)
    if cached is not None and cached.valid_for(conv):
        new = conversations.live_messages(conv.id, cached.next_seq)
        history = extended(cached.history, new)
        final = cached.anchor_final or not new
        anchor = (cached.anchor, cached.anchor_final) if final else anchor_text(history.rows)
    else:
        history = history_of(conversations.live_messages(conv.id), openai=openai)
        anchor = anchor_text(history.rows)
    return CachedRendering(conv.compaction_epoch, conv.created_at, conv.next_seq, history, *anchor)


def _memories(
    deps: Dependencies, repo: AgentMemoryRepository, conv: ConversationRecord, anchor: str, budget: Budget
) -> MemoryChoice:
    """The memories recalled for the call, their block and its counted tokens (both caps are in the
    model's tokens, like every budget figure; recall counts with our counter).

    Chosen from every memory of the agent only when its memories, the anchor or the allowance changed
    since the conversation's last call; otherwise one aggregate read says the last choice still holds
    (an agent with a thousand memories paid 24 ms a call to read and rank them all again)."""
    counter = deps.counter
    allowance = math.floor(
        min(deps.settings.memory_budget_tokens, MEMORY_SHARE * budget.usable) / budget.safety_factor
    )
    version = repo.memory_version(conv.tenant_id, conv.agent_id)
    held = deps.render_cache.choice(conv.id)
    if held is not None and (held.version, held.anchor, held.allowance) == (version, anchor, allowance):
        return held
    stored = repo.memories(conv.tenant_id, conv.agent_id)
    chosen = recall([_candidate(m) for m in stored], anchor, allowance - MESSAGE_OVERHEAD, counter.count)
    block = memory_block([r.line for r in chosen])
    tokens = counter.count(block) + MESSAGE_OVERHEAD if block else 0
    choice = MemoryChoice(version, anchor, allowance, tuple(chosen), block, tokens)
    deps.render_cache.keep_choice(conv.id, choice)
    return choice


def current_turn_tokens(rows: Sequence[MessageRecord]) -> int:
    """Counted tokens of the newest user message and everything after it: what no compaction removes."""
    start = next(
        (i for i in range(len(rows) - 1, -1, -1) if rows[i].role == "user" and rows[i].kind == "message"), 0
    )
    return sum(r.live_tokens for r in rows[start:])


def _candidate(m: MemoryRecord) -> Candidate:
    return Candidate(
        id=m.id,
        kind=m.kind,
        content=m.content,
        confidence=m.confidence,
        importance=m.importance,
        source_trust=m.source_trust,
        invalidated=m.invalidated_at is not None,
    )


def anchor_text(rows: Sequence[MessageRecord]) -> tuple[str, bool]:
    """The text memories are ranked against: the summary and the oldest live turns (``ANCHOR_ROWS``),
    and whether it is final (that many turns are live: rows appended later cannot change it).

    Only a compaction changes a final anchor (appends add at the end), so the memory block that opens the
    first user turn stays byte-identical from one call to the next and a prompt cache keeps it; what the
    newest question needs from the archive comes in its own turn (``history_recall``). Ranking against
    the newest turns, as before, moved the whole request prefix at every call."""
    summaries = [r for r in rows if r.kind == "summary"]
    body: list[MessageRecord] = []
    for r in rows:
        if r.role != "system" and r.kind != "summary":
            body.append(r)
            if len(body) == ANCHOR_ROWS:
                break
    text = "\n".join(content_text(r.view) for r in [*summaries, *body])[:ANCHOR_CHARS]
    return text, len(body) == ANCHOR_ROWS


@dataclass(frozen=True)
class DatabaseStats:
    """Counts and tokens over the whole database (or one conversation's rows)."""

    conversations: int
    messages: int
    original_tokens: int
    messages_by_state: dict[str, int]
    messages_by_kind: dict[str, int]
    compactions: int

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready (what ``sleepcompact stats --json`` prints)."""
        return asdict(self)


@dataclass(frozen=True)
class ConversationStats(DatabaseStats):
    """One conversation's counts, with its budget figures (``tokens`` in the model's tokens)."""

    conversation_id: str = ""
    tenant_id: str = ""
    agent_id: str = ""
    model: str = ""
    plan: str | None = None
    live_messages: int = 0
    live_tokens: int = 0
    tokens: int = 0
    context_window: int = 0
    output_reserve: int = 0
    usable: int = 0
    soft: int = 0
    hard: int = 0
    target: int = 0
    safety_factor: float = 1.0
    percent_of_usable: float = 0.0
    compaction_epoch: int = 0


def database_stats(deps: Dependencies) -> DatabaseStats:
    """Counts and tokens over every conversation."""
    with deps.read_uow() as uow:
        return DatabaseStats(**uow.conversations.stats(None))


def conversation_stats(deps: Dependencies, conversation_id: str) -> ConversationStats:
    """One conversation's counts and tokens, and its budget figures."""
    with deps.read_uow() as uow:
        conv = uow.conversations.get(conversation_id)
        if conv is None:
            raise ConversationNotFound(conversation_id)
        counts = uow.conversations.stats(conversation_id)
        factors = uow.calibration.factors()
    b = budget_for(conv, deps.settings.thresholds, factors)
    return ConversationStats(
        **counts,
        conversation_id=conv.id,
        tenant_id=conv.tenant_id,
        agent_id=conv.agent_id,
        model=conv.model,
        plan=conv.plan,
        live_messages=conv.live_messages,
        live_tokens=conv.live_tokens,
        tokens=b.effective(conv.live_tokens),
        context_window=b.context_window,
        output_reserve=b.output_reserve,
        usable=b.usable,
        soft=b.soft,
        hard=b.hard,
        target=b.target,
        safety_factor=b.safety_factor,
        percent_of_usable=b.percent_of_usable(conv.live_tokens),
        compaction_epoch=conv.compaction_epoch,
    )
