"""Per-model-family tokenizer calibration (observed input_tokens / our cl100k count).

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-22
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "model_calibration",
        sa.Column("family", sa.String(length=64), nullable=False),
        sa.Column("factor", sa.Float(), nullable=False),
        sa.Column("samples", sa.Integer(), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("family"),
    )


def downgrade() -> None:
    op.drop_table("model_calibration")
