"""Build the store's ``MessageRecord`` rows from message dicts, without a database."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any

from sleepcompact.domain.messages import Content, normalize, part_tokens
from sleepcompact.domain.records import MessageRecord

NOW = datetime(2025, 1, 1, tzinfo=UTC)


def rows_of(
    messages: Sequence[dict[str, Any]], count: Callable[[str], int], *, conversation_id: str = "c1"
) -> tuple[MessageRecord, ...]:
    """One live row per normalized part, with increasing seqs and token counts, as an append stores them."""
    rows: list[MessageRecord] = []
    for message in messages:
        for part in normalize(message).parts:
            seq = len(rows) + 1
            tokens = part_tokens(part.content, count)
            rows.append(
                MessageRecord(
                    id=seq,
                    conversation_id=conversation_id,
                    seq=seq,
                    part=0,
                    role=part.role,
                    kind=part.kind,
                    content=part.content,
                    raw=None,
                    tool_name=part.tool_name,
                    tool_call_id=part.tool_call_id,
                    token_count=tokens,
                    state="live",
                    live_content=None,
                    live_tokens=tokens,
                    created_at=NOW,
                    metadata=dict(part.metadata),
                )
            )
    return tuple(rows)


def record(
    seq: int,
    role: str = "user",
    kind: str = "message",
    content: Content | None = None,
    *,
    tool_name: str | None = None,
    tool_call_id: str | None = None,
) -> MessageRecord:
    """One live row of one token, as the store holds it; ``content`` defaults to "row SEQ"."""
    return MessageRecord(
        id=seq,
        conversation_id="conv-1",
        seq=seq,
        part=0,
        role=role,
        kind=kind,
        content=f"row {seq}" if content is None else content,
        raw=None,
        tool_name=tool_name,
        tool_call_id=tool_call_id,
        token_count=1,
        state="live",
        live_content=None,
        live_tokens=1,
        created_at=NOW,
    )
