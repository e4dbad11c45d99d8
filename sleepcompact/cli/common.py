"""What every command shares: the app, the ``--json`` flag, one way to print "table or JSON", the
choices shown in ``--help``, and the error convention (Click's: user errors exit 1, usage errors 2).
"""

from __future__ import annotations

import enum
import functools
import json
import sys
from collections.abc import Callable
from typing import Annotated, Any, ParamSpec, TypeVar

import typer
from rich.console import Console

from sleepcompact.cli.light import json_text
from sleepcompact.domain.errors import SleepcompactError

app = typer.Typer(
    name="sleepcompact",
    help="Sleep-time compaction for long-running LLM agents.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

P = ParamSpec("P")
R = TypeVar("R")
EXIT_USER_ERROR = 1
"""A typed error (unknown conversation, bad input, unmigrated database...): one line on stderr, status 1.
Usage errors (a missing argument, a value not among the choices) exit 2, as Click does."""

JsonFlag = Annotated[bool, typer.Option("--json", help="Print JSON instead of text.")]


class ImportFormat(enum.StrEnum):
    """``--format`` of ``import``: the message shape (auto detects it)."""

    auto = "auto"
    openai = "openai"
    anthropic = "anthropic"


class RenderFormat(enum.StrEnum):
    """``--format`` of ``context``: which provider's request shape."""

    anthropic = "anthropic"
    openai = "openai"


class Plan(enum.StrEnum):
    """``--plan``: the window cap (free 16k, pro 32k, ultra: the model's window)."""

    free = "free"
    pro = "pro"
    ultra = "ultra"


class Role(enum.StrEnum):
    """``--role`` of ``append``."""

    system = "system"
    user = "user"
    assistant = "assistant"
    tool = "tool"


class Kind(enum.StrEnum):
    """``--kind`` of ``append``."""

    message = "message"
    context = "context"


class SourceType(enum.StrEnum):
    """``--source-type`` of ``journal add``: how far the entry's source is trusted."""

    direct = "direct"
    observation = "observation"
    inference = "inference"
    environmental = "environmental"


def console() -> Console:
    """A console on stdout; piped output has no terminal width, so 120 columns keep tables readable."""
    return Console(highlight=False, width=None if sys.stdout.isatty() else 120)


def errors(fn: Callable[P, R]) -> Callable[P, R]:
    """Typed errors become one line on stderr and exit status 1; no traceback for a user mistake."""

    @functools.wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return fn(*args, **kwargs)
        except SleepcompactError as exc:
            typer.echo(f"error: {exc}", err=True)
            raise typer.Exit(EXIT_USER_ERROR) from None

    return wrapper


def show(data: Any, as_json: bool, text: Callable[[], None] | str) -> None:
    """The one way a command prints what it found: JSON with ``--json``, else its text (a line or a
    function that prints a table)."""
    if as_json:
        sys.stdout.write(json_text(data) + "\n")
    elif isinstance(text, str):
        typer.echo(text)
    else:
        text()


def preview(content: Any, width: int = 160) -> str:
    """One line of at most ``width`` characters of a message's content."""
    text = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
    text = " ".join(str(text).split())
    return text if len(text) <= width else text[: width - 1] + "…"
