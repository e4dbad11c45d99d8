"""The items of an offline summary, and those drawn from the evidence in the folded rows: the
identifiers (what the messages and tool inputs name, the files touched), the errors with their
status, and the keywords search finds the originals by."""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass

from sleepcompact.domain.identifiers import error_lines, find_identifiers, output_noise
from sleepcompact.domain.injection import flag_imperatives
from sleepcompact.domain.messages import content_text
from sleepcompact.domain.records import MessageRecord, call_input, input_strings, row_text

KIND_WEIGHT = {"id": 0, "path": 0, "url": 1, "code": 1, "error": 1, "command": 1, "hash": 1, "number": 3}
_STOP_WORDS = (
    "about after again before being below could every first found their there these those under until where"
    " which while would should other still thing things please thanks maybe really great using value return"
    " import false none self"
)
_STOP = frozenset(_STOP_WORDS.split())


@dataclass
class Item:
    section: str
    text: str
    priority: int
    rank: tuple[int, ...] = ()  # within one priority, lower ranks are kept longer


def clip(text: str, limit: int) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1].rstrip() + "…"


def code(value: str) -> str:
    return f"`{value}`" if "`" not in value else value


def _weight(kind: str, value: str) -> int:
    """How much an identifier is worth keeping (0 best): a bare CamelCase word is worth less than a path."""
    if kind == "code" and not re.search(r"[_.]", value):
        return 2
    return KIND_WEIGHT.get(kind, 4)


def identifier_items(rows: list[MessageRecord]) -> list[Item]:
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
                    found.append((clip(value, 200), "command"))
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
                if i.kind in KIND_WEIGHT
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
        Item(
            "Files touched",
            f"`{p}` ({', '.join(f'{t} ×{n}' for t, n in sorted(c.items()))})",
            10,
            (0, said[p][1]),
        )
        for p, c in touched.items()
    ]
    for value, (kind, pos) in sorted(said.items(), key=lambda kv: kv[1][1]):
        if kind == "path" and value not in touched:
            items.append(Item("Files touched", f"`{value}` (mentioned)", 10, (1, pos)))
        elif kind != "path":
            items.append(Item("Critical data (verbatim)", code(value), 10, (_weight(kind, value), pos)))
    extra = [
        (-len(where), weight, pos, value)
        for value, (weight, pos, where) in output.items()
        if value not in said and not flag_imperatives(value)
    ]
    for n_rows, weight, pos, value in sorted(extra)[:15]:
        items.append(Item("Critical data (verbatim)", code(value), 8, (n_rows, weight, pos)))
    return items


def error_items(rows: list[MessageRecord], names: dict[str, str]) -> tuple[list[Item], int]:
    """The newest distinct errors with their status, and how many tool results failed."""
    calls = {r.tool_call_id: r for r in rows if r.kind == "tool_call" and r.tool_call_id}
    found: dict[str, Item] = {}
    next_ok: dict[str, int] = {}  # call signature -> seq of the nearest later success
    failed = 0
    for row in reversed(rows):  # backwards, so each error knows whether the same call later succeeded
        call = calls.get(row.tool_call_id or "")
        sig = f"{call.tool_name} {json.dumps(call_input(call), sort_keys=True)}" if call else ""
        text = content_text(row.content)
        if row.kind == "tool_result":
            lines = error_lines(text, 3) or ([clip(text, 200)] if row.metadata.get("is_error") else [])
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
                        line, Item("Errors and resolutions", text, 8 if fixed else 9, (-row.seq,))
                    )
        elif row.role == "user" and row.kind == "message":
            for line in error_lines(text, 2):
                found.setdefault(
                    line,
                    Item("Errors and resolutions", f"seq {row.seq} user reported: {line}", 9, (-row.seq,)),
                )
    newest = sorted(found.values(), key=lambda i: i.rank)[:12]
    return sorted(newest, key=lambda i: -i.rank[0]), failed


def keywords(rows: list[MessageRecord], limit: int = 12) -> list[str]:
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
