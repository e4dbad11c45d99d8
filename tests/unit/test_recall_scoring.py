"""How memory recall scores and words (``domain.recall``), exactly: the ranking is Okapi BM25 as its
docstring says (Lucene's non-negative idf, k1 = 1.2, b = 0.75, and query-term saturation k3 = 1.2), the
stemmer merges plurals and nothing else, and the block fills its budget to the token.

``test_recall.py`` checks the order users see; these pin the figures that order comes from, so a
changed constant or operator is noticed even where it happens not to swap two memories in a test.
"""

from __future__ import annotations

import math
from collections import Counter
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sleepcompact.domain.recall import Candidate, memory_block, memory_line, recall, relevance, terms, weight


def okapi(documents: list[list[str]], query: list[str]) -> list[float]:
    """BM25 written out from its definition (Robertson and Zaragoza, with Lucene's idf)."""
    k1, b, k3 = 1.2, 0.75, 1.2
    n = len(documents)
    avgdl = max(1.0, sum(map(len, documents)) / n)
    qtf = Counter(query)
    out = []
    for doc in documents:
        tf = Counter(doc)
        total = 0.0
        for term in set(doc) & set(query):
            df = sum(term in d for d in documents)
            idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
            saturation = tf[term] * (k1 + 1) / (tf[term] + k1 * (1 - b + b * len(doc) / avgdl))
            total += idf * saturation * (k3 + 1) * qtf[term] / (k3 + qtf[term])
        out.append(total)
    return out


def test_a_worked_example() -> None:
    docs = [["invoice", "rounding"], ["invoice", "total", "total", "tax"], ["holiday"]]
    got = relevance(docs, ["invoice", "total", "total"])
    # invoice: df 2 of 3, idf ln(1 + 1.5/2.5); total: df 1, idf ln(1 + 2.5/1.5); avgdl 7/3.
    idf_invoice, idf_total = math.log(1.6), math.log(1 + 2.5 / 1.5)
    q1, q2 = 2.2 * 1 / 2.2, 2.2 * 2 / 3.2
    norm0, norm1 = 1.2 * (0.25 + 0.75 * 2 / (7 / 3)), 1.2 * (0.25 + 0.75 * 4 / (7 / 3))
    expected0 = idf_invoice * q1 * 2.2 / (1 + norm0)
    expected1 = idf_invoice * q1 * 2.2 / (1 + norm1) + idf_total * q2 * 2 * 2.2 / (2 + norm1)
    assert got == pytest.approx([expected0, expected1, 0.0], rel=1e-12)


WORDS = st.sampled_from(["tax", "invoice", "total", "round", "holiday", "pottery", "lisbon"])


@given(
    st.lists(st.lists(WORDS, max_size=8), min_size=1, max_size=6),
    st.lists(WORDS, max_size=8),
)
def test_relevance_is_okapi_bm25(documents: list[list[str]], query: list[str]) -> None:
    assert relevance(documents, query) == pytest.approx(okapi(documents, query), rel=1e-9, abs=1e-12)


def test_no_documents_no_scores() -> None:
    assert relevance([], ["tax"]) == []


@pytest.mark.parametrize(
    ("word", "stem"),
    [
        ("libraries", "library"),
        ("flies", "fly"),  # five letters: long enough for -ies -> -y
        ("ties", "tie"),  # four: only the plain plural -s comes off
        ("invoices", "invoice"),
        ("cats", "cat"),
        ("gas", "gas"),  # three letters: left alone
        ("glass", "glass"),
        ("status", "status"),
        ("analysis", "analysis"),
        ("Lisbon", "lisbon"),
    ],
)
def test_plurals_and_only_plurals_are_stemmed(word: str, stem: str) -> None:
    assert terms(word) == [stem]


def test_a_memory_line_carries_its_label_and_an_unknown_kind_its_own_name() -> None:
    def line(kind: str) -> str:
        return memory_line(Candidate(1, kind, "Dana moved\nto Lisbon", 0.9, 8, 1.0))

    assert line("insight") == "- (decision) Dana moved to Lisbon"
    assert line("knowledge_gap") == "- (open question) Dana moved to Lisbon"
    assert line("note") == "- (note) Dana moved to Lisbon"


def test_two_letter_words_are_terms_single_letters_are_not() -> None:
    assert terms("AI and ML in Q3 x y") == ["ai", "ml", "q3"]


@pytest.mark.parametrize(
    ("importance", "confidence", "trust", "expected"),
    [
        (10, 1.0, 1.0, 1.0),
        (1, 1.0, 1.0, 0.1),
        (0, 1.0, 1.0, 0.1),  # importance is clamped to 1..10
        (15, 1.0, 1.0, 1.0),
        (5, 0.5, 0.8, 0.2),
        (5, 1.7, 1.0, 0.5),  # confidence and trust are clamped to 0..1
        (5, 1.0, 3.0, 0.5),
        (5, -1.0, 1.0, 0.0),
    ],
)
def test_a_memorys_weight(importance: int, confidence: float, trust: float, expected: float) -> None:
    assert weight(Candidate(1, "fact", "x", confidence, importance, trust)) == pytest.approx(expected)


@pytest.mark.parametrize("count", [len, lambda text: len(text.split())], ids=["characters", "words"])
def test_a_block_exactly_at_its_budget_is_kept_and_one_under_it_is_not(count: Any) -> None:
    memory = Candidate(1, "fact", "Dana moved to Lisbon last spring", 0.9, 8, 1.0)
    cost = count(memory_block([memory_line(memory)]))
    assert [r.id for r in recall([memory], "Where did Dana move?", cost, count)] == [1]
    assert recall([memory], "Where did Dana move?", cost - 1, count) == []
