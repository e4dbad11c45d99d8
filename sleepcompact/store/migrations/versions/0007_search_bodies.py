"""Reindex the archive search with the normalized body (``domain.search_query.index_body``).

Search now looks up any content word, stemmed, and identifiers as phrases of their parts (camelCase
split, case folded, diacritics dropped); rows indexed before this revision hold their raw words, so
their bodies are rebuilt from the messages: SQLite's FTS5 table is emptied and refilled, PostgreSQL's
bodies are rewritten in place (its GIN index follows). Summaries stay out of the index, as at append.

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-25
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from typing import Any

import sqlalchemy as sa
from alembic import op

from sleepcompact.domain.messages import content_text
from sleepcompact.domain.search_query import index_body

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None

_BATCH = 500


def _old_body(text: str) -> str:
    """The body revisions 0002-0006 stored: the text's ``\\w+`` words, as written."""
    return " ".join(re.findall(r"\w+", text))


def _messages(conn: sa.Connection) -> Iterator[list[dict[str, Any]]]:
    """Every indexed message (all but summaries) as (id, conversation id, plain text), in batches."""
    last = 0
    while True:
        rows = conn.execute(
            sa.text(
                "SELECT id, conversation_id, content FROM message "
                "WHERE id > :last AND kind != 'summary' ORDER BY id LIMIT :n"
            ),
            {"last": last, "n": _BATCH},
        ).all()
        if not rows:
            return
        batch = []
        for mid, cid, content in rows:
            loaded = json.loads(content) if content is not None else ""
            text = content_text(loaded if isinstance(loaded, str | list) else str(loaded))
            batch.append({"id": int(mid), "cid": cid, "text": text})
        yield batch
        last = int(rows[-1][0])


def _reindex(body: Callable[[str], str]) -> None:
    conn = op.get_bind()
    if conn.dialect.name == "sqlite":
        conn.execute(sa.text("DELETE FROM message_search"))
        sql = "INSERT INTO message_search(rowid, body, conversation_id) VALUES (:id, :body, :cid)"
    else:
        sql = (
            "INSERT INTO message_search(message_id, body, conversation_id) VALUES (:id, :body, :cid) "
            "ON CONFLICT (message_id) DO UPDATE SET body = EXCLUDED.body"
        )
    for batch in _messages(conn):
        conn.execute(sa.text(sql), [{"id": r["id"], "cid": r["cid"], "body": body(r["text"])} for r in batch])


def upgrade() -> None:
    _reindex(index_body)


def downgrade() -> None:
    _reindex(_old_body)
