"""Full-text search over message originals: FTS5 on SQLite, tsvector + GIN on PostgreSQL.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-22
"""

from __future__ import annotations

from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        # rowid is message.id; the body is the message's plain text, split by FTS5's unicode61 tokenizer.
        op.execute(
            "CREATE VIRTUAL TABLE IF NOT EXISTS message_search USING fts5("
            "body, conversation_id UNINDEXED, tokenize = 'unicode61')"
        )
    else:
        op.execute(
            "CREATE TABLE IF NOT EXISTS message_search ("
            " message_id BIGINT PRIMARY KEY REFERENCES message(id) ON DELETE CASCADE,"
            " conversation_id VARCHAR(40) NOT NULL,"
            " body TEXT NOT NULL)"
        )
        op.execute(
            "CREATE INDEX IF NOT EXISTS ix_message_search_body ON message_search "
            "USING gin (to_tsvector('simple', body))"
        )
        op.execute(
            "CREATE INDEX IF NOT EXISTS ix_message_search_conversation ON message_search (conversation_id)"
        )


def downgrade() -> None:
    op.execute("DROP TABLE IF EXISTS message_search")
