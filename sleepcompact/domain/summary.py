"""The deterministic offline summary (DESIGN section 4).

The fallback when no LLM is configured or its answer is unusable: structured
like the LLM's (the SECTIONS of the prompt), built by rules, identifiers kept
verbatim, and never over its token cap.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable

from sleepcompact.domain.ledger import ledger_section, request_status, with_ledger, without_ledger
from sleepcompact.domain.messages import content_text
from sleepcompact.domain.prompt import SECTIONS, SUMMARY_PREFIX, SummaryInput
from sleepcompact.domain.quarantine import notes, screen_line, screen_rows
from sleepcompact.domain.records import MessageRecord, tool_names
from sleepcompact.domain.sentences import is_decision, split_sentences, strip_lead_in, user_sentence_tags
from sleepcompact.domain.summary_items import Item, clip, error_items, identifier_items

_PROTECTED = 11  # the task bullet: truncated as a last resort, never dropped
# Priority of a previous summary's bullets by section; stale state sections go first.
_CARRIED = dict(zip(SECTIONS, (6, 10, 6, 4, 4, 4, 9, 7, 10, 10, 8, 4), strict=True))
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
    "task goal|ledger|complet done|state|progress|next todo|constraint preference|decision"
    "|critical identifier data|file|error|lookup hint keyword"
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
    if "instructions found" in low or "ledger" in low:
        # Reported injection payloads are not history worth carrying forward; the ledger is carried by
        # ``domain.ledger``, line by line.
        return None
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
        if not line or section is None or line.startswith("Keywords:"):  # 0.1's bare word lists
            continue
        line = screen_line(line)  # an earlier summary (maybe an LLM's) is carried, never its orders
        priority, carried_to = _CARRIED[section], section
        if section == "Task and goals" and not task_seen:
            priority, task_seen = _PROTECTED, True
        if section in ("Current state", "In-progress work"):  # the state then is history now (each bullet)
            carried_to, line = "Completed work", line if line.startswith("Earlier: ") else f"Earlier: {line}"
        items.append(Item(carried_to, clip(line, 600), priority, (-1, len(items))))
    return items


def _new_items(
    inp: SummaryInput, rows: list[MessageRecord], has_task: bool, count_tools: Counter[str]
) -> list[Item]:
    """The items the folded rows contribute, section by section (the ledger is built apart)."""
    users = [r for r in rows if r.role == "user" and r.kind == "message"]
    assistants = [r for r in rows if r.role == "assistant" and r.kind == "message"]
    items = _user_items(rows, users, has_task, bool(inp.previous_summary))
    if users and (len(users) > 1 or has_task):
        row = users[-1]
        status = request_status(rows, row.seq, inp.following)
        if status in ("pending", "in progress"):
            items.append(
                Item(
                    "Next steps",
                    f"Open request (seq {row.seq}, {status}): {clip(content_text(row.content), 400)}",
                    9,
                )
            )
    items += _assistant_items(assistants)
    items += _activity_items(rows, users, assistants, count_tools)
    return items


def _user_items(
    rows: list[MessageRecord], users: list[MessageRecord], has_task: bool, rolling: bool
) -> list[Item]:
    """The user's preferences and facts, the task and the requests."""
    items: list[Item] = []
    for n, row in enumerate(users):
        text, order = content_text(row.content), (-n,)
        tagged = [(s, user_sentence_tags(strip_lead_in(s))) for s in split_sentences(text)]
        for sentence, tags in tagged:
            if tags and tags != ("question",):
                line = f"{clip(strip_lead_in(sentence), 300)} (seq {row.seq})"
                section = "Constraints and user preferences"
                items.append(Item(section, line, 8 if "fact" in tags else 9, order))
        if n == 0 and not has_task:
            line = f"{'Request' if rolling else 'Initial request'} (seq {row.seq}): {clip(text, 600)}"
            items.append(Item("Task and goals", line, _PROTECTED))
            has_task = True
        elif any(not tags or tags == ("question",) for _s, tags in tagged) and row is not users[-1]:
            items.append(Item("Task and goals", f"Request: {clip(text, 300)} (seq {row.seq})", 6, order))
    if not has_task:
        span = f"seq {rows[0].seq}-{rows[-1].seq}"
        items.append(Item("Task and goals", f"No user request in {span}; see the archive.", _PROTECTED))
    return items


def _assistant_items(assistants: list[MessageRecord]) -> list[Item]:
    """The assistant's completed work and next steps, and its last message (its decisions and actions
    are in the ledger)."""
    items: list[Item] = []
    for n, row in enumerate(reversed(assistants)):
        for sentence in split_sentences(content_text(row.content)):
            clipped, order = f"{clip(sentence, 300)} (seq {row.seq})", (n,)
            if sentence.endswith("?") or is_decision(sentence):
                continue
            if _DONE.search(sentence):
                items.append(Item("Completed work", clipped, 6, order))
            elif _NEXT.search(sentence):
                items.append(Item("Next steps", clipped, 5, order))
    if assistants:
        row = assistants[-1]
        text = f"Last assistant message (seq {row.seq}): {clip(content_text(row.content), 400)}"
        items.append(Item("Current state", text, 8))
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
    hint = (
        f"Originals archived as seq {first}-{last}: read_archived(seq) returns one in full, "
        "search_history(query) finds them by their words."
    )
    items.append(Item("Lookup hints", hint, 5))
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
    goals always present), the action ledger (``domain.ledger``) right after the
    task. A previous summary is folded in: its bullets are merged with the new
    ones and deduplicated, its ledger lines carried. When over the cap, the least
    important bullets go first (tool counts before state, critical data and files
    touched last); the task is truncated only as a last resort.
    """
    if inp.max_tokens < 1:
        raise ValueError(f"max_tokens must be at least 1, got {inp.max_tokens}")
    # Lines addressed to the model (tool output, fetched pages) are taken out before anything is copied.
    rows = list(screen_rows(sorted(inp.rows, key=lambda r: (r.seq, r.part))))
    ledger = ledger_section(rows, inp.previous_summary, inp.following, inp.max_tokens, count)
    previous_body = without_ledger(inp.previous_summary) if inp.previous_summary else ""
    previous = _previous_items(previous_body) if previous_body else []
    has_task = any(it.priority == _PROTECTED for it in previous)
    tools = Counter(r.tool_name or "tool" for r in rows if r.kind == "tool_call")
    fresh = _new_items(inp, rows, has_task, tools) if rows else []
    if not rows and not has_task:
        fresh.append(Item("Task and goals", "No messages were folded.", _PROTECTED))
    if found := notes(rows):  # where orders were taken out: kept like the task, never dropped
        fresh.append(Item("Lookup hints", found, _PROTECTED))
    merged: dict[tuple[str, str], Item] = {}
    for item in [*previous, *fresh]:
        old = merged.setdefault((item.section, _key(item)), item)
        if old is not item and (item.section in _KEYED or item.section == "Errors and resolutions"):
            old.text, old.priority = _merge_text(old.text, item.text), max(old.priority, item.priority)
    items = list(merged.values())
    if ledger:
        # The ledger is budgeted apart (it rolls up rather than losing lines); the rest fits around it.
        text = with_ledger(_fit(items, max(16, inp.max_tokens - count(ledger) - 2), count), ledger)
        if count(text) <= inp.max_tokens:
            return text
    return _fit(items, inp.max_tokens, count)
