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
from dataclasses import dataclass

from sleepcompact.domain.identifiers import error_lines, find_identifiers, output_noise
from sleepcompact.domain.injection import flag_imperatives
from sleepcompact.domain.messages import content_text
from sleepcompact.domain.prompt import SECTIONS, SUMMARY_PREFIX, SummaryInput
from sleepcompact.domain.records import MessageRecord, call_input, input_strings, row_text, tool_names
from sleepcompact.domain.sentences import is_decision, split_sentences, strip_lead_in, user_sentence_tags

_PROTECTED = 11  # the task bullet: truncated as a last resort, never dropped
# Priority of a previous summary's bullets by section; stale state sections go first.
_CARRIED = dict(zip(SECTIONS, (6, 6, 4, 4, 4, 9, 7, 10, 10, 8, 4), strict=True))
_KEYED = ("Critical data (verbatim)", "Files touched")  # deduplicated on the identifier, not the whole line
_KIND_WEIGHT = {"id": 0, "path": 0, "url": 1, "code": 1, "error": 1, "command": 1, "hash": 1, "number": 3}
_DONE = re.compile(
    r"\b(?:fixed|applied|added|updated|created|implemented|removed|renamed|refactored|resolved|completed"
    r"|done|pass(?:es|ed)?|succeeded|merged|saved|stored)\b",
    re.I,
)
_NEXT = re.compile(r"\b(?:next|todo|remaining|still need|follow[- ]up|afterwards|then I'll)\b", re.I)
_SEQ_SUFFIX = re.compile(r"\s*\((?:seq|seqs) [\d, -]+\)$")
_STOP_WORDS = (
    "about after again before being below could every first found their there these those under until where"
    " which while would should other still thing things please thanks maybe really great using value return"
    " import false none self"
)
_STOP = frozenset(_STOP_WORDS.split())
# Words that name each section (in SECTIONS order) in the headings of a previous summary in its own words.
_HEADING_WORDS = (
    "task goal|complet done|state|progress|next todo|constraint preference|decision|critical identifier data"
    "|file|error|lookup hint keyword"
)


@dataclass
class _Item:
    section: str
    text: str
    priority: int
    rank: tuple[int, ...] = ()  # within one priority, lower ranks are kept longer


def _clip(text: str, limit: int) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1].rstrip() + "…"


def _code(value: str) -> str:
    return f"`{value}`" if "`" not in value else value


def _key(item: _Item) -> str:
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


def _previous_items(text: str) -> list[_Item]:
    items: list[_Item] = []
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
        items.append(_Item(section, _clip(line, 600), priority, (-1, len(items))))
    return items


def _new_items(
    rows: list[MessageRecord], has_task: bool, rolling: bool, count_tools: Counter[str]
) -> list[_Item]:
    items: list[_Item] = []
    names = tool_names(rows)
    task_is_first = not has_task  # the first user message becomes the task only without a previous one
    first, last = rows[0].seq, rows[-1].seq
    users = [r for r in rows if r.role == "user" and r.kind == "message"]
    assistants = [r for r in rows if r.role == "assistant" and r.kind == "message"]
    for n, row in enumerate(users):
        text, order = content_text(row.content), (-n,)
        tagged = [(s, user_sentence_tags(strip_lead_in(s))) for s in split_sentences(text)]
        for sentence, tags in tagged:
            if tags and tags != ("question",):
                line = f"{_clip(strip_lead_in(sentence), 300)} (seq {row.seq})"
                items.append(_Item(SECTIONS[5], line, 8 if "fact" in tags else 9, order))
        if n == 0 and not has_task:
            line = f"{'Request' if rolling else 'Initial request'} (seq {row.seq}): {_clip(text, 600)}"
            items.append(_Item("Task and goals", line, _PROTECTED))
            has_task = True
        elif any(not tags or tags == ("question",) for _s, tags in tagged) and row is not users[-1]:
            items.append(_Item("Task and goals", f"Request: {_clip(text, 300)} (seq {row.seq})", 6, order))
    if not has_task:
        items.append(
            _Item("Task and goals", f"No user request in seq {first}-{last}; see the archive.", _PROTECTED)
        )
    if users and (len(users) > 1 or not task_is_first):
        row = users[-1]
        pending = "" if any(a.seq > row.seq for a in assistants) else " (not answered yet)"
        text = f"Last user request (seq {row.seq}){pending}: {_clip(content_text(row.content), 400)}"
        items.append(_Item("Next steps", text, 9))
    for n, row in enumerate(reversed(assistants)):
        for sentence in split_sentences(content_text(row.content)):
            clipped, order = f"{_clip(sentence, 300)} (seq {row.seq})", (n,)
            if sentence.endswith("?"):
                continue
            if is_decision(sentence):
                items.append(_Item("Decisions made and why", clipped, 7, order))
            elif _DONE.search(sentence):
                items.append(_Item("Completed work", clipped, 6, order))
            elif _NEXT.search(sentence):
                items.append(_Item("Next steps", clipped, 5, order))
    if assistants:
        row = assistants[-1]
        text = f"Last assistant message (seq {row.seq}): {_clip(content_text(row.content), 400)}"
        items.append(_Item("Current state", text, 8))
    calls = [r for r in rows if r.kind == "tool_call"]
    if calls and (not users or calls[-1].seq > users[-1].seq):
        row, action = calls[-1], json.dumps(call_input(calls[-1]), ensure_ascii=False, sort_keys=True)
        line = f"Last action (seq {row.seq}): {row.tool_name or 'tool'} {_clip(action, 200)}"
        items.append(_Item("In-progress work", line, 6))
    results = [r for r in rows if r.kind == "tool_result"]
    errors, failed = _error_items(rows, names)
    stats = (
        f"Folded {len(rows)} messages (seq {first}-{last}): {len(users)} from the user, {len(assistants)} "
        f"from the assistant, {len(results)} tool results ({failed} with errors)."
    )
    items.append(_Item("Completed work", stats, 5))
    if count_tools:
        used = ", ".join(
            f"{name} ×{n}" for name, n in sorted(count_tools.items(), key=lambda kv: (-kv[1], kv[0]))
        )
        items.append(_Item("Completed work", f"Tools used: {used}.", 3))
    items += _identifier_items(rows)
    items += errors
    items.append(
        _Item(
            "Lookup hints",
            f"Originals archived as seq {first}-{last}; search_history finds them by keyword.",
            5,
        )
    )
    keywords = _keywords(rows)
    if keywords:
        items.append(_Item("Lookup hints", f"Keywords: {', '.join(keywords)}.", 2))
    return items


def _weight(kind: str, value: str) -> int:
    """How much an identifier is worth keeping (0 best): a bare CamelCase word is worth less than a path."""
    if kind == "code" and not re.search(r"[_.]", value):
        return 2
    return _KIND_WEIGHT.get(kind, 4)


def _identifier_items(rows: list[MessageRecord]) -> list[_Item]:
    said: dict[str, tuple[str, int]] = {}  # value -> (kind, first position), from messages and tool inputs
    touched: dict[str, Counter[str]] = {}
    # value -> (weight, first position, seqs of the outputs naming it), for what only tool output names
    output: dict[str, tuple[int, int, set[int]]] = {}
    position = 0
    for row in rows:
        if row.kind == "tool_call":
            found = []
            for key, value in input_strings(call_input(row)):
                if key in ("command", "cmd", "script") and value.strip():
                    found.append((_clip(value, 200), "command"))
                found += [(i.value, i.kind) for i in find_identifiers(value)]
            for value, kind in found:
                if kind == "path":
                    touched.setdefault(value, Counter())[row.tool_name or "tool"] += 1
                said.setdefault(value, (kind, position := position + 1))
        elif row.kind == "tool_result":
            # A listing or a log names hundreds of things; a few per output, outside test ids and series.
            idents = [
                (_weight(i.kind, i.value), i.value)
                for i in find_identifiers(content_text(row.content))
                if i.kind in _KIND_WEIGHT
                and i.kind != "error"
                and len(i.value) <= 200
                and not output_noise(i.value)
            ]
            for weight, value in sorted(idents, key=lambda wv: wv[0])[:4]:
                output.setdefault(value, (weight, position := position + 1, set()))[2].add(row.seq)
        elif row.role != "system":
            for ident in find_identifiers(content_text(row.content)):
                if ident.kind != "error" or "`" not in ident.value:  # the backticked error is its own item
                    said.setdefault(ident.value, (ident.kind, position := position + 1))
    items = [
        _Item(
            "Files touched",
            f"`{p}` ({', '.join(f'{t} ×{n}' for t, n in sorted(c.items()))})",
            10,
            (0, said[p][1]),
        )
        for p, c in touched.items()
    ]
    for value, (kind, pos) in sorted(said.items(), key=lambda kv: kv[1][1]):
        if kind == "path" and value not in touched:
            items.append(_Item("Files touched", f"`{value}` (mentioned)", 10, (1, pos)))
        elif kind != "path":
            items.append(_Item("Critical data (verbatim)", _code(value), 10, (_weight(kind, value), pos)))
    extra = [
        (-len(where), weight, pos, value)
        for value, (weight, pos, where) in output.items()
        if value not in said and not flag_imperatives(value)
    ]
    for n_rows, weight, pos, value in sorted(extra)[:15]:
        items.append(_Item("Critical data (verbatim)", _code(value), 8, (n_rows, weight, pos)))
    return items


def _error_items(rows: list[MessageRecord], names: dict[str, str]) -> tuple[list[_Item], int]:
    """The newest distinct errors with their status, and how many tool results failed."""
    calls = {r.tool_call_id: r for r in rows if r.kind == "tool_call" and r.tool_call_id}
    found: dict[str, _Item] = {}
    next_ok: dict[str, int] = {}  # call signature -> seq of the nearest later success
    failed = 0
    for row in reversed(rows):  # backwards, so each error knows whether the same call later succeeded
        call = calls.get(row.tool_call_id or "")
        sig = f"{call.tool_name} {json.dumps(call_input(call), sort_keys=True)}" if call else ""
        text = content_text(row.content)
        if row.kind == "tool_result":
            lines = error_lines(text, 3) or ([_clip(text, 200)] if row.metadata.get("is_error") else [])
            if not lines:
                next_ok[sig] = row.seq
                continue
            failed += 1
            fixed = next_ok.get(sig) if sig else None
            status = f"resolved: the same call succeeded at seq {fixed}" if fixed else "open"
            name = row.tool_name or names.get(row.tool_call_id or "", "tool")
            for line in lines:
                if not flag_imperatives(line):  # an error line that gives orders is not copied into history
                    text = f"seq {row.seq} {name}: {line} ({status})"
                    found.setdefault(
                        line, _Item("Errors and resolutions", text, 8 if fixed else 9, (-row.seq,))
                    )
        elif row.role == "user" and row.kind == "message":
            for line in error_lines(text, 2):
                found.setdefault(
                    line,
                    _Item("Errors and resolutions", f"seq {row.seq} user reported: {line}", 9, (-row.seq,)),
                )
    newest = sorted(found.values(), key=lambda i: i.rank)[:12]
    return sorted(newest, key=lambda i: -i.rank[0]), failed


def _keywords(rows: list[MessageRecord], limit: int = 12) -> list[str]:
    """Distinctive words that search finds the originals by: identifier-shaped, then names, rare first."""
    df: Counter[str] = Counter()
    first: dict[str, int] = {}
    proper: set[str] = set()  # capitalized in mid-sentence: names of people, places, products
    for row in rows:
        text = re.sub(r"https?://\S+", " ", row_text(row))
        words = re.findall(r"\b[A-Za-z][A-Za-z0-9_]{4,40}\b", text)
        proper.update(m.group(1) for m in re.finditer(r"[a-z,;] ([A-Z][a-z]{4,})\b", text))
        for word in dict.fromkeys(words):
            df[word] += 1
            first.setdefault(word, len(first))
    rare = max(2, len(rows) // 10)
    shaped = [
        (0 if re.search(r"_|\d|[a-z][A-Z]", w) else 1 if w in proper else 2, df[w], first[w], w)
        for w in df
        if df[w] <= rare and w.casefold() not in _STOP and not re.search(r"_?\d{2,}$", w)
    ]
    return [w for *_rest, w in sorted(shaped)[:limit]]


def _render(items: list[_Item]) -> str:
    blocks = []
    for section in SECTIONS:
        bullets = [f"- {it.text}" for it in items if it.section == section]
        if bullets:
            blocks.append(f"## {section}\n" + "\n".join(bullets))
    return "\n\n".join(blocks)


def _fit(items: list[_Item], max_tokens: int, count: Callable[[str], int]) -> str:
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
        fresh.append(_Item("Task and goals", "No messages were folded.", _PROTECTED))
    merged: dict[tuple[str, str], _Item] = {}
    for item in [*previous, *fresh]:
        old = merged.setdefault((item.section, _key(item)), item)
        if old is not item and (item.section in _KEYED or item.section == "Errors and resolutions"):
            old.text, old.priority = _merge_text(old.text, item.text), max(old.priority, item.priority)
    return _fit(list(merged.values()), inp.max_tokens, count)
