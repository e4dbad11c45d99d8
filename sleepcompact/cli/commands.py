"""The Typer app with every command on it: importing a command module registers its commands."""

from __future__ import annotations

from typing import Annotated

import typer

from sleepcompact.cli import (
    agents,
    compactions,
    conversations,
    demo,
    evaluation,
    mcp_server,
    processes,
    report,
)
from sleepcompact.cli.common import app


def _version(value: bool) -> None:
    if value:
        from sleepcompact import __version__

        typer.echo(f"sleepcompact {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit.")
    ] = False,
) -> None:
    """Sleep-time compaction for long-running LLM agents."""


__all__ = [
    "agents",
    "app",
    "compactions",
    "conversations",
    "demo",
    "evaluation",
    "mcp_server",
    "processes",
    "report",
]
