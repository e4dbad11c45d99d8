"""The MemoryBank QA dev set: one hand-labelled gold answer per probing question, checked against the data.

The labels (``sleepcompact/evaluation/qa/memorybank_gold.json``) are ground truth for the QA
measurements, so every label is checked here against the real histories in ``../shared/data``
(read in place, never copied): the cited turn says the answer, the phrases are not in the question
that asks for them, the counts of where they occur are true, and the splits are by user.
"""

from __future__ import annotations

import json
import re
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sleepcompact.evaluation.qa import GoldAnswer, answer_present, load_gold, questions
from sleepcompact.evaluation.qa.memorybank import GOLD_RESOURCE

MEMORYBANK = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "conversations" / "memorybank"
GOLD_PATH = Path(__file__).resolve().parents[2] / "sleepcompact" / "evaluation" / "qa" / GOLD_RESOURCE


@pytest.fixture(scope="module")
def memorybank() -> Path:
    """The shared MemoryBank directory (read in place from ../shared/data, never copied)."""
    if (
        not (MEMORYBANK / "memory_bank_en.json").is_file()
        or not (MEMORYBANK / "probing_questions_en.jsonl").is_file()
    ):
        pytest.fail(f"the shared MemoryBank data is missing: expected it under {MEMORYBANK}")
    return MEMORYBANK


@pytest.fixture(scope="module")
def histories(memorybank: Path) -> dict[str, dict[str, list[dict[str, Any]]]]:
    """Each user's history (day -> turns) by stripped name, in the file's user order."""
    doc = json.loads((memorybank / "memory_bank_en.json").read_text(encoding="utf-8"))
    return {name.strip(): record["history"] for name, record in doc.items()}


@pytest.fixture(scope="module")
def gold() -> list[GoldAnswer]:
    return load_gold()


def said(history: dict[str, list[dict[str, Any]]], day: str, turn: int, speaker: str) -> str:
    """The text one speaker said in one turn of one day."""
    return str(history[day][turn]["query" if speaker == "user" else "response"])


def messages(history: dict[str, list[dict[str, Any]]]) -> list[str]:
    return [str(t[field]) for turns in history.values() for t in turns for field in ("query", "response")]


def test_there_is_one_gold_record_per_probing_question_in_file_order(memorybank: Path) -> None:
    items = questions(memorybank)
    asked = [
        (name.strip(), i)
        for line in (memorybank / "probing_questions_en.jsonl").read_text(encoding="utf-8").splitlines()
        if line.strip()
        for name, qs in json.loads(line).items()
        for i in range(len(qs))
    ]
    assert [(item.user, item.index) for item in items] == asked
    per_user = {user: sum(1 for u, _ in asked if u == user) for user, _ in asked}
    assert len(per_user) == 15
    # The file has 100 questions: seven for most users, fewer for three of them.
    assert len(items) == 100
    assert {u: n for u, n in per_user.items() if n != 7} == {"Roland": 6, "Susan": 5, "Luna": 5}


def test_the_questions_come_from_the_data_and_the_answers_from_the_gold_file(memorybank: Path) -> None:
    items = questions(memorybank)
    first = items[0]
    assert first.user == "Emily" and first.question.endswith("what was it?")
    assert first.answers == (("The Wandering Earth", "Wandering Earth"),)
    assert first.evidence_days == ("2023-04-30",)
    assert questions(memorybank.parents[1]) == items  # the shared data root works too


def test_a_gold_file_out_of_step_with_the_questions_is_refused(tmp_path: Path, memorybank: Path) -> None:
    lines = (memorybank / "probing_questions_en.jsonl").read_text(encoding="utf-8").splitlines()
    (tmp_path / "probing_questions_en.jsonl").write_text("\n".join(lines[:-1]) + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match="does not match the questions"):
        questions(tmp_path)


def test_every_answerable_group_is_said_in_the_cited_evidence(
    gold: list[GoldAnswer], histories: dict[str, dict[str, list[dict[str, Any]]]]
) -> None:
    for g in gold:
        if not g.answerable or g.derived is not None:
            continue
        cited = " ".join(said(histories[g.user], e.day, e.turn, e.speaker) for e in g.evidence).casefold()
        for group in g.answers:
            assert any(alt.casefold() in cited for alt in group), (g.user, g.index, group)


def test_a_date_worked_out_from_a_session_names_that_session_or_the_day_before(
    gold: list[GoldAnswer], histories: dict[str, dict[str, list[dict[str, Any]]]]
) -> None:
    derived = [g for g in gold if g.derived is not None]
    assert [(g.user, g.index, g.derived) for g in derived] == [("John Zhang", 2, "date")]
    for g in derived:
        said(histories[g.user], g.evidence[0].day, g.evidence[0].turn, g.evidence[0].speaker)  # exists
        session = date.fromisoformat(g.evidence[0].day)
        answer = date.fromisoformat(g.answers[0][0])
        assert answer in (session, session - timedelta(days=1))
        assert g.note


def test_unanswerable_questions_have_no_answer_and_say_why(
    gold: list[GoldAnswer], histories: dict[str, dict[str, list[dict[str, Any]]]]
) -> None:
    unanswerable = [g for g in gold if not g.answerable]
    assert [(g.user, g.index) for g in unanswerable] == [("John Zhang", 4)]
    for g in unanswerable:
        assert g.answers == () and g.evidence == () and g.note
    assert histories["John Zhang"]["2023-05-05"] == []  # the question asks about a day with no talk


def test_every_cited_turn_exists_and_answerable_questions_cite_one(
    gold: list[GoldAnswer], histories: dict[str, dict[str, list[dict[str, Any]]]]
) -> None:
    for g in gold:
        assert bool(g.evidence) == g.answerable == bool(g.answers)
        for e in g.evidence:
            assert said(histories[g.user], e.day, e.turn, e.speaker).strip()


def test_no_alternative_is_in_the_question_that_asks_for_it(memorybank: Path) -> None:
    """Otherwise the question itself, as the newest message, would count as its answer."""
    for item in questions(memorybank):
        for group in item.answers:
            for alt in group:
                assert alt.casefold() not in item.question.casefold(), (item.user, item.index, alt)


def test_alternatives_are_short_phrases(gold: list[GoldAnswer]) -> None:
    for g in gold:
        for group in g.answers:
            assert group
            for alt in group:
                assert alt == alt.strip() and 1 <= len(alt.split()) <= 5, alt


def test_the_recorded_counts_of_messages_holding_each_group_are_true(
    gold: list[GoldAnswer], histories: dict[str, dict[str, list[dict[str, Any]]]]
) -> None:
    for g in gold:
        if not g.answerable or g.derived is not None:
            continue
        texts = [m.casefold() for m in messages(histories[g.user])]
        counted = tuple(sum(any(a.casefold() in m for a in group) for m in texts) for group in g.answers)
        assert g.messages_per_group == counted, (g.user, g.index)
        assert all(n >= 1 for n in counted)


def test_the_gold_file_copies_no_question_text(memorybank: Path) -> None:
    text = GOLD_PATH.read_text(encoding="utf-8").casefold()
    for item in questions(memorybank):
        words = re.sub(r"[\"'?.]", "", item.question).split()
        # no run of eight words of a question is in the file (the data stays in ../shared/data)
        for i in range(max(0, len(words) - 7)):
            assert " ".join(words[i : i + 8]).casefold() not in text, (item.user, item.index)


def test_users_one_to_seven_tune_and_eight_to_fifteen_report(
    gold: list[GoldAnswer], histories: dict[str, dict[str, list[dict[str, Any]]]]
) -> None:
    users = list(histories)
    assert len(users) == 15
    for g in gold:
        assert g.split == ("tune" if users.index(g.user) < 7 else "report"), g.user
    assert {g.user for g in gold if g.split == "tune"} == set(users[:7])


def test_an_answer_is_present_when_every_group_has_an_alternative() -> None:
    groups = [["Jay Chou"], ["Listen to Mom", "Listen to Mother"]]
    assert answer_present("She saw JAY CHOU live; her favourite is listen to mom.", groups)
    assert not answer_present("She saw Jay Chou live.", groups)
    assert not answer_present("anything at all", [])
    assert answer_present("a squirrel in the park", [["cherry blossom", "squirrel"]])


_WORD = st.text(alphabet="abcdefgh", min_size=2, max_size=8)
_FILLER = st.text(alphabet="xyz .,", max_size=20)


@given(st.lists(st.lists(_WORD, min_size=1, max_size=4), min_size=1, max_size=4), st.data())
def test_one_alternative_per_group_in_any_case_is_enough_and_a_missing_group_is_not(
    groups: list[list[str]], data: st.DataObject
) -> None:
    picks = [data.draw(st.sampled_from(group)) for group in groups]
    cased = [p.upper() if data.draw(st.booleans()) else p for p in picks]
    fillers = [data.draw(_FILLER) for _ in range(len(cased) + 1)]
    text = fillers[0] + "".join(c + f for c, f in zip(cased, fillers[1:], strict=True))
    assert answer_present(text, groups)
    # Drop one group's pick: absent unless another pick happens to contain one of its alternatives.
    dropped = data.draw(st.integers(0, len(groups) - 1))
    rest = " ".join(p for i, p in enumerate(picks) if i != dropped)
    expected = any(alt in rest for alt in groups[dropped])
    assert answer_present(rest, groups) == expected
