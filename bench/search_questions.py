"""Archive search asked real questions: the MemoryBank probing questions against their users' histories.

Run with ``.venv/bin/python -m bench.search_questions [--database-url URL]``. Each user of
``memory_bank_en.json`` becomes one conversation (``Memory.import_(path, all_records=True)``); each
probing question is passed as-is to ``search_history(cid, question, 10)``. For every split (users 1-7
``tune``, 8-15 ``report``) the table gives the share of questions with at least one hit and, over the
answerable ones, hit@k: the gold answer (``sleepcompact.evaluation.qa``) in the snippets, or in the
contents, of the first k hits. Nothing here asserts; the numbers are the same on every machine.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from collections import defaultdict
from datetime import UTC, datetime
from pathlib import Path

from bench.results import publish
from sleepcompact import Memory
from sleepcompact.evaluation.qa import answer_present, questions

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "conversations" / "memorybank"
KS = (1, 5, 10)


def _text(content: object) -> str:
    return content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)


def measure(database_url: str) -> dict[str, dict[str, int]]:
    """Counts per split: questions, with a hit, answerable, and hit@k in snippets and contents."""
    mem = Memory(database_url=database_url, auto_migrate=True)
    try:
        ids = mem.import_(DATA / "memory_bank_en.json", all_records=True)
        users = [next(iter(json.loads(line))).strip() for line in _lines(DATA / "probing_questions_en.jsonl")]
        conversation = dict(zip(users, ids, strict=True))
        counts: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
        for item in questions(DATA):
            row = counts[item.split]
            hits = mem.search_history(conversation[item.user], item.question, max(KS))
            row["questions"] += 1
            row["with a hit"] += bool(hits)
            if not item.answerable:
                continue
            row["answerable"] += 1
            for k in KS:
                row[f"snippet@{k}"] += any(answer_present(h.snippet, item.answers) for h in hits[:k])
                row[f"content@{k}"] += any(answer_present(_text(h.content), item.answers) for h in hits[:k])
        return counts
    finally:
        mem.close()


def _lines(path: Path) -> list[str]:
    return [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def table(counts: dict[str, dict[str, int]], engine: str) -> str:
    """The Markdown table of the counts (share and count)."""
    columns = ["with a hit", *(f"{w}@{k}" for k in KS for w in ("snippet", "content"))]
    out = [
        f"Archive search on MemoryBank probing questions, {engine}, {datetime.now(UTC):%Y-%m-%d %H:%M} UTC",
        "",
        "| split | questions | answerable | " + " | ".join(columns) + " |",
        "|---|---|---|" + "---|" * len(columns),
    ]
    for split in ("tune", "report"):
        row = counts[split]
        cells = []
        for col in columns:
            base = row["questions"] if col == "with a hit" else row["answerable"]
            cells.append(f"{row[col] / max(base, 1):.2f} ({row[col]})")
        out.append(f"| {split} | {row['questions']} | {row['answerable']} | " + " | ".join(cells) + " |")
    return "\n".join(out) + "\n"


def main() -> None:
    """Measure on a fresh SQLite file (or the given, empty database) and publish the table."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--database-url", help="an empty database (default: a temporary SQLite file)")
    args = parser.parse_args()
    url = args.database_url or f"sqlite:///{tempfile.mkdtemp()}/search.db"
    publish(table(measure(url), url.split(":", 1)[0]), "search_questions.md")


if __name__ == "__main__":
    main()
