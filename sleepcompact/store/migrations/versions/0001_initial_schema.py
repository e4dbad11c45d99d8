"""initial schema

Revision ID: 0001
Revises:
Create Date: 2026-11-22 03:07:49.229197
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Tables in dependency order (foreign keys point at tables created before them).
    _conversation()
    _memory()
    _compaction()
    _journal_entry()
    _message()
    _sleep_tick()


def _conversation() -> None:
    op.create_table(
        "conversation",
        sa.Column("id", sa.String(length=40), nullable=False),
        sa.Column("tenant_id", sa.String(length=128), nullable=False),
        sa.Column("agent_id", sa.String(length=128), nullable=False),
        sa.Column("model", sa.String(length=128), nullable=False),
        sa.Column("plan", sa.String(length=16), nullable=True),
        sa.Column("context_window", sa.Integer(), nullable=False),
        sa.Column("output_reserve", sa.Integer(), nullable=False),
        sa.Column("soft_threshold", sa.Float(), nullable=True),
        sa.Column("hard_threshold", sa.Float(), nullable=True),
        sa.Column("target_ratio", sa.Float(), nullable=True),
        sa.Column("auto_compact", sa.Boolean(), nullable=True),
        sa.Column("live_tokens", sa.BigInteger(), nullable=False),
        sa.Column("live_messages", sa.Integer(), nullable=False),
        sa.Column("next_seq", sa.BigInteger(), nullable=False),
        sa.Column("compaction_epoch", sa.Integer(), nullable=False),
        sa.Column("lease_owner", sa.String(length=64), nullable=True),
        sa.Column("lease_expires_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("last_activity_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("last_sleep_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("sleep_requested_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("metadata", sa.JSON(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("conversation", schema=None) as batch_op:
        batch_op.create_index(
            "ix_conversation_due", ["live_tokens", "last_sleep_at", "last_activity_at"], unique=False
        )
        batch_op.create_index("ix_conversation_sleep_requested", ["sleep_requested_at"], unique=False)
        batch_op.create_index("ix_conversation_tenant_agent", ["tenant_id", "agent_id"], unique=False)


def _memory() -> None:
    op.create_table(
        "memory",
        sa.Column(
            "id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), autoincrement=True, nullable=False
        ),
        sa.Column("tenant_id", sa.String(length=128), nullable=False),
        sa.Column("agent_id", sa.String(length=128), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("content", sa.Text(), nullable=False),
        sa.Column("confidence", sa.Float(), nullable=False),
        sa.Column("importance", sa.Integer(), nullable=False),
        sa.Column("source_journal_ids", sa.JSON(), nullable=False),
        sa.Column("superseded_by", sa.BigInteger(), nullable=True),
        sa.Column("invalidated_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("last_used_at", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("memory", schema=None) as batch_op:
        batch_op.create_index(
            "ix_memory_agent_valid", ["tenant_id", "agent_id", "invalidated_at"], unique=False
        )


def _compaction() -> None:
    op.create_table(
        "compaction",
        sa.Column("id", sa.String(length=40), nullable=False),
        sa.Column("conversation_id", sa.String(length=40), nullable=False),
        sa.Column("trigger", sa.String(length=16), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("steps", sa.JSON(), nullable=False),
        sa.Column("first_seq", sa.BigInteger(), nullable=True),
        sa.Column("last_seq", sa.BigInteger(), nullable=True),
        sa.Column("messages_affected", sa.Integer(), nullable=False),
        sa.Column("tokens_before", sa.Integer(), nullable=False),
        sa.Column("tokens_after", sa.Integer(), nullable=False),
        sa.Column("summary_message_id", sa.BigInteger(), nullable=True),
        sa.Column("previous_compaction_id", sa.String(length=40), nullable=True),
        sa.Column("summarizer_provider", sa.String(length=32), nullable=True),
        sa.Column("summarizer_model", sa.String(length=128), nullable=True),
        sa.Column("llm_input_tokens", sa.Integer(), nullable=False),
        sa.Column("llm_output_tokens", sa.Integer(), nullable=False),
        sa.Column("llm_cost_usd", sa.Float(), nullable=False),
        sa.Column("llm_batch", sa.Boolean(), nullable=False),
        sa.Column("duration_ms", sa.Integer(), nullable=False),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("input_hash", sa.String(length=64), nullable=True),
        sa.Column("snapshot_epoch", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("metadata", sa.JSON(), nullable=False),
        sa.ForeignKeyConstraint(["conversation_id"], ["conversation.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("compaction", schema=None) as batch_op:
        batch_op.create_index("ix_compaction_conversation", ["conversation_id", "created_at"], unique=False)


def _journal_entry() -> None:
    op.create_table(
        "journal_entry",
        sa.Column(
            "id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), autoincrement=True, nullable=False
        ),
        sa.Column("tenant_id", sa.String(length=128), nullable=False),
        sa.Column("agent_id", sa.String(length=128), nullable=False),
        sa.Column("conversation_id", sa.String(length=40), nullable=True),
        sa.Column("content", sa.Text(), nullable=False),
        sa.Column("source_type", sa.String(length=16), nullable=False),
        sa.Column("source_trust", sa.Float(), nullable=False),
        sa.Column("importance", sa.Integer(), nullable=False),
        sa.Column("importance_method", sa.String(length=16), nullable=False),
        sa.Column("tags", sa.JSON(), nullable=False),
        sa.Column("origin", sa.String(length=24), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("memory_id", sa.BigInteger(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["conversation_id"], ["conversation.id"], ondelete="SET NULL"),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("journal_entry", schema=None) as batch_op:
        batch_op.create_index("ix_journal_agent_status", ["tenant_id", "agent_id", "status"], unique=False)
        batch_op.create_index("ix_journal_status", ["status"], unique=False)


def _message() -> None:
    op.create_table(
        "message",
        sa.Column(
            "id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), autoincrement=True, nullable=False
        ),
        sa.Column("conversation_id", sa.String(length=40), nullable=False),
        sa.Column("seq", sa.BigInteger(), nullable=False),
        sa.Column("part", sa.Integer(), nullable=False),
        sa.Column("role", sa.String(length=16), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("content", sa.Text(), nullable=False),
        sa.Column("raw", sa.Text(), nullable=True),
        sa.Column("tool_name", sa.String(length=256), nullable=True),
        sa.Column("tool_call_id", sa.String(length=256), nullable=True),
        sa.Column("token_count", sa.Integer(), nullable=False),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("live_content", sa.Text(), nullable=True),
        sa.Column("live_tokens", sa.Integer(), nullable=False),
        sa.Column("tool_summary", sa.Text(), nullable=True),
        sa.Column("tool_summary_tokens", sa.Integer(), nullable=True),
        sa.Column("include_in_history", sa.Boolean(), nullable=False),
        sa.Column("compaction_id", sa.String(length=40), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("metadata", sa.JSON(), nullable=False),
        sa.ForeignKeyConstraint(["conversation_id"], ["conversation.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("conversation_id", "seq", name="uq_message_conversation_seq"),
    )
    with op.batch_alter_table("message", schema=None) as batch_op:
        batch_op.create_index("ix_message_compaction", ["compaction_id"], unique=False)
        batch_op.create_index(
            "ix_message_live",
            ["conversation_id", "seq"],
            unique=False,
            sqlite_where=sa.text("state != 'archived'"),
            postgresql_where=sa.text("state != 'archived'"),
        )
        batch_op.create_index("ix_message_tool_call", ["conversation_id", "tool_call_id"], unique=False)


def _sleep_tick() -> None:
    op.create_table(
        "sleep_tick",
        sa.Column(
            "id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), autoincrement=True, nullable=False
        ),
        sa.Column("conversation_id", sa.String(length=40), nullable=False),
        sa.Column("tick_key", sa.String(length=64), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("result", sa.JSON(), nullable=False),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["conversation_id"], ["conversation.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("conversation_id", "tick_key", name="uq_sleep_tick_key"),
    )


def downgrade() -> None:
    # ### commands auto generated by Alembic - please adjust! ###
    op.drop_table("sleep_tick")
    with op.batch_alter_table("message", schema=None) as batch_op:
        batch_op.drop_index("ix_message_tool_call")
        batch_op.drop_index(
            "ix_message_live",
            sqlite_where=sa.text("state != 'archived'"),
            postgresql_where=sa.text("state != 'archived'"),
        )
        batch_op.drop_index("ix_message_compaction")

    op.drop_table("message")
    with op.batch_alter_table("journal_entry", schema=None) as batch_op:
        batch_op.drop_index("ix_journal_status")
        batch_op.drop_index("ix_journal_agent_status")

    op.drop_table("journal_entry")
    with op.batch_alter_table("compaction", schema=None) as batch_op:
        batch_op.drop_index("ix_compaction_conversation")

    op.drop_table("compaction")
    with op.batch_alter_table("memory", schema=None) as batch_op:
        batch_op.drop_index("ix_memory_agent_valid")

    op.drop_table("memory")
    with op.batch_alter_table("conversation", schema=None) as batch_op:
        batch_op.drop_index("ix_conversation_tenant_agent")
        batch_op.drop_index("ix_conversation_sleep_requested")
        batch_op.drop_index("ix_conversation_due")

    op.drop_table("conversation")
    # ### end Alembic commands ###
