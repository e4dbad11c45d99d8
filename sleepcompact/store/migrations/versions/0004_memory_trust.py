"""The trust of a memory's best source, so recall can leave out what only untrusted sources said.

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-23
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Memories written before trust was recorded were consolidated from entries of any source; 1.0 keeps
    # them recallable as before. Every new memory gets its trust from its entries.
    with op.batch_alter_table("memory", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("source_trust", sa.Float(), server_default=sa.text("1.0"), nullable=False)
        )


def downgrade() -> None:
    with op.batch_alter_table("memory", schema=None) as batch_op:
        batch_op.drop_column("source_trust")
