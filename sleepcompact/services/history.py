"""Restore compactions, list them, and search the archive."""

from __future__ import annotations

import re
from dataclasses import asdict
from typing import Any

from sleepcompact.domain.errors import ConversationNotFound
from sleepcompact.domain.messages import content_text
from sleepcompact.domain.records import MessageRecord
from sleepcompact.services.compaction import CompactionNotFound, NotRestorable
from sleepcompact.services.ports import Repository, UnitOfWork

SEQ_QUERY = re.compile(r"^\s*seq:(\d+)\s*$")


def _undo(repo: Repository, compaction_id: str) -> None:
    found = repo.get_compaction(compaction_id)
    assert found is not None
    record, meta = found
    repo.restore_rows(meta.get("prior", []))
    if record.summary_message_id is not None:
        repo.delete_derived_message(record.summary_message_id)
    repo.set_compaction(compaction_id, status="reverted")


def restore(uow: UnitOfWork, compaction_id: str) -> list[str]:
    """Bring back the exact live state before a compaction (or clear); later ones are undone first.

    Returns the ids restored, newest first. The epoch moves on, so a
    compaction computed before the restore can no longer apply.
    """
    with uow:
        found = uow.repo.get_compaction(compaction_id)
        if found is None:
            raise CompactionNotFound(f"unknown compaction: {compaction_id!r}")
        record, _ = found
        if record.status != "applied":
            raise NotRestorable(
                f"compaction {compaction_id} is {record.status}; only applied compactions can be restored"
            )
        conv = uow.repo.get_conversation(record.conversation_id)
        assert conv is not None
        order = [
            *uow.repo.applied_after(record.conversation_id, record.snapshot_epoch, compaction_id),
            compaction_id,
        ]
        for cid in order:
            _undo(uow.repo, cid)
        uow.repo.recount(record.conversation_id)
        if not uow.repo.bump_epoch(record.conversation_id, conv.compaction_epoch):
            raise NotRestorable("the conversation changed during the restore; try again")
        uow.commit()
    return order


def history(uow: UnitOfWork, conversation_id: str) -> list[dict[str, Any]]:
    """Every compaction of a conversation with its figures, summary and flags, oldest first."""
    with uow:
        if uow.repo.get_conversation(conversation_id) is None:
            raise ConversationNotFound(conversation_id)
        out = []
        for record, meta in uow.repo.compactions_with_meta(conversation_id):
            item = {k: (v.isoformat() if hasattr(v, "isoformat") else v) for k, v in asdict(record).items()}
            item["summary"] = meta.get("summary")
            item["flags"] = meta.get("flags", [])
            item["flagged"] = bool(meta.get("flags"))
            item["tokens_saved"] = record.tokens_before - record.tokens_after
            out.append(item)
    return out


def _hit(row: MessageRecord, query: str) -> dict[str, Any]:
    text = content_text(row.content)
    words = [w.lower() for w in re.findall(r"\w+", query)]
    lowered = text.lower()
    pos = min((lowered.find(w) for w in words if lowered.find(w) >= 0), default=0)
    start = max(0, pos - 120)
    snippet = ("…" if start else "") + text[start : start + 300].replace("\n", " ")
    return {
        "seq": row.seq,
        "message_id": row.id,
        "role": row.role,
        "kind": row.kind,
        "state": row.state,
        "tool_name": row.tool_name,
        "tool_call_id": row.tool_call_id,
        "compaction_id": row.compaction_id,
        "snippet": snippet,
        "content": row.content,
    }


def search_history(
    uow: UnitOfWork, conversation_id: str, query: str, limit: int = 20
) -> list[dict[str, Any]]:
    """Full-text search over every original; ``seq:N`` fetches the row a placeholder points to."""
    with uow:
        if uow.repo.get_conversation(conversation_id) is None:
            raise ConversationNotFound(conversation_id)
        m = SEQ_QUERY.match(query)
        if m:
            row = uow.repo.message_by_seq(conversation_id, int(m.group(1)))
            return [_hit(row, "")] if row is not None else []
        return [_hit(r, query) for r in uow.repo.search(conversation_id, query, limit)]
