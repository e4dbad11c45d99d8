"""Consolidation compares an entry only with the memories the index names (``domain.statement_index``).
That must never change a plan: the index names every memory an entry may restate or contradict, and a
plan made with it is the plan made by comparing with every memory, on any batch."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sleepcompact.domain import consolidation
from sleepcompact.domain.claims import analyze, contradicts, duplicate_score
from sleepcompact.domain.consolidation import EntryIn, MemoryIn, consolidate
from sleepcompact.domain.statement_index import StatementIndex, _prefix

NAMES = ("Dana", "Lee", "Ravi")
PLACES = ("Paris", "Lyon", "Berlin")
TEMPLATES = (
    "{n} lives in {p}.",
    "Actually, {n} moved to {p} now.",
    "{n} lives in {p} with two cats.",
    "{n}'s favourite tea is {t}.",
    "{n} prefers {t} tea in the morning.",
    "The deploy for {n} runs at {h}:00 UTC.",
    "Actually, the deploy for {n} now runs at {h}:00 UTC.",
    "{n} started a pottery class on {d}.",
    "{n} asked about {p}?",
    "ok",
)
SENTENCES = st.builds(
    lambda tpl, n, p, t, h, d: tpl.format(n=n, p=p, t=t, h=h, d=d),
    st.sampled_from(TEMPLATES),
    st.sampled_from(NAMES),
    st.sampled_from(PLACES),
    st.sampled_from(("oolong", "green", "mint")),
    st.sampled_from(("9", "10", "17")),
    st.sampled_from(("Monday", "Thursday")),
)
TAGS = st.sampled_from((("fact",), ("preference",), ("decision",), ("question",), ()))


class _Everything(StatementIndex[Any]):
    """The comparison the index replaces: every item, in order."""

    def similar(self, stmt: Any) -> list[Any]:
        return list(self._items)

    def sharing_subject(self, stmt: Any) -> list[Any]:
        return list(self._items)


@contextmanager
def _without_index(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    with monkeypatch.context() as patch:
        patch.setattr(consolidation, "StatementIndex", _Everything)
        yield


@settings(max_examples=300, deadline=None)
@given(st.lists(SENTENCES, min_size=1, max_size=25), SENTENCES)
def test_the_index_names_every_statement_a_new_one_may_restate_or_contradict(
    old: list[str], new: str
) -> None:
    index: StatementIndex[str] = StatementIndex()
    for text in old:
        index.add(text, analyze(text))
    stmt = analyze(new)
    similar, sharing = index.similar(stmt), index.sharing_subject(stmt)
    for text in old:
        o = analyze(text)
        if o.norm == stmt.norm or duplicate_score(o, stmt) > 0:
            assert text in similar, (text, new)
        if contradicts(o, stmt):
            assert text in sharing, (text, new)
    order = {id(t): i for i, t in enumerate(old)}
    assert [order[id(t)] for t in similar] == sorted(order[id(t)] for t in similar)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.tuples(SENTENCES, TAGS), max_size=12),
    st.lists(st.tuples(SENTENCES, TAGS, st.sampled_from((0.3, 0.6, 0.9))), min_size=1, max_size=20),
    st.lists(st.booleans(), max_size=12),
)
def test_a_plan_made_with_the_index_is_the_plan_made_by_comparing_with_every_memory(
    memories: list[tuple[str, tuple[str, ...]]],
    entries: list[tuple[str, tuple[str, ...], float]],
    pinned: list[bool],
) -> None:
    kinds = {"preference": "preference", "decision": "insight", "question": "knowledge_gap"}
    mems = [
        MemoryIn(
            i + 1,
            kinds.get(tags[0], "fact") if tags else "fact",
            text,
            0.8,
            6,
            (),
            i < len(pinned) and pinned[i],
        )
        for i, (text, tags) in enumerate(memories)
    ]
    batch = [
        EntryIn(100 + j, text, "direct", trust, 6, tags, "pre_compaction")
        for j, (text, tags, trust) in enumerate(entries)
    ]
    indexed = consolidate(batch, mems)
    with pytest.MonkeyPatch.context() as monkeypatch, _without_index(monkeypatch):
        compared_with_all = consolidate(batch, mems)
    assert indexed == compared_with_all


def test_a_short_text_contained_in_a_long_one_is_named_both_ways_when_only_containment_tells() -> None:
    short, long_ = (
        "Zoe watches yoga videos",
        "Zoe watches yoga videos about apples, bananas, cherries, apricots, almonds and beets.",
    )
    a, b = analyze(short), analyze(long_)
    assert duplicate_score(a, b) > 0
    assert not set(_prefix(a.words)) & set(_prefix(b.words))  # the Jaccard route cannot find them
    for old, new in ((short, long_), (long_, short)):
        index: StatementIndex[str] = StatementIndex()
        for text in ("Dana lives in Paris.", old, "The deploy runs at 9:00 UTC."):
            index.add(text, analyze(text))
        assert old in index.similar(analyze(new))


def test_a_claim_is_named_for_the_change_that_contradicts_it_among_unrelated_memories() -> None:
    old, new = "Dana lives in Paris.", "Actually, Dana and her two cats now live in Lyon."
    assert contradicts(analyze(old), analyze(new))
    index: StatementIndex[str] = StatementIndex()
    unrelated = [f"The deploy of service {i} runs at {i % 24}:00 UTC." for i in range(50)]
    for text in (*unrelated, old):
        index.add(text, analyze(text))
    assert index.sharing_subject(analyze(new)) == [old]


def _named(old: list[str], new: str) -> list[str]:
    """The memories among ``old`` that the index names for ``new`` (beside two it files first)."""
    index: StatementIndex[str] = StatementIndex()
    for text in ("Dana lives in Paris.", *old, "The deploy runs at 9:00 UTC."):
        index.add(text, analyze(text))
    return [t for t in index.similar(analyze(new)) if t in old]


@pytest.mark.parametrize(
    ("old", "new"),
    [
        # Near duplicates by their words alone (the Jaccard route), neither holding the other.
        (
            [
                "Dana prefers green tea every single quiet afternoon.",
                "Dana prefers green tea every single quiet evening.",
            ],
            "Dana prefers green tea every single quiet morning.",
        ),
        # Memories that hold the new text whole (the route of its rarest word; their own words sort
        # before the new text's, so the Jaccard route does not find them).
        (
            [
                "Zoe watches yoga videos about apples and almonds daily",
                "Zoe watches yoga videos with anchovies and avocado at breakfast",
            ],
            "Zoe watches yoga videos",
        ),
        # Memories the new text holds whole (the route of each memory's own longest word).
        (
            ["Zoe watches yoga videos", "Zoe eats bananas"],
            "Zoe watches yoga videos and then Zoe eats bananas with cherries at night",
        ),
    ],
    ids=["words", "held-by", "holds"],
)
def test_every_restated_memory_is_named_not_only_the_last_one_filed(old: list[str], new: str) -> None:
    assert all(duplicate_score(analyze(t), analyze(new)) > 0 for t in old)  # each one is a restatement
    assert _named(old, new) == old


def test_a_three_word_memory_is_named_inside_a_longer_entry() -> None:
    # Three words is the shortest text duplicate_score counts as restated by one that contains it.
    new = "Zoe eats bananas with apricots, almonds, anchovies and avocado"  # no word of its Jaccard key
    assert duplicate_score(analyze("Zoe eats bananas"), analyze(new)) > 0
    assert _named(["Zoe eats bananas"], new) == ["Zoe eats bananas"]
