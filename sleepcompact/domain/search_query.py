"""Archive search, the pure part: what a query means, how text is indexed, which snippet shows a hit.

One normalization serves both sides: ``index_body`` (what the index stores) and ``parse_query`` (what is
looked up) split text into the same word parts (identifiers at ``_ . / - :`` and camelCase, NFKC, case
folded, Latin diacritics dropped, lightly stemmed), so FTS5 and PostgreSQL see identical tokens and a
query word matches its indexed form on either engine.

A query is a set of terms joined by OR: content words (stop words dropped), identifiers and quoted
phrases (exact: their parts in order). The engines rank; ``snippet`` shows each hit around its
densest window of matched terms.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from datetime import date, datetime
from functools import lru_cache

from sleepcompact.domain.memo import forgets

MAX_TERMS = 32
"""Terms kept from one query (a pasted page would otherwise become a query of hundreds of ORs)."""
MAX_PART = 200
"""Longer word parts (base64, minified code) are not indexed: no one searches for them by hand, and
PostgreSQL refuses words over 2,047 bytes."""

_STOP_TEXT = (
    "a about above after again against ago all almost also although always am among an and another any "
    "anybody anyone anything anyway anywhere are aren around as ask asked asking at away be became "
    "because become been before being below beside besides between both but by call called can cannot "
    "could couldn d did didn different do does doesn doing don done down during each either else ever "
    "every everyone everything few for from further get gets getting give given go goes going gone got "
    "had hadn has hasn have haven having he her here hers herself him himself his how however i if in "
    "into is isn it its itself just kind kinds knew know known last lately least let ll m many may maybe "
    "me mention mentioned mentioning mentions might mine more most much must my myself name named names "
    "need needs neither never no nor not now o of off often on once one only onto or other others "
    "otherwise our ours ourselves out over own please quite rather re really recall recalled recent "
    "recently remember remembered remind reminded right s said same saw say saying says see seem seen "
    "shall share shared shares sharing she should shouldn since so some somebody someone something "
    "sometime sometimes somewhat sort specific still such sure t talk talked tell telling tells than "
    "thank thanks that the their theirs them themselves then there these they thing things think this "
    "those though thought through thus to together told too topic topics toward towards two type types "
    "under until up upon us ve very via want wanted was wasn way we well went were weren what whatever "
    "when whenever where whereas wherever whether which while who whoever whole whom whose why will with "
    "within without won would wouldn y yes yet you your yours yourself yourselves"
)
STOP_WORDS = frozenset(_STOP_TEXT.split())
"""English words that carry no topic: function words, question words, and what a person says when
asking about the past ("do you remember", "I mentioned", "you told me"). Dropped from queries only;
the index keeps them, so quoted phrases and identifiers still match them."""

_WORD = re.compile(r"[^\W_]+")
_ASCII_WORD = re.compile(r"[a-z0-9]+")
# camelCase and HTTPServer boundaries: lower->Upper, and the last capital of a run before lowercase.
_CAMEL = re.compile(r"(?<=[a-z])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_MARKS = re.compile(r"[\u0300-\u036f]")  # the combining diacritics FTS5's unicode61 removes
_QUOTED = re.compile(r'"([^"]*)"|\u201c([^\u201d]*)\u201d')
_EDGE = re.compile(r"^[\W_]+|[\W_]+$")
_IDENTIFIER = re.compile(r"[_./\\\-:@]|\d.*[^\W\d_]|[^\W\d_].*\d|[a-z][A-Z]|[A-Z]{2}[a-z]")
_VOWEL = re.compile(r"[aeiouy]")
_DOUBLE = re.compile(r"([b-df-hj-km-np-rtv-xz])\1$")  # a doubled consonant other than l, s, z
_MONTH_NAMES = "january february march april may june july august september october november december"
_MONTHS = {
    **{name: n for n, name in enumerate(_MONTH_NAMES.split(), 1)},
    **{name[:3]: n for n, name in enumerate(_MONTH_NAMES.split(), 1)},
    "sept": 9,
}
_MONTH = "(?i:" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_DAY = r"(\d{1,2})(?:st|nd|rd|th)?"
_DATE = re.compile(
    r"\b(\d{4})-(\d{1,2})-(\d{1,2})\b"
    rf"|\b({_MONTH})\s+{_DAY}\b(?:,?\s+(\d{{4}})\b)?"
    rf"|\b{_DAY}\s+(?:of\s+)?({_MONTH})(?:,?\s+(\d{{4}})\b)?(?!\w)"
)
_VERB_MONTHS = ("may", "mar", "march")  # "you may 2x it", "march 3 miles": a month only when capitalized


@lru_cache(maxsize=65536)
def word_parts(span: str) -> tuple[str, ...]:
    """A run of letters and digits as the folded parts the index stores (before stemming).

    NFKC (full-width letters, ligatures), camelCase split, case folded, Latin diacritics dropped.
    """
    if span.isascii():  # the common case, and NFKC, NFD and NFC leave ASCII as it is
        return tuple(p for p in _CAMEL.sub(" ", span).lower().split() if len(p) <= MAX_PART)
    text = unicodedata.normalize("NFKC", span)
    text = _CAMEL.sub(" ", text).casefold()
    text = unicodedata.normalize("NFC", _MARKS.sub("", unicodedata.normalize("NFD", text)))
    return tuple(p for p in _WORD.findall(text) if len(p) <= MAX_PART)


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """A small deterministic English suffix stripper (plurals, -ing, -ed, -ly), applied alike to
    indexed and queried words, so "hiking", "hiked" and "hikes" all meet "hike".

    Only lowercase ASCII words of three letters or more are touched (suffixes from four); the stem
    need not be a word ("movie" and "movies" both become "movi").
    """
    if len(word) < 3 or not word.isascii() or not word.isalpha():
        return word
    if len(word) >= 4:
        word = _strip_suffixes(word)
    if len(word) >= 4 and word.endswith("e"):
        word = word[:-1]
    if word.endswith("y"):
        word = word[:-1] + "i"
    return word


forgets(word_parts.cache_clear)
forgets(stem.cache_clear)


def _strip_suffixes(word: str) -> str:
    if word.endswith("ies") and len(word) >= 5:
        word = word[:-3] + "i"
    elif word.endswith("sses"):
        word = word[:-2]
    elif word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    if word.endswith("ied") and len(word) >= 5:
        word = word[:-3] + "i"
    else:
        for suffix in ("ing", "ed"):
            base = word[: -len(suffix)]
            if word.endswith(suffix) and len(base) >= 3 and _VOWEL.search(base):
                word = base[:-1] if _DOUBLE.search(base) else base
                break
        else:
            if word.endswith("ly") and len(word) >= 6 and not word.endswith(("ily", "ply", "bly", "fly")):
                word = word[:-2]
    return word


def index_tokens(text: str) -> list[str]:
    """Every token ``text`` is indexed under, in order."""
    if text.isascii():  # the same parts as span by span below, in a few passes over the whole text
        parts = _ASCII_WORD.findall(_CAMEL.sub(" ", text).lower())
        return list(map(stem, (p for p in parts if len(p) <= MAX_PART)))
    return [stem(p) for span in _WORD.findall(text) for p in word_parts(span)]


def index_body(text: str) -> str:
    """What the full-text index stores for ``text``: its tokens separated by spaces, letters and
    digits only, so FTS5's unicode61 tokenizer and PostgreSQL's ``simple`` parser split it alike."""
    return " ".join(index_tokens(text))


@dataclass(frozen=True)
class Term:
    """One thing a hit may match: a word, or (several words) an exact phrase, in indexed form."""

    words: tuple[str, ...]
    exact: bool = False
    """An identifier or a quoted phrase (matched as the parts in order), not a content word."""

    @property
    def text(self) -> str:
        """The term as the index spells it."""
        return " ".join(self.words)


@dataclass(frozen=True)
class DayMention:
    """A day a query names ("on May 4th", "27 April 2023", "2023-04-27"); no year: that day of any."""

    month: int
    day: int
    year: int | None = None

    @property
    def text(self) -> str:
        """``YYYY-MM-DD``, or ``MM-DD`` without a year."""
        return (f"{self.year:04d}-" if self.year else "") + f"{self.month:02d}-{self.day:02d}"


@dataclass(frozen=True)
class SearchQuery:
    """A parsed query: its terms (any one may match) and the days it names; empty when nothing
    searchable was given."""

    terms: tuple[Term, ...]
    days: tuple[DayMention, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.terms or self.days)


def _day(m: re.Match[str]) -> DayMention | None:
    """The day a date match names, or None when it is not a calendar day or not a month."""
    if m.group(1):
        year, month, day = int(m.group(1)), int(m.group(2)), int(m.group(3))
    else:
        name, digits, year_text = (m.group(4), m.group(5), m.group(6)) if m.group(4) else m.group(8, 7, 9)
        bare = name.rstrip(".")
        if bare.lower() in _VERB_MONTHS and not bare[0].isupper():
            return None
        month, day, year = _MONTHS[bare.lower()], int(digits), int(year_text) if year_text else 0
    try:
        date(year or 2000, month, day)  # 2000: a leap year, so February 29th stands without one
    except ValueError:
        return None
    return DayMention(month, day, year or None)


def day_mentions(text: str) -> tuple[tuple[DayMention, ...], str]:
    """The days ``text`` names, and ``text`` without them."""
    days: list[DayMention] = []

    def take(m: re.Match[str]) -> str:
        found = _day(m)
        if found is None:
            return m.group()
        days.append(found)
        return " "

    rest = _DATE.sub(take, text)
    return tuple(dict.fromkeys(days)), rest


def _identifier(token: str) -> bool:
    return _IDENTIFIER.search(token) is not None


def _quoted(text: str) -> tuple[list[str], str]:
    """Quoted phrases (a quoted question reads as plain words) and the rest of the text."""
    phrases: list[str] = []
    rest: list[str] = []
    last = 0
    for m in _QUOTED.finditer(text):
        inner = m.group(1) if m.group(1) is not None else m.group(2)
        rest.append(text[last : m.start()])
        # Someone who quotes a whole question is not asking for that exact sentence.
        (rest if inner.strip().endswith("?") else phrases).append(inner)
        last = m.end()
    rest.append(text[last:])
    return phrases, " ".join(rest)


def parse_query(text: str) -> SearchQuery:
    """What a search for ``text`` looks up: any of its content words, identifiers or quoted phrases.

    Quoted phrases stay phrases; identifier-shaped tokens (``src/a_b.py``, ``reservation_id``,
    ``HTTP-404``, ``a1b2c3``, ``getUser``) become exact phrases of their parts; every other word is
    folded, stemmed and dropped if a stop word. Days it names ("on May 4th") are taken out as
    ``days``. A question of stop words alone falls back to all its words (unless it names a day).
    """
    phrases, rest = _quoted(text)
    days, rest = day_mentions(rest)
    exact: list[Term] = []
    content: list[Term] = []
    every: list[Term] = []
    for phrase in phrases:
        words = tuple(index_tokens(phrase))
        if words:
            exact.append(Term(words, exact=True))
    for chunk in rest.split():
        core = _EDGE.sub("", chunk)
        if core and _identifier(core):
            words = tuple(index_tokens(core))
            if words:
                exact.append(Term(words, exact=len(words) > 1 or not words[0].isalpha()))
            continue
        for span in _WORD.findall(core):
            for part in word_parts(span):
                term = Term((stem(part),))
                every.append(term)
                if part not in STOP_WORDS:
                    content.append(term)
    terms = exact + (content or ([] if exact or days else every))
    return SearchQuery(tuple(dict.fromkeys(terms))[:MAX_TERMS], days)


@dataclass(frozen=True)
class SearchFilters:
    """Which originals a search may return, besides matching the query."""

    role: str | None = None
    tool: str | None = None
    seq_from: int | None = None
    seq_to: int | None = None
    created_from: datetime | None = None
    """Inclusive lower bound of ``created_at`` (aware UTC)."""
    created_before: datetime | None = None
    """Exclusive upper bound of ``created_at`` (aware UTC)."""
    days: tuple[DayMention, ...] = ()
    """Created on one of these days (UTC), when given."""
    include_live: bool = True
    """False leaves out rows the next call carries as they are (what recall must not repeat)."""

    @property
    def narrowing(self) -> bool:
        """Whether any filter but ``include_live`` is set (an empty query then lists what passes)."""
        return any(
            v is not None
            for v in (
                self.role,
                self.tool,
                self.seq_from,
                self.seq_to,
                self.created_from,
                self.created_before,
            )
        ) or bool(self.days)


def _matches(flat: str, terms: tuple[Term, ...]) -> list[tuple[int, int, int]]:
    """(start, end, term index) of every occurrence of a term in ``flat``, in text order."""
    tokens: list[tuple[str, int, int]] = []
    for m in _WORD.finditer(flat):
        tokens.extend((stem(p), m.start(), m.end()) for p in word_parts(m.group()))
    first: dict[str, list[int]] = {}
    for n, term in enumerate(terms):
        first.setdefault(term.words[0], []).append(n)
    found: list[tuple[int, int, int]] = []
    for i, (token, start, _end) in enumerate(tokens):
        for n in first.get(token, ()):
            words = terms[n].words
            if tuple(t for t, _s, _e in tokens[i : i + len(words)]) == words:
                found.append((start, tokens[i + len(words) - 1][2], n))
    return found


def _densest(found: list[tuple[int, int, int]], width: int) -> tuple[int, int]:
    """The character span of the window of at most ``width`` holding the most distinct terms (then
    the most matches; the earliest on ties)."""
    counts: dict[int, int] = {}
    best = (0, 0, 0, 0)  # distinct, matches, left, right
    left = 0
    for right, (_start, end, term) in enumerate(found):
        counts[term] = counts.get(term, 0) + 1
        while end - found[left][0] > width and left < right:
            gone = found[left][2]
            counts[gone] -= 1
            if not counts[gone]:
                del counts[gone]
            left += 1
        score = (len(counts), right - left + 1)
        if score > best[:2]:
            best = (*score, left, right)
    return found[best[2]][0], found[best[3]][1]


def _cut(flat: str, start: int, end: int) -> str:
    """``flat[start:end]`` widened or narrowed to word boundaries, with … where text was cut."""
    if start > 0:
        space = flat.find(" ", start - 1, start + 20)
        start = space + 1 if 0 <= space < end else start
    if end < len(flat):
        space = flat.rfind(" ", max(start, end - 20), end + 1)
        end = space if space > start else end
    return ("…" if start > 0 else "") + flat[start:end].strip() + ("…" if end < len(flat) else "")


def snippet(text: str, terms: tuple[Term, ...] | SearchQuery, width: int = 240) -> str:
    """About ``width`` characters of ``text`` (whitespace collapsed) around its densest window of
    matched terms, with … at each cut end; the text's start when no term occurs in it."""
    flat = " ".join(text.split())
    if len(flat) <= width:
        return flat
    found = _matches(flat, terms.terms if isinstance(terms, SearchQuery) else terms)
    if not found:
        return _cut(flat, 0, width)
    first, last = _densest(found, width)
    slack = max(0, width - (last - first))
    start = max(0, first - slack // 2)
    end = min(len(flat), start + width)  # a matched term longer than width is cut too
    start = max(0, min(start, end - width))
    return _cut(flat, start, end)
