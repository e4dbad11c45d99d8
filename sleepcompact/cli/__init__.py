"""The ``sleepcompact`` command. Thin: parse, call the facade, print.

Every command that prints data or an id takes ``--json``. Typed errors go to stderr as one line and exit
1; usage errors exit 2 (Click's convention). The commands live beside this module, grouped by what they
act on; ``commands`` imports them all onto the Typer ``app``. ``check`` in its plain forms is answered
by ``quick`` before any of that is imported (see there why).
"""

from __future__ import annotations

import sys
from typing import Any

from sleepcompact._lazy import resolve
from sleepcompact.cli import quick

_LAZY = {"app": "sleepcompact.cli.commands"}


def main() -> None:
    """Console-script entry point."""
    status = quick.run(sys.argv[1:])
    if status is not None:
        raise SystemExit(status)
    from sleepcompact.cli.commands import app

    app()


def __getattr__(name: str) -> Any:
    return resolve(globals(), __name__, _LAZY, name)


__all__ = ["app", "main"]
