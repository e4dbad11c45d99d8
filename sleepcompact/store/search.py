"""The full-text index over original messages: FTS5 on SQLite, a GIN tsvector index on PostgreSQL.

Both engines index the same normalized body (``domain.search_query.index_body``) and are asked the same
parsed query: any of its terms, a term being a word or an exact phrase of word parts. SQLite ranks with
FTS5's ``bm25``; PostgreSQL, which keeps no corpus statistics, with ``ts_rank_cd`` per term weighted by
the term's BM25 inverse document frequency in the conversation, so on both a message matching more
and rarer terms comes first.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import DateTime, bindparam, text
from sqlalchemy.engine import Connection
from sqlalchemy.orm import Session

from sleepcompact.domain.search_query import SearchFilters, SearchQuery, Term, index_body

_SQLITE_INSERT = "INSERT INTO message_search(rowid, body, conversation) VALUES (:id, :body, :cid)"
_POSTGRES_INSERT = "INSERT INTO message_search(message_id, body, conversation_id) VALUES (:id, :body, :cid)"
_RANK_NORMALIZATION = 1 | 32
"""ts_rank_cd: divided by 1 + log(document length), then r / (r + 1): longer messages do not win by
repeating a word, and a term's weight saturates as BM25's does."""


def is_sqlite(session: Session | Connection) -> bool:
    """Whether the session (or connection) talks to SQLite."""
    bind = session.get_bind() if isinstance(session, Session) else session
    return bind.dialect.name == "sqlite"


def index_messages(session: Session, conversation_id: str, rows: Sequence[tuple[int, str]]) -> None:
    """Add (message id, plain text) pairs to the full-text index."""
    if not rows:
        return
    sqlite = is_sqlite(session)
    cid = conversation_token(conversation_id) if sqlite else conversation_id
    session.execute(
        text(_SQLITE_INSERT if sqlite else _POSTGRES_INSERT),
        [{"id": mid, "body": index_body(body), "cid": cid} for mid, body in rows],
    )


def conversation_token(conversation_id: str) -> str:
    """The one FTS5 token naming a conversation on SQLite ('c' and its UTF-8 bytes in hex, as migration
    0012 writes it in SQL): a search asks the index for the conversation's postings, not the fleet's."""
    return "c" + conversation_id.encode().hex()


def unindex_message(session: Session, message_id: int) -> None:
    """Drop one message from the index (PostgreSQL's index row goes with the message by cascade)."""
    if is_sqlite(session):
        session.execute(text("DELETE FROM message_search WHERE rowid = :id"), {"id": message_id})


def fts5_match(query: SearchQuery) -> str:
    """The FTS5 MATCH expression: every term a double-quoted string (a phrase when it has several
    words; ``"`` doubled inside), joined by OR, so no user text is ever read as query syntax."""
    return " OR ".join('"' + term.text.replace('"', '""') + '"' for term in query.terms)


def _ts_term(term: Term) -> str:
    quoted = ["'" + w.replace("\\", "\\\\").replace("'", "''") + "'" for w in term.words]
    return quoted[0] if len(quoted) == 1 else "(" + " <-> ".join(quoted) + ")"


def tsquery(query: SearchQuery) -> str:
    """The ``to_tsquery`` text: every word single-quoted (``'`` and ``\\`` escaped), a phrase's
    words joined by ``<->``, terms by ``|``."""
    return " | ".join(_ts_term(term) for term in query.terms)


def _day_of(session: Session, with_year: bool) -> str:
    """The UTC day (``YYYY-MM-DD``, or ``MM-DD``) of ``m.created_at`` in SQL; SQLite stores it as text."""
    if is_sqlite(session):
        return "substr(m.created_at, 1, 10)" if with_year else "substr(m.created_at, 6, 5)"
    return f"to_char(m.created_at AT TIME ZONE 'UTC', '{'YYYY-MM-DD' if with_year else 'MM-DD'}')"


def _filters(session: Session, filters: SearchFilters) -> tuple[str, dict[str, Any]]:
    """SQL conditions on the ``message`` row (aliased ``m``) and their parameters."""
    where: list[str] = []
    params: dict[str, Any] = {}
    for column, op, name in (
        ("role", "=", "role"),
        ("tool_name", "=", "tool"),
        ("seq", ">=", "seq_from"),
        ("seq", "<=", "seq_to"),
        ("created_at", ">=", "created_from"),
        ("created_at", "<", "created_before"),
    ):
        value = getattr(filters, name)
        if value is not None:
            where.append(f"m.{column} {op} :{name}")
            params[name] = value
    if filters.days:
        days = [f"{_day_of(session, d.year is not None)} = :day{i}" for i, d in enumerate(filters.days)]
        where.append("(" + " OR ".join(days) + ")")
        params.update({f"day{i}": d.text for i, d in enumerate(filters.days)})
    if not filters.include_live:
        where.append("m.state != 'live'")
    return "".join(f" AND {w}" for w in where), params


def _typed(sql: str, params: dict[str, Any]) -> Any:
    """``text(sql)`` with its datetime bounds bound as the column's type (SQLite stores text)."""
    statement = text(sql)
    dates = [bindparam(n, type_=DateTime(timezone=True)) for n in ("created_from", "created_before")]
    return statement.bindparams(*(b for b in dates if b.key in params))


def _sqlite_ranked(
    session: Session, conversation_id: str, query: SearchQuery, filters: SearchFilters, limit: int
) -> list[tuple[int, float]]:
    where, params = _filters(session, filters)
    # The conversation's token in the MATCH: the index intersects its postings with the terms', where a
    # filter on a column read per match cost every matching message of the fleet (docs/benchmarks.md).
    # Weight 0 for that column: only the body ranks.
    sql = (
        "SELECT message_search.rowid, bm25(message_search, 1.0, 0.0) AS score FROM message_search "
        "JOIN message m ON m.id = message_search.rowid "
        f"WHERE message_search MATCH :q{where} "
        "ORDER BY score, message_search.rowid LIMIT :n"
    )
    match = f"({fts5_match(query)}) AND conversation: {conversation_token(conversation_id)}"
    params.update(q=match, n=limit)
    rows = session.execute(_typed(sql, params), params)
    return [(int(mid), -float(rank)) for mid, rank in rows]  # bm25 is lower-is-better


def _postgres_ranked(
    session: Session, conversation_id: str, query: SearchQuery, filters: SearchFilters, limit: int
) -> list[tuple[int, float]]:
    where, params = _filters(session, filters)
    n_terms = range(len(query.terms))
    # Document frequencies over every match in the conversation (filters narrow the hits, not the
    # statistics), as FTS5 computes its own over the whole table.
    counts = ", ".join(f"count(*) FILTER (WHERE v @@ to_tsquery('simple', :t{i})) AS d{i}" for i in n_terms)
    score = " + ".join(
        f"CAST(ln(1.0 + (total.n - df.d{i} + 0.5) / (df.d{i} + 0.5)) AS double precision)"
        f" * ts_rank_cd('{{1,1,1,1}}', matched.v, to_tsquery('simple', :t{i}), {_RANK_NORMALIZATION})"
        for i in n_terms
    )
    sql = (
        "WITH matched AS MATERIALIZED (SELECT s.message_id, to_tsvector('simple', s.body) AS v "
        "FROM message_search s WHERE s.conversation_id = :cid "
        "AND to_tsvector('simple', s.body) @@ to_tsquery('simple', :q)), "
        f"df AS (SELECT {counts} FROM matched), "
        "total AS (SELECT count(*) AS n FROM message_search WHERE conversation_id = :cid) "
        f"SELECT m.id, {score} AS score FROM matched JOIN message m ON m.id = matched.message_id "
        f"CROSS JOIN df CROSS JOIN total WHERE TRUE{where} ORDER BY score DESC, m.id LIMIT :n"
    )
    params.update(q=tsquery(query), cid=conversation_id, n=limit)
    params.update({f"t{i}": _ts_term(term) for i, term in enumerate(query.terms)})
    rows = session.execute(_typed(sql, params), params)
    return [(int(mid), float(rank)) for mid, rank in rows]


def ranked_ids(
    session: Session,
    conversation_id: str,
    query: SearchQuery,
    filters: SearchFilters,
    limit: int,
) -> list[tuple[int, float]]:
    """(message id, score) of the originals matching any term of ``query`` and the filters, best
    first; a score is higher for a better match and comparable within one result list. A query of
    no terms lists what the filters pass, in seq order (nothing without a narrowing filter)."""
    if limit <= 0:
        return []
    if not query.terms:
        return _listed(session, conversation_id, filters, limit) if filters.narrowing else []
    ranked = _sqlite_ranked if is_sqlite(session) else _postgres_ranked
    return ranked(session, conversation_id, query, filters, limit)


def _listed(
    session: Session, conversation_id: str, filters: SearchFilters, limit: int
) -> list[tuple[int, float]]:
    """The originals passing the filters in seq order, scored 0: what a query of no words finds."""
    where, params = _filters(session, filters)
    sql = (
        "SELECT m.id FROM message m WHERE m.conversation_id = :cid AND m.kind != 'summary'"
        f"{where} ORDER BY m.seq LIMIT :n"
    )
    params.update(cid=conversation_id, n=limit)
    return [(int(mid), 0.0) for mid in session.execute(_typed(sql, params), params).scalars()]
