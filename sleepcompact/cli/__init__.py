"""The ``sleepcompact`` command. Thin: parse, call the facade, print.

Every command that prints data or an id takes ``--json``. Typed errors go to stderr as one line and exit
1; usage errors exit 2 (Click's convention). The commands live beside this module, grouped by what
they act on; importing them registers them on ``app``.
"""

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


def main() -> None:
    """Console-script entry point."""
    app()


__all__ = [
    "agents",
    "app",
    "compactions",
    "conversations",
    "demo",
    "evaluation",
    "main",
    "mcp_server",
    "processes",
    "report",
]
