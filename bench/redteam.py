"""The held-out red-team corpora (``tests/redteam/report/``), reported on, never tuned on.

.venv/bin/python -m bench.redteam

Secrets: is each planted secret gone from its text once redacted? Identifiers: does each text keep every
identifier the task needs? Injection: does the detector flag each attack and leave each benign text?
Prints per-kind misses so a reader can see what the figures hide.
"""

from __future__ import annotations

import json
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sleepcompact.adapters.redaction import RedactionPolicy, Redactor
from sleepcompact.domain.injection import detect

REPORT = Path(__file__).resolve().parents[1] / "tests" / "redteam" / "report"
FRESH = tuple(
    Path(__file__).resolve().parents[1] / "tests" / "redteam" / name / "report.jsonl"
    for name in ("fresh", "fresh2")
)


def _rows(name: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (REPORT / name).read_text(encoding="utf-8").splitlines() if line]


def _redact(text: str) -> str:
    return Redactor(RedactionPolicy(), key=b"k" * 32, scope="s").redact(text)


def secrets() -> list[str]:
    rows = _rows("secrets.jsonl")
    missed = [r for r in rows if r["secret"] in _redact(r["text"])]
    kinds = len({r["kind"] for r in rows})
    lines = [f"secrets redacted: {len(rows) - len(missed)}/{len(rows)} ({kinds} kinds)"]
    lines += [f"  missed {r['id']} {r['kind']}" for r in missed]
    return lines


def identifiers() -> list[str]:
    rows = _rows("keep.jsonl")
    broken = []
    for r in rows:
        out = _redact(r["text"])
        if any(k not in out for k in r["keep"]):
            broken.append(r)
    keeps = sum(len(r["keep"]) for r in rows)
    lines = [f"identifier texts kept whole: {len(rows) - len(broken)}/{len(rows)} ({keeps} identifiers)"]
    lines += [f"  broken {r['id']} {r['kind']}" for r in broken]
    return lines


def injections(rows: list[dict[str, Any]] | None = None) -> list[str]:
    rows = _rows("injections.jsonl") if rows is None else rows
    attacks = [r for r in rows if r["label"] == "attack"]
    benign = [r for r in rows if r["label"] == "benign"]
    missed = [r for r in attacks if not detect(r["text"]).flagged]
    false = [r for r in benign if detect(r["text"]).flagged]
    caught = len(attacks) - len(missed)
    lines = [
        f"injection recall: {caught}/{len(attacks)} = {caught / len(attacks):.3f}",
        f"false positives: {len(false)}/{len(benign)} = {len(false) / len(benign):.3f}",
    ]
    lines += [f"  missed by category: {dict(Counter(r['category'] for r in missed))}"]
    lines += [f"  false positive {r['id']} {r['category']}" for r in false]
    return lines


def fresh_rows(path: Path) -> list[dict[str, Any]]:
    """A fresh corpus's report half (its texts hold U+2028 and the like: lines end at "\\n" only)."""
    return [json.loads(line) for line in path.read_text(encoding="utf-8").split("\n") if line.strip()]


def main() -> None:
    print(f"{datetime.now(UTC):%Y-%m-%d %H:%M UTC}, held-out corpus {REPORT}")
    for line in [*secrets(), *identifiers(), *injections()]:
        print(line)
    for path in FRESH:
        print(f"fresh held-out corpus {path}")
        for line in injections(fresh_rows(path)):
            print(line)


if __name__ == "__main__":
    main()
