"""The injection detector on real coding-agent text, with and without its faster path for ASCII text.

.venv/bin/python -m bench.detector

Every message of the 42 shared mini-swe-agent runs (``../shared/data``, read in place) is screened three
times each way, alternating, memo bypassed: once with ``Rule.ascii_pattern`` (the lowercased chunk
matched without ignoring case) and once with every rule forced onto its case-insensitive pattern. It
also checks that both ways give every text the same verdict, score and findings.
"""

from __future__ import annotations

import json
import platform
import statistics
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

from bench.ladder import cpu_model
from bench.results import publish
from sleepcompact.domain import injection
from sleepcompact.domain.injection import RULES, Verdict
from sleepcompact.domain.injection_rules_i18n import RULES_I18N

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "trajectories" / "mini-swe-agent-dev.jsonl"


def _texts() -> list[str]:
    out: list[str] = []
    for line in DATA.read_text(encoding="utf-8").splitlines():
        for message in json.loads(line).get("messages", []) if line.strip() else []:
            if isinstance(message.get("content"), str):
                out.append(message["content"])
    return out


def _screen(texts: list[str], fast: bool) -> tuple[float, list[Verdict]]:
    for rule in (*RULES, *RULES_I18N):
        rule.__dict__.pop("ascii_pattern", None)  # the cached property, computed again or forced off
        if not fast:
            rule.__dict__["ascii_pattern"] = None
    start = time.perf_counter()
    verdicts = [injection._detect(text, 0) for text in texts]  # past the memo: every text is read
    return time.perf_counter() - start, verdicts


def main() -> None:
    if not DATA.is_file():
        sys.exit(f"the shared data is missing: {DATA}")
    texts = _texts()
    runs: dict[bool, list[float]] = {True: [], False: []}
    seen: dict[bool, list[Verdict]] = {}
    for _ in range(3):
        for fast in (False, True):
            seconds, seen[fast] = _screen(texts, fast)
            runs[fast].append(seconds)
    same = seen[True] == seen[False]
    size = sum(map(len, texts)) / 1e6
    header = (
        f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC, {platform.platform()}, {cpu_model()}, "
        f"Python {platform.python_version()}: {len(texts):,} texts, {size:.1f} MB"
    )
    rows = [
        "| path | median s | MB/s |",
        "| --- | ---: | ---: |",
        *(
            f"| {name} | {statistics.median(runs[fast]):.2f} | {size / statistics.median(runs[fast]):.2f} |"
            for name, fast in (("every rule ignoring case", False), ("ASCII chunks lowercased", True))
        ),
    ]
    verdicts = "identical" if same else "DIFFERENT"
    table = "\n".join(rows)
    publish(f"{header}\n\n{table}\n\nverdicts, scores and findings: {verdicts}\n", "detector.md")


if __name__ == "__main__":
    main()
