"""The compaction commands: check, compact, history, restore, search, rerun, batch."""

from __future__ import annotations

import difflib
import re
from dataclasses import asdict
from datetime import datetime
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from sleepcompact.cli.common import JsonFlag, Role, app, console, errors, show
from sleepcompact.cli.light import memory
from sleepcompact.cli.quick import decision_line
from sleepcompact.services.history import CompactionInfo

ConversationArg = Annotated[str, typer.Argument(help="Conversation id.")]


@app.command()
@errors
def check(conversation: ConversationArg, as_json: JsonFlag = False) -> None:
    """The guard's decision for the conversation, from one indexed read (nothing is rendered or written)."""
    with memory() as mem:
        d = mem.check(conversation)
    show(asdict(d), as_json, decision_line(d))


@app.command()
@errors
def compact(
    conversation: ConversationArg,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Print the plan; write nothing.")] = False,
    force: Annotated[bool, typer.Option("--force", help="Summarize even under the target.")] = False,
    instructions: Annotated[str | None, typer.Option(help="Extra instructions for the summarizer.")] = None,
    as_json: JsonFlag = False,
) -> None:
    """Run the compaction ladder now (trigger manual)."""
    with memory() as mem:
        outcome = mem.compactions.compact(
            conversation, dry_run=dry_run, force=force, instructions=instructions
        )

    def text() -> None:
        out = console()
        out.print(
            f"{outcome.status}: {outcome.tokens_before:,} -> {outcome.tokens_after:,} tokens "
            f"(target {outcome.target:,}, usable {outcome.usable:,}); {outcome.reason}"
        )
        for step in outcome.plan["steps"] if outcome.plan else outcome.steps:
            out.print(
                f"  {step['step']:<13} {step['section']:<8} {step['messages']:>5} messages  "
                f"{step['tokens_saved']:>8,} tokens saved"
            )
        if outcome.compaction_id and outcome.status == "applied":
            out.print(
                f"compaction {outcome.compaction_id}; undo with: sleepcompact restore {outcome.compaction_id}"
            )

    show(outcome, as_json, text)


@app.command()
@errors
def history(conversation: ConversationArg, as_json: JsonFlag = False) -> None:
    """Compactions of a conversation with their figures (flagged summaries marked, and why)."""
    with memory() as mem:
        rows = mem.compactions.history(conversation)

    def text() -> None:
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
                r.id,
                r.trigger,
                r.status,
                f"{r.tokens_before:,}",
                f"{r.tokens_after:,}",
                f"{r.tokens_saved:,}",
                ",".join(s["step"] for s in r.steps),
                str(r.summarizer_provider or "-"),
                "FLAGGED" if r.flagged else "",
            )
        console().print(table)
        # Why, under the table: a reason is too long for a column of a piped (120-column) table.
        for r in rows:
            if why := _why(r):
                console().print(f"{r.id}: {why}", soft_wrap=True)

    show(rows, as_json, text)


def _why(r: CompactionInfo) -> str:
    """Why a compaction ended as it did (a fallback's or failure's reason), or what it quarantined."""
    if r.error:
        return escape(r.error)
    return f"{len(r.quarantined)} lines quarantined" if r.quarantined else ""


@app.command()
@errors
def restore(
    compaction_id: Annotated[str, typer.Argument(help="Compaction id (see history).")],
    as_json: JsonFlag = False,
) -> None:
    """Bring back the exact live state before a compaction; later compactions are undone first."""
    with memory() as mem:
        undone = mem.compactions.restore(compaction_id)
    show({"restored": list(undone)}, as_json, f"restored {', '.join(undone)}")


def _seq_range(value: str | None) -> tuple[int | None, int | None]:
    """``--seq``: ``A-B``, ``A-`` or ``-B`` (inclusive), or one ``N``."""
    if value is None:
        return None, None
    m = re.fullmatch(r"\s*(\d*)\s*-\s*(\d*)\s*|\s*(\d+)\s*", value)
    if m is None or value.strip() == "-":
        raise typer.BadParameter(f"expected A-B, A-, -B or N, got {value!r}", param_hint="--seq")
    if m.group(3) is not None:
        return int(m.group(3)), int(m.group(3))
    return (int(m.group(1)) if m.group(1) else None), (int(m.group(2)) if m.group(2) else None)


@app.command()
@errors
def search(
    conversation: ConversationArg,
    query: Annotated[
        str,
        typer.Argument(
            help='Words, identifiers or "quoted phrases" to find; "seq:N" for the row a placeholder names.'
        ),
    ],
    limit: Annotated[int, typer.Option(min=1, help="How many hits at most.")] = 10,
    role: Annotated[Role | None, typer.Option(help="Only messages of this role.")] = None,
    tool: Annotated[str | None, typer.Option(help="Only calls and results of this tool.")] = None,
    seq: Annotated[str | None, typer.Option(help="Only seqs in this range: A-B, A-, -B or N.")] = None,
    since: Annotated[
        datetime | None,
        typer.Option(formats=["%Y-%m-%d"], help="Only messages from this day on (YYYY-MM-DD)."),
    ] = None,
    until: Annotated[
        datetime | None, typer.Option(formats=["%Y-%m-%d"], help="Only messages up to this day (YYYY-MM-DD).")
    ] = None,
    budget: Annotated[
        int | None, typer.Option(min=0, help="Stop before the snippets exceed this many tokens.")
    ] = None,
    as_json: JsonFlag = False,
) -> None:
    """Ranked search of the archive (every original, including what compaction masked, truncated or
    summarized): any content word may match, identifiers and quoted phrases exactly; best first."""
    seq_from, seq_to = _seq_range(seq)
    with memory() as mem:
        hits = mem.search_history(
            conversation,
            query,
            limit,
            role=role.value if role else None,
            tool=tool,
            seq_from=seq_from,
            seq_to=seq_to,
            since=since.date() if since else None,
            until=until.date() if until else None,
            budget_tokens=budget,
        )

    def text() -> None:
        out = console()
        if not hits:
            out.print("no match")
        for h in hits:
            where = f"{h.role}/{h.kind}" + (f" {h.tool_name}" if h.tool_name else "")
            out.print(
                f"[bold]seq {h.seq}[/bold] {escape(where)} ({h.state}, {h.score:.2f}): {escape(h.snippet)}"
            )

    show(hits, as_json, text)


@app.command()
@errors
def rerun(
    conversation: Annotated[str | None, typer.Argument(help="Conversation id (or --compaction).")] = None,
    compaction: Annotated[
        str | None, typer.Option("--compaction", help="Re-run this compaction (and undo later ones).")
    ] = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Show what would change, old and new summary; write nothing.")
    ] = False,
    queue: Annotated[
        bool, typer.Option("--queue", help="Enqueue it for a worker (admin queue); print the task id.")
    ] = False,
    as_json: JsonFlag = False,
) -> None:
    """Compact again from the archive with today's settings and summarizer (trigger admin_rerun)."""
    if (conversation is None) == (compaction is None):
        raise typer.BadParameter("give a conversation id or --compaction ID (one of them)")
    if queue and dry_run:
        raise typer.BadParameter(
            "--queue runs the re-run on a worker; --dry-run runs here", param_hint="--queue"
        )
    with memory() as mem:
        if queue:
            task_id = mem.compactions.queue_rerun(conversation, compaction_id=compaction)
            show(
                {"task_id": task_id, "queue": "admin"}, as_json, f"queued re-run {task_id} on the admin queue"
            )
            return
        if not dry_run:
            done = mem.compactions.rerun(conversation, compaction_id=compaction)
            out = done.outcome
            line = (
                f"undid {len(done.undone)} compaction(s); re-run {out.status}: "
                f"{out.tokens_before:,} -> {out.tokens_after:,} tokens ({out.compaction_id}); "
                f"{_changed(done.settings_changed)}"
            )
            show(done, as_json, line)
            return
        preview_ = mem.compactions.preview_rerun(conversation, compaction_id=compaction)

    def text() -> None:
        p = preview_
        out = console()
        out.print(
            f"dry run, nothing written. Would undo {', '.join(p.undone)}: {p.tokens_now:,} tokens now, "
            f"{p.tokens_restored:,} restored, about {p.tokens_after:,} after "
            f"({'+'.join(p.steps) or 'no step'})"
        )
        old = "\n\n".join(p.old_summaries)
        diff = difflib.unified_diff(
            old.splitlines(), (p.new_summary or "").splitlines(), "old summary", "new summary", lineterm=""
        )
        same = "old summary and new summary are the same"
        out.print(_changed(p.settings_changed), markup=False, highlight=False)
        out.print(p.context_diff or "the live context stays the same", markup=False, highlight=False)
        out.print("\n".join(diff) or same, markup=False, highlight=False)

    show(preview_, as_json, text)


def _changed(settings: dict[str, list[object]]) -> str:
    """Which settings differ from those the replaced compaction ran with (its steps are kept otherwise)."""
    if not settings:
        return "settings unchanged since the compaction it replaces: same steps"
    return "settings changed since: " + ", ".join(
        f"{k} {old!r} -> {new!r}" for k, (old, new) in settings.items()
    )


batch_app = typer.Typer(help="Summaries through the Message Batches API (half price).", no_args_is_help=True)
app.add_typer(batch_app, name="batch")


@batch_app.command("submit")
@errors
def batch_submit(
    conversations: Annotated[list[str], typer.Argument(help="Conversation ids.")], as_json: JsonFlag = False
) -> None:
    """Compact conversations with their summaries requested as one batch; apply later with `batch poll`."""
    with memory() as mem:
        report = mem.compactions.submit_batch(conversations)
    line = (
        f"batch {report.batch_id or '-'}: {len(report.submitted)} summaries requested, "
        f"{len(report.applied_directly)} compacted without a summary"
    )
    show(report, as_json, line)


@batch_app.command("poll")
@errors
def batch_poll(as_json: JsonFlag = False) -> None:
    """Apply the results of ended batches; errored or expired requests are retried directly."""
    with memory() as mem:
        report = mem.compactions.poll_batches()
    line = (
        f"applied {len(report.applied)}, retried directly {len(report.retried_directly)}, "
        f"still running: {', '.join(report.pending_batches) or 'none'}"
    )
    show(report, as_json, line)
