"""The agent commands: the journal and the long-term memories."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.table import Table

from sleepcompact.cli.common import JsonFlag, SourceType, app, console, errors, memory, preview, show
from sleepcompact.domain.journal import TAG_BONUS, MemoryRecord

journal_app = typer.Typer(
    help="The agent's journal (consolidated into memory during sleep).", no_args_is_help=True
)
memories_app = typer.Typer(help="The agent's long-term memories.", no_args_is_help=True)
app.add_typer(journal_app, name="journal")
app.add_typer(memories_app, name="memories")


@journal_app.command("add")
@errors
def journal_add(
    conversation: Annotated[
        str, typer.Argument(help="Conversation id (its tenant and agent own the entry).")
    ],
    content: Annotated[str, typer.Argument(help="What to remember.")],
    source_type: Annotated[
        SourceType, typer.Option(help="How far the source is trusted.")
    ] = SourceType.direct,
    tag: Annotated[list[str] | None, typer.Option(help=f"Tags: {', '.join(sorted(TAG_BONUS))}.")] = None,
    as_json: JsonFlag = False,
) -> None:
    """Write a journal entry (scored now by the heuristic) and print its id."""
    with memory() as mem:
        entry_id = mem.journal.add(
            conversation, content, source_type=source_type.value, tags=tag or (), origin="manual"
        )
    show({"journal_entry_id": entry_id}, as_json, f"journal entry {entry_id}")


@journal_app.command("list")
@errors
def journal_list(
    conversation: Annotated[str, typer.Argument(help="Conversation id.")], as_json: JsonFlag = False
) -> None:
    """The journal of the conversation's agent."""
    with memory() as mem:
        rows = mem.journal.entries(conversation)

    def text() -> None:
        table = Table()
        for col in ("id", "status", "importance", "source", "origin", "tags", "content"):
            table.add_column(col)
        for r in rows:
            table.add_row(
                str(r.id),
                r.status,
                str(r.importance),
                r.source_type,
                r.origin,
                ",".join(r.tags),
                preview(r.content, 80),
            )
        console().print(table)

    show(rows, as_json, text)


@memories_app.command("list")
@errors
def memories_list(
    conversation: Annotated[str, typer.Argument(help="Conversation id (its tenant and agent).")],
    include_invalid: Annotated[
        bool, typer.Option("--all", help="Also superseded memories (kept, never deleted).")
    ] = False,
    as_json: JsonFlag = False,
) -> None:
    """What the agent remembers."""
    with memory() as mem:
        rows = mem.memories.list(conversation, include_invalid=include_invalid)
    show(rows, as_json, lambda: _memory_table(rows))


@memories_app.command("search")
@errors
def memories_search(
    conversation: Annotated[str, typer.Argument(help="Conversation id.")],
    query: Annotated[str, typer.Argument(help="Words to find.")],
    as_json: JsonFlag = False,
) -> None:
    """Valid memories containing every word of the query."""
    with memory() as mem:
        rows = mem.memories.search(conversation, query)
    show(rows, as_json, lambda: _memory_table(rows))


def _memory_table(rows: list[MemoryRecord]) -> None:
    table = Table()
    for col in ("id", "kind", "confidence", "importance", "valid", "content"):
        table.add_column(col)
    for r in rows:
        table.add_row(
            str(r.id),
            r.kind,
            f"{r.confidence:.2f}",
            str(r.importance),
            "no" if r.invalidated_at else "yes",
            preview(r.content, 90),
        )
    console().print(table)
