"""Where the benchmarks put their tables: printed, and written under ``bench/results/`` (git-ignored)."""

from __future__ import annotations

from pathlib import Path

RESULTS_DIR = Path(__file__).resolve().parent / "results"


def publish(table: str, name: str) -> Path:
    """Print ``table`` and write it to ``bench/results/NAME``; returns the file."""
    path = RESULTS_DIR / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(table, encoding="utf-8")
    print()
    print(table, end="")
    print(f"\nwritten to {path}")
    return path
