"""``sleepcompact eval``: replay trajectories under each context policy and print what each kept."""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, TypeVar

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from sleepcompact.cli.common import JsonFlag, app, console, errors, show
from sleepcompact.cli.light import memory
from sleepcompact.evaluation import POLICIES, PolicyResult
from sleepcompact.evaluation.cost import Pricing
from sleepcompact.evaluation.qa.dataset import memorybank_qa, synthetic_qa, write_qa
from sleepcompact.evaluation.qa.run import QA_POLICIES, QAResult
from sleepcompact.logs import configure_logging

T = TypeVar("T")


@app.command("eval")
@errors
def eval_(
    files: Annotated[
        list[Path] | None, typer.Argument(help="Conversation files (any format import reads); not with --qa.")
    ] = None,
    window: Annotated[
        list[int] | None, typer.Option(help="Context window(s) to replay at, e.g. 8000.")
    ] = None,
    policy: Annotated[
        list[str] | None, typer.Option(help=f"Policies to compare (default all): {', '.join(POLICIES)}.")
    ] = None,
    tick_every: Annotated[int, typer.Option(help="Run a sleep tick every K messages (0: never).")] = 40,
    qa: Annotated[
        Path | None, typer.Option(help="A QA file (see `sleepcompact eval-set`): ask its questions instead.")
    ] = None,
    recall_budget: Annotated[
        int | None,
        typer.Option(help="With --qa: sleepcompact's recall budget in tokens (default: the setting)."),
    ] = None,
    input_price: Annotated[float, typer.Option(min=0, help="Input price, USD per million tokens.")] = 3.00,
    output_price: Annotated[
        float, typer.Option(min=0, help="Output price (the summarizer's), USD per million tokens.")
    ] = 15.00,
    cache_ttl: Annotated[
        float, typer.Option(min=0, help="Prompt-cache TTL in seconds (300; above 300 writes cost 2x).")
    ] = 300.0,
    call_gap: Annotated[
        float, typer.Option(min=0, help="Seconds between calls when the log gives no time (sent_at).")
    ] = 30.0,
    as_json: JsonFlag = False,
) -> None:
    """Replay each conversation message by message under each policy; compare peak tokens, overflows,
    compactions, summarizer tokens, forward-reference recall (and where each recalled identifier
    was) and the run's cost with prompt-cache pricing. With ``--qa``: ask each conversation's questions
    at its end; is the answer in the context, and in the recall tool's first page?"""
    windows, chosen = _runnable(window, qa, files, policy)
    pricing = Pricing(
        input_price=input_price, output_price=output_price, ttl_seconds=cache_ttl, call_gap=call_gap
    )
    with memory(offline=True) as mem:
        # Thousands of guard and compaction lines would bury the table; warnings still show.
        configure_logging(mem.settings.with_overrides(log_level="WARNING"), force=True)
        with _progress(as_json) as progress:
            if qa is not None:
                qa_results = mem.admin.evaluate_qa(
                    qa,
                    windows=windows,
                    policies=chosen,
                    tick_every=tick_every,
                    recall_budget=recall_budget,
                    progress=progress,
                )
            else:
                results = mem.admin.evaluate(
                    files or [], windows=windows, policies=chosen, tick_every=tick_every, progress=progress
                )
    if qa is not None:
        show({str(w): rs for w, rs in qa_results.items()}, as_json, lambda: _each(qa_results, _qa_table))
    else:
        priced = {str(w): [r.to_dict(pricing, _baseline(r, rs)) for r in rs] for w, rs in results.items()}
        show(priced, as_json, lambda: _each(results, lambda w, rs: _table(w, rs, pricing)))


def _runnable(
    window: list[int] | None, qa: Path | None, files: list[Path] | None, policy: list[str] | None
) -> tuple[list[int], list[str]]:
    """The windows and the policies to run; a usage error when the command line asks for nothing
    runnable."""
    if not window:
        raise typer.BadParameter("give at least one --window", param_hint="--window")
    if (qa is None) == (not files):
        raise typer.BadParameter("give conversation files, or --qa FILE (not both)", param_hint="FILES")
    known = QA_POLICIES if qa is not None else POLICIES
    chosen = policy or list(known)
    unknown = sorted(set(chosen) - set(known))
    if unknown:
        raise typer.BadParameter(
            f"unknown policies {unknown}; known: {', '.join(known)}", param_hint="--policy"
        )
    return window, chosen


def _each(results: dict[int, list[T]], table: Callable[[int, list[T]], None]) -> None:
    for w, rs in results.items():
        table(w, rs)


@contextmanager
def _progress(quiet: bool) -> Iterator[Callable[[int, int], None] | None]:
    """A progress bar on the terminal (none with --json)."""
    if quiet:
        yield None
        return
    columns = (TextColumn("replaying"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=console()) as bar:
        task = bar.add_task("replay", total=None)
        yield lambda done, total: bar.update(task, completed=done, total=total)


class QASet(enum.StrEnum):
    """The QA dev sets ``eval-set`` writes."""

    memorybank = "memorybank"
    synthetic = "synthetic"


@app.command("eval-set")
@errors
def eval_set(
    which: Annotated[
        QASet,
        typer.Argument(
            help="memorybank: the MemoryBank chats with our gold answers; synthetic: companion chats."
        ),
    ],
    out: Annotated[Path, typer.Argument(help="The QA file to write (JSONL).")],
    data: Annotated[
        Path, typer.Option(help="The shared data directory (holds conversations/memorybank).")
    ] = Path("../shared/data"),
    seeds: Annotated[int, typer.Option(help="synthetic: how many conversations (seeds 0..N-1).")] = 10,
    as_json: JsonFlag = False,
) -> None:
    """Write a QA file for ``eval --qa``: conversations read in place, with questions and gold answers."""
    conversations = memorybank_qa(data) if which is QASet.memorybank else synthetic_qa(range(seeds))
    asked = write_qa(out, conversations)
    summary = {"file": str(out), "conversations": len(conversations), "questions": asked}
    show(summary, as_json, f"wrote {asked} questions about {len(conversations)} conversations to {out}")


def _qa_table(window: int, results: list[QAResult]) -> None:
    splits = sorted({s for r in results for s in r.asked})
    table = Table(title=f"window {window:,}: answer in the context (and in the recall tool's first page)")
    table.add_column("policy")
    for split in splits:
        table.add_column(f"{split} ({results[0].asked.get(split, 0)})", justify="right")
    table.add_column("overflows", justify="right")
    table.add_column("mean tokens", justify="right")
    for r in results:
        cells = []
        for split in splits:
            ctx, tool = r.rate(split), r.rate(split, tool=True)
            cells.append(("-" if ctx is None else f"{ctx:.3f}") + ("" if tool is None else f" ({tool:.3f})"))
        table.add_row(r.policy, *cells, str(r.overflows), f"{r.to_dict()['mean_context_tokens']:,}")
    console().print(table)


def _baseline(result: PolicyResult, results: list[PolicyResult]) -> PolicyResult | None:
    """Truncation, which every other policy's recall is compared with, when it ran."""
    return next((r for r in results if r.policy == "truncate" and r is not result), None)


def _versus(result: PolicyResult, results: list[PolicyResult]) -> str:
    baseline = _baseline(result, results)
    if baseline is None:
        return "-"
    d = result.versus(baseline)
    return f"{d.difference:+.3f} ({d.low:+.3f}, {d.high:+.3f})"


def _table(window: int, results: list[PolicyResult], pricing: Pricing) -> None:
    first = results[0]
    table = Table(title=f"window {window:,}: {first.conversations} conversations, {first.calls} calls")
    columns = ["policy", "peak", "overflows", "recall", "vs truncate (95%)", "1-5", "6-20", "21-100", ">100"]
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
            _versus(r, results),
            *(f"{by[k]:.3f}" if by[k] is not None else "-" for k in ("1-5", "6-20", "21-100", ">100")),
            ", ".join(f"{k} {v}" for k, v in sorted(r.costs.compactions.items())) or "-",
            f"{r.costs.summarizer_in:,}/{r.costs.summarizer_out:,}",
        )
    console().print(table)
    places = Table(title=f"window {window:,}: where each reference was")
    names = list(results[0].to_dict()["references_by_place"])
    places.add_column("policy")
    for name in names:
        places.add_column(name, justify="right")
    for r in results:
        by_place = r.to_dict()["references_by_place"]
        places.add_row(r.policy, *(f"{by_place[n]:,}" for n in names))
    console().print(places)
    _cost_table(window, results, pricing)


def _cost_table(window: int, results: list[PolicyResult], pricing: Pricing) -> None:
    """Each policy's run priced (USD): the agent's input with the prompt cache, and the summarizer."""
    title = (
        f"window {window:,}: cost in USD (input ${pricing.input_price:g}/MTok, output "
        f"${pricing.output_price:g}/MTok, cache TTL {pricing.ttl_seconds:g}s)"
    )
    table = Table(title=title)
    columns = ("policy", "per 100 calls", "total", "input", "input, no cache", "summarizer")
    for col in (*columns, "hit ratio", "between compactions"):
        table.add_column(col, justify="left" if col == "policy" else "right")
    for r in results:
        c = r.cost(pricing)
        table.add_row(
            r.policy,
            f"{c.per_100_calls:.3f}",
            f"{c.total_cost:.3f}",
            f"{c.input_cost:.3f}",
            f"{c.input_cost_no_cache:.3f}",
            f"{c.summarizer_cost:.3f}",
            f"{c.hit_ratio:.3f}",
            f"{c.hit_ratio_between:.3f}",
        )
    console().print(table)
