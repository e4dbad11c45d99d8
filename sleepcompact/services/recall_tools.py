"""Answer the agent's recall tool calls (``search_history``, ``read_archived``) from the archive.

``handle_tool_call`` reads a call in either provider's shape (``domain.recall_tools``), runs it against
the one conversation it is given (nothing of another conversation, agent or tenant is reachable), and
answers in the same shape. What it returns leaves the process (the model reads it), so it goes through
the redactor like every summary does. A model's bad call gets an error result it can read; an unknown
conversation is the caller's mistake and raises ``ConversationNotFound``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sleepcompact.domain.errors import ConversationNotFound
from sleepcompact.domain.messages import Content, content_text, image_count
from sleepcompact.domain.recall_tools import SEARCH, RecallCall, page, read_call, tool_result
from sleepcompact.domain.records import MessageRecord
from sleepcompact.domain.search_query import SearchQuery, parse_query, snippet
from sleepcompact.ports import Dependencies
from sleepcompact.services.history import SearchHit, exchange_partners, search_history

SEARCH_BUDGET_TOKENS = 2_000
"""Most tokens of snippets one search answer carries (a first page the model can afford to read)."""
HIT_CHARS = 480
"""The snippet of each hit in the tool's page (the search's own, for listings, is 240 characters)."""
NEIGHBOUR_CHARS = 320
"""The snippet of each message shown beside a hit (its exchange). Chosen on the MemoryBank tune users
(docs/evaluation.md): 160 characters and the reply alone found the answer for 0.81 / 0.79 / 0.81 of
their questions at 2k / 3k / 8k; with the user's follow-up after the reply, 0.83 / 0.81 / 0.83; with 320
characters, 0.85 / 0.83 / 0.85. Later, hits in 480 characters and the user's answer under an assistant
hit that asks something: 0.94 / 0.96 / 0.96."""


def handle_tool_call(
    deps: Dependencies, conversation_id: str, tool_call: Mapping[str, Any]
) -> dict[str, Any]:
    """The result of one recall tool call, in the shape of the call (see the module docstring)."""
    call = read_call(tool_call)
    if deps.read_conversation(conversation_id) is None:
        raise ConversationNotFound(conversation_id)
    if call.problem:
        return tool_result(call, f"Error: {call.problem}", is_error=True)
    text = _search(deps, conversation_id, call) if call.name == SEARCH else _read(deps, conversation_id, call)
    return tool_result(call, deps.redactor(conversation_id).redact(text))


def _search(deps: Dependencies, conversation_id: str, call: RecallCall) -> str:
    # One more than asked: the message the query was copied from (the user's question, usually the
    # newest message) matches it best and tells the model nothing, so it is left out. No budget for the
    # search's own snippets: the page below is budgeted as it is shown (wider snippets, partners).
    found = search_history(deps, conversation_id, call.query, call.limit + 1)
    hits = [h for h in found if not _echoes(h.content, call.query)][: call.limit]
    if not hits:
        return f"No archived message matches {call.query!r}. Try other words, an identifier, or fewer words."
    turns = exchange_partners(deps, conversation_id, hits)
    query = parse_query(call.query)
    blocks: list[str] = []
    used = 0
    for hit in hits:
        lines = [_hit_line(hit, query)]
        # The question a hit answers, or the answer it got (and the user's next words): half of it, often.
        for other in turns.get(hit.seq, ()):
            if _echoes(other.content, call.query):
                continue
            text = snippet(content_text(other.content), query, NEIGHBOUR_CHARS)
            lines.append(f"   [seq {other.seq}, {_who(other.role, other.kind, other.tool_name)}] {text}")
        block = "\n".join(lines)
        used += deps.counter.count(block)
        if blocks and used > SEARCH_BUDGET_TOKENS:
            break  # the first page stays affordable; the next hits are worse matches
        blocks.append(block)
    head = f"{len(blocks)} result{'s' * (len(blocks) != 1)} for {call.query!r}, best first:"
    body = [f"{n}. {block}" for n, block in enumerate(blocks, 1)]
    return "\n".join([head, *body, "read_archived(seq=N) returns one of them in full."])


def _echoes(content: Content, query: str) -> bool:
    """Whether a message is the query itself (the same words, whatever the case and spacing)."""
    return " ".join(content_text(content).split()).casefold() == " ".join(query.split()).casefold()


def _hit_line(hit: SearchHit, query: SearchQuery) -> str:
    when = f", {hit.created_at:%Y-%m-%d}" if hit.created_at else ""
    text = snippet(content_text(hit.content), query, HIT_CHARS)
    return f"[seq {hit.seq}, {_who(hit.role, hit.kind, hit.tool_name)}{when}] {text}"


def _who(role: str, kind: str, tool: str | None) -> str:
    if kind == "tool_result":
        return f"output of {tool or 'a tool'}"
    if kind == "tool_call":
        return f"call to {tool or 'a tool'}"
    return "summary" if kind == "summary" else role


def _read(deps: Dependencies, conversation_id: str, call: RecallCall) -> str:
    with deps.read_uow() as uow:
        row = uow.conversations.message_by_seq(conversation_id, call.seq)
    if row is None:
        return f"Error: this conversation has no message with seq {call.seq}."
    text = _original_text(row)
    if call.offset >= len(text) and text:
        return f"Error: seq {call.seq} has {len(text):,} characters; offset {call.offset} is past its end."
    chunk, next_offset = page(text, call.offset)
    when = f", {row.created_at:%Y-%m-%d}" if row.created_at else ""
    head = (
        f"[seq {call.seq}, {_who(row.role, row.kind, row.tool_name)}{when}, {row.state}; "
        f"characters {call.offset:,}-{call.offset + len(chunk):,} of {len(text):,}]"
    )
    more = f"[more: read_archived(seq={call.seq}, offset={next_offset})]" if next_offset else "[end]"
    return f"{head}\n{chunk}\n{more}"


def _original_text(row: MessageRecord) -> str:
    """The original as text (a tool call as its name and JSON input; images and documents named)."""
    text = content_text(row.content)
    if row.kind == "tool_call" and row.tool_name and not text.startswith(row.tool_name):
        text = f"{row.tool_name} {text}"
    images = image_count(row.content)
    return f"{text}\n[{images} image(s) or document(s) not shown]" if images else text
