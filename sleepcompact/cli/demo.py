"""``sleepcompact demo``: the main job on the embedded default, with a progress bar and a table."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from sleepcompact.cli.children import Children, module_command, settings_env
from sleepcompact.cli.common import JsonFlag, app, console, errors, show
from sleepcompact.cli.light import memory
from sleepcompact.config import Settings
from sleepcompact.logs import configure_logging


@contextmanager
def _processes(settings: Settings, log: Path) -> Iterator[Children]:
    """The real worker and scheduler as child processes, always stopped."""
    commands = [module_command("worker"), module_command("scheduler")]
    with Children(commands, settings_env(settings), log) as children:
        yield children


@app.command("demo")
@errors
def demo(
    seed: Annotated[int, typer.Option(help="Seed of the synthetic agents.")] = 0,
    as_json: JsonFlag = False,
) -> None:
    """The main job: synthetic agents live two nights on the real worker and scheduler (embedded default)."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from sleepcompact.demo import run_demo

    # The demo is deterministic and offline whatever the environment holds (no key is used or needed).
    with memory(offline=True) as mem:
        # The table tells the story; the per-tick log lines go to the demo's log file instead.
        configure_logging(mem.settings.with_overrides(log_level="WARNING"), force=True)
        if as_json:
            show(run_demo(mem, _processes, seed=seed), True, "")
            return
        out = console()
        columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
        with Progress(*columns, console=out, transient=False) as bar:
            tasks: dict[str, Any] = {}

            def progress(stage: str, done: int, total: int) -> None:
                if stage not in tasks:
                    tasks[stage] = bar.add_task(stage, total=total)
                bar.update(tasks[stage], completed=done, total=total)

            report = run_demo(mem, _processes, seed=seed, progress=progress)
    _table(out, report)


def _table(out: Console, report: Any) -> None:
    table = Table(title="Two nights of sleep on the real worker and scheduler")
    for col in ("conversation", "usable", "before", "after", "% usable", "summary", "memories", "what ran"):
        table.add_column(col, justify="left" if col in ("conversation", "what ran") else "right")
    for r in report.rows:
        table.add_row(
            r.label,
            f"{r.usable:,}",
            f"{r.tokens_before:,} ({r.percent_before:.0f}%)",
            f"{r.tokens_after:,}",
            f"{r.percent_after:.0f}%",
            f"{r.summary_tokens:,}" if r.summary_tokens else "-",
            f"+{r.memories_created} / -{r.memories_superseded}" if r.memories_created else "-",
            "\n".join(r.events),
        )
    out.print(table)
    out.print("Conversations:")
    for r in report.rows:
        out.print(f"  {r.conversation_id}  {r.label}")
    coder = next(r for r in report.rows if r.compaction_id)
    assistant = report.rows[-1]
    out.print("Look further:")
    for cmd in (
        f"sleepcompact history {coder.conversation_id}",
        f"sleepcompact context {coder.conversation_id}",
        f"sleepcompact restore {coder.compaction_id}",
        f"sleepcompact memories list {assistant.conversation_id} --all",
        f"sleepcompact context {assistant.conversation_id}",
    ):
        out.print(f"  {cmd}")
    if report.recall:
        out.print(
            f"The free coder's recall tool, asked what compaction folded away: {report.recall['question']}"
        )
        for line in report.recall["results"]:
            out.print(f"  {line[:160]}")
    out.print(f"Worker and scheduler log: {report.log}")
