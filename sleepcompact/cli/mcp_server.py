"""The ``mcp`` command: an MCP server on stdio (``sleepcompact.integrations.mcp``).

An MCP client starts it as a child process and speaks JSON-RPC over its stdin and stdout, so stdout
carries the protocol and nothing else: logs go to stderr, and so does anything printed. The SDK is
imported only here, when the command runs.
"""

from __future__ import annotations

from typing import Annotated

import typer

from sleepcompact.cli.common import EXIT_USER_ERROR, app, errors
from sleepcompact.cli.light import memory


@app.command("mcp")
@errors
def mcp_server(
    conversation: Annotated[
        str | None,
        typer.Option(help="The conversation the tools read when the client names none (default: none)."),
    ] = None,
) -> None:
    """Serve conversations' archives to an MCP client over stdio.

    Tools: search_history and read_archived (the agent's recall tools), stats, memories; each takes
    a conversation id, optional with --conversation. Needs the mcp extra (docs/integrations.md).
    """
    from sleepcompact.aio import AsyncMemory

    try:
        from sleepcompact.integrations.mcp import build_server, stdout_for_protocol_only
    except ImportError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(EXIT_USER_ERROR) from None
    # From the first byte: a hook module or a migration printing while the server is built, or any
    # thread printing while it runs, would corrupt what the client reads on stdout.
    with stdout_for_protocol_only():
        mem = memory()
        try:
            if conversation is not None:
                mem.check(conversation)  # an unknown id fails here, not on the client's first call
            build_server(AsyncMemory(memory=mem), conversation).run("stdio")
        finally:
            mem.close()  # the server closed it already unless it never started: closing twice is harmless
