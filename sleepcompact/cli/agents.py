"""The agent commands: journal and memories."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.table import Table

from sleepcompact.cli import JsonFlag, _console, _errors, _memory, _preview, _print_json, app

journal_app = typer.Typer(
    help="The agent's journal (consolidated into memory during sleep).", no_args_is_help=True
)
memories_app = typer.Typer(help="The agent's long-term memories.", no_args_is_help=True)
app.add_typer(journal_app, name="journal")
app.add_typer(memories_app, name="memories")


@journal_app.command("add")
@_errors
def journal_add(
    conversation: Annotated[
        str, typer.Argument(help="Conversation id (its tenant and agent own the entry).")
    ],
    content: Annotated[str, typer.Argument(help="What to remember.")],
    source_type: Annotated[
        str, typer.Option(help="direct, observation, inference or environmental.")
    ] = "direct",
    tag: Annotated[
        list[str] | None, typer.Option(help="preference, decision, error, deadline, fact...")
    ] = None,
) -> None:
    """Write a journal entry (scored now by the heuristic)."""
    with _memory() as mem:
        entry_id = mem.add_journal_entry(
            conversation, content, source_type=source_type, tags=tag or (), origin="manual"
        )
    typer.echo(f"journal entry {entry_id}")


@journal_app.command("list")
@_errors
def journal_list(
    conversation: Annotated[str, typer.Argument(help="Conversation id.")], as_json: JsonFlag = False
) -> None:
    """The journal of the conversation's agent."""
    with _memory() as mem:
        rows = mem.journal_entries(conversation)
    if as_json:
        _print_json(rows)
        return
    table = Table()
    for col in ("id", "status", "importance", "source", "origin", "tags", "content"):
        table.add_column(col)
    for r in rows:
        table.add_row(
            str(r["id"]),
            r["status"],
            str(r["importance"]),
            r["source_type"],
            r["origin"],
            ",".join(r["tags"]),
            _preview(r["content"], 80),
        )
    _console().print(table)


@memories_app.command("list")
@_errors
def memories_list(
    conversation: Annotated[str, typer.Argument(help="Conversation id (its tenant and agent).")],
    include_invalid: Annotated[
        bool, typer.Option("--all", help="Also superseded memories (kept, never deleted).")
    ] = False,
    as_json: JsonFlag = False,
) -> None:
    """What the agent remembers."""
    with _memory() as mem:
        rows = mem.memories(conversation, include_invalid=include_invalid)
    _memory_table(rows, as_json)


@memories_app.command("search")
@_errors
def memories_search(
    conversation: Annotated[str, typer.Argument(help="Conversation id.")],
    query: Annotated[str, typer.Argument(help="Words to find.")],
    as_json: JsonFlag = False,
) -> None:
    """Valid memories containing every word of the query."""
    with _memory() as mem:
        rows = mem.search_memories(conversation, query)
    _memory_table(rows, as_json)


def _memory_table(rows: list[dict[str, object]], as_json: bool) -> None:
    if as_json:
        _print_json(rows)
        return
    table = Table()
    for col in ("id", "kind", "confidence", "importance", "valid", "content"):
        table.add_column(col)
    for r in rows:
        table.add_row(
            str(r["id"]),
            str(r["kind"]),
            f"{r['confidence']:.2f}",
            str(r["importance"]),
            "no" if r["invalidated_at"] else "yes",
            _preview(r["content"], 90),
        )
    _console().print(table)
