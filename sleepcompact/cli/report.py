"""The ``report`` command: one self-contained HTML page (and/or JSON) about a conversation's life."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path
from typing import Annotated

import typer

from sleepcompact.cli.common import EXIT_USER_ERROR, app, errors, show
from sleepcompact.cli.light import memory
from sleepcompact.report import render_html
from sleepcompact.services.report import Report


def write_atomic(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` so a reader sees the old file or the whole new one, never a part.

    A temporary file in the same directory (same filesystem, so the rename is
    atomic) is written, synced and renamed over the target; on any failure it is
    removed and the target is left untouched.
    """
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        # mkstemp creates the file 0600; a report is meant to be shared, so honour the umask instead.
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def _describe(data: Report) -> str:
    peak = max(data.points, key=lambda p: p.tokens)
    applied = sum(1 for c in data.compactions if c.status == "applied")
    return (
        f"{data.conversation_id}: {len(data.points)} points, peak {peak.tokens:,} model tokens at seq "
        f"{peak.seq}, now {data.tokens:,} (usable {data.usable:,}, soft {data.soft:,}, hard {data.hard:,}); "
        f"{len(data.compactions)} compactions, {applied} applied"
    )


@app.command()
@errors
def report(
    conversation: Annotated[str, typer.Argument(help="Conversation id.")],
    html: Annotated[
        Path | None,
        typer.Option("--html", help="Write the report to this file (one self-contained HTML page)."),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the chart's data as JSON.")] = False,
) -> None:
    """Live tokens over the conversation's life with compactions and thresholds, and every summary.

    With --html FILE, writes one page that opens offline (inline SVG chart, no
    script); with --json, prints the series and the compactions; with neither,
    prints a one-line summary.
    """
    with memory() as mem:
        # Built before anything is written: an unknown conversation leaves no file behind.
        data = mem.admin.report(conversation)
    if html is not None:
        try:
            write_atomic(html, render_html(data))
        except OSError as exc:
            typer.echo(f"error: cannot write {html}: {exc.strerror or exc}", err=True)
            raise typer.Exit(EXIT_USER_ERROR) from None
    if html is not None and not as_json:
        typer.echo(f"wrote {html} ({len(data.points)} points, {len(data.compactions)} compactions)")
    else:
        show(data, as_json, _describe(data))
