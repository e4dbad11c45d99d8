"""The conversation commands: init, create, import, append, context, stats, conversations, export, clear."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from sleepcompact.cli.common import (
    ImportFormat,
    JsonFlag,
    Kind,
    Plan,
    RenderFormat,
    Role,
    app,
    console,
    errors,
    preview,
    show,
)
from sleepcompact.cli.light import json_text, memory
from sleepcompact.domain.errors import InvalidSetting

ConversationArg = Annotated[str, typer.Argument(help="Conversation id.")]
PlanOption = Annotated[
    Plan | None, typer.Option(help="Plan cap: free 16k, pro 32k, ultra (the model's window).")
]


@app.command()
@errors
def init(as_json: JsonFlag = False) -> None:
    """Create the database or migrate it to the newest schema (safe to run again)."""
    from sleepcompact.store import migrate

    with memory(auto_migrate=True) as mem:
        engine = mem.admin.engine
        url = engine.url.render_as_string(hide_password=True)
        revision = migrate.current_revision(engine)
    show({"database": url, "revision": revision}, as_json, f"database {url} is at schema {revision}")


@app.command()
@errors
def create(
    model: Annotated[str | None, typer.Option(help="Model name (sets the window).")] = None,
    plan: PlanOption = None,
    context_window: Annotated[int | None, typer.Option(help="Override the model's context window.")] = None,
    tenant: Annotated[str, typer.Option(help="Tenant id.")] = "default",
    agent: Annotated[str, typer.Option(help="Agent id.")] = "default",
    summary_instructions: Annotated[
        str | None,
        typer.Option(help="Added to every summary of this conversation (sleep ticks, the guard, batches)."),
    ] = None,
    as_json: JsonFlag = False,
) -> None:
    """Create an empty conversation and print its id."""
    with memory() as mem:
        cid = mem.create_conversation(
            model,
            plan=plan.value if plan else None,
            context_window=context_window,
            tenant_id=tenant,
            agent_id=agent,
            policy={"summary_instructions": summary_instructions} if summary_instructions else None,
        )
    show({"conversation_id": cid}, as_json, cid)


@app.command("import")
@errors
def import_(
    file: Annotated[
        Path,
        typer.Argument(
            help=(
                "A file, its format detected from its content: JSON or JSONL messages, SWE-agent .traj, "
                "mini-swe-agent JSONL, a Claude Code transcript, Responses API / Agents SDK items, "
                "LangChain messages_to_dict, MemoryBank histories, a sleepcompact export."
            )
        ),
    ],
    fmt: Annotated[ImportFormat, typer.Option("--format", help="Message shape.")] = ImportFormat.auto,
    conversation: Annotated[
        str | None,
        typer.Option(help="Append to (or create) this conversation id; a lossless export: a copy under it."),
    ] = None,
    model: Annotated[
        str | None, typer.Option(help="Model (sets the window); default from the file or env.")
    ] = None,
    context_window: Annotated[int | None, typer.Option(help="Override the model's context window.")] = None,
    plan: PlanOption = None,
    tenant: Annotated[str | None, typer.Option(help="Tenant id (new conversations: default).")] = None,
    agent: Annotated[str | None, typer.Option(help="Agent id (new conversations: default).")] = None,
    all_records: Annotated[
        bool, typer.Option("--all", help="Import every record of a multi-record file.")
    ] = False,
    record: Annotated[int | None, typer.Option(help="Which record of a multi-record file (1-based).")] = None,
    new_ids: Annotated[
        bool,
        typer.Option("--new-ids", help="A lossless export: import a copy under new ids (else its own ids)."),
    ] = False,
    tenant_map: Annotated[
        list[str] | None,
        typer.Option("--tenant-map", help="A lossless export: OLD=NEW renames its tenant (repeatable)."),
    ] = None,
    as_json: JsonFlag = False,
) -> None:
    """Import conversations (all-or-nothing each) and print their ids. A lossless export (``export``)
    is restored exactly, in one transaction (docs/export.md)."""
    with memory() as mem:
        ids = mem.import_(
            file,
            fmt=fmt.value,
            conversation_id=conversation,
            model=model,
            context_window=context_window,
            plan=plan.value if plan else None,
            tenant_id=tenant,
            agent_id=agent,
            all_records=all_records,
            record=record,
            new_ids=new_ids,
            tenant_map=_pairs(tenant_map or []),
        )
    show({"conversation_ids": ids}, as_json, "\n".join(ids))


def _pairs(values: list[str]) -> dict[str, str]:
    """``--tenant-map OLD=NEW`` values as a dict."""
    out: dict[str, str] = {}
    for value in values:
        old, sep, new = value.partition("=")
        if not (sep and old and new):
            raise InvalidSetting(f"--tenant-map takes OLD=NEW, got {value!r}")
        out[old] = new
    return out


@app.command()
@errors
def append(
    conversation: ConversationArg,
    role: Annotated[Role, typer.Option(help="Who speaks.")],
    content: Annotated[str, typer.Option(help="The message text.")],
    kind: Annotated[Kind, typer.Option(help="A message, or context the agent was given.")] = Kind.message,
    tool_call_id: Annotated[str | None, typer.Option(help="For role tool: the call it answers.")] = None,
    as_json: JsonFlag = False,
) -> None:
    """Append one text message."""
    message: dict[str, Any] = {"role": role.value, "content": content}
    if kind != Kind.message:
        message["kind"] = kind.value
    if tool_call_id is not None:
        message["tool_call_id"] = tool_call_id
    with memory() as mem:
        result = mem.append(conversation, message)
    show(result, as_json, f"appended seq {', '.join(map(str, result.seqs))} ({result.tokens} tokens)")


@app.command()
@errors
def context(
    conversation: ConversationArg,
    fmt: Annotated[RenderFormat, typer.Option("--format", help="Provider shape.")] = RenderFormat.anthropic,
    system: Annotated[str | None, typer.Option(help="The system prompt your call will send.")] = None,
    as_json: JsonFlag = False,
) -> None:
    """Exactly what the next LLM call gets: system, messages and token figures."""
    with memory() as mem:
        view = mem.context(conversation, system=system, fmt=fmt.value)
    data = view.to_dict()

    def text() -> None:
        out = console()
        out.print(
            f"[bold]{conversation}[/bold]  {data['tokens']:,} tokens of {data['usable']:,} usable "
            f"({data['percent_of_usable']}%), soft {data['soft']:,}, hard {data['hard']:,}"
        )
        if data["memories"]:  # the block itself shows in the first user turn (or its own user message)
            out.print(
                f"[dim]recalled memories:[/dim] {len(data['memories'])} ({data['memory_tokens']:,} tokens)"
            )
        if data["system"]:
            out.print(f"[dim]system:[/dim] {preview(data['system'])}")
        for msg in data["messages"]:
            out.print(f"[dim]{msg['role']}:[/dim] {preview(msg.get('content'))}", markup=True)

    show(data, as_json, text)


@app.command()
@errors
def stats(
    conversation: Annotated[
        str | None, typer.Argument(help="Conversation id (omit for the whole database).")
    ] = None,
    as_json: JsonFlag = False,
) -> None:
    """Counts and tokens, and a conversation's budget figures."""
    with memory() as mem:
        data = mem.stats(conversation).to_dict()

    def text() -> None:
        table = Table(show_header=False)
        for key, value in data.items():
            shown = (
                json.dumps(value)
                if isinstance(value, dict)
                else f"{value:,}"
                if isinstance(value, int)
                else str(value)
            )
            table.add_row(key, shown)
        console().print(table)

    show(data, as_json, text)


@app.command()
@errors
def conversations(
    limit: Annotated[int, typer.Option(help="How many.")] = 50, as_json: JsonFlag = False
) -> None:
    """List conversations, most recently active first."""
    with memory() as mem:
        rows = mem.admin.conversations(limit)
    data = [
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

    def text() -> None:
        table = Table()
        for col in ("id", "tenant", "agent", "model", "live messages", "live tokens"):
            table.add_column(col)
        for c in rows:
            table.add_row(c.id, c.tenant_id, c.agent_id, c.model, str(c.live_messages), f"{c.live_tokens:,}")
        console().print(table)

    show(data, as_json, text)


@app.command()
@errors
def export(
    conversation: Annotated[
        str | None, typer.Argument(help="Conversation id (or give --agent for all of an agent's).")
    ] = None,
    agent: Annotated[
        str | None, typer.Option(help="Export every conversation of this agent, its journal and memories.")
    ] = None,
    tenant: Annotated[str, typer.Option(help="The agent's tenant (with --agent).")] = "default",
    with_memory: Annotated[
        bool,
        typer.Option("--with-memory", help="Add the agent's journal and memories (always with --agent)."),
    ] = False,
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Write the export to this file.")
    ] = None,
    shareable: Annotated[
        bool,
        typer.Option(
            "--shareable", help="Redact secrets everywhere in it (to share; an exact export restores)."
        ),
    ] = False,
    as_json: JsonFlag = False,
) -> None:
    """The lossless export (docs/export.md): settings, every message ever appended, every row with its
    state, every compaction; ``import`` restores it exactly. The document is JSON: printed, or written
    to ``--output`` (then ``--json`` prints where it went as JSON)."""
    if (conversation is None) == (agent is None):
        raise InvalidSetting("export takes a conversation id or --agent, one of the two")
    with memory() as mem:
        if agent is not None:
            document = mem.export_agent(agent, tenant_id=tenant, shareable=shareable).to_dict()
            bodies = document["conversations"]
        else:
            assert conversation is not None
            exported = mem.export(conversation, shareable=shareable, with_memory=with_memory)
            document = exported.to_dict()
            bodies = [document]
    if output is None:
        typer.echo(json_text(document))
        return
    output.write_text(json_text(document) + "\n", encoding="utf-8")
    messages = sum(len(b["appended"]) for b in bodies)
    written = {"output": str(output), "conversations": len(bodies), "messages": messages}
    show(written, as_json, f"wrote {len(bodies)} conversation(s), {messages} messages to {output}")


@app.command()
@errors
def clear(conversation: ConversationArg, as_json: JsonFlag = False) -> None:
    """Empty the live context. Nothing is deleted: the rows are archived and export still has them."""
    with memory() as mem:
        record = mem.clear(conversation)
    show(
        {"conversation_id": conversation, "compaction_id": record},
        as_json,
        f"cleared {conversation} (record {record})",
    )
