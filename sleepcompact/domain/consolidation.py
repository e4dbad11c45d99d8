"""Consolidation: scored journal entries become long-term memories (DESIGN section 5).

A pure planning step: given the pending entries and the agent's valid memories it
returns what to create, reinforce and invalidate; the service applies the plan in
one transaction. Entries under the importance floor are not promoted; exact and
near duplicates merge (confidence rises); a new claim that contradicts an old one
supersedes it and a contradiction record keeps the history; unanswered questions
become knowledge gaps. Text that carries instructions aimed at the model
(``injection.flag_imperatives``, or an entry tagged ``flagged`` when it was journaled) never becomes a
fact: it is kept, whatever its importance, as a ``flagged`` memory with the reasons, for an admin to
audit; recall never shows that kind. The user's word wins: a memory the user corrected (``pinned``)
is never superseded by an automatic entry (anything but a ``manual`` one), and an
automatic entry that restates what the user deleted or corrected away (``retracted``)
is not learned again; both are ``overruled``. Everything is rule based, hence
deterministic.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from sleepcompact.domain.claims import Statement, analyze, contradicts, duplicate_score
from sleepcompact.domain.injection import flag_imperatives
from sleepcompact.domain.statement_index import StatementIndex

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
    origin: str = "agent"  # agent | pre_compaction | context_synthesis | manual (the user's own word)


@dataclass(frozen=True)
class MemoryIn:
    """An existing valid (not invalidated) memory of the same tenant and agent; ids are positive."""

    id: int
    kind: str  # fact | preference | insight | knowledge_gap | contradiction | flagged
    content: str
    confidence: float
    importance: int
    source_journal_ids: tuple[int, ...]
    pinned: bool = False  # a user's correction: only a manual entry may supersede it


@dataclass(frozen=True)
class NewMemory:
    """A memory to create; ``supersedes`` names the existing memory it replaces, if any."""

    kind: str
    content: str
    confidence: float
    importance: int
    source_journal_ids: tuple[int, ...]
    supersedes: int | None = None
    flags: tuple[str, ...] = ()  # a ``flagged`` memory: why its text looks like instructions to the model


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
    memory's sources, a ``merges`` entry, ``below_floor`` or ``overruled`` (an entry that
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
    overruled: tuple[int, ...] = ()  # automatic entries the user's corrections and deletions override

    def new_memory_for(self, entry_id: int) -> NewMemory | None:
        """The new memory an entry became, if it became one."""
        target = self.consolidated.get(entry_id)
        return self.new[-target - 1] if target is not None and target < 0 else None

    def merged_into(self, entry_id: int) -> int | None:
        """The existing memory id an entry merged into, if it merged into one."""
        target = self.consolidated.get(entry_id)
        return target if target is not None and target > 0 else None


# -- statements: what a sentence claims, reduced to comparable sets ----------------------------------

_KINDS = (("question", "knowledge_gap"), ("preference", "preference"), ("decision", "insight"))  # else fact
_CLAIMS = frozenset({"fact", "preference", "insight"})
_NOT_CLAIMS = frozenset({"error", "identifier"})  # observations and lists of names, not claims of state
FLAGGED = "flagged"
"""The kind (and the journal tag) of text that looks like instructions to the model: for audit, never
recalled."""
JOURNALED_FLAG = "flagged when journaled"


def entry_flags(entry: EntryIn) -> tuple[str, ...]:
    """Why an entry looks like instructions aimed at the model (empty when it does not)."""
    flags = tuple(flag_imperatives(entry.content))
    return flags or ((JOURNALED_FLAG,) if FLAGGED in entry.tags else ())


def _compatible(a: str, b: str) -> bool:
    # A restated question is the same gap, but a gap never merges into a fact; notes never merge;
    # flagged text merges only with flagged text.
    if "contradiction" in (a, b):
        return False
    if FLAGGED in (a, b):
        return a == b
    return a == b or "knowledge_gap" not in (a, b)


@dataclass(eq=False)
class _Target:
    """An existing memory (``memory_id``) or a new one being built, as a merge and contradiction candidate."""

    kind: str
    content: str
    confidence: float
    importance: int
    stmt: Statement
    memory_id: int = 0  # 0 while it is a new memory being built
    sources: list[int] = field(default_factory=list)  # entry ids this plan adds
    supersedes: int | None = None
    alive: bool = True
    pinned: bool = False  # a user's correction
    redirect: _Target | None = None  # the contradiction record that replaced a superseded new memory
    flags: tuple[str, ...] = ()

    def absorb(self, entry: EntryIn, *, rise: bool = True) -> None:
        """Take a duplicate entry as a source; a source of trust t closes t/2 of the remaining doubt."""
        self.sources.append(entry.id)
        if rise:  # capped: repetition alone never makes a memory certain
            self.confidence = round(min(0.99, 1 - (1 - self.confidence) * (1 - entry.source_trust / 2)), 4)
        self.importance = max(self.importance, entry.importance)


def _open(targets: Sequence[_Target], kind: str) -> list[_Target]:
    """The targets an entry of ``kind`` may still merge into or retire."""
    return [t for t in targets if t.alive and _compatible(t.kind, kind)]


def consolidate(
    entries: Sequence[EntryIn],
    memories: Sequence[MemoryIn],
    *,
    importance_floor: int = 5,
    retracted: Sequence[str] = (),
) -> ConsolidationPlan:
    """Plan how the entries become memories: see ``ConsolidationPlan`` for the result's scheme.

    Entries are taken in id order (journal order), so a later claim supersedes an
    earlier one. An entry already listed as a source of a memory (a repeated run)
    merges into it without raising its confidence again. ``retracted``: the contents
    of memories the user deleted or corrected away.
    """
    if any(m.id <= 0 for m in memories):
        raise ValueError("memory ids must be positive: `consolidated` encodes new memories as < 0")
    planner = _Planner(sorted(memories, key=lambda m: m.id), importance_floor, retracted)
    for entry in sorted(entries, key=lambda e: e.id):
        planner.place(entry)
    return planner.plan()


class _Planner:
    """Where each entry goes: nowhere (below the floor), into a memory, or into a new one."""

    def __init__(self, ordered: list[MemoryIn], importance_floor: int, retracted: Sequence[str]) -> None:
        self.floor = importance_floor
        self.existing = [
            _Target(m.kind, m.content, m.confidence, m.importance, analyze(m.content), m.id, pinned=m.pinned)
            for m in ordered
        ]
        self.retracted = [analyze(text) for text in retracted]
        self.overruled: list[int] = []
        self.owner = {e: t for t, m in zip(self.existing, ordered, strict=True) for e in m.source_journal_ids}
        self.drafts: list[_Target] = []
        self.home: dict[int, _Target | None] = {}
        self.invalidate: list[int] = []
        # Compared with the few memories an entry may restate or contradict, not with every one (an agent
        # with 10,000 memories took a second per consolidation): see ``statement_index``.
        self.index: StatementIndex[_Target] = StatementIndex()
        for t in self.existing:
            self.index.add(t, t.stmt)
        self.pinned = [t for t in self.existing if t.pinned]

    def place(self, entry: EntryIn) -> None:
        """Merge the entry into a memory it restates, or make it a new memory (superseding what it
        contradicts, when its source is trusted enough to)."""
        flags = () if "summary" in entry.tags else entry_flags(entry)
        if "summary" in entry.tags or (entry.importance < self.floor and not flags):
            self.home[entry.id] = None
            return
        if entry.id in self.owner:
            self.owner[entry.id].absorb(entry, rise=False)
            self.home[entry.id] = self.owner[entry.id]
            return
        kind = FLAGGED if flags else next((k for tag, k in _KINDS if tag in entry.tags), "fact")
        stmt = analyze(entry.content)
        if entry.origin != "manual" and self._overruled(stmt, kind, _open(self.pinned, kind)):
            self.home[entry.id] = None
            self.overruled.append(entry.id)
            return
        candidates = _open(self.index.similar(stmt), kind)
        match = next((t for t in candidates if t.stmt.norm == stmt.norm), None)
        if match is None:
            scored = [(s, -i) for i, t in enumerate(candidates) if (s := duplicate_score(t.stmt, stmt)) > 0]
            match = candidates[-max(scored)[1]] if scored else None
        if match is not None:
            match.absorb(entry)
            self.home[entry.id] = match
            return
        draft = _Target(
            kind, entry.content.strip(), entry.source_trust, entry.importance, stmt, sources=[entry.id]
        )
        draft.flags = flags
        self.drafts.append(draft)
        self.home[entry.id] = draft
        # An untrusted source (a scraped page, a tool's say-so) may add a claim but never retire one.
        if kind in _CLAIMS and not _NOT_CLAIMS & set(entry.tags) and entry.source_trust >= SUPERSEDE_TRUST:
            self._supersede(draft, _open(self.index.sharing_subject(stmt), kind), entry)
        self.index.add(draft, stmt)  # after: a draft is never its own candidate

    def _overruled(self, stmt: Statement, kind: str, candidates: list[_Target]) -> bool:
        """Whether an automatic entry restates what the user retracted or contradicts a correction."""
        if any(r.norm == stmt.norm or duplicate_score(r, stmt) > 0 for r in self.retracted):
            return True
        return kind in _CLAIMS and any(
            t.pinned and t.kind in _CLAIMS and contradicts(t.stmt, stmt) for t in candidates
        )

    def _supersede(self, draft: _Target, candidates: list[_Target], entry: EntryIn) -> None:
        """Retire every claim the new one contradicts, each with a contradiction record."""
        for old in candidates:
            if old.kind not in _CLAIMS or not contradicts(old.stmt, draft.stmt):
                continue
            old.alive = False
            carried = [] if old.memory_id else old.sources
            if old.memory_id:
                self.invalidate.append(old.memory_id)
            # A superseded new memory is never written; the memory it replaced stays replaced by this one.
            draft.supersedes = draft.supersedes or old.memory_id or old.supersedes
            text = f"'{old.content}' was superseded by '{draft.content}'"
            importance = max(old.importance, entry.importance)
            sources = [*carried, entry.id]
            old.redirect = _Target(
                "contradiction", text, entry.source_trust, importance, draft.stmt, 0, sources
            )
            self.drafts.append(old.redirect)

    def plan(self) -> ConsolidationPlan:
        """The plan: new memories, merges, invalidations, and where each entry went."""
        new = [d for d in self.drafts if d.alive]
        index = {id(d): i for i, d in enumerate(new)}

        def target(t: _Target | None) -> int | None:
            # Entries of a superseded new memory follow it into the contradiction record; entries merged
            # into an existing memory stay merged there even when it is invalidated later in the batch.
            if t is not None and not t.memory_id and t.redirect is not None:
                t = t.redirect
            return None if t is None else t.memory_id or -index[id(t)] - 1

        return ConsolidationPlan(
            new=tuple(
                NewMemory(
                    d.kind, d.content, d.confidence, d.importance, tuple(d.sources), d.supersedes, d.flags
                )
                for d in new
            ),
            merges=tuple(
                Merge(t.memory_id, tuple(t.sources), t.confidence, t.importance)
                for t in self.existing
                if t.sources
            ),
            invalidate=tuple(self.invalidate),
            consolidated={e: target(t) for e, t in self.home.items()},
            below_floor=tuple(e for e, t in self.home.items() if t is None and e not in self.overruled),
            overruled=tuple(self.overruled),
        )
