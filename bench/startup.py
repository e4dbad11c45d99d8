"""Start-up cost: ``import sleepcompact`` and ``sleepcompact check CONV``, for one or more source trees.

Run with ``.venv/bin/python -m bench.startup [--compare REV ...]``. Each tree is measured in fresh
interpreter processes (the only honest way to time an import): the working tree, and for every
``--compare REV`` a temporary ``git worktree`` of that revision, put first on ``PYTHONPATH`` with the
same virtual environment. The cases take turns, so drift on the machine hits them alike. The floor,
``python -c pass``, is the interpreter alone. Nothing here asserts on time.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from bench.ladder import cpu_model
from bench.results import publish

ROOT = Path(__file__).resolve().parents[1]
RUNS = 20
CHECK = "import sys\nfrom sleepcompact.cli import main\nsys.argv = ['sleepcompact', *sys.argv[1:]]\nmain()\n"
SETUP = (
    "import sys\nfrom sleepcompact import Memory\n"
    "mem = Memory(database_url=sys.argv[1])\n"
    "cid = mem.create_conversation(model='claude-sonnet-4-5')\n"
    "mem.append(cid, {'role': 'user', 'content': 'hello'})\nprint(cid)\n"
)


@dataclass(frozen=True)
class Case:
    """One command line, run in a fresh process each time, from ``cwd``.

    Never from a source tree: ``python -c`` puts the current directory first on ``sys.path``, ahead of
    ``PYTHONPATH``, so the tree under test would be shadowed by whatever sits there.
    """

    name: str
    argv: tuple[str, ...]
    env: dict[str, str]
    cwd: Path


@contextmanager
def trees(revisions: Sequence[str]) -> Iterator[list[tuple[str, Path]]]:
    """The working tree, then a temporary worktree per revision (removed afterwards)."""
    out = [("working tree", ROOT)]
    with ExitStack() as stack:
        for rev in revisions:
            path = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="sc-startup-"))) / "tree"
            subprocess.run(
                ["git", "worktree", "add", "--detach", str(path), rev],
                cwd=ROOT,
                check=True,
                capture_output=True,
            )
            stack.callback(
                subprocess.run,
                ["git", "worktree", "remove", "--force", str(path)],
                cwd=ROOT,
                capture_output=True,
            )
            short = subprocess.run(
                ["git", "rev-parse", "--short", rev], cwd=ROOT, check=True, capture_output=True, text=True
            ).stdout.strip()
            out.append((f"{rev} ({short})", path))
        yield out


def environment(tree: Path, database_url: str) -> dict[str, str]:
    """The process environment: the tree first on the path, the benchmark's own database, no key."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLEEPCOMPACT_", "ANTHROPIC_"))}
    env["PYTHONPATH"] = str(tree)
    env["SLEEPCOMPACT_DATABASE_URL"] = database_url
    return env


def cases_for(label: str, tree: Path, workdir: Path) -> list[Case]:
    """The import and the check, against a conversation made by this tree's own code."""
    url = f"sqlite:///{workdir}/{abs(hash(label))}.db"
    env = environment(tree, url)
    made = subprocess.run(
        [sys.executable, "-c", SETUP, url], env=env, check=True, capture_output=True, text=True
    )
    cid = made.stdout.strip().splitlines()[-1]
    return [
        Case(f"{label}: import sleepcompact", (sys.executable, "-c", "import sleepcompact"), env, workdir),
        Case(f"{label}: sleepcompact check", (sys.executable, "-c", CHECK, "check", cid), env, workdir),
    ]


def timed(cases: Sequence[Case], runs: int) -> dict[str, list[float]]:
    """Wall time of each case's process, the cases taking turns; one untimed warm-up each."""
    for case in cases:
        subprocess.run(case.argv, env=case.env, cwd=case.cwd, check=True, capture_output=True)
    samples: dict[str, list[float]] = {c.name: [] for c in cases}
    for _ in range(runs):
        for case in cases:
            start = time.perf_counter()
            subprocess.run(case.argv, env=case.env, cwd=case.cwd, check=True, capture_output=True)
            samples[case.name].append(time.perf_counter() - start)
    return samples


def table(samples: dict[str, list[float]], runs: int) -> str:
    """The Markdown report: an environment header and one row per case."""
    when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        f"{when} · {platform.platform()} · CPU {cpu_model()} ({os.cpu_count()} CPUs) · "
        f"Python {platform.python_version()} · {runs} runs each, wall time of a fresh process",
        "",
        "| case | median ms | p90 ms |",
        "|---|---:|---:|",
    ]
    for name, values in samples.items():
        ms = sorted(v * 1000 for v in values)
        p90 = statistics.quantiles(ms, n=10, method="inclusive")[8]
        lines.append(f"| {name} | {statistics.median(ms):,.0f} | {p90:,.0f} |")
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> None:
    """Measure, print and write ``bench/results/startup.md``."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "--compare",
        action="append",
        default=[],
        metavar="REV",
        help="also measure this git revision (repeatable)",
    )
    parser.add_argument("--runs", type=int, default=RUNS)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="sc-startup-db-") as tmp, trees(args.compare) as found:
        floor = Case(
            "python -c pass (the interpreter alone)",
            (sys.executable, "-c", "pass"),
            dict(os.environ),
            Path(tmp),
        )
        cases = [floor]
        for label, tree in found:
            cases.extend(cases_for(label, tree, Path(tmp)))
        samples = timed(cases, args.runs)
    publish(table(samples, args.runs), "startup.md")


if __name__ == "__main__":
    main()
