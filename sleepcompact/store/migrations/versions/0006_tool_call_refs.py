"""The tool call id as the caller sent it (call_ref), beside the conversation-unique key (tool_call_id).

Rows stored before this revision never shared an id, so their ref is their key.

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-24
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("message", schema=None) as batch_op:
        batch_op.add_column(sa.Column("call_ref", sa.String(length=256), nullable=True))
    op.execute("UPDATE message SET call_ref = tool_call_id WHERE tool_call_id IS NOT NULL")
    op.create_index("ix_message_call_ref", "message", ["conversation_id", "call_ref"], unique=False)


def downgrade() -> None:
    op.drop_index("ix_message_call_ref", table_name="message")
    with op.batch_alter_table("message", schema=None) as batch_op:
        batch_op.drop_column("call_ref")
