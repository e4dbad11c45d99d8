"""Gold answers to the MemoryBank probing questions, labelled by hand from each user's history.

The questions ship without answers; ``memorybank_gold.json`` (beside this module) holds our labels,
one record per question in file order, and never the dataset's text: ``questions`` joins the labels
with ``probing_questions_en.jsonl`` read in place at run time. An answer is a list of groups of
alternatives (short verbatim phrases from the history): it is present in a text when every group has
at least one alternative in it, case-insensitively (``answer_present``). Users 1-7 of the file are
the ``tune`` split, users 8-15 the ``report`` split.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, Literal, cast

Split = Literal["tune", "report"]
Speaker = Literal["user", "assistant"]
Groups = tuple[tuple[str, ...], ...]

GOLD_RESOURCE = "memorybank_gold.json"
QUESTIONS_FILE = "probing_questions_en.jsonl"
_SPLITS = ("tune", "report")
_SPEAKERS = ("user", "assistant")


@dataclass(frozen=True)
class Evidence:
    """Where a gold answer is said: the history's day, the turn's index in that day, and who said it."""

    day: str
    turn: int
    speaker: Speaker


@dataclass(frozen=True)
class GoldAnswer:
    """Our label for one probing question (the question's text stays in the dataset).

    ``derived`` names an answer the history implies rather than says (``"date"``: a day worked out
    from the session's date); ``messages_per_group`` counts, per group, the history's messages that
    hold one of its alternatives (how distinctive the phrases are).
    """

    user: str
    index: int
    answers: Groups
    evidence: tuple[Evidence, ...]
    answerable: bool
    split: Split
    note: str | None = None
    derived: str | None = None
    messages_per_group: tuple[int, ...] = ()


@dataclass(frozen=True)
class QAItem:
    """One question of the QA dev set: its text joined with its gold answer."""

    user: str
    index: int
    question: str
    answers: Groups
    evidence_days: tuple[str, ...]
    split: Split
    answerable: bool


def _choice(value: Any, allowed: tuple[str, ...], what: str) -> str:
    if value not in allowed:
        raise ValueError(f"memorybank gold: {what} {value!r} is not one of {allowed}")
    return str(value)


def _gold(record: dict[str, Any]) -> GoldAnswer:
    evidence = tuple(
        Evidence(str(e["day"]), int(e["turn"]), cast(Speaker, _choice(e["speaker"], _SPEAKERS, "speaker")))
        for e in record["evidence"]
    )
    return GoldAnswer(
        user=str(record["user"]),
        index=int(record["index"]),
        answers=tuple(tuple(str(alt) for alt in group) for group in record["answers"]),
        evidence=evidence,
        answerable=bool(record["answerable"]),
        split=cast(Split, _choice(record["split"], _SPLITS, "split")),
        note=record.get("note"),
        derived=record.get("derived"),
        messages_per_group=tuple(int(n) for n in record.get("messages_per_group", ())),
    )


def load_gold() -> list[GoldAnswer]:
    """Every gold record, in the probing questions' file order."""
    text = resources.files(__package__ or "sleepcompact.evaluation.qa").joinpath(GOLD_RESOURCE).read_text()
    return [_gold(record) for record in json.loads(text)]


def probing_questions(data_dir: Path) -> dict[str, list[str]]:
    """Each user's probing questions by stripped name (names in the file may carry spaces).

    ``data_dir`` is the MemoryBank directory or the shared data root that holds it.
    """
    path = data_dir / QUESTIONS_FILE
    if not path.is_file():
        path = data_dir / "conversations" / "memorybank" / QUESTIONS_FILE
    out: dict[str, list[str]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            for name, asked in json.loads(line).items():
                out[name.strip()] = [str(q) for q in asked]
    return out


def questions(data_dir: Path) -> list[QAItem]:
    """The QA dev set: every gold record with its question's text, read from ``data_dir`` now."""
    asked = probing_questions(data_dir)
    gold = load_gold()
    labelled = {(g.user, g.index) for g in gold}
    expected = {(user, i) for user, qs in asked.items() for i in range(len(qs))}
    if labelled != expected:
        missing = sorted(expected - labelled)[:3]
        extra = sorted(labelled - expected)[:3]
        raise ValueError(f"memorybank gold does not match the questions: missing {missing}, extra {extra}")
    return [
        QAItem(
            user=g.user,
            index=g.index,
            question=asked[g.user][g.index],
            answers=g.answers,
            evidence_days=tuple(dict.fromkeys(e.day for e in g.evidence)),
            split=g.split,
            answerable=g.answerable,
        )
        for g in gold
    ]


def answer_present(text: str, groups: Sequence[Sequence[str]]) -> bool:
    """Whether every group has an alternative in ``text`` (case-insensitive); no groups, no answer."""
    folded = text.casefold()
    return bool(groups) and all(any(alt.casefold() in folded for alt in group) for group in groups)
