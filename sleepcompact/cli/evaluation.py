"""``sleepcompact eval``: replay trajectories under each context policy and print what each kept."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from sleepcompact.cli.common import JsonFlag, app, console, errors, memory, show
from sleepcompact.evaluation import POLICIES, PolicyResult
from sleepcompact.logs import configure_logging


@app.command("eval")
@errors
def eval_(
    files: Annotated[list[Path], typer.Argument(help="Conversation files (any format import reads).")],
    window: Annotated[list[int], typer.Option(help="Context window(s) to replay at, e.g. 8000.")],
    policy: Annotated[
        list[str] | None, typer.Option(help=f"Policies to compare (default all): {', '.join(POLICIES)}.")
    ] = None,
    tick_every: Annotated[int, typer.Option(help="Run a sleep tick every K messages (0: never).")] = 40,
    as_json: JsonFlag = False,
) -> None:
    """Replay each conversation message by message under each policy; compare peak tokens, overflows,
    compactions, summarizer tokens and forward-reference recall."""
    chosen = policy or list(POLICIES)
    unknown = sorted(set(chosen) - set(POLICIES))
    if unknown:
        known = ", ".join(POLICIES)
        raise typer.BadParameter(f"unknown policies {unknown}; known: {known}", param_hint="--policy")
    with memory(offline=True) as mem:
        # Thousands of guard and compaction lines would bury the table; warnings still show.
        configure_logging(mem.settings.with_overrides(log_level="WARNING"), force=True)
        if as_json:
            results = mem.admin.evaluate(files, windows=window, policies=chosen, tick_every=tick_every)
        else:
            columns = (TextColumn("replaying"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
            with Progress(*columns, console=console()) as bar:
                task = bar.add_task("replay", total=None)
                results = mem.admin.evaluate(
                    files,
                    windows=window,
                    policies=chosen,
                    tick_every=tick_every,
                    progress=lambda done, total: bar.update(task, completed=done, total=total),
                )

    def text() -> None:
        for w, rs in results.items():
            _table(w, rs)

    show({str(w): rs for w, rs in results.items()}, as_json, text)


def _table(window: int, results: list[PolicyResult]) -> None:
    first = results[0]
    table = Table(title=f"window {window:,}: {first.conversations} conversations, {first.calls} calls")
    columns = ["policy", "peak", "overflows", "recall", "1-5", "6-20", "21-100", ">100"]
    columns += ["compactions", "summ. in/out"]
    for col in columns:
        table.add_column(col, justify="left" if col == "policy" else "right")
    for r in results:
        d = r.to_dict()
        by = d["recall_by_distance"]
        table.add_row(
            r.policy,
            f"{r.peak_tokens:,}",
            str(r.overflows),
            f"{r.recall:.3f}",
            *(f"{by[k]:.3f}" if by[k] is not None else "-" for k in ("1-5", "6-20", "21-100", ">100")),
            ", ".join(f"{k} {v}" for k, v in sorted(r.costs.compactions.items())) or "-",
            f"{r.costs.summarizer_in:,}/{r.costs.summarizer_out:,}",
        )
    console().print(table)
