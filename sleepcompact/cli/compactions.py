"""The compaction commands: check, compact, history, restore, search."""

from __future__ import annotations

from dataclasses import asdict
from typing import Annotated

import typer
from rich.table import Table

from sleepcompact.cli import JsonFlag, _console, _errors, _memory, _preview, _print_json, app


@app.command()
@_errors
def check(
    conversation: Annotated[str, typer.Argument(help="Conversation id.")],
    as_json: JsonFlag = False,
) -> None:
    """The guard's decision for the conversation, from one indexed read (nothing is rendered or written)."""
    with _memory() as mem:
        decision = mem.check(conversation)
    if as_json:
        _print_json(asdict(decision))
        return
    d = decision
    typer.echo(
        f"{d.decision}: {d.tokens:,} tokens, {d.percent_of_usable:.1f}% of {d.usable:,} usable "
        f"(soft {d.soft:,}, hard {d.hard:,}, target {d.target:,})"
        + ("" if decision.auto_compact else "; auto-compaction off")
        + ("; sleep requested" if decision.sleep_requested else "")
    )


@app.command()
@_errors
def compact(
    conversation: Annotated[str, typer.Argument(help="Conversation id.")],
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Print the plan; write nothing.")] = False,
    force: Annotated[bool, typer.Option("--force", help="Summarize even under the target.")] = False,
    as_json: JsonFlag = False,
) -> None:
    """Run the compaction ladder now (trigger manual)."""
    with _memory() as mem:
        outcome = mem.compact(conversation, dry_run=dry_run, force=force)
    data = outcome.to_dict()
    if as_json:
        _print_json(data)
        return
    console = _console()
    console.print(
        f"{outcome.status}: {outcome.tokens_before:,} -> {outcome.tokens_after:,} tokens "
        f"(target {outcome.target:,}, usable {outcome.usable:,}); {outcome.reason}"
    )
    steps = outcome.plan["steps"] if outcome.plan else outcome.steps
    for step in steps:
        console.print(
            f"  {step['step']:<13} {step['section']:<8} {step['messages']:>5} messages  "
            f"{step['tokens_saved']:>8,} tokens saved"
        )
    if outcome.compaction_id and outcome.status == "applied":
        console.print(
            f"compaction {outcome.compaction_id}; undo with: sleepcompact restore {outcome.compaction_id}"
        )


@app.command()
@_errors
def history(
    conversation: Annotated[str, typer.Argument(help="Conversation id.")], as_json: JsonFlag = False
) -> None:
    """Compactions of a conversation with their figures (flagged summaries marked)."""
    with _memory() as mem:
        rows = mem.history(conversation)
    if as_json:
        _print_json(rows)
        return
    table = Table()
    for col in (
        "compaction",
        "trigger",
        "status",
        "before",
        "after",
        "saved",
        "steps",
        "summarizer",
        "flagged",
    ):
        table.add_column(col, no_wrap=True)
    for r in rows:
        table.add_row(
            r["id"],
            r["trigger"],
            r["status"],
            f"{r['tokens_before']:,}",
            f"{r['tokens_after']:,}",
            f"{r['tokens_saved']:,}",
            ",".join(s["step"] for s in r["steps"]),
            str(r["summarizer_provider"] or "-"),
            "FLAGGED" if r["flagged"] else "",
        )
    _console().print(table)


@app.command()
@_errors
def restore(compaction_id: Annotated[str, typer.Argument(help="Compaction id (see history).")]) -> None:
    """Bring back the exact live state before a compaction; later compactions are undone first."""
    with _memory() as mem:
        undone = mem.restore(compaction_id)
    typer.echo(f"restored {', '.join(undone)}")


@app.command()
@_errors
def search(
    conversation: Annotated[str, typer.Argument(help="Conversation id.")],
    query: Annotated[str, typer.Argument(help='Words to find, or "seq:N" for the row a placeholder names.')],
    limit: Annotated[int, typer.Option(help="How many hits.")] = 20,
    as_json: JsonFlag = False,
) -> None:
    """Search the archive (every original, including what compaction masked, truncated or summarized)."""
    with _memory() as mem:
        hits = mem.search_history(conversation, query, limit)
    if as_json:
        _print_json(hits)
        return
    console = _console()
    if not hits:
        console.print("no match")
    for h in hits:
        console.print(
            f"[bold]seq {h['seq']}[/bold] {h['role']}/{h['kind']} ({h['state']}): {_preview(h['snippet'])}"
        )


batch_app = typer.Typer(help="Summaries through the Message Batches API (half price).", no_args_is_help=True)
app.add_typer(batch_app, name="batch")


@batch_app.command("submit")
@_errors
def batch_submit(
    conversations: Annotated[list[str], typer.Argument(help="Conversation ids.")],
    as_json: JsonFlag = False,
) -> None:
    """Compact conversations with their summaries requested as one batch; apply later with `batch poll`."""
    with _memory() as mem:
        report = mem.submit_batch(conversations)
    data = {
        "batch_id": report.batch_id,
        "submitted": report.submitted,
        "applied_directly": [o.to_dict() for o in report.applied_directly],
    }
    if as_json:
        _print_json(data)
        return
    typer.echo(
        f"batch {report.batch_id or '-'}: {len(report.submitted)} summaries requested, "
        f"{len(report.applied_directly)} compacted without a summary"
    )


@batch_app.command("poll")
@_errors
def batch_poll(as_json: JsonFlag = False) -> None:
    """Apply the results of ended batches; errored or expired requests are retried directly."""
    with _memory() as mem:
        report = mem.poll_batches()
    data = {
        "applied": [o.to_dict() for o in report.applied],
        "retried_directly": [o.to_dict() for o in report.retried_directly],
        "pending_batches": report.pending_batches,
    }
    if as_json:
        _print_json(data)
        return
    typer.echo(
        f"applied {len(report.applied)}, retried directly {len(report.retried_directly)}, "
        f"still running: {', '.join(report.pending_batches) or 'none'}"
    )


@app.command()
@_errors
def rerun(
    conversation: Annotated[str | None, typer.Argument(help="Conversation id (or --compaction).")] = None,
    compaction: Annotated[
        str | None, typer.Option("--compaction", help="Re-run this compaction (and undo later ones).")
    ] = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Show what would change, old and new summary; write nothing.")
    ] = False,
    as_json: JsonFlag = False,
) -> None:
    """Compact again from the archive with today's settings and summarizer (trigger admin_rerun)."""
    if (conversation is None) == (compaction is None):
        raise typer.BadParameter("give a conversation id or --compaction ID (one of them)")
    with _memory() as mem:
        result = mem.rerun(conversation, compaction_id=compaction, dry_run=dry_run)
    if as_json:
        _print_json(result)
        return
    console = _console()
    if not dry_run:
        out = result["outcome"]
        console.print(
            f"undid {len(result['undone'])} compaction(s); re-run {out['status']}: "
            f"{out['tokens_before']:,} -> {out['tokens_after']:,} tokens ({out['compaction_id']})"
        )
        return
    console.print(
        f"dry run, nothing written. Would undo {', '.join(result['undone'])}: "
        f"{result['tokens_now']:,} tokens now, {result['tokens_restored']:,} restored, "
        f"about {result['tokens_after']:,} after ({'+'.join(result['steps']) or 'no step'})"
    )
    table = Table(show_lines=True)
    table.add_column("old summary")
    table.add_column("new summary")
    table.add_row("\n\n".join(result["old_summaries"]) or "-", result["new_summary"] or "-")
    console.print(table)
