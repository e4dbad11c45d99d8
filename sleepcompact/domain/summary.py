"""The deterministic offline summary (DESIGN section 4).

The fallback when no LLM is configured or its answer is unusable: structured
like the LLM's (the SECTIONS of the prompt), built by rules, identifiers kept
verbatim, and never over its token cap.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable

from sleepcompact.domain.messages import content_text
from sleepcompact.domain.prompt import SECTIONS, SUMMARY_PREFIX, SummaryInput
from sleepcompact.domain.records import MessageRecord, call_input, tool_names
from sleepcompact.domain.sentences import is_decision, split_sentences, strip_lead_in, user_sentence_tags
from sleepcompact.domain.summary_items import Item, clip, error_items, identifier_items
from sleepcompact.domain.summary_items import keywords as find_keywords

_PROTECTED = 11  # the task bullet: truncated as a last resort, never dropped
# Priority of a previous summary's bullets by section; stale state sections go first.
_CARRIED = dict(zip(SECTIONS, (6, 6, 4, 4, 4, 9, 7, 10, 10, 8, 4), strict=True))
_KEYED = ("Critical data (verbatim)", "Files touched")  # deduplicated on the identifier, not the whole line
_DONE = re.compile(
    r"\b(?:fixed|applied|added|updated|created|implemented|removed|renamed|refactored|resolved|completed"
    r"|done|pass(?:es|ed)?|succeeded|merged|saved|stored)\b",
    re.I,
)
_NEXT = re.compile(r"\b(?:next|todo|remaining|still need|follow[- ]up|afterwards|then I'll)\b", re.I)
_SEQ_SUFFIX = re.compile(r"\s*\((?:seq|seqs) [\d, -]+\)$")
# Words that name each section (in SECTIONS order) in the headings of a previous summary in its own words.
_HEADING_WORDS = (
    "task goal|complet done|state|progress|next todo|constraint preference|decision|critical identifier data"
    "|file|error|lookup hint keyword"
)


def _key(item: Item) -> str:
    if item.section in _KEYED:
        match = re.match(r"`([^`]+)`", item.text)
        return match.group(1) if match else item.text
    return _SEQ_SUFFIX.sub("", " ".join(item.text.casefold().split()))


def _merge_text(old: str, new: str) -> str:
    """The newer text of a keyed bullet, with the tool counts of a touched file added up."""
    counts: Counter[str] = Counter()
    for text in (old, new):
        counts.update({m.group(1): int(m.group(2)) for m in re.finditer(r"([\w.-]+) ×(\d+)", text)})
    head = re.match(r"`[^`]+`", new)
    if not counts or head is None:
        return new
    return f"{head.group()} ({', '.join(f'{t} ×{n}' for t, n in sorted(counts.items()))})"


def _section_for(heading: str) -> str | None:
    """Map a heading of a previous summary (maybe an LLM's own wording) onto SECTIONS."""
    low = heading.casefold()
    if "instructions found" in low:
        return None  # reported injection payloads are not history worth carrying forward
    for section in SECTIONS:
        if low.startswith(section.casefold()[:8]):
            return section
    for section, words in zip(SECTIONS, _HEADING_WORDS.split("|"), strict=True):
        if any(word in low for word in words.split()):
            return section
    return "Completed work"


def _previous_items(text: str) -> list[Item]:
    items: list[Item] = []
    section: str | None = "Completed work"
    task_seen = False
    for raw in text.removeprefix(SUMMARY_PREFIX).splitlines():
        heading = re.match(r"^\s*#{1,6}\s+(.*)", raw)
        if heading:
            section = _section_for(heading.group(1).strip())
            continue
        line = re.sub(r"^\s*(?:[-*•]|\d+[.)])\s+", "", raw).strip()
        if not line or section is None:
            continue
        priority = _CARRIED[section]
        if section == "Task and goals" and not task_seen:
            priority, task_seen = _PROTECTED, True
        if section in ("Current state", "In-progress work"):  # the state then is history now
            section, line = "Completed work", line if line.startswith("Earlier: ") else f"Earlier: {line}"
        items.append(Item(section, clip(line, 600), priority, (-1, len(items))))
    return items


def _new_items(
    rows: list[MessageRecord], has_task: bool, rolling: bool, count_tools: Counter[str]
) -> list[Item]:
    """The items the folded rows contribute, section by section."""
    users = [r for r in rows if r.role == "user" and r.kind == "message"]
    assistants = [r for r in rows if r.role == "assistant" and r.kind == "message"]
    items = _user_items(rows, users, assistants, has_task, rolling)
    items += _assistant_items(rows, users, assistants)
    items += _activity_items(rows, users, assistants, count_tools)
    return items


def _user_items(
    rows: list[MessageRecord],
    users: list[MessageRecord],
    assistants: list[MessageRecord],
    has_task: bool,
    rolling: bool,
) -> list[Item]:
    """The user's preferences and facts, the task and the requests, and the last request's status."""
    items: list[Item] = []
    task_is_first = not has_task  # the first user message becomes the task only without a previous one
    for n, row in enumerate(users):
        text, order = content_text(row.content), (-n,)
        tagged = [(s, user_sentence_tags(strip_lead_in(s))) for s in split_sentences(text)]
        for sentence, tags in tagged:
            if tags and tags != ("question",):
                line = f"{clip(strip_lead_in(sentence), 300)} (seq {row.seq})"
                items.append(Item(SECTIONS[5], line, 8 if "fact" in tags else 9, order))
        if n == 0 and not has_task:
            line = f"{'Request' if rolling else 'Initial request'} (seq {row.seq}): {clip(text, 600)}"
            items.append(Item("Task and goals", line, _PROTECTED))
            has_task = True
        elif any(not tags or tags == ("question",) for _s, tags in tagged) and row is not users[-1]:
            items.append(Item("Task and goals", f"Request: {clip(text, 300)} (seq {row.seq})", 6, order))
    if not has_task:
        span = f"seq {rows[0].seq}-{rows[-1].seq}"
        items.append(Item("Task and goals", f"No user request in {span}; see the archive.", _PROTECTED))
    if users and (len(users) > 1 or not task_is_first):
        row = users[-1]
        pending = "" if any(a.seq > row.seq for a in assistants) else " (not answered yet)"
        text = f"Last user request (seq {row.seq}){pending}: {clip(content_text(row.content), 400)}"
        items.append(Item("Next steps", text, 9))
    return items


def _assistant_items(
    rows: list[MessageRecord], users: list[MessageRecord], assistants: list[MessageRecord]
) -> list[Item]:
    """The assistant's decisions, completed work and next steps, its last message, its last action."""
    items: list[Item] = []
    for n, row in enumerate(reversed(assistants)):
        for sentence in split_sentences(content_text(row.content)):
            clipped, order = f"{clip(sentence, 300)} (seq {row.seq})", (n,)
            if sentence.endswith("?"):
                continue
            if is_decision(sentence):
                items.append(Item("Decisions made and why", clipped, 7, order))
            elif _DONE.search(sentence):
                items.append(Item("Completed work", clipped, 6, order))
            elif _NEXT.search(sentence):
                items.append(Item("Next steps", clipped, 5, order))
    if assistants:
        row = assistants[-1]
        text = f"Last assistant message (seq {row.seq}): {clip(content_text(row.content), 400)}"
        items.append(Item("Current state", text, 8))
    calls = [r for r in rows if r.kind == "tool_call"]
    if calls and (not users or calls[-1].seq > users[-1].seq):
        row, action = calls[-1], json.dumps(call_input(calls[-1]), ensure_ascii=False, sort_keys=True)
        line = f"Last action (seq {row.seq}): {row.tool_name or 'tool'} {clip(action, 200)}"
        items.append(Item("In-progress work", line, 6))
    return items


def _activity_items(
    rows: list[MessageRecord],
    users: list[MessageRecord],
    assistants: list[MessageRecord],
    count_tools: Counter[str],
) -> list[Item]:
    """What was folded (counts, tools), the identifiers and errors, and how to find the originals."""
    first, last = rows[0].seq, rows[-1].seq
    results = [r for r in rows if r.kind == "tool_result"]
    errors, failed = error_items(rows, tool_names(rows))
    stats = (
        f"Folded {len(rows)} messages (seq {first}-{last}): {len(users)} from the user, {len(assistants)} "
        f"from the assistant, {len(results)} tool results ({failed} with errors)."
    )
    items = [Item("Completed work", stats, 5)]
    if count_tools:
        used = ", ".join(
            f"{name} ×{n}" for name, n in sorted(count_tools.items(), key=lambda kv: (-kv[1], kv[0]))
        )
        items.append(Item("Completed work", f"Tools used: {used}.", 3))
    items += identifier_items(rows)
    items += errors
    hint = f"Originals archived as seq {first}-{last}; search_history finds them by keyword."
    items.append(Item("Lookup hints", hint, 5))
    keywords = find_keywords(rows)
    if keywords:
        items.append(Item("Lookup hints", f"Keywords: {', '.join(keywords)}.", 2))
    return items


def _render(items: list[Item]) -> str:
    blocks = []
    for section in SECTIONS:
        bullets = [f"- {it.text}" for it in items if it.section == section]
        if bullets:
            blocks.append(f"## {section}\n" + "\n".join(bullets))
    return "\n\n".join(blocks)


def _fit(items: list[Item], max_tokens: int, count: Callable[[str], int]) -> str:
    """Drop the least important bullets until the rendering fits; truncate only as a last resort."""
    text = _render(items)
    total = count(text)
    victims = sorted(
        (it for it in items if it.priority < _PROTECTED), key=lambda it: (it.priority, [-r for r in it.rank])
    )
    left = Counter(it.section for it in items)
    dropped: set[int] = set()
    for victim in victims:
        if total <= max_tokens:
            return text
        # Estimate from the bullet's own size, and re-count the whole text only once the estimate fits.
        dropped.add(id(victim))
        left[victim.section] -= 1
        total -= count(f"- {victim.text}") + 1
        total -= count(f"## {victim.section}") + 2 if not left[victim.section] else 0
        if total <= max_tokens:
            text = _render([it for it in items if id(it) not in dropped])
            total = count(text)
    text = _render([it for it in items if id(it) not in dropped])
    if count(text) <= max_tokens:
        return text
    low, high = 1, len(text)  # the longest prefix that fits, with a mark that it was cut
    while low < high:
        mid = (low + high + 1) // 2
        low, high = (mid, high) if count(text[:mid] + "…") <= max_tokens else (low, mid - 1)
    cut = text[:low] + "…"
    return cut if count(cut) <= max_tokens else text[:low]


def offline_summary(inp: SummaryInput, count: Callable[[str], int]) -> str:
    """A deterministic structured summary of ``inp`` within ``inp.max_tokens`` by ``count`` (never empty).

    Sections follow SECTIONS as ``## `` headings, empty ones left out (Task and
    goals always present). A previous summary is folded in: its bullets are
    merged with the new ones and deduplicated. When over the cap, the least
    important bullets go first (keywords and tool counts before state, critical
    data and files touched last); the task is truncated only as a last resort.
    """
    if inp.max_tokens < 1:
        raise ValueError(f"max_tokens must be at least 1, got {inp.max_tokens}")
    rows = sorted(inp.rows, key=lambda r: (r.seq, r.part))
    previous = _previous_items(inp.previous_summary) if inp.previous_summary else []
    has_task = any(it.priority == _PROTECTED for it in previous)
    tools = Counter(r.tool_name or "tool" for r in rows if r.kind == "tool_call")
    fresh = _new_items(rows, has_task, bool(inp.previous_summary), tools) if rows else []
    if not rows and not has_task:
        fresh.append(Item("Task and goals", "No messages were folded.", _PROTECTED))
    merged: dict[tuple[str, str], Item] = {}
    for item in [*previous, *fresh]:
        old = merged.setdefault((item.section, _key(item)), item)
        if old is not item and (item.section in _KEYED or item.section == "Errors and resolutions"):
            old.text, old.priority = _merge_text(old.text, item.text), max(old.priority, item.priority)
    return _fit(list(merged.values()), inp.max_tokens, count)
