"""The items of an offline summary, and those drawn from the evidence in the folded rows: the
identifiers (what the messages and tool inputs name, each labelled, the files touched) and the errors
with their status."""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from sleepcompact.domain.identifiers import error_lines, find_identifiers, output_noise
from sleepcompact.domain.injection import flag_imperatives
from sleepcompact.domain.messages import content_text
from sleepcompact.domain.records import MessageRecord, call_input, input_strings

KIND_WEIGHT = {"id": 0, "path": 0, "url": 1, "code": 1, "error": 1, "command": 1, "hash": 1, "number": 3}
_STOP_WORDS = (
    "about after again before being below could every first found their there these those under until where"
    " which while would should other still thing things please thanks maybe really great using value return"
    " import false none self"
)
_STOP = frozenset(_STOP_WORDS.split())
_COMMON = (
    "a an and are as at be but by can did do does for from had has have he her his how i if in into is it its"
    " let me my no not of on or our she so than that the them then they this to true us was we were what"
    " when who why will with you your yes null undefined"
)
NOT_IDENTIFIERS = _STOP | frozenset(_COMMON.split(" "))
"""Words the identifier patterns can catch (backticked, quoted, bare) that name nothing."""


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


def schema_fields(rows: list[MessageRecord]) -> frozenset[str]:
    """Field names of the folded tool inputs and JSON outputs: the labels of data, never data."""
    keys: set[str] = set()
    for row in rows:
        if row.kind == "tool_call":
            keys.update(k for k, _v in input_strings(call_input(row)) if k)
        elif row.kind == "tool_result":
            keys.update(k for k, _v in json_pairs(content_text(row.content)))
    return frozenset(keys)


def json_pairs(text: str) -> list[tuple[str, str]]:
    """(field, value) pairs of a JSON tool output's scalars (none when it is not JSON)."""
    stripped = text.strip()
    if stripped[:1] not in ("{", "[") or len(stripped) > 200_000:
        return []
    try:
        parsed = json.loads(stripped)
    except (ValueError, RecursionError):  # not JSON, or nested deeper than the parser recurses
        return []
    out: list[tuple[str, str]] = []
    stack: list[tuple[str, object]] = [("", parsed)]
    while stack and len(out) < 2000:
        key, value = stack.pop()
        if isinstance(value, dict):
            stack.extend((str(k), v) for k, v in reversed(list(value.items())))
        elif isinstance(value, list):
            stack.extend((key, v) for v in reversed(value))
        elif isinstance(value, str | int | float) and not isinstance(value, bool) and key:
            out.append((key, str(value)))
    return out


_WORD_CHAR = re.compile(r"\w")
_LABEL_BEFORE = re.compile(r"\b([A-Za-z][A-Za-z_]{2,30})(?:\s+(?:id|ID|number|code|no\.?))?\s*[:=#]?\s*$")


def _label(text: str, value: str, kind: str) -> str:
    """What names ``value`` where it occurs: the word right before it ("reservation ZFA04Y", "order:
    W123"), else its kind."""
    pos = text.find(value)
    start = max(0, pos - 40)
    found = _LABEL_BEFORE.search(text[start:pos]) if pos > 0 else None
    if found and found.start() == 0 and start > 0 and _WORD_CHAR.match(text[start - 1]):
        found = None  # the window cut a word ("icket" of "ticket" far before the value): not a label
    word = found.group(1) if found else ""
    if word and word.casefold() not in NOT_IDENTIFIERS and not word.isupper():
        return word.casefold() + (
            "_id" if re.search(r"\bid\b", found.group(0) if found else "", re.I) else ""
        )
    return kind


def _noise(value: str, fields: frozenset[str]) -> bool:
    """A field name, a stop word or a bare common word caught by the patterns is not an identifier."""
    return value in fields or value.casefold() in NOT_IDENTIFIERS


def _said(
    rows: list[MessageRecord], fields: frozenset[str]
) -> tuple[dict[str, tuple[str, str, int]], dict[str, Counter[str]]]:
    """value -> (label, kind, first position) from messages and tool inputs; files touched by tool."""
    said: dict[str, tuple[str, str, int]] = {}
    touched: dict[str, Counter[str]] = {}
    for row in rows:
        if row.kind == "tool_call":
            for key, value in input_strings(call_input(row)):
                found = (
                    [(clip(value, 200), "command")]
                    if key in ("command", "cmd", "script") and value.strip()
                    else []
                )
                found += [(i.value, i.kind) for i in find_identifiers(value)]
                for name, kind in found:
                    if kind == "path":
                        touched.setdefault(name, Counter())[row.tool_name or "tool"] += 1
                    if not _noise(name, fields):
                        # The field a tool input gives is the best label there is, whoever named it first.
                        said[name] = (key or kind, kind, said[name][2] if name in said else len(said))
        elif row.kind != "tool_result" and row.role != "system":
            text = content_text(row.content)
            for ident in find_identifiers(text):
                if (ident.kind != "error" or "`" not in ident.value) and not _noise(ident.value, fields):
                    said.setdefault(
                        ident.value, (_label(text, ident.value, ident.kind), ident.kind, len(said))
                    )
    return said, touched


def _output_identifiers(text: str, fields: frozenset[str]) -> list[tuple[int, str, str]]:
    """(weight, value, label) of the identifiers one tool output names: a JSON output's values under their
    field names, a text output's under their kind (test ids and numbered series left out)."""
    pairs = json_pairs(text)
    if pairs:
        found = [
            (i, key) for key, value in pairs for i in find_identifiers(value) if i.value == value.strip()
        ]
    else:
        found = [(i, i.kind) for i in find_identifiers(text)]
    return [
        (_weight(i.kind, i.value), i.value, label)
        for i, label in found
        if i.kind in KIND_WEIGHT
        and i.kind != "error"
        and len(i.value) <= 200
        and not output_noise(i.value)
        and not _noise(i.value, fields)
    ]


def output_identifiers(text: str) -> list[tuple[int, str, str]]:
    """(weight, value, label) of the identifiers a tool output names, in text order (0 weighs most)."""
    return _output_identifiers(text, frozenset())


def _from_outputs(
    rows: list[MessageRecord], fields: frozenset[str], said: dict[str, tuple[str, str, int]]
) -> list[Item]:
    """A few identifiers per tool output that nothing else named (a listing or a log names hundreds)."""
    found: dict[str, tuple[str, int, int, set[int]]] = {}  # value -> (label, weight, position, seqs)
    for row in rows:
        if row.kind == "tool_result":
            idents = _output_identifiers(content_text(row.content), fields)
            for weight, value, label in sorted(idents, key=lambda w: w[0])[:4]:
                found.setdefault(value, (label, weight, len(found), set()))[3].add(row.seq)
    extra = sorted(
        (-len(seqs), weight, pos, value, label, min(seqs))
        for value, (label, weight, pos, seqs) in found.items()
        if value not in said and not flag_imperatives(value)
    )
    return [
        Item(
            "Critical data (verbatim)", f"{label}={code(value)} (seq {seq}, tool output)", 8, (n, weight, pos)
        )
        for n, weight, pos, value, label, seq in extra[:15]
    ]


def identifier_items(rows: list[MessageRecord]) -> list[Item]:
    """Files touched with the tools that touched them, and every identifier labelled where it occurs
    (``reservation_id=`ZFA04Y```, ``path=...``): field names and stop words are not identifiers."""
    fields = schema_fields(rows)
    said, touched = _said(rows, fields)
    for row in rows:  # a value a message names by its kind alone takes the field name an output gives it
        if row.kind == "tool_result":
            for _w, value, label in _output_identifiers(content_text(row.content), fields):
                if value in said and said[value][0] == said[value][1] and label != said[value][1]:
                    said[value] = (label, *said[value][1:])
    items = [
        Item("Files touched", f"`{p}` ({', '.join(f'{t} ×{n}' for t, n in sorted(c.items()))})", 10, (0, i))
        for i, (p, c) in enumerate(touched.items())
    ]
    shown = _shown_within(v for v, (_l, kind, _p) in said.items() if kind != "path")
    best: dict[str, tuple[int, int]] = {}
    for value, (_, kind, pos) in said.items():  # a part takes its place in the whole that shows it
        if value in shown:  # never a path: paths are neither parts nor wholes
            whole = shown[value]
            own = best.get(whole, (_weight(said[whole][1], whole), said[whole][2]))
            best[whole] = min((_weight(kind, value), pos), own)
    for value, (label, kind, pos) in sorted(said.items(), key=lambda kv: kv[1][2]):
        if kind == "path" and value not in touched:
            items.append(Item("Files touched", f"`{value}` (mentioned)", 10, (1, pos)))
        elif kind != "path" and value not in shown:
            rank = best.get(value, (_weight(kind, value), pos))
            items.append(Item("Critical data (verbatim)", f"{label}={code(value)}", 10, rank))
    return items + _from_outputs(rows, fields, said)


_PART_SPLIT = re.compile(r"[^\w.]+")


def _shown_within(values: Iterable[str]) -> dict[str, str]:
    """Each value that another one shows whole (``user_permissions`` in ``user.user_permissions.add``,
    ``django.setup`` in ``django.setup()``), with the longest value that shows it: listing the part too
    says nothing new."""
    wholes = sorted(set(values), key=lambda v: (-len(v), v))
    present = set(wholes)
    shown: dict[str, str] = {}
    for whole in wholes:
        if whole in shown:
            continue
        for word in _PART_SPLIT.split(whole):
            segments = [s for s in word.split(".") if s]
            for i in range(len(segments)):
                for j in range(i + 1, len(segments) + 1):
                    part = ".".join(segments[i:j])
                    if part != whole and part in present and part not in shown and part in whole:
                        shown[part] = whole
    return shown


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
