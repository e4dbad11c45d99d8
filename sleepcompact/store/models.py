"""SQLAlchemy 2.x tables (DESIGN section 2). Migrations in ``migrations/`` create exactly these."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
    text,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

# BIGINT on PostgreSQL, INTEGER (the rowid alias, so it autoincrements) on SQLite.
BigId = BigInteger().with_variant(Integer(), "sqlite")


class Base(DeclarativeBase):
    """Declarative base of every table."""


class Conversation(Base):
    """A conversation, its budget settings and the running counters the guard reads."""

    __tablename__ = "conversation"

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    tenant_id: Mapped[str] = mapped_column(String(128))
    agent_id: Mapped[str] = mapped_column(String(128))
    model: Mapped[str] = mapped_column(String(128))
    plan: Mapped[str | None] = mapped_column(String(16))
    context_window: Mapped[int] = mapped_column(Integer)
    output_reserve: Mapped[int] = mapped_column(Integer)
    soft_threshold: Mapped[float | None] = mapped_column(Float)
    hard_threshold: Mapped[float | None] = mapped_column(Float)
    target_ratio: Mapped[float | None] = mapped_column(Float)
    auto_compact: Mapped[bool | None] = mapped_column(Boolean)
    live_tokens: Mapped[int] = mapped_column(BigInteger, default=0)
    live_messages: Mapped[int] = mapped_column(Integer, default=0)
    next_seq: Mapped[int] = mapped_column(BigInteger, default=1)
    compaction_epoch: Mapped[int] = mapped_column(Integer, default=0)
    lease_owner: Mapped[str | None] = mapped_column(String(64))
    lease_expires_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    last_activity_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    last_sleep_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    sleep_requested_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    meta: Mapped[dict[str, Any]] = mapped_column("metadata", JSON, default=dict)

    __table_args__ = (
        Index("ix_conversation_due", "live_tokens", "last_sleep_at", "last_activity_at"),
        Index("ix_conversation_sleep_requested", "sleep_requested_at"),
        Index("ix_conversation_tenant_agent", "tenant_id", "agent_id"),
        # The sweeps' keyset scans (store/ticks.py).
        Index("ix_conversation_sleep", "last_sleep_at", "id"),
        Index("ix_conversation_activity", "last_activity_at", "id"),
        # The nightly sweep's due rows only (migration 0011): its selection costs O(due).
        Index(
            "ix_conversation_dirty",
            "last_sleep_at",
            "id",
            postgresql_where=text("last_activity_at > last_sleep_at"),
            sqlite_where=text("last_activity_at > last_sleep_at"),
        ),
    )


class Message(Base):
    """One part of an appended message: the original, and its live view when that differs."""

    __tablename__ = "message"

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    conversation_id: Mapped[str] = mapped_column(ForeignKey("conversation.id", ondelete="CASCADE"))
    seq: Mapped[int] = mapped_column(BigInteger)
    part: Mapped[int] = mapped_column(Integer, default=0)
    role: Mapped[str] = mapped_column(String(16))
    kind: Mapped[str] = mapped_column(String(16))
    content: Mapped[str] = mapped_column(Text)
    raw: Mapped[str | None] = mapped_column(Text)
    tool_name: Mapped[str | None] = mapped_column(String(256))
    tool_call_id: Mapped[str | None] = mapped_column(String(256))  # unique in the conversation
    # The tool call id as the caller sent it; several calls may share it (see domain/tool_ids.py).
    call_ref: Mapped[str | None] = mapped_column(String(256))
    token_count: Mapped[int] = mapped_column(Integer)
    state: Mapped[str] = mapped_column(String(16), default="live")
    live_content: Mapped[str | None] = mapped_column(Text)
    live_tokens: Mapped[int] = mapped_column(Integer)
    tool_summary: Mapped[str | None] = mapped_column(Text)
    tool_summary_tokens: Mapped[int | None] = mapped_column(Integer)
    include_in_history: Mapped[bool] = mapped_column(Boolean, default=False)
    compaction_id: Mapped[str | None] = mapped_column(String(40))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    meta: Mapped[dict[str, Any]] = mapped_column("metadata", JSON, default=dict)

    __table_args__ = (
        UniqueConstraint("conversation_id", "seq", name="uq_message_conversation_seq"),
        # The rows the next LLM call carries: a partial index, so it stays small as history grows.
        Index(
            "ix_message_live",
            "conversation_id",
            "seq",
            sqlite_where=text("state != 'archived'"),
            postgresql_where=text("state != 'archived'"),
        ),
        Index("ix_message_tool_call", "conversation_id", "tool_call_id"),
        Index("ix_message_call_ref", "conversation_id", "call_ref"),
        Index("ix_message_compaction", "compaction_id"),
    )


class Compaction(Base):
    """One compaction (or clear): what it touched, what it saved, what it cost."""

    __tablename__ = "compaction"

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    conversation_id: Mapped[str] = mapped_column(ForeignKey("conversation.id", ondelete="CASCADE"))
    trigger: Mapped[str] = mapped_column(String(16))
    status: Mapped[str] = mapped_column(String(16))
    steps: Mapped[list[dict[str, Any]]] = mapped_column(JSON, default=list)
    first_seq: Mapped[int | None] = mapped_column(BigInteger)
    last_seq: Mapped[int | None] = mapped_column(BigInteger)
    messages_affected: Mapped[int] = mapped_column(Integer, default=0)
    tokens_before: Mapped[int] = mapped_column(Integer, default=0)
    tokens_after: Mapped[int] = mapped_column(Integer, default=0)
    summary_message_id: Mapped[int | None] = mapped_column(BigInteger)
    previous_compaction_id: Mapped[str | None] = mapped_column(String(40))
    summarizer_provider: Mapped[str | None] = mapped_column(String(32))
    summarizer_model: Mapped[str | None] = mapped_column(String(128))
    llm_input_tokens: Mapped[int] = mapped_column(Integer, default=0)
    llm_output_tokens: Mapped[int] = mapped_column(Integer, default=0)
    llm_cost_usd: Mapped[float] = mapped_column(Float, default=0.0)
    llm_batch: Mapped[bool] = mapped_column(Boolean, default=False)
    duration_ms: Mapped[int] = mapped_column(Integer, default=0)
    error: Mapped[str | None] = mapped_column(Text)
    input_hash: Mapped[str | None] = mapped_column(String(64))
    snapshot_epoch: Mapped[int] = mapped_column(Integer, default=0)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    meta: Mapped[dict[str, Any]] = mapped_column("metadata", JSON, default=dict)

    __table_args__ = (Index("ix_compaction_conversation", "conversation_id", "created_at"),)


class JournalEntry(Base):
    """Something the agent noted, waiting to be scored and consolidated into memory."""

    __tablename__ = "journal_entry"

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    tenant_id: Mapped[str] = mapped_column(String(128))
    agent_id: Mapped[str] = mapped_column(String(128))
    conversation_id: Mapped[str | None] = mapped_column(ForeignKey("conversation.id", ondelete="SET NULL"))
    content: Mapped[str] = mapped_column(Text)
    source_type: Mapped[str] = mapped_column(String(16))
    source_trust: Mapped[float] = mapped_column(Float)
    importance: Mapped[int] = mapped_column(Integer)
    importance_method: Mapped[str] = mapped_column(String(16))
    tags: Mapped[list[str]] = mapped_column(JSON, default=list)
    origin: Mapped[str] = mapped_column(String(24))
    status: Mapped[str] = mapped_column(String(16))
    memory_id: Mapped[int | None] = mapped_column(BigInteger)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    # Where the text came from (user, assistant, tool, fetched, environment, agent); NULL before 0009.
    provenance: Mapped[str | None] = mapped_column(String(16))

    __table_args__ = (
        Index("ix_journal_status", "status"),
        Index("ix_journal_agent_status", "tenant_id", "agent_id", "status"),
    )


class MemoryItem(Base):
    """A long-term memory of one tenant's agent. Contradicted memories are invalidated, never deleted."""

    __tablename__ = "memory"

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    tenant_id: Mapped[str] = mapped_column(String(128))
    agent_id: Mapped[str] = mapped_column(String(128))
    kind: Mapped[str] = mapped_column(String(16))
    content: Mapped[str] = mapped_column(Text)
    confidence: Mapped[float] = mapped_column(Float)
    importance: Mapped[int] = mapped_column(Integer)
    # The highest trust among the journal entries behind it; recall leaves out memories under 0.5.
    source_trust: Mapped[float] = mapped_column(Float, server_default=text("1.0"))
    source_journal_ids: Mapped[list[int]] = mapped_column(JSON, default=list)
    superseded_by: Mapped[int | None] = mapped_column(BigInteger)
    invalidated_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    # Why it stopped being recalled when a user did it ("deleted by user", "corrected by user").
    invalidation_reason: Mapped[str | None] = mapped_column(String(64))
    # The memory this user correction replaced: the user's word, never superseded automatically.
    corrects: Mapped[int | None] = mapped_column(BigInteger)
    # A ``flagged`` memory: why its text looks like instructions to the model (it is never recalled).
    flags: Mapped[list[str] | None] = mapped_column(JSON)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    last_used_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))

    __table_args__ = (Index("ix_memory_agent_valid", "tenant_id", "agent_id", "invalidated_at"),)


class SleepTick(Base):
    """One sleep tick of one conversation; (conversation_id, tick_key) is unique, so ticks are idempotent."""

    __tablename__ = "sleep_tick"

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    conversation_id: Mapped[str] = mapped_column(ForeignKey("conversation.id", ondelete="CASCADE"))
    tick_key: Mapped[str] = mapped_column(String(64))
    status: Mapped[str] = mapped_column(String(16))
    result: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    started_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    finished_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))

    __table_args__ = (
        UniqueConstraint("conversation_id", "tick_key", name="uq_sleep_tick_key"),
        Index("ix_sleep_tick_status", "status", "created_at"),
    )


class ModelCalibration(Base):
    """The running tokenizer factor of a model family, learned from real ``usage.input_tokens``."""

    __tablename__ = "model_calibration"

    family: Mapped[str] = mapped_column(String(64), primary_key=True)
    factor: Mapped[float] = mapped_column(Float)
    samples: Mapped[int] = mapped_column(Integer)
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class DeploymentSecret(Base):
    """A secret this deployment made for itself (the redaction key), shared by all its processes."""

    __tablename__ = "deployment_secret"

    name: Mapped[str] = mapped_column(String(64), primary_key=True)
    value: Mapped[str] = mapped_column(String(128))
