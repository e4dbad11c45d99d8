"""QA files: conversations with questions about them and their gold answers, what ``eval --qa`` reads.

A QA file is JSONL, one conversation per line::

    {"name": "memorybank/Emily", "messages": [{"role": ..., "content": ..., "sent_at": "2023-04-27"}, ...],
     "questions": [{"question": "...", "answers": [["alt", "alt"], ["alt"]], "split": "tune"}, ...]}

``sent_at`` is optional (a message's date). An answer is groups of alternatives, present in a text when
every group has one (``answer_present``). Two builders write such files from data read in place, never
copied into the repository: the MemoryBank histories with our gold labels (``memorybank.py``), and the
synthetic companion chat, whose planted facts come with their questions and answers.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sleepcompact.domain.formats import parse_import
from sleepcompact.evaluation.qa.memorybank import Groups, questions

MEMORYBANK_FILE = "memory_bank_en.json"


@dataclass(frozen=True)
class QAQuestion:
    """One question asked after the conversation, its gold answer groups and its split."""

    question: str
    answers: Groups
    split: str


@dataclass(frozen=True)
class QAConversation:
    """A conversation to replay and the questions to ask at its end."""

    name: str
    messages: tuple[dict[str, Any], ...]
    questions: tuple[QAQuestion, ...]

    def to_json(self) -> str:
        """One line of a QA file."""
        asked = [
            {"question": q.question, "answers": [list(g) for g in q.answers], "split": q.split}
            for q in self.questions
        ]
        return json.dumps(
            {"name": self.name, "messages": list(self.messages), "questions": asked}, ensure_ascii=False
        )


def read_qa(path: Path) -> list[QAConversation]:
    """The conversations of a QA file (raises ``ValueError`` naming the line of a malformed one)."""
    out = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            asked = tuple(
                QAQuestion(
                    str(q["question"]),
                    tuple(tuple(str(a) for a in g) for g in q["answers"]),
                    str(q.get("split", "report")),
                )
                for q in row["questions"]
            )
            out.append(QAConversation(str(row["name"]), tuple(dict(m) for m in row["messages"]), asked))
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"{path}: line {number} is not a QA conversation: {exc}") from exc
    return out


def write_qa(path: Path, conversations: Iterable[QAConversation]) -> int:
    """Write a QA file; returns how many questions it holds."""
    written = list(conversations)
    path.write_text("".join(c.to_json() + "\n" for c in written), encoding="utf-8")
    return sum(len(c.questions) for c in written)


def memorybank_qa(data_dir: Path) -> list[QAConversation]:
    """The MemoryBank users' histories (each message dated with its day) with their probing questions
    and our gold answers; unanswerable questions are left out. ``data_dir``: the shared data root or
    the MemoryBank directory."""
    path = data_dir / MEMORYBANK_FILE
    if not path.is_file():
        path = data_dir / "conversations" / "memorybank" / MEMORYBANK_FILE
    parsed = parse_import(path.read_bytes(), source=path.name, all_records=True)
    by_user: dict[str, list[QAQuestion]] = {}
    for item in questions(path.parent):
        if item.answerable:
            by_user.setdefault(item.user, []).append(QAQuestion(item.question, item.answers, item.split))
    out = []
    for conv in parsed:
        user = str(conv.metadata["user"])
        dated = [
            {**m, "sent_at": t.isoformat()} if t is not None else dict(m)
            for m, t in zip(conv.messages, conv.sent_at or (None,) * len(conv.messages), strict=True)
        ]
        out.append(QAConversation(f"memorybank/{user}", tuple(dated), tuple(by_user.get(user, ()))))
    return out


def synthetic_qa(seeds: Sequence[int], days: int = 90) -> list[QAConversation]:
    """Synthetic companion chats whose early facts are asked about at the end (``demo.synthetic.
    companion``); even seeds are the ``tune`` split, odd ones ``report``."""
    # Here, not at the top: the demo package imports the facade, which imports this module.
    from sleepcompact.demo.synthetic.companion import companion_chat

    out = []
    for seed in seeds:
        chat = companion_chat(seed=seed, days=days)
        split = "tune" if seed % 2 == 0 else "report"
        asked = tuple(QAQuestion(q, tuple(tuple(g) for g in answers), split) for q, answers in chat.qa)
        out.append(QAConversation(f"synthetic/{chat.name}", tuple(chat.messages), asked))
    return out
