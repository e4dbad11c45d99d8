"""Pre-compaction extraction: journal drafts (DESIGN section 4 step 4).

Before any message leaves the live context as a summary, the facts, decisions,
identifiers, errors and preferences in it become journal drafts, so a sleep
tick can consolidate them into memory even if the summary loses them.
Everything is regex and rule based, hence deterministic.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from sleepcompact.domain.identifiers import (
    Identifier,
    error_lines,
    find_identifiers,
    looks_secret,
    output_noise,
)
from sleepcompact.domain.messages import content_text
from sleepcompact.domain.records import MessageRecord, row_text, tool_names
from sleepcompact.domain.sentences import is_decision, split_sentences, strip_lead_in, user_sentence_tags

TAGS = ("preference", "decision", "error", "identifier", "deadline", "fact", "question")

_GAP = re.compile(
    r"\b(?:I (?:don't|do not|can't|cannot|couldn't)|not sure|no idea|unknown|unable to|no information)\b",
    re.I,
)
_NOTABLE = {"path": 0, "id": 0, "url": 1, "hash": 1, "code": 2, "command": 2, "number": 3}


def _notable(ident: Identifier, kind: str) -> bool:
    if ident.kind not in _NOTABLE or len(ident.value) > 120 or looks_secret(ident.value):
        return False
    return kind != "tool_result" or not output_noise(ident.value)


@dataclass(frozen=True)
class JournalDraft:
    """A journal entry to be: one standalone statement and where it came from."""

    content: str
    source_type: str  # direct (the user said it), observation (tool output), inference (assistant)
    tags: tuple[str, ...]
    seq: int


def _sentence(text: str) -> str:
    text = " ".join(text.split())
    return text if text[-1:] in ".!?" else text + "."


def _answered(rows: Sequence[MessageRecord], index: int) -> bool | None:
    """Whether the assistant's next message answered the user's question at ``index`` (None: no reply)."""
    for row in rows[index + 1 :]:
        if row.role == "user" and row.kind == "message":
            return None
        if row.role == "assistant" and row.kind == "message":
            return _GAP.search(content_text(row.content)) is None
    return None


def extract_facts(rows: Sequence[MessageRecord], *, max_entries: int = 50) -> list[JournalDraft]:
    """Journal drafts for the facts, preferences, decisions, errors, identifiers and open questions in rows.

    User sentences become ``direct`` drafts, assistant decisions ``inference``,
    error lines of tool output ``observation``; each message with identifiers
    not seen before gets one compact identifiers draft. Questions the assistant
    could not answer are tagged ``question``. Nothing that looks like a secret
    is ever included. When more than ``max_entries`` are found, user statements
    are kept first and identifier lists last; the result is in seq order.
    """
    ordered = sorted(rows, key=lambda r: (r.seq, r.part))
    names = tool_names(ordered)
    drafts: list[tuple[int, int, JournalDraft]] = []  # (priority, order, draft)
    seen_content: set[str] = set()
    seen_idents: set[str] = set()

    def add(priority: int, content: str, source: str, tags: tuple[str, ...], seq: int) -> None:
        key = " ".join(content.casefold().split())
        if key not in seen_content and not looks_secret(content):
            seen_content.add(key)
            drafts.append((priority, len(drafts), JournalDraft(content, source, tags, seq)))

    for index, row in enumerate(ordered):
        text = row_text(row)
        if row.kind == "tool_result":
            name = row.tool_name or names.get(row.tool_call_id or "", "tool")
            lines = error_lines(text, 2)
            if not lines and row.metadata.get("is_error"):
                lines = [ln.strip()[:200] for ln in text.splitlines() if ln.strip()][:1]
            for line in lines:
                add(2, f"Tool {name} reported an error: {line}", "observation", ("error",), row.seq)
        elif row.role == "user" and row.kind == "message":
            for sentence in map(strip_lead_in, split_sentences(text)):
                tags = user_sentence_tags(sentence)
                if tags and tags != ("question",):
                    add(0, f"The user said: {_sentence(sentence)}", "direct", tags, row.seq)
                elif tags and _answered(ordered, index) is False:
                    add(1, f"The user asked, still unanswered: {sentence}", "direct", tags, row.seq)
        elif row.role == "assistant" and row.kind == "message":
            for sentence in split_sentences(text):
                if is_decision(sentence) and not sentence.endswith("?"):
                    add(3, f"The assistant said: {_sentence(sentence)}", "inference", ("decision",), row.seq)
        if row.role != "system" and row.kind != "summary":
            idents = [
                i for i in find_identifiers(text) if i.value not in seen_idents and _notable(i, row.kind)
            ]
            if row.kind == "tool_result":  # a listing names hundreds of files; keep the likeliest few
                idents = sorted(idents, key=lambda i: _NOTABLE[i.kind])[:6]
            if idents[:12]:
                seen_idents.update(i.value for i in idents[:12])
                who = {"user": "the user", "assistant": "the assistant"}.get(row.role, "tool output")
                who = f"the assistant's {row.tool_name or 'tool'} call" if row.kind == "tool_call" else who
                source = {"user": "direct", "tool": "observation"}.get(row.role, "inference")
                listed = ", ".join(i.value for i in idents[:12])
                content = f"Identifiers mentioned by {who} (seq {row.seq}): {listed}."
                add(2 if row.role == "user" else 4, content, source, ("identifier",), row.seq)
    kept = sorted(drafts, key=lambda d: (d[0], d[1]))[: max(0, max_entries)]
    return [d for _p, _o, d in sorted(kept, key=lambda d: d[1])]
