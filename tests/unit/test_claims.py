"""What a remembered statement claims (``domain.claims``): the subject it is about, the values it asserts,
and when a later memory restates (``duplicate_score``) or supersedes (``contradicts``) an earlier one.

test_consolidation.py covers these through whole consolidation plans; here the analysis itself is pinned
on the edges a user of the memory system would notice: names and codes told apart from values, months
told apart from the verb "may", plurals and negations, and the clause that carries a change."""

from __future__ import annotations

import pytest

from sleepcompact.domain.claims import _stem, analyze, contradicts, duplicate_score


def tokens(text: str, clause: int = 0) -> set[str]:
    """The value tokens a clause asserts, whatever slot (category) each fills."""
    return {v for _c, v in analyze(text).clauses[clause].values}


def category_of(text: str, token: str) -> str:
    (found,) = [c for c, v in analyze(text).clauses[0].values if v == token]
    return found


def dup(old: str, new: str) -> float:
    return duplicate_score(analyze(old), analyze(new))


def supersedes(old: str, new: str) -> bool:
    return contradicts(analyze(old), analyze(new))


# -- normalization --------------------------------------------------------------------------------------


def test_a_typographic_apostrophe_reads_as_a_plain_one() -> None:
    """Phones type "’": "Emily’s flight" is the same memory as "Emily's flight"."""
    curly, plain = analyze("Emily’s flight leaves at 14:40"), analyze("Emily's flight leaves at 14:40")
    assert curly.norm == plain.norm == "emily's flight leaves at 14:40"
    assert curly.clauses[0].keys == {"emily"}


def test_a_flight_code_is_one_key_with_or_without_its_space() -> None:
    stmt = analyze("[2024-03-02] My sister Emily's flight LH 123 leaves at 14:40")
    assert stmt.norm == "my sister emily's flight lh123 leaves at 14:40"
    # "Emily's" owns the flight though it does not open the sentence: it is who the claim is about.
    assert stmt.clauses[0].keys == {"emily", "lh123"}
    assert dup("Emily's flight LH 123 leaves at 14:40", "Emily's flight LH123 leaves at 14:40") == 1.0


def test_values_and_the_value_changed_from_are_words_of_the_statement() -> None:
    assert analyze("Dana lives in Paris").words == {"dana", "residence", "paris"}
    moved = analyze("Actually, Emily moved from Paris to Berlin")
    assert moved.marker and moved.clauses[0].previous == {"paris"}
    assert {"paris", "berlin"} <= moved.words


def test_a_single_clause_statement_has_one_clause() -> None:
    assert len(analyze("Dana lives in Paris").clauses) == 1
    assert len(analyze("Dana lives in Lyon and Lee lives in Berlin").clauses) == 3  # whole, then each


def test_each_clause_of_a_changed_statement_knows_what_it_changed_from() -> None:
    """The change marker belongs to the statement: "from Paris" in its first clause is the old value."""
    stmt = analyze("Actually, Emily moved from Paris to Berlin and Dana lives in Lyon")
    assert [c.previous for c in stmt.clauses] == [{"paris"}, {"paris"}, set()]
    assert {v for _c, v in stmt.clauses[1].values} == {"berlin"}


def test_without_a_change_marker_from_and_to_are_both_values() -> None:
    stmt = analyze("Dana commutes from Lyon to Paris")
    assert stmt.clauses[0].previous == set()
    assert tokens("Dana commutes from Lyon to Paris") == {"lyon", "paris"}


# -- categories ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "keys"),
    [
        ("The user's booking code is QX7PLM", {"qx7plm"}),
        ("The user's booking code is QXPLM", {"qxplm"}),  # five capitals: a code, not an acronym
        ("The booking reference is KXPLMQ", {"kxplmq"}),
        ("Dana's locker is B12", {"dana", "b12"}),
    ],
)
def test_codes_are_keys_not_values(text: str, keys: set[str]) -> None:
    clause = analyze(text).clauses[0]
    assert clause.keys == keys and clause.values == set()


def test_a_long_code_is_kept_whole_in_the_subject() -> None:
    """Stemming cuts words to six letters; a code with digits must not lose its tail."""
    subject = analyze("The booking reference is QX7PLM42").clauses[0].subject
    assert "qx7plm42" in subject and "qx7plm" not in subject


def test_a_short_acronym_is_a_word_of_the_subject() -> None:
    clause = analyze("Dana works at NASA").clauses[0]
    assert "nasa" in clause.subject and clause.values == set()


@pytest.mark.parametrize(
    ("text", "month"),
    [
        ("Dana's exam is in june", "june"),
        ("Dana's exam is in June", "june"),
        ("Dana's exam is in May", "may"),
    ],
)
def test_months_are_values_in_any_case(text: str, month: str) -> None:
    assert tokens(text) == {month}
    assert category_of(text, month) == category_of("Dana's exam is in June", "june")


def test_the_verb_may_is_not_a_month() -> None:
    clause = analyze("Dana may visit Lyon").clauses[0]
    assert tokens("Dana may visit Lyon") == {"lyon"} and "may" in clause.subject


def test_a_negation_is_part_of_the_subject_however_it_is_spelled() -> None:
    short, long_ = analyze("Dana doesn't eat meat"), analyze("Dana does not eat meat")
    assert "not" in short.clauses[0].subject
    assert short.words == long_.words and dup("Dana doesn't eat meat", "Dana does not eat meat") == 1.0


# -- stems ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("word", "stem"),
    [
        ("berries", "berry"),
        ("flies", "fly"),
        ("ties", "tie"),  # too short for "-ies" -> "-y"
        ("peanuts", "peanut"),
        ("gas", "gas"),  # too short to lose its "s"
        ("class", "class"),
        ("status", "status"),
        ("tennis", "tennis"),
        ("allergic", "allerg"),
        ("allergy", "allerg"),
    ],
)
def test_stems_drop_plurals_and_keep_six_letters(word: str, stem: str) -> None:
    assert _stem(word) == stem


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("Dana is allergic to berries", "Dana is allergic to a berry"),
        ("Dana is allergic to flies", "Dana is allergic to a fly"),
        ("Dana is allergic to peanuts", "Dana has a peanut allergy"),
    ],
)
def test_singular_and_plural_restate_each_other(old: str, new: str) -> None:
    assert dup(old, new) == 1.0


# -- contradictions -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("Emily lives in Paris", "Emily moved to Berlin"),
        ("Dana's exam is in May", "Actually, Dana's exam is in June"),
        # Subjects overlap 3 of 4 stems ("return" is new): just enough without a change marker.
        ("Emily's flight leaves at 14:40", "Emily's return flight leaves at 16:10"),
        # The whole new statement is about Dana; its second clause is about Lee.
        ("Lee lives in Paris", "Dana lives in Lyon and Lee lives in Berlin"),
        # The whole still names Paris; the clause that changes it is the last one.
        ("Lee lives in Paris", "Lee loved Paris, but Lee lives in Berlin now"),
    ],
)
def test_a_changed_value_supersedes_the_old_memory(old: str, new: str) -> None:
    assert supersedes(old, new)


def test_another_flight_does_not_supersede_the_first() -> None:
    """Different codes are different things, even when the new one says it "now" leaves later."""
    assert not supersedes("The flight LH 123 leaves at 14:40", "The flight LH 456 now leaves at 16:10")
