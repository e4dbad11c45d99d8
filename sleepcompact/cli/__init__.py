"""The ``sleepcompact`` command. Thin: parse, call the facade, print.

Every command that prints data takes ``--json``. Errors go to stderr with a
non-zero exit status and say what was wrong.
"""

from __future__ import annotations

import functools
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, ParamSpec, TypeVar

import typer
from rich.console import Console
from rich.table import Table

from sleepcompact.api import Memory
from sleepcompact.config import Settings
from sleepcompact.domain.errors import SleepcompactError
from sleepcompact.logs import configure_logging

app = typer.Typer(
    name="sleepcompact",
    help="Sleep-time compaction for long-running LLM agents.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

P = ParamSpec("P")
R = TypeVar("R")
EXIT_USER_ERROR = 2

JsonFlag = Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")]


def _console() -> Console:
    # Piped output has no terminal width; 120 columns keeps tables readable in logs and CI.
    return Console(highlight=False, width=None if sys.stdout.isatty() else 120)


def _errors(fn: Callable[P, R]) -> Callable[P, R]:
    """Typed errors become one line on stderr and exit status 2; no traceback for a user mistake."""

    @functools.wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return fn(*args, **kwargs)
        except SleepcompactError as exc:
            typer.echo(f"error: {exc}", err=True)
            raise typer.Exit(EXIT_USER_ERROR) from None

    return wrapper


def _memory(*, auto_migrate: bool | None = None, offline: bool = False) -> Memory:
    settings = Settings.from_env()
    if offline:
        settings = settings.with_overrides(summarizer="offline")
    configure_logging(settings)
    return Memory(settings, auto_migrate=auto_migrate)


def _print_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n")


@app.command()
@_errors
def init() -> None:
    """Create the database or migrate it to the newest schema (safe to run again)."""
    from sleepcompact.store import migrate

    settings = Settings.from_env()
    configure_logging(settings)
    mem = Memory(settings, auto_migrate=True)
    rev = migrate.current_revision(mem.engine)
    typer.echo(f"database {mem.engine.url.render_as_string(hide_password=True)} is at schema {rev}")
    mem.close()


@app.command()
@_errors
def demo(
    seed: Annotated[int, typer.Option(help="Seed of the synthetic agents.")] = 0,
    as_json: JsonFlag = False,
) -> None:
    """The main job: synthetic agents live two nights on the real worker and scheduler (embedded default)."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from sleepcompact.demo import run_demo

    # The demo is deterministic and offline whatever the environment holds (no key is used or needed).
    with _memory(offline=True) as mem:
        # The table tells the story; the per-tick log lines go to the demo's log file instead.
        configure_logging(mem.settings.with_overrides(log_level="WARNING"), force=True)
        if as_json:
            report = run_demo(mem, seed=seed)
            _print_json(report.to_dict())
            return
        console = _console()
        columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
        with Progress(*columns, console=console, transient=False) as bar:
            tasks: dict[str, Any] = {}

            def progress(stage: str, done: int, total: int) -> None:
                if stage not in tasks:
                    tasks[stage] = bar.add_task(stage, total=total)
                bar.update(tasks[stage], completed=done, total=total)

            report = run_demo(mem, seed=seed, progress=progress)
    _demo_table(console, report)


def _demo_table(console: Console, report: Any) -> None:
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
    console.print(table)
    console.print("Conversations:")
    for r in report.rows:
        console.print(f"  {r.conversation_id}  {r.label}")
    coder = next(r for r in report.rows if r.compaction_id)
    assistant = report.rows[-1]
    console.print("Look further:")
    for cmd in (
        f"sleepcompact history {coder.conversation_id}",
        f"sleepcompact context {coder.conversation_id}",
        f"sleepcompact restore {coder.compaction_id}",
        f"sleepcompact memories list {assistant.conversation_id} --all",
        f"sleepcompact context {assistant.conversation_id}",
    ):
        console.print(f"  {cmd}")
    console.print(f"Worker and scheduler log: {report.log}")


@app.command("import")
@_errors
def import_(
    file: Annotated[Path, typer.Argument(help="JSON, JSONL, SWE-agent .traj or mini-swe-agent JSONL file.")],
    fmt: Annotated[str, typer.Option("--format", help="Message shape: auto, openai or anthropic.")] = "auto",
    conversation: Annotated[
        str | None, typer.Option(help="Append to (or create) this conversation id.")
    ] = None,
    model: Annotated[
        str | None, typer.Option(help="Model (sets the window); default from the file or env.")
    ] = None,
    context_window: Annotated[int | None, typer.Option(help="Override the model's context window.")] = None,
    plan: Annotated[str | None, typer.Option(help="Plan cap: free, pro or ultra.")] = None,
    tenant: Annotated[str | None, typer.Option(help="Tenant id (new conversations: default).")] = None,
    agent: Annotated[str | None, typer.Option(help="Agent id (new conversations: default).")] = None,
    all_records: Annotated[
        bool, typer.Option("--all", help="Import every record of a multi-record file.")
    ] = False,
    record: Annotated[int | None, typer.Option(help="Which record of a multi-record file (1-based).")] = None,
    as_json: JsonFlag = False,
) -> None:
    """Import conversations (all-or-nothing each) and print their ids."""
    if fmt not in ("auto", "openai", "anthropic"):
        raise typer.BadParameter("must be auto, openai or anthropic", param_hint="--format")
    with _memory() as mem:
        ids = mem.import_(
            file,
            fmt=fmt,  # type: ignore[arg-type]  # checked above
            conversation_id=conversation,
            model=model,
            context_window=context_window,
            plan=plan,
            tenant_id=tenant,
            agent_id=agent,
            all_records=all_records,
            record=record,
        )
    if as_json:
        _print_json({"conversation_ids": ids})
    else:
        for cid in ids:
            typer.echo(cid)


@app.command()
@_errors
def create(
    model: Annotated[str | None, typer.Option(help="Model name (sets the window).")] = None,
    plan: Annotated[str | None, typer.Option(help="Plan cap: free, pro or ultra.")] = None,
    context_window: Annotated[int | None, typer.Option(help="Override the model's context window.")] = None,
    tenant: Annotated[str, typer.Option(help="Tenant id.")] = "default",
    agent: Annotated[str, typer.Option(help="Agent id.")] = "default",
) -> None:
    """Create an empty conversation and print its id."""
    with _memory() as mem:
        typer.echo(
            mem.create_conversation(
                model, plan=plan, context_window=context_window, tenant_id=tenant, agent_id=agent
            )
        )


@app.command()
@_errors
def append(
    conversation: Annotated[str, typer.Argument(help="Conversation id.")],
    role: Annotated[str, typer.Option(help="system, user, assistant or tool.")],
    content: Annotated[str, typer.Option(help="The message text.")],
    kind: Annotated[str, typer.Option(help="message or context.")] = "message",
    tool_call_id: Annotated[str | None, typer.Option(help="For role tool: the call it answers.")] = None,
    as_json: JsonFlag = False,
) -> None:
    """Append one text message."""
    message: dict[str, Any] = {"role": role, "content": content}
    if kind != "message":
        message["kind"] = kind
    if tool_call_id is not None:
        message["tool_call_id"] = tool_call_id
    with _memory() as mem:
        result = mem.append(conversation, message)
    if as_json:
        _print_json({"conversation_id": conversation, "seqs": list(result.seqs), "tokens": result.tokens})
    else:
        typer.echo(f"appended seq {', '.join(map(str, result.seqs))} ({result.tokens} tokens)")


@app.command()
@_errors
def context(
    conversation: Annotated[str, typer.Argument(help="Conversation id.")],
    fmt: Annotated[str, typer.Option("--format", help="anthropic or openai.")] = "anthropic",
    system: Annotated[str | None, typer.Option(help="The system prompt your call will send.")] = None,
    as_json: JsonFlag = False,
) -> None:
    """Exactly what the next LLM call gets: system, messages and token figures."""
    if fmt not in ("anthropic", "openai"):
        raise typer.BadParameter("must be anthropic or openai", param_hint="--format")
    with _memory() as mem:
        view = mem.context(conversation, system=system, fmt=fmt)  # type: ignore[arg-type]  # checked above
    data = view.to_dict()
    if as_json:
        _print_json(data)
        return
    console = _console()
    console.print(
        f"[bold]{conversation}[/bold]  {data['tokens']:,} tokens of {data['usable']:,} usable "
        f"({data['percent_of_usable']}%), soft {data['soft']:,}, hard {data['hard']:,}"
    )
    if data["memories"]:  # the block itself shows in the first user turn (or its own user message)
        n, tokens = len(data["memories"]), data["memory_tokens"]
        console.print(f"[dim]recalled memories:[/dim] {n} ({tokens:,} tokens)")
    if data["system"]:
        console.print(f"[dim]system:[/dim] {_preview(data['system'])}")
    for msg in data["messages"]:
        console.print(f"[dim]{msg['role']}:[/dim] {_preview(msg.get('content'))}", markup=True)


def _preview(content: Any, width: int = 160) -> str:
    text = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
    text = " ".join(str(text).split())
    return text if len(text) <= width else text[: width - 1] + "…"


@app.command()
@_errors
def stats(
    conversation: Annotated[
        str | None, typer.Argument(help="Conversation id (omit for the whole database).")
    ] = None,
    as_json: JsonFlag = False,
) -> None:
    """Counts and tokens, and a conversation's budget figures."""
    with _memory() as mem:
        data = mem.stats(conversation)
    if as_json:
        _print_json(data)
        return
    table = Table(show_header=False)
    for key, value in data.items():
        table.add_row(
            key,
            json.dumps(value)
            if isinstance(value, dict)
            else f"{value:,}"
            if isinstance(value, int)
            else str(value),
        )
    _console().print(table)


@app.command()
@_errors
def conversations(
    limit: Annotated[int, typer.Option(help="How many.")] = 50, as_json: JsonFlag = False
) -> None:
    """List conversations, most recently active first."""
    with _memory() as mem:
        rows = mem.list_conversations(limit)
    if as_json:
        _print_json(
            [
                {
                    "id": c.id,
                    "tenant_id": c.tenant_id,
                    "agent_id": c.agent_id,
                    "model": c.model,
                    "live_messages": c.live_messages,
                    "live_tokens": c.live_tokens,
                }
                for c in rows
            ]
        )
        return
    table = Table()
    for col in ("id", "tenant", "agent", "model", "live messages", "live tokens"):
        table.add_column(col)
    for c in rows:
        table.add_row(c.id, c.tenant_id, c.agent_id, c.model, str(c.live_messages), f"{c.live_tokens:,}")
    _console().print(table)


@app.command()
@_errors
def export(
    conversation: Annotated[str, typer.Argument(help="Conversation id.")],
    output: Annotated[Path | None, typer.Option("--output", "-o", help="Write to this file.")] = None,
    as_json: JsonFlag = True,
) -> None:
    """Every message ever appended, with its state (always JSON)."""
    with _memory() as mem:
        data = mem.export(conversation)
    if output is not None:
        output.write_text(
            json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n", encoding="utf-8"
        )
        typer.echo(f"wrote {len(data['appended'])} messages to {output}")
    else:
        _print_json(data)


@app.command()
@_errors
def clear(conversation: Annotated[str, typer.Argument(help="Conversation id.")]) -> None:
    """Empty the live context. Nothing is deleted: the rows are archived and export still has them."""
    with _memory() as mem:
        cid = mem.clear(conversation)
    typer.echo(f"cleared {conversation} (record {cid})")


def main() -> None:
    """Console-script entry point."""
    app()


# The compaction commands live beside this module; importing it registers them on ``app``.
from sleepcompact.cli import agents as _agents  # noqa: E402
from sleepcompact.cli import compactions as _compactions  # noqa: E402
from sleepcompact.cli import evaluation as _evaluation  # noqa: E402
from sleepcompact.cli import processes as _processes  # noqa: E402
from sleepcompact.cli import report as _report  # noqa: E402

__all__ = ["_agents", "_compactions", "_evaluation", "_processes", "_report", "app", "main"]
