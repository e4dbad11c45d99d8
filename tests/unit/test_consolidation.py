"""Consolidation of journal entries into memories: floor, kinds, duplicates, contradictions (DESIGN 5)."""

from __future__ import annotations

import random

import pytest

from sleepcompact.demo.synthetic import coding_agent, personal_assistant
from sleepcompact.domain.consolidation import ConsolidationPlan, EntryIn, MemoryIn, NewMemory, consolidate
from sleepcompact.domain.extraction import extract_facts
from sleepcompact.domain.journal import SOURCE_TRUST, heuristic_importance
from tests.unit.test_summary import rows_of

SEEDS = range(6)


def entry(
    id: int, content: str, *tags: str, importance: int = 7, source: str = "direct", trust: float = 0.9
) -> EntryIn:
    return EntryIn(id, content, source, trust, importance, tags or ("fact",))


def memory(
    id: int, content: str, kind: str = "fact", confidence: float = 0.9, importance: int = 7
) -> MemoryIn:
    return MemoryIn(id, kind, content, confidence, importance, (1000 + id,))


def fact_entries(facts: list[str]) -> list[EntryIn]:
    """Synthetic facts as direct entries: trust 0.9, importance 7, tagged preference or fact."""
    return [entry(i + 1, f, "preference" if "prefer" in f else "fact") for i, f in enumerate(facts)]


def contradictions(plan: ConsolidationPlan) -> list[str]:
    return [n.content for n in plan.new if n.kind == "contradiction"]


def assert_supersedes(old: str, new: str) -> ConsolidationPlan:
    """``new`` (an entry) contradicts ``old`` (memory 7): invalidated, superseded and recorded."""
    plan = consolidate([entry(1, new)], [memory(7, old)])
    assert plan.invalidate == (7,), (old, new)
    replacement, note = plan.new
    assert (replacement.content, replacement.supersedes, replacement.source_journal_ids) == (new, 7, (1,))
    assert note.kind == "contradiction" and note.content == f"'{old}' was superseded by '{new}'"
    assert plan.new_memory_for(1) == replacement and plan.consolidated[1] == -1
    return plan


def assert_compatible(first: str, second: str) -> None:
    """Both orders: the later statement neither invalidates nor merges into the earlier one."""
    for old, new in ((first, second), (second, first)):
        plan = consolidate([entry(1, new)], [memory(7, old)])
        assert (plan.invalidate, contradictions(plan), plan.merges) == ((), [], ()), (old, new)
        plan = consolidate([entry(1, old), entry(2, new)], [])
        assert [n.source_journal_ids for n in plan.new] == [(1,), (2,)], (old, new)


# -- floor, kinds -----------------------------------------------------------------------------------------


def test_entries_under_the_floor_and_summaries_are_not_promoted() -> None:
    summary = entry(3, "Context summary: the user planned a trip to Oslo.", "summary", importance=9)
    entries = [
        entry(2, "I live in Berlin", importance=4),
        summary,
        entry(1, "I work as a nurse", importance=5),
    ]
    plan = consolidate(entries, [])
    assert plan.below_floor == (2, 3)
    assert [n.source_journal_ids for n in plan.new] == [(1,)]
    assert plan.consolidated == {1: -1, 2: None, 3: None}
    assert consolidate(entries, [], importance_floor=3).below_floor == (3,)  # summaries: never


def test_kinds_follow_the_tags_and_confidence_starts_at_trust() -> None:
    plan = consolidate(
        [
            entry(1, "I always prefer a window seat", "preference"),
            entry(2, "The user asked, still unanswered: What's the gate for my flight?", "question"),
            entry(
                3,
                "The assistant said: I'll use Decimal for money.",
                "decision",
                source="inference",
                trust=0.6,
            ),
            entry(
                4, "Tool pytest reported an error: AssertionError", "error", source="observation", trust=0.8
            ),
            entry(5, "my sister Noor's birthday is October 5", "fact"),
        ],
        [],
    )
    assert [n.kind for n in plan.new] == ["preference", "knowledge_gap", "insight", "fact", "fact"]
    assert [n.confidence for n in plan.new] == [0.9, 0.9, 0.6, 0.8, 0.9]
    assert all(n.supersedes is None for n in plan.new)


def test_a_repeated_question_is_one_gap_and_never_merges_into_a_fact() -> None:
    gap = "The user asked, still unanswered: What's the gate for my flight LH 123?"
    plan = consolidate(
        [entry(1, gap, "question"), entry(2, "what's the gate for my flight LH 123?", "question")],
        [memory(5, "The gate for my flight LH 123 is unknown")],
    )
    assert [(n.kind, n.source_journal_ids) for n in plan.new] == [("knowledge_gap", (1, 2))]
    assert plan.merges == ()


# -- duplicates -------------------------------------------------------------------------------------------


def test_an_exact_duplicate_reinforces_the_existing_memory() -> None:
    old = memory(4, "The user said: I'm allergic to shellfish.", confidence=0.8, importance=6)
    plan = consolidate([entry(10, "i'm allergic to shellfish", importance=8)], [old])
    assert plan.new == () and plan.invalidate == ()
    (merge,) = plan.merges
    assert (merge.memory_id, merge.entry_ids, merge.importance) == (4, (10,), 8)
    assert merge.confidence == pytest.approx(1 - 0.2 * 0.55) and 0.8 < merge.confidence <= 0.99
    assert plan.consolidated == {10: 4} and plan.merged_into(10) == 4


def test_confidence_rises_monotonically_and_is_capped() -> None:
    entries = [entry(i, "I'm allergic to shellfish") for i in range(1, 30)]
    (merge,) = consolidate(entries, [memory(4, "I'm allergic to shellfish", confidence=0.5)]).merges
    assert merge.entry_ids == tuple(range(1, 30)) and merge.confidence == 0.99
    low = consolidate(entries[:1], [memory(4, "I'm allergic to shellfish", confidence=0.5)]).merges[0]
    weak = consolidate(
        [entry(1, "I'm allergic to shellfish", source="environmental", trust=0.3)],
        [memory(4, "I'm allergic to shellfish", confidence=0.5)],
    ).merges[0]
    assert 0.5 < weak.confidence < low.confidence < 0.99


def test_a_merged_confidence_is_stored_to_four_decimals() -> None:
    # 0.9 -> 0.945 -> 0.96975: stored as 0.9698, not the unrounded figure.
    twice = [entry(1, "I'm allergic to shellfish"), entry(2, "I'm allergic to shellfish")]
    (merge,) = consolidate(twice, [memory(4, "I'm allergic to shellfish", confidence=0.9)]).merges
    assert merge.confidence == 0.9698


def test_the_plan_says_what_each_entry_became() -> None:
    made = NewMemory("fact", "Dana started a pottery class", 0.9, 7, (2,))
    also = NewMemory("fact", "Dana lives in Lyon", 0.9, 7, (3,))
    plan = ConsolidationPlan(
        new=(made, also),
        merges=(),
        invalidate=(),
        consolidated={1: 1, 2: -1, 3: -2, 4: None},
        below_floor=(4,),
    )
    assert [plan.merged_into(e) for e in (1, 2, 3, 4, 99)] == [1, None, None, None, None]
    assert [plan.new_memory_for(e) for e in (1, 2, 3, 4, 99)] == [None, made, also, None, None]


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("I'm allergic to shellfish", "I have a shellfish allergy"),
        (
            "The user said: I'm allergic to tree nuts.",
            "The user said: Just so you know, I have a tree nut allergy.",
        ),
        ("I prefer a window seat", "I always prefer a window seat."),
        ("the deadline is Friday", "the deadline is Friday 18:00 UTC"),
    ],
)
def test_a_near_duplicate_merges(old: str, new: str) -> None:
    plan = consolidate([entry(1, new)], [memory(3, old, confidence=0.7)])
    assert plan.new == () and [m.memory_id for m in plan.merges] == [3]
    assert plan.merges[0].confidence > 0.7


def test_duplicates_within_one_batch_become_one_memory() -> None:
    plan = consolidate(
        [
            entry(1, "I'm allergic to peanuts"),
            entry(2, "I work as a nurse"),
            entry(3, "I have a peanut allergy"),
        ],
        [],
    )
    assert [n.source_journal_ids for n in plan.new] == [(1, 3), (2,)]
    assert plan.new[0].content == "I'm allergic to peanuts" and plan.new[0].confidence > 0.9
    assert plan.consolidated == {1: -1, 2: -2, 3: -1}


def test_an_entry_already_consolidated_merges_without_a_second_rise() -> None:
    old = MemoryIn(4, "fact", "I work as a nurse", 0.9, 7, (11,))
    plan = consolidate([entry(11, "I work as a nurse")], [old])
    assert plan.merges[0].entry_ids == (11,) and plan.merges[0].confidence == 0.9


# -- contradictions ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", SEEDS)
def test_every_personal_assistant_contradiction_is_detected(seed: int) -> None:
    for old, new in personal_assistant(seed=seed).contradicted:
        assert_supersedes(old, new)


@pytest.mark.parametrize("seed", SEEDS)
def test_every_coding_agent_contradiction_is_detected(seed: int) -> None:
    for old, new in coding_agent(seed=seed).contradicted:
        assert_supersedes(old, new)


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("I live in Berlin", "I moved from Berlin to Hamburg"),
        ("our CI runs Python 3.11", "actually CI moved to Python 3.12"),
        ("deadline is Friday 18:00 UTC", "the deadline moved to Monday 09:00 UTC"),
        ("Alice prefers metric units", "Alice prefers imperial units"),
        ("The user said: I live in Berlin.", "The user said: I now live in Hamburg."),
        ("I live in Berlin", "I live in Hamburg"),
        ("my flight LH 123 leaves at 14:40", "my flight LH 123 leaves at 16:05"),
        ("the deadline is Friday", "the deadline was postponed to Tuesday"),
        ("I live in Leipzig and I work as a nurse", "I moved from Leipzig to Dresden last month"),
    ],
)
def test_a_changed_value_supersedes_the_old_memory(old: str, new: str) -> None:
    assert_supersedes(old, new)


@pytest.mark.parametrize("seed", SEEDS)
def test_all_personal_assistant_facts_give_only_the_known_contradiction(seed: int) -> None:
    conv = personal_assistant(seed=seed)
    plan = consolidate(fact_entries(conv.facts), [])
    assert contradictions(plan) == [f"'{old}' was superseded by '{new}'" for old, new in conv.contradicted]
    home, move = conv.facts.index(conv.contradicted[0][0]) + 1, conv.facts.index(conv.contradicted[0][1]) + 1
    note = plan.new_memory_for(home)
    assert note is not None and note.kind == "contradiction" and note.source_journal_ids == (home, move)
    assert all(n.supersedes is None for n in plan.new) and plan.invalidate == ()  # nothing existed before
    kept = [n for n in plan.new if n.kind != "contradiction"]
    assert len(kept) == len(conv.facts) - 2  # the near-duplicate allergy merged, the old home superseded
    assert sum(len(n.source_journal_ids) for n in kept) == len(conv.facts) - 1


@pytest.mark.parametrize("seed", SEEDS)
def test_the_extracted_journal_of_a_conversation_gives_its_one_contradiction(seed: int) -> None:
    """End to end with the real journal drafts: one move detected, the allergy restatement merged."""
    conv = personal_assistant(seed=seed)
    drafts = extract_facts(rows_of(conv.messages))
    entries = [
        EntryIn(
            i + 1,
            d.content,
            d.source_type,
            SOURCE_TRUST[d.source_type],
            heuristic_importance(d.source_type, d.tags),
            d.tags,
        )
        for i, d in enumerate(drafts)
    ]
    plan = consolidate(entries, [])
    (note,) = contradictions(plan)
    old, new = conv.contradicted[0]
    # The statements are third person now: "I moved from X to Y" is remembered as "The user moved ...".
    assert old.split()[-1] in note.split(" was superseded by ")[0]
    assert f"The user {new.removeprefix('I ')}" in note
    assert any(len(n.source_journal_ids) == 2 and "allerg" in n.content for n in plan.new)
    assert sum(n.kind == "knowledge_gap" for n in plan.new) >= 3


COMPATIBLE = [
    ("I'm allergic to peanuts", "I'm allergic to shellfish"),
    ("I'm allergic to peanuts", "I'm also allergic to shellfish"),
    (
        "my flight LH 123 leaves Munich at 14:40 on May 19",
        "my flight LX 456 leaves Zurich at 09:10 on May 26",
    ),
    ("my flight to Oslo leaves at 14:40", "my flight to Lisbon leaves at 09:00"),
    ("I prefer metric units", "I prefer a window seat"),
    ("I like jazz", "I like hiking"),
    ("I like Berlin", "I like Hamburg"),
    ("my sister Noor's birthday is October 5", "my sister Clara's birthday is July 7"),
    ("I live in Berlin", "I work in Hamburg"),
    ("our CI runs Python 3.11", "our docs are built with Sphinx 7"),
    ("our CI runs Python 3.11", "now the docs CI build uses Sphinx 7"),
    ("the deadline is Friday 18:00 UTC", "the standup is Monday 09:00 UTC"),
    ("Alice prefers metric units", "Bob prefers imperial units"),
    ("my booking reference at Hotel Aurora is ABC123", "my booking reference at Casa Lumen is XYZ789"),
    ("I visited Paris in 2019", "I visited Rome in 2021"),
    ("I speak German", "I speak Spanish"),
    ("the API uses port 8080", "the database uses port 5432"),
    ("I have two cats", "I have a dog"),
    ("money must be handled with Decimal, never float", "keep the public API of InvoiceCalculator unchanged"),
]


@pytest.mark.parametrize(("first", "second"), COMPATIBLE)
def test_compatible_facts_are_not_contradictions(first: str, second: str) -> None:
    assert_compatible(first, second)


@pytest.mark.parametrize("seed", SEEDS)
def test_no_false_contradictions_among_the_other_facts(seed: int) -> None:
    conv = personal_assistant(seed=seed)
    contradicted = {f for pair in conv.contradicted for f in pair}
    facts = [f for f in conv.facts if f not in contradicted]
    for i, old in enumerate(facts):
        for new in facts[i + 1 :]:
            plan = consolidate([entry(1, new)], [memory(7, old)])
            assert (plan.invalidate, contradictions(plan)) == ((), []), (old, new)


def test_a_chain_of_changes_supersedes_the_memory_once_and_records_each_step() -> None:
    plan = consolidate(
        [entry(2, "I moved from Berlin to Hamburg"), entry(5, "I moved from Hamburg to Cologne")],
        [memory(9, "I live in Berlin")],
    )
    assert plan.invalidate == (9,)
    assert [(n.kind, n.source_journal_ids, n.supersedes) for n in plan.new] == [
        ("contradiction", (2,), None),  # Berlin -> Hamburg
        ("fact", (5,), 9),  # inherits what the dropped Hamburg memory superseded
        ("contradiction", (2, 5), None),  # Hamburg -> Cologne
    ]
    # The superseded in-batch memory is never written: its entry maps to the record of its replacement.
    assert plan.consolidated == {2: -3, 5: -2}


def test_merged_entries_stay_with_a_memory_invalidated_later_in_the_batch() -> None:
    plan = consolidate(
        [entry(1, "I live in Berlin"), entry(2, "I now live in Hamburg")], [memory(3, "I live in Berlin")]
    )
    assert [(m.memory_id, m.entry_ids) for m in plan.merges] == [(3, (1,))]
    assert plan.invalidate == (3,) and plan.consolidated[1] == 3 and plan.new[0].supersedes == 3


def test_errors_and_identifier_lists_never_supersede() -> None:
    plan = consolidate(
        [entry(1, "Tool pytest reported an error: the CI now runs Python 3.12", "error")],
        [memory(2, "our CI runs Python 3.11")],
    )
    assert plan.invalidate == () and contradictions(plan) == []


@pytest.mark.parametrize(("source", "trust"), [("environmental", 0.3), ("environmental", 0.49)])
def test_an_untrusted_source_adds_a_claim_but_never_retires_a_trusted_memory(
    source: str, trust: float
) -> None:
    # A planted web page says the user moved: the trusted memory stays valid, and the claim is kept
    # as its own memory (with its low trust, so recall leaves it out).
    plan = consolidate(
        [entry(1, "I moved from Berlin to Hamburg", source=source, trust=trust)],
        [memory(7, "I live in Berlin")],
    )
    assert plan.invalidate == () and contradictions(plan) == []
    assert [(n.content, n.supersedes) for n in plan.new] == [("I moved from Berlin to Hamburg", None)]
    # The same claim from the user (or an inference, 0.6) does supersede.
    assert consolidate(
        [entry(1, "I moved from Berlin to Hamburg", trust=0.6)], [memory(7, "I live in Berlin")]
    ).invalidate == (7,)


# -- determinism and the id scheme ------------------------------------------------------------------------


def test_the_plan_is_deterministic_and_independent_of_input_order() -> None:
    conv = personal_assistant(seed=3)
    entries = fact_entries(conv.facts)
    memories = [
        memory(50, "I'm allergic to tree nuts"),
        memory(51, conv.facts[1]),
        memory(52, "I speak Spanish"),
    ]
    plan = consolidate(entries, memories)
    shuffled_entries, shuffled_memories = entries[:], memories[:]
    random.Random(1).shuffle(shuffled_entries)
    random.Random(2).shuffle(shuffled_memories)
    assert consolidate(shuffled_entries, shuffled_memories) == plan == consolidate(entries, memories)
    assert list(plan.consolidated) == sorted(plan.consolidated)
    # The old home is restated (merge) before the move supersedes it.
    assert plan.invalidate == (51,) and [m.memory_id for m in plan.merges] == [50, 51]


def test_every_entry_lands_somewhere_the_service_will_mark() -> None:
    conv = coding_agent(seed=1)
    entries = [*fact_entries(conv.facts), entry(90, "chit-chat", importance=2)]
    plan = consolidate(entries, [memory(60, conv.facts[0])])
    placed = {e for n in plan.new for e in n.source_journal_ids}
    placed |= {e for m in plan.merges for e in m.entry_ids} | set(plan.below_floor)
    assert placed == {e.id for e in entries} == set(plan.consolidated)
    for e, target in plan.consolidated.items():
        if target is not None and target < 0:
            assert e in plan.new[-target - 1].source_journal_ids
        elif target is not None:
            assert any(m.memory_id == target and e in m.entry_ids for m in plan.merges)


def test_memory_ids_must_be_positive() -> None:
    with pytest.raises(ValueError, match="positive"):
        consolidate([], [memory(0, "I live in Berlin")])


# -- the user's word: corrections and deletions win over automatic extraction ---------------------------


def auto(id: int, content: str, *tags: str, origin: str = "pre_compaction") -> EntryIn:
    return EntryIn(id, content, "direct", 0.9, 8, tags or ("fact",), origin)


def test_a_correction_is_never_superseded_by_an_automatic_entry() -> None:
    corrected = MemoryIn(7, "fact", "[2024-03-02] Dana lives in Lyon.", 0.9, 8, (70,), pinned=True)
    plan = consolidate([auto(1, "[2024-03-05] Dana lives in Paris.")], [corrected])
    assert plan.invalidate == () and plan.new == () and contradictions(plan) == []
    assert plan.overruled == (1,) and plan.consolidated == {1: None} and plan.below_floor == ()
    # The same claim from an agent note or an earlier extraction is overruled alike; only the user's own
    # (manual) word can change a correction.
    assert consolidate([auto(1, "Dana lives in Paris", origin="agent")], [corrected]).overruled == (1,)
    by_user = consolidate([auto(1, "Dana lives in Paris", origin="manual")], [corrected])
    assert by_user.invalidate == (7,) and by_user.overruled == ()


def test_a_correction_is_still_confirmed_by_what_agrees_with_it() -> None:
    corrected = MemoryIn(7, "fact", "Dana lives in Lyon", 0.9, 8, (70,), pinned=True)
    plan = consolidate([auto(1, "[2024-03-05] Dana lives in Lyon.")], [corrected])
    assert [m.memory_id for m in plan.merges] == [7] and plan.overruled == ()


def test_what_the_user_deleted_or_corrected_away_is_not_learned_again() -> None:
    retracted = ["[2024-03-02] Dana is allergic to cats."]
    plan = consolidate(
        [auto(1, "[2024-04-01] Dana is allergic to cats."), auto(2, "[2024-04-01] Dana adopted a dog.")],
        [],
        retracted=retracted,
    )
    assert plan.overruled == (1,) and [n.source_journal_ids for n in plan.new] == [(2,)]
    # The user saying it again (a manual entry) is the user's new word.
    again = consolidate([auto(1, "Dana is allergic to cats.", origin="manual")], [], retracted=retracted)
    assert again.overruled == () and len(again.new) == 1


def test_dated_statements_compare_by_what_they_claim_not_by_their_date() -> None:
    # The same claim on two days merges; a change of value supersedes, whatever the dates say.
    same = consolidate(
        [entry(1, "[2024-03-05] Dana lives in Berlin.")], [memory(3, "[2024-03-01] Dana lives in Berlin.")]
    )
    assert [m.memory_id for m in same.merges] == [3]
    assert_supersedes("[2024-03-01] Dana lives in Berlin.", "[2024-03-09] Dana moved from Berlin to Hamburg.")
    assert_supersedes("[2024-03-01] The user lives in Berlin.", "[2024-03-09] The user now lives in Hamburg.")
