"""Consolidation: scored journal entries become long-term memories (DESIGN section 5).

A pure planning step: given the pending entries and the agent's valid memories it
returns what to create, reinforce and invalidate; the service applies the plan in
one transaction. Entries under the importance floor are not promoted; exact and
near duplicates merge (confidence rises); a new claim that contradicts an old one
supersedes it and a contradiction record keeps the history; unanswered questions
become knowledge gaps. Everything is rule based, hence deterministic.
"""

from __future__ import annotations

import re
from collections.abc import Sequence, Set
from dataclasses import dataclass, field

from sleepcompact.domain.sentences import strip_lead_in

SUPERSEDE_TRUST = 0.5
"""Least source trust an entry needs to supersede a memory (the recall floor: below it, not believed)."""


@dataclass(frozen=True)
class EntryIn:
    """A scored journal entry waiting to be consolidated."""

    id: int
    content: str
    source_type: str  # direct | observation | inference | environmental
    source_trust: float  # 0.9 / 0.8 / 0.6 / 0.3
    importance: int  # 1..10
    tags: tuple[str, ...]


@dataclass(frozen=True)
class MemoryIn:
    """An existing valid (not invalidated) memory of the same tenant and agent; ids are positive."""

    id: int
    kind: str  # fact | preference | insight | knowledge_gap | contradiction
    content: str
    confidence: float
    importance: int
    source_journal_ids: tuple[int, ...]


@dataclass(frozen=True)
class NewMemory:
    """A memory to create; ``supersedes`` names the existing memory it replaces, if any."""

    kind: str
    content: str
    confidence: float
    importance: int
    source_journal_ids: tuple[int, ...]
    supersedes: int | None = None


@dataclass(frozen=True)
class Merge:
    """An existing memory confirmed by duplicate entries: its new confidence, importance and sources."""

    memory_id: int
    entry_ids: tuple[int, ...]
    confidence: float
    importance: int


@dataclass(frozen=True)
class ConsolidationPlan:
    """What consolidation decided.

    Every input entry id is a key of ``consolidated`` and lands in a ``new``
    memory's sources, a ``merges`` entry or ``below_floor`` (an entry that
    supersedes something is also a source of the contradiction record). Values of
    ``consolidated``: a positive int is the id of the existing memory the entry
    merged into; a negative int ``-(i + 1)`` means ``new[i]``; None means not
    promoted (importance under the floor, or a ``summary`` entry: summaries are
    history, not facts, so they go to ``below_floor`` too). An entry superseded by
    a later entry of the same batch maps to the contradiction record.
    """

    new: tuple[NewMemory, ...]
    merges: tuple[Merge, ...]
    invalidate: tuple[int, ...]
    consolidated: dict[int, int | None]
    below_floor: tuple[int, ...]

    def new_memory_for(self, entry_id: int) -> NewMemory | None:
        """The new memory an entry became, if it became one."""
        target = self.consolidated.get(entry_id)
        return self.new[-target - 1] if target is not None and target < 0 else None

    def merged_into(self, entry_id: int) -> int | None:
        """The existing memory id an entry merged into, if it merged into one."""
        target = self.consolidated.get(entry_id)
        return target if target is not None and target > 0 else None


# -- statements: what a sentence claims, reduced to comparable sets ----------------------------------

_PREFIX = re.compile(
    r"^\s*(?:the (?:user|assistant) (?:said|asked|noted|mentioned)(?:, still unanswered)?|user|assistant)"
    r"\s*:\s*",
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
_I_MOVED = re.compile(r"\b(?:i|we)(?:'ve| have| just| recently)* (?:moved|relocated)\b", re.I)
_FROM_TO = re.compile(r"\bfrom\s+(.+?)\s+to\b", re.I)
_CLAUSE = re.compile(r"\s*(?:;|,?\s+(?:and|but|while|whereas)\s+)\s*", re.I)
_CODE = re.compile(r"\b([A-Z][A-Z0-9]|[0-9][A-Z])\s(\d{1,4}[A-Z]?)\b")  # flight-like codes: "LH 123"
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
_KINDS = (("question", "knowledge_gap"), ("preference", "preference"), ("decision", "insight"))  # else fact
_CLAIMS = frozenset({"fact", "preference", "insight"})
_NOT_CLAIMS = frozenset({"error", "identifier"})  # observations and lists of names, not claims of state


@dataclass(frozen=True)
class _Clause:
    subject: Set[str]  # content stems, keys and concepts; not the values
    values: Set[tuple[str, str]]  # (category, token) the clause asserts now
    previous: Set[str]  # values named as what it changed from ("moved from X to Y")
    keys: Set[str]  # entity names and codes: a different key is a different thing
    state: bool


@dataclass(frozen=True)
class _Statement:
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
        low = re.sub(r"(?:n't|'(?:s|m|re|ve|ll|d))$", "", low)
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


def _analyze(content: str) -> _Statement:
    body = _PREFIX.sub("", content.replace("’", "'").strip())
    marker = _MARKER.search(body) is not None  # before the lead-in goes: "Actually, ..." is a marker
    body = _CODE.sub(r"\1\2", strip_lead_in(body))
    norm = " ".join(m.group().casefold() for m in _TOKEN.finditer(body))
    clauses = tuple(_clause(part, marker) for part in _CLAUSE.split(body) if part.strip())
    whole = _clause(body, marker)
    words = whole.subject | {v for _c, v in whole.values} | whole.previous
    return _Statement(norm, words, marker, (whole, *clauses) if len(clauses) > 1 else (whole,))


def _jaccard(a: Set[str], b: Set[str]) -> float:
    return len(a & b) / len(a | b) if a or b else 0.0


def _other_things(a: _Clause, b: _Clause) -> bool:
    return bool(a.keys and b.keys and not a.keys & b.keys)


def _conflicts(a: _Clause, b: _Clause) -> tuple[Set[tuple[str, str]], Set[tuple[str, str]]]:
    """Values each side holds in a slot where the other holds a different value."""
    only_a, only_b = a.values - b.values, b.values - a.values
    shared = {c for c, _v in only_a} & {c for c, _v in only_b}
    return {x for x in only_a if x[0] in shared}, {x for x in only_b if x[0] in shared}


def _duplicate(old: _Statement, new: _Statement) -> float:
    """Similarity in (0, 1] when ``new`` restates ``old``, else 0; values must not disagree."""
    a, b = old.clauses[0], new.clauses[0]
    if _other_things(a, b) or any(_conflicts(a, b)):
        return 0.0
    score = _jaccard(old.words, new.words)
    short, long_ = sorted((old.norm, new.norm), key=len)
    if len(short.split()) >= 3 and f" {short} " in f" {long_} ":
        score = max(score, 0.75)  # a restatement with detail added
    return score if score >= 0.75 else 0.0


def _contradicts(old: _Statement, new: _Statement) -> bool:
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


def _compatible(a: str, b: str) -> bool:
    # A restated question is the same gap, but a gap never merges into a fact; notes never merge.
    if "contradiction" in (a, b):
        return False
    return a == b or "knowledge_gap" not in (a, b)


@dataclass(eq=False)
class _Target:
    """An existing memory (``memory_id``) or a new one being built, as a merge and contradiction candidate."""

    kind: str
    content: str
    confidence: float
    importance: int
    stmt: _Statement
    memory_id: int = 0  # 0 while it is a new memory being built
    sources: list[int] = field(default_factory=list)  # entry ids this plan adds
    supersedes: int | None = None
    alive: bool = True
    redirect: _Target | None = None  # the contradiction record that replaced a superseded new memory

    def absorb(self, entry: EntryIn, *, rise: bool = True) -> None:
        """Take a duplicate entry as a source; a source of trust t closes t/2 of the remaining doubt."""
        self.sources.append(entry.id)
        if rise:  # capped: repetition alone never makes a memory certain
            self.confidence = round(min(0.99, 1 - (1 - self.confidence) * (1 - entry.source_trust / 2)), 4)
        self.importance = max(self.importance, entry.importance)


def consolidate(
    entries: Sequence[EntryIn], memories: Sequence[MemoryIn], *, importance_floor: int = 5
) -> ConsolidationPlan:
    """Plan how the entries become memories: see ``ConsolidationPlan`` for the result's scheme.

    Entries are taken in id order (journal order), so a later claim supersedes an
    earlier one. An entry already listed as a source of a memory (a repeated run)
    merges into it without raising its confidence again.
    """
    if any(m.id <= 0 for m in memories):
        raise ValueError("memory ids must be positive: `consolidated` encodes new memories as < 0")
    ordered = sorted(memories, key=lambda m: m.id)
    existing = [
        _Target(m.kind, m.content, m.confidence, m.importance, _analyze(m.content), m.id) for m in ordered
    ]
    owner = {e: t for t, m in zip(existing, ordered, strict=True) for e in m.source_journal_ids}
    drafts: list[_Target] = []
    home: dict[int, _Target | None] = {}
    invalidate: list[int] = []
    for entry in sorted(entries, key=lambda e: e.id):
        if "summary" in entry.tags or entry.importance < importance_floor:
            home[entry.id] = None
            continue
        if entry.id in owner:
            owner[entry.id].absorb(entry, rise=False)
            home[entry.id] = owner[entry.id]
            continue
        kind = next((k for tag, k in _KINDS if tag in entry.tags), "fact")
        stmt = _analyze(entry.content)
        candidates = [t for t in (*existing, *drafts) if t.alive and _compatible(t.kind, kind)]
        match = next((t for t in candidates if t.stmt.norm == stmt.norm), None)
        if match is None:
            scored = [(s, -i) for i, t in enumerate(candidates) if (s := _duplicate(t.stmt, stmt)) > 0]
            match = candidates[-max(scored)[1]] if scored else None
        if match is not None:
            match.absorb(entry)
            home[entry.id] = match
            continue
        content = entry.content.strip()
        draft = _Target(kind, content, entry.source_trust, entry.importance, stmt, sources=[entry.id])
        drafts.append(draft)
        home[entry.id] = draft
        # An untrusted source (a scraped page, a tool's say-so) may add a claim but never retire one.
        if kind not in _CLAIMS or _NOT_CLAIMS & set(entry.tags) or entry.source_trust < SUPERSEDE_TRUST:
            continue
        for old in candidates:
            if old.kind not in _CLAIMS or not _contradicts(old.stmt, stmt):
                continue
            old.alive = False
            carried = [] if old.memory_id else old.sources
            if old.memory_id:
                invalidate.append(old.memory_id)
            # A superseded new memory is never written; the memory it replaced stays replaced by this one.
            draft.supersedes = draft.supersedes or old.memory_id or old.supersedes
            text = f"'{old.content}' was superseded by '{draft.content}'"
            importance = max(old.importance, entry.importance)
            sources = [*carried, entry.id]
            old.redirect = _Target("contradiction", text, entry.source_trust, importance, stmt, 0, sources)
            drafts.append(old.redirect)
    new = [d for d in drafts if d.alive]
    created = [
        NewMemory(d.kind, d.content, d.confidence, d.importance, tuple(d.sources), d.supersedes) for d in new
    ]
    index = {id(d): i for i, d in enumerate(new)}

    def target(t: _Target | None) -> int | None:
        # Entries of a superseded new memory follow it into the contradiction record; entries merged
        # into an existing memory stay merged there even when it is invalidated later in the batch.
        if t is not None and not t.memory_id and t.redirect is not None:
            t = t.redirect
        return None if t is None else t.memory_id or -index[id(t)] - 1

    merges = [Merge(t.memory_id, tuple(t.sources), t.confidence, t.importance) for t in existing if t.sources]
    return ConsolidationPlan(
        new=tuple(created),
        merges=tuple(merges),
        invalidate=tuple(invalidate),
        consolidated={e: target(t) for e, t in home.items()},
        below_floor=tuple(e for e, t in home.items() if t is None),
    )
