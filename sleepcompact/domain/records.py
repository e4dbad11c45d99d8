"""Plain records the services and the store exchange.

The store maps its tables to these; nothing here knows about SQL. Keeping
them frozen means a snapshot taken before an LLM call cannot be mutated
while the call runs.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sleepcompact.domain.messages import Content, NormalizedMessage, content_text, without_nul

MESSAGE_STATES = ("live", "masked", "truncated", "archived")
COMPACTION_TRIGGERS = ("sleep", "emergency", "manual", "admin_rerun", "clear")
COMPACTION_STATUSES = (
    "running",
    "applied",
    "failed",
    "reverted",
    "superseded",
    "stalled",
    "discarded",
    "vetoed",
)


@dataclass(frozen=True)
class ConversationRecord:
    """A conversation's settings and running counters (one row, one indexed read)."""

    id: str
    tenant_id: str
    agent_id: str
    model: str
    plan: str | None
    context_window: int
    output_reserve: int
    live_tokens: int
    live_messages: int
    next_seq: int
    compaction_epoch: int
    created_at: datetime
    last_activity_at: datetime
    soft_threshold: float | None = None
    hard_threshold: float | None = None
    target_ratio: float | None = None
    auto_compact: bool | None = None
    lease_owner: str | None = None
    lease_expires_at: datetime | None = None
    last_sleep_at: datetime | None = None
    sleep_requested_at: datetime | None = None
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class MessageRecord:
    """One stored row: the original part and, when it is not live as-is, its live view."""

    id: int
    conversation_id: str
    seq: int
    part: int
    role: str
    kind: str
    content: Content
    raw: str | None
    tool_name: str | None
    tool_call_id: str | None
    token_count: int
    state: str
    live_content: Content | None
    live_tokens: int
    created_at: datetime
    tool_summary: str | None = None
    tool_summary_tokens: int | None = None
    include_in_history: bool = False
    compaction_id: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    call_ref: str | None = None  # the tool call id as the caller sent it (tool_call_id is its unique key)

    @property
    def is_live(self) -> bool:
        """Whether the next LLM call carries this row (as itself or as its live view)."""
        return self.state != "archived"

    @property
    def view(self) -> Content:
        """What the model sees of this row now."""
        return self.live_content if self.live_content is not None else self.content

    def with_view(
        self, state: str, live_content: Content | None, live_tokens: int, compaction_id: str | None
    ) -> MessageRecord:
        """This row with another live view, as a compaction leaves it."""
        # ``dataclasses.replace`` runs ``__init__`` and a frozen ``__setattr__`` per field: 3.5 against
        # 1 microsecond a row, and an emergency compaction in the request path changes thousands of rows.
        row = object.__new__(MessageRecord)
        row.__dict__.update(
            self.__dict__,
            state=state,
            live_content=live_content,
            live_tokens=live_tokens,
            compaction_id=compaction_id,
        )
        return row


@dataclass(frozen=True)
class NewMessage:
    """A row about to be inserted (no id yet)."""

    seq: int
    part: int
    role: str
    kind: str
    content: Content
    raw: str | None
    tool_name: str | None
    tool_call_id: str | None
    token_count: int
    tool_summary: str | None = None
    tool_summary_tokens: int | None = None
    include_in_history: bool = False
    metadata: dict[str, Any] = field(default_factory=dict)
    call_ref: str | None = None  # the tool call id as the caller sent it (tool_call_id is its unique key)


@dataclass(frozen=True)
class CompactionRecord:
    """One compaction (or clear) and its figures."""

    id: str
    conversation_id: str
    trigger: str
    status: str
    steps: list[dict[str, Any]]
    first_seq: int | None
    last_seq: int | None
    messages_affected: int
    tokens_before: int
    tokens_after: int
    created_at: datetime
    summary_message_id: int | None = None
    previous_compaction_id: str | None = None
    summarizer_provider: str | None = None
    summarizer_model: str | None = None
    llm_input_tokens: int = 0
    llm_output_tokens: int = 0
    llm_cost_usd: float = 0.0
    llm_batch: bool = False
    duration_ms: int = 0
    error: str | None = None
    input_hash: str | None = None
    snapshot_epoch: int = 0


def logical_order(rows: Sequence[MessageRecord]) -> list[MessageRecord]:
    """Live rows in the order the model reads them.

    A summary is written after the rows it replaces (seqs only grow), but it
    stands for the oldest history, so it goes right after the leading system
    rows and before everything else.
    """
    lead = 0
    while lead < len(rows) and rows[lead].role == "system" and rows[lead].kind != "summary":
        lead += 1
    head = list(rows[:lead])
    rest = list(rows[lead:])
    return head + [r for r in rest if r.kind == "summary"] + [r for r in rest if r.kind != "summary"]


def call_input(row: MessageRecord) -> dict[str, object]:
    """The input of a tool_call row (empty for any other row)."""
    content = row.content
    if row.kind == "tool_call" and isinstance(content, list) and content:
        tool_input = content[0].get("input")
        if isinstance(tool_input, dict):
            return dict(tool_input)
    return {}


def input_strings(value: object, key: str = "") -> list[tuple[str, str]]:
    """(key, text) pairs of a tool input, nested values included, keys in sorted order."""
    if isinstance(value, str):
        return [(key, value)]
    if isinstance(value, dict):
        return [pair for k in sorted(value) for pair in input_strings(value[k], str(k))]
    if isinstance(value, list):
        return [pair for v in value for pair in input_strings(v, key)]
    return []


def row_text(row: MessageRecord) -> str:
    """A row's original text for analysis: a tool call as its input values (not JSON), else its text."""
    if row.kind == "tool_call":
        return "\n".join(text for _key, text in input_strings(call_input(row)))
    return content_text(row.content)


def tool_names(rows: Sequence[MessageRecord]) -> dict[str, str]:
    """Tool name by tool_call_id, from the tool_call rows (results do not always carry the name)."""
    return {
        r.tool_call_id: r.tool_name for r in rows if r.kind == "tool_call" and r.tool_call_id and r.tool_name
    }


def new_rows(
    normalized: NormalizedMessage,
    tokens: Sequence[int],
    *,
    first_seq: int,
    tool_names: Mapping[str, str | None],
    count: Callable[[str], int],
    keys: Sequence[str | None] | None = None,
) -> list[NewMessage]:
    """The rows one appended message becomes: a seq per part, ``raw`` on the first, each tool result
    named after the call it answers (``tool_names``: call key to tool name), the tool-provided summary
    and the include-in-history flag lifted out of the part's metadata.

    ``keys`` (``tool_ids.bind_parts``) are the conversation-unique keys calls and results are stored
    under; a call's ``tool_use`` block carries its key, the row keeps the caller's id as ``call_ref``.
    """
    rows = []
    for i, (part, cost) in enumerate(zip(normalized.parts, tokens, strict=True)):
        summary = part.metadata.get("tool_summary")
        summary = without_nul(summary) if summary else summary
        meta = {k: v for k, v in part.metadata.items() if k not in ("tool_summary", "include_in_history")}
        key = keys[i] if keys is not None else part.tool_call_id
        name = part.tool_name if part.kind == "tool_call" else (tool_names.get(key) if key else None)
        rows.append(
            NewMessage(
                seq=first_seq + i,
                part=i,
                role=part.role,
                kind=part.kind,
                content=_with_key(part.content, key) if part.kind == "tool_call" else part.content,
                raw=normalized.raw if i == 0 else None,
                tool_name=name,
                tool_call_id=key,
                token_count=cost,
                tool_summary=summary,
                tool_summary_tokens=count(summary) if summary else None,
                include_in_history=bool(part.metadata.get("include_in_history")),
                metadata=meta,
                call_ref=part.tool_call_id,
            )
        )
    return rows


def _with_key(content: Content, key: str | None) -> Content:
    """A tool call's content with its ``tool_use`` block carrying the stored key."""
    if key is None or isinstance(content, str):
        return content
    return [{**b, "id": key} if b.get("type") == "tool_use" else b for b in content]


def live_record(row: NewMessage, *, id: int, conversation_id: str, created_at: datetime) -> MessageRecord:
    """A new row as the store would hold it right after the append: live, as itself."""
    return MessageRecord(
        id=id,
        conversation_id=conversation_id,
        seq=row.seq,
        part=row.part,
        role=row.role,
        kind=row.kind,
        content=row.content,
        raw=row.raw,
        tool_name=row.tool_name,
        tool_call_id=row.tool_call_id,
        token_count=row.token_count,
        state="live",
        live_content=None,
        live_tokens=row.token_count,
        created_at=created_at,
        tool_summary=row.tool_summary,
        tool_summary_tokens=row.tool_summary_tokens,
        include_in_history=row.include_in_history,
        metadata=dict(row.metadata),
        call_ref=row.call_ref,
    )
