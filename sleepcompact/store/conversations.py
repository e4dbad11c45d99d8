"""The conversation aggregate in SQL: conversations, their message rows, and the archive search."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from types import SimpleNamespace
from typing import Any, cast

from sqlalchemy import bindparam, func, null, select, update
from sqlalchemy.orm import Session, aliased

from sleepcompact.domain.messages import content_text
from sleepcompact.domain.records import ConversationRecord, MessageRecord, NewMessage
from sleepcompact.domain.search_query import SearchFilters, SearchQuery
from sleepcompact.store.mapping import conversation_record, dump_content, message_record
from sleepcompact.store.models import Compaction, Conversation, Message
from sleepcompact.store.search import index_messages, ranked_ids

Message_call = aliased(Message, name="call")

_CONVERSATION_COLUMNS = tuple(
    getattr(Conversation, a.key).label(a.key) for a in Conversation.__mapper__.column_attrs
)
_LIVE_COLUMNS = tuple(
    getattr(Message, a.key).label(a.key) for a in Message.__mapper__.column_attrs if a.key != "raw"
)

# The request path's two reads, built once: constructing a statement (coercing its columns and
# computing its cache key) cost more than executing it. They run on the session's connection, so the
# ORM's result machinery is skipped too; rows come back keyed by attribute name.
_GET_CONVERSATION = select(*_CONVERSATION_COLUMNS).where(Conversation.id == bindparam("conversation_id"))
_LIVE_KEYS = (*(c.key for c in _LIVE_COLUMNS), "raw")
_LIVE_MESSAGES = (
    select(*_LIVE_COLUMNS, null().label("raw"))
    .where(
        Message.conversation_id == bindparam("conversation_id"),
        Message.state != "archived",
        Message.seq >= bindparam("since"),
    )
    .order_by(Message.seq, Message.part)
)


class SqlConversations:
    """``ConversationRepository`` over one SQLAlchemy session."""

    def __init__(self, session: Session) -> None:
        self.session = session

    def add(self, record: ConversationRecord) -> None:
        """Insert a new conversation."""
        self.session.add(
            Conversation(
                id=record.id,
                tenant_id=record.tenant_id,
                agent_id=record.agent_id,
                model=record.model,
                plan=record.plan,
                context_window=record.context_window,
                output_reserve=record.output_reserve,
                soft_threshold=record.soft_threshold,
                hard_threshold=record.hard_threshold,
                target_ratio=record.target_ratio,
                auto_compact=record.auto_compact,
                live_tokens=record.live_tokens,
                live_messages=record.live_messages,
                next_seq=record.next_seq,
                compaction_epoch=record.compaction_epoch,
                last_activity_at=record.last_activity_at,
                created_at=record.created_at,
                meta=record.metadata,
            )
        )
        self.session.flush()

    def get(self, conversation_id: str) -> ConversationRecord | None:
        """One conversation by primary key, or None.

        A Core select of the mapped columns, not ``Session.get``: the guard's decision is this one read,
        and the ORM's identity-map machinery was most of its cost (measured in ``bench/guard.py``).
        """
        row = (
            self.session.connection().execute(_GET_CONVERSATION, {"conversation_id": conversation_id}).first()
        )
        return conversation_record(cast(Conversation, row)) if row is not None else None

    def recent(self, limit: int = 1000) -> list[ConversationRecord]:
        """Conversations, most recently active first."""
        rows = self.session.scalars(
            select(Conversation).order_by(Conversation.last_activity_at.desc(), Conversation.id).limit(limit)
        )
        return [conversation_record(r) for r in rows]

    def reserve_seqs(
        self,
        conversation_id: str,
        count: int,
        tokens: int,
        messages: int,
        now: datetime,
        *,
        activity: bool = True,
    ) -> int | None:
        """Take ``count`` seqs with one conditional UPDATE (it also serializes concurrent appends)."""
        values: dict[str, Any] = {
            "next_seq": Conversation.next_seq + count,
            "live_tokens": Conversation.live_tokens + tokens,
            "live_messages": Conversation.live_messages + messages,
        }
        if activity:  # a compaction writing its summary is not the agent being active
            values["last_activity_at"] = now
        new_next = self.session.execute(
            update(Conversation)
            .where(Conversation.id == conversation_id)
            .values(**values)
            .returning(Conversation.next_seq)
        ).scalar_one_or_none()
        if new_next is None:
            return None
        self.session.expire_all()
        return int(new_next) - count

    def bump_epoch(self, conversation_id: str, expected_epoch: int) -> bool:
        """Compare-and-set: only the holder of the current epoch moves it on."""
        result = self.session.execute(
            update(Conversation)
            .where(Conversation.id == conversation_id, Conversation.compaction_epoch == expected_epoch)
            .values(compaction_epoch=expected_epoch + 1)
            .execution_options(synchronize_session=False)
        )
        return int(result.rowcount) == 1  # type: ignore[attr-defined]

    def recount(self, conversation_id: str) -> tuple[int, int]:
        """Recompute live_tokens and live_messages from the rows (appends made meanwhile included)."""
        tokens, count = self.session.execute(
            select(func.coalesce(func.sum(Message.live_tokens), 0), func.count()).where(
                Message.conversation_id == conversation_id, Message.state != "archived"
            )
        ).one()
        self.session.execute(
            update(Conversation)
            .where(Conversation.id == conversation_id)
            .values(live_tokens=int(tokens), live_messages=int(count))
        )
        return int(tokens), int(count)

    def tool_calls(self, conversation_id: str, ids: Sequence[str]) -> dict[str, str | None]:
        """Of ``ids``, those naming an existing tool call of this conversation, with the tool's name."""
        if not ids:
            return {}
        rows = self.session.execute(
            select(Message.tool_call_id, Message.tool_name).where(
                Message.conversation_id == conversation_id,
                Message.kind == "tool_call",
                Message.tool_call_id.in_(list(ids)),
            )
        )
        return {str(tid): name for tid, name in rows}

    def calls_with_ref(self, conversation_id: str, ref: str) -> list[tuple[str, bool]]:
        """Keys of the calls made with ``ref``, oldest first, each with whether it has its result."""
        answered = (
            select(Message.id)
            .where(
                Message.conversation_id == conversation_id,
                Message.kind == "tool_result",
                Message.tool_call_id == Message_call.tool_call_id,
            )
            .exists()
        )
        rows = self.session.execute(
            select(Message_call.tool_call_id, answered)
            .where(
                Message_call.conversation_id == conversation_id,
                Message_call.kind == "tool_call",
                Message_call.call_ref == ref,
            )
            .order_by(Message_call.seq)
        )
        return [(str(key), bool(done)) for key, done in rows]

    def call_key_taken(self, conversation_id: str, key: str) -> bool:
        """Whether a call of the conversation is stored under ``key``."""
        found = self.session.scalar(
            select(Message.id)
            .where(
                Message.conversation_id == conversation_id,
                Message.kind == "tool_call",
                Message.tool_call_id == key,
            )
            .limit(1)
        )
        return found is not None

    def add_messages(self, conversation_id: str, messages: Sequence[NewMessage], now: datetime) -> list[int]:
        """Insert rows, all live, and return their ids."""
        rows = [
            Message(
                conversation_id=conversation_id,
                seq=m.seq,
                part=m.part,
                role=m.role,
                kind=m.kind,
                content=dump_content(m.content),
                raw=m.raw,
                tool_name=m.tool_name,
                tool_call_id=m.tool_call_id,
                call_ref=m.call_ref,
                token_count=m.token_count,
                state="live",
                live_content=None,
                live_tokens=m.token_count,
                tool_summary=m.tool_summary,
                tool_summary_tokens=m.tool_summary_tokens,
                include_in_history=m.include_in_history,
                created_at=now,
                meta=m.metadata,
            )
            for m in messages
        ]
        self.session.add_all(rows)
        self.session.flush()
        # Summaries are derived text; search covers what was actually said and returned.
        index_messages(
            self.session,
            conversation_id,
            [
                (r.id, content_text(m.content))
                for r, m in zip(rows, messages, strict=True)
                if m.kind != "summary"
            ],
        )
        return [r.id for r in rows]

    def live_messages(self, conversation_id: str, since: int = 0) -> list[MessageRecord]:
        """Rows the next call carries (served by the partial index ix_message_live); with ``since``,
        only those from that seq on (what was appended after a cached rendering)."""
        # Plain rows without ``raw`` (the verbatim payload only export needs): building ORM objects for
        # thousands of rows, and collecting them afterwards, was most of prepare_context's time.
        # Each row unpacked once, as the tuple it is, and named: attribute access on a Row costs about a
        # microsecond a column, which over 20 columns and thousands of rows was a third of the mapping.
        rows = self.session.connection().execute(
            _LIVE_MESSAGES, {"conversation_id": conversation_id, "since": since}
        )
        return [
            message_record(cast(Message, SimpleNamespace(**dict(zip(_LIVE_KEYS, r, strict=True)))))
            for r in rows
        ]

    def all_messages(self, conversation_id: str) -> list[MessageRecord]:
        """Every row ever stored, archived ones included."""
        rows = self.session.scalars(
            select(Message).where(Message.conversation_id == conversation_id).order_by(Message.seq)
        )
        return [message_record(r) for r in rows]

    def message_by_seq(self, conversation_id: str, seq: int) -> MessageRecord | None:
        """One row by its seq."""
        row = self.session.scalar(
            select(Message).where(Message.conversation_id == conversation_id, Message.seq == seq)
        )
        return message_record(row) if row is not None else None

    def search(
        self, conversation_id: str, query: SearchQuery, filters: SearchFilters, limit: int
    ) -> list[tuple[MessageRecord, float]]:
        """Originals matching any term of ``query`` and the filters, best first, with their scores."""
        ranked = ranked_ids(self.session, conversation_id, query, filters, limit)
        if not ranked:
            return []
        ids = [mid for mid, _ in ranked]
        rows = {r.id: r for r in self.session.scalars(select(Message).where(Message.id.in_(ids)))}
        return [(message_record(rows[i]), score) for i, score in ranked if i in rows]

    def timeline(self, conversation_id: str) -> list[tuple[int, int, str, int, datetime]]:
        """(id, seq, kind, original token_count, created_at) of every row, archived ones included.

        Only these columns are read (no content, no live view): a report over a long conversation
        with large tool outputs must not load them all.
        """
        rows = self.session.execute(
            select(Message.id, Message.seq, Message.kind, Message.token_count, Message.created_at)
            .where(Message.conversation_id == conversation_id)
            .order_by(Message.seq, Message.part)
        ).all()
        # SQLite hands back naive datetimes; everything we store is UTC (as in store.mapping).
        return [
            (int(i), int(seq), str(kind), int(tokens), at if at.tzinfo else at.replace(tzinfo=UTC))
            for i, seq, kind, tokens, at in rows
        ]

    def stats(self, conversation_id: str | None) -> dict[str, Any]:
        """Counts by state and kind, and token sums; for one conversation or all."""
        where = [Message.conversation_id == conversation_id] if conversation_id else []
        by_state = dict(
            self.session.execute(
                select(Message.state, func.count()).where(*where).group_by(Message.state)
            ).all()
        )
        by_kind = dict(
            self.session.execute(
                select(Message.kind, func.count()).where(*where).group_by(Message.kind)
            ).all()
        )
        totals = self.session.execute(
            select(func.count(), func.coalesce(func.sum(Message.token_count), 0)).where(*where)
        ).one()
        conv_where = [Conversation.id == conversation_id] if conversation_id else []
        conversations = self.session.scalar(select(func.count()).select_from(Conversation).where(*conv_where))
        compactions = self.session.scalar(
            select(func.count())
            .select_from(Compaction)
            .where(*([Compaction.conversation_id == conversation_id] if conversation_id else []))
        )
        return {
            "conversations": int(conversations or 0),
            "messages": int(totals[0]),
            "original_tokens": int(totals[1]),
            "messages_by_state": {str(k): int(v) for k, v in by_state.items()},
            "messages_by_kind": {str(k): int(v) for k, v in by_kind.items()},
            "compactions": int(compactions or 0),
        }
