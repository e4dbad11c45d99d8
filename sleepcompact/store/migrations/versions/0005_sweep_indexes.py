"""Indexes for the sweeps' keyset scans: (last_sleep_at, id) for the nightly, (last_activity_at, id) for idle.

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-22
"""

from __future__ import annotations

from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index("ix_conversation_sleep", "conversation", ["last_sleep_at", "id"], unique=False)
    op.create_index("ix_conversation_activity", "conversation", ["last_activity_at", "id"], unique=False)
    op.create_index("ix_sleep_tick_status", "sleep_tick", ["status", "created_at"], unique=False)


def downgrade() -> None:
    op.drop_index("ix_sleep_tick_status", table_name="sleep_tick")
    op.drop_index("ix_conversation_activity", table_name="conversation")
    op.drop_index("ix_conversation_sleep", table_name="conversation")
