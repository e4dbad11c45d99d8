"""A partial index of the conversations with work since their last sleep: the nightly sweep reads only
those (O(due), not O(fleet)), paging by a row-value bound on (last_sleep_at, id).

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-24
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None

DIRTY = sa.text("last_activity_at > last_sleep_at")


def upgrade() -> None:
    op.create_index(
        "ix_conversation_dirty",
        "conversation",
        ["last_sleep_at", "id"],
        unique=False,
        postgresql_where=DIRTY,
        sqlite_where=DIRTY,
    )


def downgrade() -> None:
    op.drop_index("ix_conversation_dirty", table_name="conversation")
