"""Use cases on conversations: create, append, clear, stats.

Each function owns its transaction (``with uow: ... uow.commit()``) and takes
primitives. Validation happens before anything is written, and the whole
append is one transaction, so a bad message leaves the database unchanged.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sleepcompact.domain.blocks import MAX_DEPTH
from sleepcompact.domain.budget import Thresholds, output_reserve_for, resolve_window
from sleepcompact.domain.errors import ConversationNotFound, InvalidSetting
from sleepcompact.domain.json_shapes import json_problem
from sleepcompact.domain.messages import MessageFormat, NormalizedMessage, normalize, part_tokens
from sleepcompact.domain.records import (
    CompactionRecord,
    ConversationRecord,
    MessageRecord,
    logical_order,
    new_rows,
)
from sleepcompact.domain.steps import RowChange
from sleepcompact.domain.tool_ids import CallBook, bind_parts
from sleepcompact.hooks import ConversationCleared, MessagesAppended
from sleepcompact.ports import ConversationRepository, Dependencies, TokenCounter
from sleepcompact.services.clock import new_id, utcnow


@dataclass(frozen=True)
class ConversationSpec:
    """What a new conversation is created with."""

    model: str
    tenant_id: str = "default"
    agent_id: str = "default"
    plan: str | None = None
    context_window: int | None = None
    output_reserve: int | None = None
    thresholds: Thresholds | None = None
    auto_compact: bool | None = None
    conversation_id: str | None = None
    metadata: Mapping[str, Any] | None = None


def build_conversation(spec: ConversationSpec, now: datetime) -> ConversationRecord:
    """A validated conversation record (not stored yet)."""
    window = resolve_window(spec.model, spec.plan, spec.context_window)
    reserve = (
        spec.output_reserve if spec.output_reserve is not None else output_reserve_for(spec.model, window)
    )
    if not 0 <= reserve < window:
        raise InvalidSetting(f"output_reserve must be between 0 and the window ({window}), got {reserve}")
    cid = spec.conversation_id or new_id("conv")
    if not cid or len(cid) > 40:
        raise InvalidSetting(f"a conversation id has 1 to 40 characters, got {cid!r}")
    # Stored as JSON and exported as JSON: refused here, not as a driver error (or invalid JSON) later.
    if (problem := json_problem(dict(spec.metadata or {}), MAX_DEPTH)) is not None:
        raise InvalidSetting(f"metadata: {problem}")
    t = spec.thresholds
    return ConversationRecord(
        id=cid,
        tenant_id=spec.tenant_id,
        agent_id=spec.agent_id,
        model=spec.model,
        plan=spec.plan,
        context_window=window,
        output_reserve=reserve,
        live_tokens=0,
        live_messages=0,
        next_seq=1,
        compaction_epoch=0,
        created_at=now,
        last_activity_at=now,
        soft_threshold=t.soft if t else None,
        hard_threshold=t.hard if t else None,
        target_ratio=t.target if t else None,
        auto_compact=spec.auto_compact,
        metadata=dict(spec.metadata or {}),
    )


def create_conversation(deps: Dependencies, spec: ConversationSpec) -> str:
    """Create a conversation; returns its id."""
    record = build_conversation(spec, utcnow())
    with deps.uow() as uow:
        if uow.conversations.get(record.id) is not None:
            raise InvalidSetting(f"conversation {record.id!r} already exists")
        uow.conversations.add(record)
        uow.commit()
    return record.id


@dataclass(frozen=True)
class Appended:
    """What an append stored: the seqs of its rows and the tokens they cost."""

    conversation_id: str
    seqs: tuple[int, ...]
    tokens: int

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return {"conversation_id": self.conversation_id, "seqs": list(self.seqs), "tokens": self.tokens}


def prepare(
    message: object, counter: TokenCounter, *, fmt: MessageFormat, max_bytes: int
) -> tuple[NormalizedMessage, list[int]]:
    """Validate and count one message outside any transaction (counting can take a while)."""
    normalized = normalize(message, fmt=fmt, max_bytes=max_bytes)
    return normalized, [part_tokens(p.content, counter.count) for p in normalized.parts]


def call_book(repo: ConversationRepository, conversation_id: str) -> CallBook:
    """The conversation's tool calls as one transaction sees them (``domain.tool_ids``)."""
    return CallBook(
        lookup=lambda ref: repo.calls_with_ref(conversation_id, ref),
        is_taken=lambda key: repo.call_key_taken(conversation_id, key),
    )


def store_prepared(
    repo: ConversationRepository,
    book: CallBook,
    conversation_id: str,
    normalized: NormalizedMessage,
    tokens: list[int],
    now: datetime,
    count: Callable[[str], int],
    *,
    sent_at: datetime | None = None,
) -> Appended:
    """Insert one prepared message inside the caller's transaction, binding its tool calls and results
    first (``book`` is the transaction's ``call_book``): a reused id is scoped to its turn, a bad one
    raises before anything is written. ``sent_at`` (an import's source time) dates the rows instead
    of ``now``; the conversation's activity is still ``now``."""
    parts = normalized.parts
    total = sum(tokens)
    first = repo.reserve_seqs(conversation_id, len(parts), total, len(parts), now)
    if first is None:
        raise ConversationNotFound(conversation_id)
    keys = bind_parts(book, parts)
    results = [k for k, p in zip(keys, parts, strict=True) if k is not None and p.kind == "tool_result"]
    names = repo.tool_calls(conversation_id, results)
    rows = new_rows(normalized, tokens, first_seq=first, tool_names=names, count=count, keys=keys)
    repo.add_messages(conversation_id, rows, sent_at or now)
    return Appended(conversation_id, tuple(r.seq for r in rows), total)


def append(
    deps: Dependencies,
    conversation_id: str,
    message: object,
    *,
    fmt: MessageFormat = "auto",
    sent_at: datetime | None = None,
) -> Appended:
    """Append one message: validated, counted once, live_tokens updated in the same transaction; rows are
    dated ``sent_at`` when given (a replayed history), else now."""
    counter = deps.counter
    normalized, tokens = prepare(message, counter, fmt=fmt, max_bytes=deps.settings.max_message_bytes)
    with deps.uow() as uow:
        repo = uow.conversations
        book = call_book(repo, conversation_id)
        now = utcnow()
        result = store_prepared(
            repo, book, conversation_id, normalized, tokens, now, counter.count, sent_at=sent_at
        )
        uow.commit()
    _appended(deps, conversation_id, result.seqs)
    return result


def append_many(
    deps: Dependencies, conversation_id: str, messages: Iterable[object], *, fmt: MessageFormat = "auto"
) -> list[Appended]:
    """Append several messages all-or-nothing: one bad message and none is stored."""
    counter, limit = deps.counter, deps.settings.max_message_bytes
    prepared = [prepare(m, counter, fmt=fmt, max_bytes=limit) for m in messages]
    with deps.uow() as uow:
        now, repo = utcnow(), uow.conversations
        book = call_book(repo, conversation_id)
        out = [store_prepared(repo, book, conversation_id, n, t, now, counter.count) for n, t in prepared]
        uow.commit()
    _appended(deps, conversation_id, tuple(seq for a in out for seq in a.seqs))
    return out


def _appended(deps: Dependencies, conversation_id: str, seqs: tuple[int, ...]) -> None:
    """Tell the ``message_appended`` hooks, after the commit (a hook that fails changes nothing)."""
    if deps.hooks:
        deps.hooks.notify("message_appended", MessagesAppended(conversation_id, seqs))


def get_conversation(deps: Dependencies, conversation_id: str) -> ConversationRecord:
    """The conversation record, or ConversationNotFound."""
    with deps.read_uow() as uow:
        conv = uow.conversations.get(conversation_id)
    if conv is None:
        raise ConversationNotFound(conversation_id)
    return conv


def clear(deps: Dependencies, conversation_id: str) -> str:
    """Empty the live context by archiving every live row (nothing is deleted).

    Recorded as a compaction with trigger ``clear``, including each row's
    prior live state, so ``restore`` can bring the context back exactly.
    """
    cid = _archive(deps, conversation_id, "clear", lambda live: list(live))
    assert cid is not None  # clearing an empty context still records the clear
    if deps.hooks:
        deps.hooks.notify("conversation_cleared", ConversationCleared(conversation_id))
    return cid


def pop_newest(deps: Dependencies, conversation_id: str) -> tuple[str, dict[str, Any]] | None:
    """Archive the newest live message (all its rows) and return the id of the record that did it
    (``restore`` brings it back) with the message as appended; None when nothing is live. A session
    protocol's ``pop_item`` (the Agents SDK's): nothing is deleted."""
    taken: list[MessageRecord] = []

    def newest(live: Sequence[MessageRecord]) -> list[MessageRecord]:
        if not live:
            return []
        last = logical_order(live)[-1]
        first = last.seq - last.part  # a message's parts have consecutive seqs, part 0 first
        taken.extend(m for m in live if m.seq - m.part == first)
        return taken

    cid = _archive(deps, conversation_id, "pop", newest, allow_empty=False)
    if cid is None:
        return None
    with deps.read_uow() as uow:
        head = uow.conversations.message_by_seq(conversation_id, taken[0].seq - taken[0].part)
    raw = json.loads(head.raw) if head is not None and head.raw is not None else None
    original = raw if isinstance(raw, dict) else {"role": taken[0].role, "content": taken[0].view}
    return cid, original


def _archive(
    deps: Dependencies,
    conversation_id: str,
    step: str,
    choose: Callable[[Sequence[MessageRecord]], list[MessageRecord]],
    *,
    allow_empty: bool = True,
) -> str | None:
    """Archive the live rows ``choose`` picks, recorded as an applied ``clear`` compaction with each
    row's prior state (restorable), under the epoch check; None when it picks nothing and
    ``allow_empty`` is off."""
    with deps.uow() as uow:
        conv = uow.conversations.get(conversation_id)
        if conv is None:
            raise ConversationNotFound(conversation_id)
        rows = choose(uow.conversations.live_messages(conversation_id))
        if not rows and not allow_empty:
            return None
        tokens = sum(m.live_tokens for m in rows)
        cid = new_id("cmp")
        record = CompactionRecord(
            id=cid,
            conversation_id=conversation_id,
            trigger="clear",
            status="applied",
            steps=[{"step": step, "tokens_saved": tokens, "messages": len(rows)}],
            first_seq=rows[0].seq if rows else None,
            last_seq=rows[-1].seq if rows else None,
            messages_affected=len(rows),
            tokens_before=conv.live_tokens,
            tokens_after=conv.live_tokens - tokens,
            created_at=utcnow(),
            snapshot_epoch=conv.compaction_epoch,
        )
        if not uow.conversations.bump_epoch(conversation_id, conv.compaction_epoch):
            raise InvalidSetting(f"the conversation changed during the {step}; try again")
        changes = [RowChange(m.id, m.seq, "archived", m.live_content, m.live_tokens, step) for m in rows]
        prior = uow.compactions.apply_changes(cid, changes)
        uow.compactions.add(record, meta={"prior": prior})
        uow.conversations.recount(conversation_id)
        uow.commit()
    return cid


def list_conversations(deps: Dependencies, limit: int = 1000) -> list[ConversationRecord]:
    """Conversations, most recently active first."""
    with deps.read_uow() as uow:
        return uow.conversations.recent(limit)
