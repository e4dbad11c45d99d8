"""The deployment's redaction key: placeholders stay the same across jobs and processes.

A secret's placeholder number is a keyed HMAC of (conversation, secret) (``adapters.redaction``); the
key is made here, once per database, so every worker of a deployment numbers alike without any
setting. ``SLEEPCOMPACT_REDACTION_KEY`` overrides it. Downgrading drops the table (and the key).

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-26
"""

from __future__ import annotations

import secrets

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    table = op.create_table(
        "deployment_secret",
        sa.Column("name", sa.String(length=64), primary_key=True),
        sa.Column("value", sa.String(length=128), nullable=False),
    )
    op.bulk_insert(table, [{"name": "redaction_key", "value": secrets.token_hex(32)}])


def downgrade() -> None:
    op.drop_table("deployment_secret")
