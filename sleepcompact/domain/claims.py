"""What a remembered statement claims: its subject, the values it asserts, and whether two
statements say the same thing (a duplicate) or the later one changes the earlier (a contradiction).

Rule based and pure (standard library only), so consolidation stays deterministic: a statement is
split into clauses, each reduced to content stems (its subject), categorized values (places, times,
numbers, codes...) and the values it says it changed from ("moved from X to Y").
"""

from __future__ import annotations

import re
from collections.abc import Set
from dataclasses import dataclass

from sleepcompact.domain.memo import TextMemo
from sleepcompact.domain.sentences import strip_lead_in

# A memory's date ("[2023-04-29] ") and reporting prefix ("The user said: ", "Emily asked, still
# unanswered: ") are where and how it was said, not what it claims.
_DATE = re.compile(r"^\s*\[\d{4}-\d{2}-\d{2}\]\s*")
_PREFIX = re.compile(
    r"^\s*(?:(?:the (?:user|assistant)|[A-Z][\w.'-]*(?: [A-Z][\w.'-]*){0,2}) (?:said|asked|noted|mentioned)"
    r"(?:, still unanswered)?|user|assistant)\s*:\s*",
    re.I,
)
_MARKER = re.compile(
    r"\b(?:actually|moved|changed|switched|migrated|upgraded|downgraded|relocated|rescheduled|postponed"
    r"|updated|no longer|anymore|instead|now)\b",
    re.I,
)


def _set(words: str) -> frozenset[str]:
    return frozenset(words.split())


_MARKER_WORDS = _set(
    "actually moved changed switched migrated upgraded downgraded relocated rescheduled postponed updated "
    "longer anymore instead now"
)
# Predicates that hold one value at a time; "visited", "speak" or "like" list things, and lists add up.
_STATE = re.compile(
    r"\b(?:is|are|live[sd]?|living|prefers?|preferred|runs?|uses?|leaves|departs|arrives|starts|ends|due"
    r"|costs?|works?|based)\b",
    re.I,
)
# "I moved", and the same said of someone: "the user moved", "Emily has moved".
_I_MOVED = re.compile(
    r"\b(?:[Ii]|[Ww]e|[Uu]ser|[A-Z][a-z]+)(?:'ve| have| has| just| recently)* (?:moved|relocated)\b"
)
_FROM_TO = re.compile(r"\bfrom\s+(.+?)\s+to\b", re.I)
_CLAUSE = re.compile(r"\s*(?:;|,?\s+(?:and|but|while|whereas)\s+)\s*", re.I)
_CODE = re.compile(r"\b([A-Z][A-Z0-9]|[0-9][A-Z])\s(\d{1,4}[A-Z]?)\b")  # flight-like codes: "LH 123"
_CONTRACTION = re.compile(r"(?:n't|'(?:s|m|re|ve|ll|d))$")
_TOKEN = re.compile(r"[^\W_]+(?:[.:'/-][^\W_]+)*")
_TIME = re.compile(r"\d{1,2}:\d{2}(?::\d{2})?")
_STOP = _set(
    "i me my mine we us our ours you your he him his she her it its they them their a an the this that these "
    "those is are am was were be been being has have had do does did will would can could shall might must "
    "get got run runs use uses to of in on at for from with by as and or but so than then there here about "
    "into over under up out what which who whom where when how all any some just also always really very "
    "please again still currently recently last next month week year ago too well yes ok okay said user "
    "assistant m re ve ll d s"
)
_DAYS = _set("monday tuesday wednesday thursday friday saturday sunday today tomorrow tonight")
_MONTHS = _set("january february march april may june july august september october november december")
_UNITS = _set(
    "metric imperial celsius fahrenheit km kilometres kilometers miles kg kilograms lb lbs pounds metres "
    "meters feet inches"
)
_ZONES = _set("utc gmt cet cest est edt pst pdt ist jst")
_CONCEPTS = dict.fromkeys(_set("live lives lived living reside resides resided home"), "residence")


@dataclass(frozen=True)
class _Clause:
    subject: Set[str]  # content stems, keys and concepts; not the values
    values: Set[tuple[str, str]]  # (category, token) the clause asserts now
    previous: Set[str]  # values named as what it changed from ("moved from X to Y")
    keys: Set[str]  # entity names and codes: a different key is a different thing
    state: bool


@dataclass(frozen=True)
class Statement:
    """A statement analyzed: its normalized text, its words, whether it says it changed something, its
    clauses (the whole statement first)."""

    norm: str
    words: Set[str]
    marker: bool
    clauses: tuple[_Clause, ...]


def _stem(word: str) -> str:
    # Six-letter prefixes make "allergic"/"allergy" and "prefers"/"preference" meet without a lexicon.
    if len(word) > 4 and word.endswith("ies"):
        word = word[:-3] + "y"
    elif len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    return word[:6]


def _category(tok: str, low: str, first: bool, possessive: bool) -> str | None:
    """The value slot a token fills (time, num, day, month, unit, tz, proper), "key" for names, or None."""
    if _TIME.fullmatch(low):
        return "time"
    if any(c.isdigit() for c in low):
        return "key" if any(c.isalpha() for c in low) else "num"
    if low in _DAYS:
        return "day"
    if low in _MONTHS and (low != "may" or tok[0].isupper()):
        return "month"
    if low in _UNITS:
        return "unit"
    if low in _ZONES:
        return "tz"
    if tok.isupper() and len(tok) >= 5:
        return "key"  # booking references and similar codes
    if tok[0].isupper() and low not in _STOP and not (tok.isupper() and len(tok) <= 4):
        # A name that opens a clause or owns something is who the claim is about, not its value.
        return "key" if first or possessive else "proper"
    return None


def _clause(text: str, marker: bool) -> _Clause:
    previous_spans = [m.span(1) for m in _FROM_TO.finditer(text)] if marker else []
    subject: set[str] = {"residence"} if _I_MOVED.search(text) else set()
    values: set[tuple[str, str]] = set()
    previous: set[str] = set()
    keys: set[str] = set()
    first = True
    for match in _TOKEN.finditer(text):
        tok = match.group()
        low = tok.casefold()
        possessive = low.endswith("'s")
        if low.endswith("n't"):
            subject.add("not")
        low = _CONTRACTION.sub("", low)
        is_first, first = first, False
        if not low or low in _STOP or low in _MARKER_WORDS:
            continue
        category = _category(tok, low, is_first, possessive)
        if category == "key":  # who or what the claim is about: part of the subject, stemmed like the rest
            keys.add(low)
            subject.add(low if any(c.isdigit() for c in low) else _stem(low))
        elif category is not None:
            if any(a <= match.start() < b for a, b in previous_spans):
                previous.add(low)
            else:
                values.add((category, low))
        else:
            subject.add(_CONCEPTS.get(low) or _stem(low))
    return _Clause(subject, values, previous, keys, _STATE.search(text) is not None)


# Consolidation analyzes every memory of the agent at every pass, and a statement never changes: a
# repeat is a lookup (a Statement is frozen, its sets typed read-only).
_ANALYZED: TextMemo[Statement] = TextMemo(entries=8192, chars=4_000_000)


def analyze(content: str) -> Statement:
    """The claims of one remembered statement (its reporting prefix and lead-in dropped)."""
    found = _ANALYZED.get(content)
    if found is None:
        found = _analyze(content)
        _ANALYZED.put(content, found)
    return found


def _analyze(content: str) -> Statement:
    body = _PREFIX.sub("", _DATE.sub("", content.replace("’", "'").strip()))
    marker = _MARKER.search(body) is not None  # before the lead-in goes: "Actually, ..." is a marker
    body = _CODE.sub(r"\1\2", strip_lead_in(body))
    norm = " ".join(m.group().casefold() for m in _TOKEN.finditer(body))
    clauses = tuple(_clause(part, marker) for part in _CLAUSE.split(body) if part.strip())
    whole = _clause(body, marker)
    words = whole.subject | {v for _c, v in whole.values} | whole.previous
    return Statement(norm, words, marker, (whole, *clauses) if len(clauses) > 1 else (whole,))


def _jaccard(a: Set[str], b: Set[str]) -> float:
    return len(a & b) / len(a | b) if a or b else 0.0


def _other_things(a: _Clause, b: _Clause) -> bool:
    return bool(a.keys and b.keys and not a.keys & b.keys)


def _conflicts(a: _Clause, b: _Clause) -> tuple[Set[tuple[str, str]], Set[tuple[str, str]]]:
    """Values each side holds in a slot where the other holds a different value."""
    only_a, only_b = a.values - b.values, b.values - a.values
    shared = {c for c, _v in only_a} & {c for c, _v in only_b}
    return {x for x in only_a if x[0] in shared}, {x for x in only_b if x[0] in shared}


def duplicate_score(old: Statement, new: Statement) -> float:
    """Similarity in (0, 1] when ``new`` restates ``old``, else 0; values must not disagree."""
    a, b = old.clauses[0], new.clauses[0]
    if _other_things(a, b) or any(_conflicts(a, b)):
        return 0.0
    score = _jaccard(old.words, new.words)
    short, long_ = sorted((old.norm, new.norm), key=len)
    if len(short.split()) >= 3 and f" {short} " in f" {long_} ":
        score = max(score, 0.75)  # a restatement with detail added
    return score if score >= 0.75 else 0.0


def contradicts(old: Statement, new: Statement) -> bool:
    """Whether ``new`` says the subject of ``old`` now has a different value.

    With a change marker (actually, moved, now...) the subjects must overlap and
    some slot must differ; without one, both must be single-valued predicates
    differing in exactly one slot, so "allergic to peanuts" and "allergic to
    shellfish" (no value slot) or two flights (several slots) both stand.
    """
    for a in old.clauses:
        for b in new.clauses:
            if _other_things(a, b) or not a.subject & b.subject:
                continue
            differ_a, differ_b = _conflicts(a, b)
            if not differ_a:
                continue
            similar = _jaccard(a.subject, b.subject)
            if new.marker and similar >= 0.5:
                return True
            single = len(differ_a) == len(differ_b) == 1
            if not new.marker and a.state and b.state and single and similar >= 0.75:
                return True
    return False


# -- planning -------------------------------------------------------------------------------------------
