"""Restore compactions, list them, and search the archive."""

from __future__ import annotations

import re
from dataclasses import dataclass, fields, replace
from datetime import UTC, date, datetime, time, timedelta
from typing import Any

from sleepcompact.domain.errors import (
    CompactionNotFound,
    ConversationNotFound,
    InvalidSetting,
    NotRestorable,
)
from sleepcompact.domain.json_shapes import json_ready
from sleepcompact.domain.messages import Content, content_text
from sleepcompact.domain.records import CompactionRecord, MessageRecord
from sleepcompact.domain.search_query import SearchFilters, SearchQuery, parse_query, snippet
from sleepcompact.ports import CompactionRepository, ConversationRepository, Dependencies

SEQ_QUERY = re.compile(r"^\s*seq:(\d+)\s*$")
SNIPPET_WIDTH = 240
"""Characters of each hit's snippet: a few sentences around its densest match."""


@dataclass(frozen=True)
class CompactionInfo(CompactionRecord):
    """One compaction (or clear) as ``history`` shows it: its record, its summary and flags, the saving.

    ``flags``: the detector's reasons when the model's summary read as instructions to the model;
    ``quarantined``: the lines taken out of it (its report of instructions found, the flagged lines),
    kept here and never in the context. Why the offline summary went live instead is ``error``."""

    summary: str | None = None
    flags: tuple[str, ...] = ()
    quarantined: tuple[str, ...] = ()

    @classmethod
    def of(cls, record: CompactionRecord, meta: dict[str, Any]) -> CompactionInfo:
        """The info of a stored record and its metadata."""
        values = {f.name: getattr(record, f.name) for f in fields(record)}
        return cls(
            **values,
            summary=meta.get("summary"),
            flags=tuple(meta.get("flags", ())),
            quarantined=tuple(meta.get("quarantined", ())),
        )

    @property
    def flagged(self) -> bool:
        """Whether the model's summary carried lines aimed at the model (then it was not applied)."""
        return bool(self.flags)

    @property
    def tokens_saved(self) -> int:
        """Live tokens the compaction took off."""
        return self.tokens_before - self.tokens_after

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: the record's fields, ``summary``, ``flags``, ``quarantined``, ``flagged`` and
        ``tokens_saved``."""
        out: dict[str, Any] = json_ready(self)
        out.update(flagged=self.flagged, tokens_saved=self.tokens_saved)
        return out


@dataclass(frozen=True)
class SearchHit:
    """One original the archive search found, with one snippet around its densest match."""

    seq: int
    message_id: int
    role: str
    kind: str
    state: str
    tool_name: str | None
    tool_call_id: str | None
    compaction_id: str | None
    snippet: str
    content: Content
    score: float = 0.0
    """The engine's rank (higher is better), comparable within one result list; 0 for ``seq:N``."""
    created_at: datetime | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready (what ``sleepcompact search --json`` prints)."""
        return dict(json_ready(self))


def _undo(compactions: CompactionRepository, compaction_id: str) -> None:
    found = compactions.get(compaction_id)
    assert found is not None
    record, meta = found
    compactions.restore_rows(meta.get("prior", []))
    if record.summary_message_id is not None:
        compactions.delete_summary_message(record.summary_message_id)
    compactions.update(compaction_id, status="reverted")


def restore(deps: Dependencies, compaction_id: str) -> tuple[str, ...]:
    """Bring back the exact live state before a compaction (or clear); later ones are undone first.

    Returns the ids restored, newest first. The epoch moves on, so a
    compaction computed before the restore can no longer apply.
    """
    with deps.uow() as uow:
        found = uow.compactions.get(compaction_id)
        if found is None:
            raise CompactionNotFound(f"unknown compaction: {compaction_id!r}")
        record, _ = found
        if record.status != "applied":
            raise NotRestorable(
                f"compaction {compaction_id} is {record.status}; only applied compactions can be restored"
            )
        conv = uow.conversations.get(record.conversation_id)
        assert conv is not None
        order = (
            *uow.compactions.applied_after(record.conversation_id, record.snapshot_epoch, compaction_id),
            compaction_id,
        )
        for cid in order:
            _undo(uow.compactions, cid)
        uow.conversations.recount(record.conversation_id)
        if not uow.conversations.bump_epoch(record.conversation_id, conv.compaction_epoch):
            raise NotRestorable("the conversation changed during the restore; try again")
        uow.commit()
    return order


def history(deps: Dependencies, conversation_id: str) -> list[CompactionInfo]:
    """Every compaction of a conversation with its figures, summary and flags, oldest first."""
    with deps.read_uow() as uow:
        if uow.conversations.get(conversation_id) is None:
            raise ConversationNotFound(conversation_id)
        return [CompactionInfo.of(record, meta) for record, meta in uow.compactions.of(conversation_id)]


def _hit(row: MessageRecord, query: SearchQuery, score: float) -> SearchHit:
    return SearchHit(
        seq=row.seq,
        message_id=row.id,
        role=row.role,
        kind=row.kind,
        state=row.state,
        tool_name=row.tool_name,
        tool_call_id=row.tool_call_id,
        compaction_id=row.compaction_id,
        snippet=snippet(content_text(row.content), query, SNIPPET_WIDTH),
        content=row.content,
        score=score,
        created_at=row.created_at,
    )


def _bound(value: date | None, *, end: bool) -> datetime | None:
    """A date as the start of its day (``end``: of the next day), a datetime as itself (``end``: just
    after it), in UTC; a naive datetime is taken as UTC, as stored times are."""
    if value is None:
        return None
    if isinstance(value, datetime):
        at = value if value.tzinfo else value.replace(tzinfo=UTC)
        return at.astimezone(UTC) + (timedelta(microseconds=1) if end else timedelta())
    day = datetime.combine(value, time(), UTC)
    return day + timedelta(days=1) if end else day


def _within(deps: Dependencies, hits: list[SearchHit], budget_tokens: int | None) -> list[SearchHit]:
    """The best hits whose snippets fit ``budget_tokens`` together (all of them without a budget)."""
    if budget_tokens is None:
        return hits
    kept: list[SearchHit] = []
    spent = 0
    for hit in hits:
        spent += deps.counter.count(hit.snippet)
        if spent > budget_tokens:
            break
        kept.append(hit)
    return kept


def search_history(
    deps: Dependencies,
    conversation_id: str,
    query: str,
    limit: int = 10,
    *,
    role: str | None = None,
    tool: str | None = None,
    seq_from: int | None = None,
    seq_to: int | None = None,
    since: date | None = None,
    until: date | None = None,
    budget_tokens: int | None = None,
    include_live: bool = True,
) -> list[SearchHit]:
    """Ranked full-text search over every original of a conversation, best first.

    Any content word of ``query`` may match (stop words dropped, words stemmed); identifiers and
    quoted phrases match exactly (see ``domain.search_query.parse_query``, which the recall tool
    shares). Filters: ``role``, ``tool`` (tool name), ``seq_from``..``seq_to`` (inclusive),
    ``since``..``until`` (dates, inclusive; or datetimes), ``include_live=False`` to leave out rows
    the next call carries as they are. ``budget_tokens`` stops adding hits before their snippets
    exceed it. ``seq:N`` fetches the row a placeholder points to, whatever the filters.
    """
    if limit < 1:
        raise InvalidSetting(f"limit must be at least 1, got {limit}")
    if budget_tokens is not None and budget_tokens < 0:
        raise InvalidSetting(f"budget_tokens must not be negative, got {budget_tokens}")
    filters = SearchFilters(
        role=role,
        tool=tool,
        seq_from=seq_from,
        seq_to=seq_to,
        created_from=_bound(since, end=False),
        created_before=_bound(until, end=True),
        include_live=include_live,
    )
    with deps.read_uow() as uow:
        if uow.conversations.get(conversation_id) is None:
            raise ConversationNotFound(conversation_id)
        m = SEQ_QUERY.match(query)
        if m:
            row = uow.conversations.message_by_seq(conversation_id, int(m.group(1)))
            return [_hit(row, SearchQuery(()), 0.0)] if row is not None else []
        parsed = parse_query(query)
        found = _found(uow.conversations, conversation_id, parsed, filters, limit)
    return _within(deps, [_hit(row, parsed, score) for row, score in found], budget_tokens)


def _found(
    conversations: ConversationRepository,
    conversation_id: str,
    query: SearchQuery,
    filters: SearchFilters,
    limit: int,
) -> list[tuple[MessageRecord, float]]:
    """Ranked rows; when the query names days ("on May 4th") and no date range was given, those
    days' rows come first (all of them, in seq order, if the query has no other word)."""
    found: list[tuple[MessageRecord, float]] = []
    if query.days and filters.created_from is None and filters.created_before is None:
        found = conversations.search(conversation_id, query, replace(filters, days=query.days), limit)
    if len(found) < limit and (query.terms or filters.narrowing):
        seen = {row.id for row, _ in found}
        more = conversations.search(conversation_id, query, filters, limit + len(found))
        found += [(row, score) for row, score in more if row.id not in seen][: limit - len(found)]
    return found


def exchange_partners(
    deps: Dependencies, conversation_id: str, hits: list[SearchHit]
) -> dict[int, list[MessageRecord]]:
    """For each message hit, the rest of its exchange: a user message's reply and, when the user spoke
    again right after it, that follow-up (where the answer to "which one did you like?" is); an
    assistant message's question (the previous message, when it is the user's) and, when the assistant
    asked something, the user's answer (the next message)."""
    out: dict[int, list[MessageRecord]] = {}
    shown = {h.seq for h in hits}
    with deps.read_uow() as uow:
        for hit in hits:
            if hit.kind != "message" or hit.role not in ("user", "assistant"):
                continue
            rows: list[MessageRecord] = []
            for chain in _partner_chains(hit):
                for seq, speaker in chain:
                    row = uow.conversations.message_by_seq(conversation_id, seq)
                    if row is None or row.kind != "message" or row.role != speaker:
                        break
                    if seq not in shown:  # a hit, or a partner shown already, is shown once
                        rows.append(row)
                        shown.add(seq)
            if rows:
                out[hit.seq] = sorted(rows, key=lambda r: r.seq)
    return out


def _partner_chains(hit: SearchHit) -> list[list[tuple[int, str]]]:
    """The (seq, speaker) runs around a hit that complete its exchange; a run stops at the first
    message that is not the expected speaker's."""
    if hit.role == "user":
        return [[(hit.seq + 1, "assistant"), (hit.seq + 2, "user")]]
    chains = [[(hit.seq - 1, "user")]]
    if "?" in content_text(hit.content):
        chains.append([(hit.seq + 1, "user")])
    return chains
