"""The agent commands: the journal and the long-term memories."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from sleepcompact.cli.common import JsonFlag, SourceType, app, console, errors, preview, show
from sleepcompact.cli.light import memory
from sleepcompact.domain.journal import KNOWN_TAGS, MemoryRecord
from sleepcompact.domain.provenance import PROVENANCES

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
    tag: Annotated[list[str] | None, typer.Option(help=f"Tags: {', '.join(sorted(KNOWN_TAGS))}.")] = None,
    provenance: Annotated[
        str,
        typer.Option(
            help=f"Where the text came from ({', '.join(PROVENANCES)}); tool, fetched and environment "
            "text is stored environmental whatever --source-type says."
        ),
    ] = "agent",
    as_json: JsonFlag = False,
) -> None:
    """Write a journal entry (scored now by the heuristic) and print its id."""
    with memory() as mem:
        entry_id = mem.journal.add(
            conversation,
            content,
            source_type=source_type.value,
            tags=tag or (),
            origin="manual",
            provenance=provenance,
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
                f"{r.source_type} ({r.provenance})" if r.provenance else r.source_type,
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
        bool,
        typer.Option("--all", help="Also invalidated memories (superseded, corrected or deleted: kept)."),
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


Scope = Annotated[str | None, typer.Option(help="Conversation id whose tenant and agent own the memory.")]
Tenant = Annotated[str | None, typer.Option(help="Tenant id (without --conversation; default: default).")]
Agent = Annotated[str | None, typer.Option(help="Agent id (without --conversation; default: default).")]


@memories_app.command("correct")
@errors
def memories_correct(
    memory_id: Annotated[int, typer.Argument(metavar="ID", help="Memory id (see `memories list`).")],
    text: Annotated[str, typer.Argument(help="The corrected statement.")],
    conversation: Scope = None,
    tenant: Tenant = None,
    agent: Agent = None,
    as_json: JsonFlag = False,
) -> None:
    """Replace a memory by your corrected statement (the old one is kept, invalidated)."""
    with memory() as mem:
        new = mem.memories.correct(
            memory_id, text, conversation_id=conversation, tenant_id=tenant, agent_id=agent
        )
    show(new, as_json, f"memory {memory_id} corrected by memory {new.id}")


@memories_app.command("delete")
@errors
def memories_delete(
    memory_id: Annotated[int, typer.Argument(metavar="ID", help="Memory id (see `memories list`).")],
    conversation: Scope = None,
    tenant: Tenant = None,
    agent: Agent = None,
    as_json: JsonFlag = False,
) -> None:
    """Stop recalling a memory (kept, invalidated: `memories list --all` still shows it)."""
    with memory() as mem:
        gone = mem.memories.delete(memory_id, conversation_id=conversation, tenant_id=tenant, agent_id=agent)
    show(gone, as_json, f"memory {memory_id} deleted ({gone.invalidation_reason or 'already invalid'})")


def _memory_table(rows: list[MemoryRecord]) -> None:
    """The memories as a table; a ``flagged`` one (never recalled) shows why it was flagged."""
    table = Table()
    for col in ("id", "kind", "confidence", "importance", "trust", "valid", "content"):
        table.add_column(col)
    for r in rows:
        valid = (
            f"no: {r.invalidation_reason}" if r.invalidation_reason else "no" if r.invalidated_at else "yes"
        )
        # Escaped: a flagged memory is an attacker's text, and rich would read its [markup].
        content = escape(preview(r.content, 90))
        if r.flags:
            content += "\nflagged: " + escape("; ".join(preview(f, 60) for f in r.flags))
        table.add_row(
            str(r.id),
            r.kind,
            f"{r.confidence:.2f}",
            str(r.importance),
            f"{r.source_trust:.1f}",
            valid,
            content,
        )
    console().print(table)
