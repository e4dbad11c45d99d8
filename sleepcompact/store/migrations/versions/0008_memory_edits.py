"""Users correct and delete memories: why a memory was invalidated, and which memory a correction corrects.

``invalidation_reason`` says why a memory stopped being recalled ("deleted by user", "corrected by
user"; empty for memories superseded by consolidation, which ``superseded_by`` already explains).
``corrects`` links a user's correction to the memory it replaced; a memory with it set is the user's
word, which later automatic extraction never supersedes.

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-25
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("memory", schema=None) as batch_op:
        batch_op.add_column(sa.Column("invalidation_reason", sa.String(length=64), nullable=True))
        batch_op.add_column(sa.Column("corrects", sa.BigInteger(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("memory", schema=None) as batch_op:
        batch_op.drop_column("corrects")
        batch_op.drop_column("invalidation_reason")
