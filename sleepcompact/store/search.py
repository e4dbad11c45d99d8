"""The full-text index over original messages: FTS5 on SQLite, a GIN tsvector index on PostgreSQL.

Both engines see the same words (``search_body``), so an identifier splits the same way on either.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from sqlalchemy import text
from sqlalchemy.orm import Session

WORD = re.compile(r"\w+", re.UNICODE)


def search_body(text_: str) -> str:
    """Words only, so both engines split identifiers the same way (src/a_b.py -> src a_b py)."""
    return " ".join(WORD.findall(text_))


def is_sqlite(session: Session) -> bool:
    """Whether the session talks to SQLite."""
    return session.get_bind().dialect.name == "sqlite"


def index_messages(session: Session, conversation_id: str, rows: Sequence[tuple[int, str]]) -> None:
    """Add (message id, plain text) pairs to the full-text index."""
    if not rows:
        return
    if is_sqlite(session):
        sql = "INSERT INTO message_search(rowid, body, conversation_id) VALUES (:id, :body, :cid)"
    else:
        sql = "INSERT INTO message_search(message_id, body, conversation_id) VALUES (:id, :body, :cid)"
    session.execute(
        text(sql), [{"id": mid, "body": search_body(body), "cid": conversation_id} for mid, body in rows]
    )


def unindex_message(session: Session, message_id: int) -> None:
    """Drop one message from the index (PostgreSQL's index row goes with the message by cascade)."""
    if is_sqlite(session):
        session.execute(text("DELETE FROM message_search WHERE rowid = :id"), {"id": message_id})


def matching_ids(session: Session, conversation_id: str, query: str, limit: int) -> list[int]:
    """Ids of the originals matching every word of ``query``, best first (bm25 / ts_rank)."""
    words = [w.lower() for w in WORD.findall(query)]
    if not words:
        return []
    if is_sqlite(session):
        match = " ".join('"' + w.replace('"', "") + '"' for w in words)
        sql = (
            "SELECT rowid FROM message_search WHERE message_search MATCH :q "
            "AND conversation_id = :cid ORDER BY bm25(message_search) LIMIT :n"
        )
    else:
        match = " & ".join(words)
        sql = (
            "SELECT message_id FROM message_search WHERE conversation_id = :cid AND "
            "to_tsvector('simple', body) @@ to_tsquery('simple', :q) "
            "ORDER BY ts_rank(to_tsvector('simple', body), to_tsquery('simple', :q)) DESC, "
            "message_id LIMIT :n"
        )
    rows = session.execute(text(sql), {"q": match, "cid": conversation_id, "n": limit})
    return [int(i) for i in rows.scalars().all()]
