"""``sleepcompact check CONV [--json]`` answered without building the Typer app.

``check`` is the command a shell hook or a wrapper script runs before every model call, so its start-up
is its cost: Typer, Click, Rich and pydantic take about 0.15 s to import and to build the command tree,
more than the check itself. Only the exact plain forms are answered here; anything else (``--help``, a
misspelt option, a missing argument) goes to the full CLI, so usage errors and help read the same.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import asdict

from sleepcompact.domain.guard import Check

EXIT_USER_ERROR = 1


def run(argv: Sequence[str]) -> int | None:
    """The exit status of ``argv`` when it is a command answered here, else None (the full CLI runs)."""
    args = _check_args(argv)
    if args is None:
        return None
    conversation, as_json = args
    # Imported here, not at the top: the full CLI's path does not need them. The guard's decision needs
    # the dependencies and the budget, not the facade, which imports every service.
    from sleepcompact.bootstrap import bootstrap
    from sleepcompact.cli.light import json_text
    from sleepcompact.config import Settings
    from sleepcompact.domain.errors import SleepcompactError
    from sleepcompact.logs import configure_logging_when_used
    from sleepcompact.services.budgets import check

    try:
        chosen = Settings.from_env()
        configure_logging_when_used(chosen)  # the CLI's logging, but only if something logs
        deps = bootstrap(chosen)
        try:
            decision = check(deps, conversation)
        finally:
            deps.close()
    except SleepcompactError as exc:
        sys.stderr.write(f"error: {exc}\n")
        return EXIT_USER_ERROR
    sys.stdout.write((json_text(asdict(decision)) if as_json else decision_line(decision)) + "\n")
    return 0


def decision_line(d: Check) -> str:
    """The text ``check`` prints: the decision and the figures it was made from."""
    return (
        f"{d.decision}: {d.tokens:,} tokens, {d.percent_of_usable:.1f}% of {d.usable:,} usable "
        f"(soft {d.soft:,}, hard {d.hard:,}, target {d.target:,})"
        + ("" if d.auto_compact else "; auto-compaction off")
        + ("; sleep requested" if d.sleep_requested else "")
    )


def _check_args(argv: Sequence[str]) -> tuple[str, bool] | None:
    """(conversation, --json) for ``check CONV`` with an optional ``--json`` either side, else None."""
    if len(argv) not in (2, 3) or argv[0] != "check":
        return None
    rest = list(argv[1:])
    as_json = "--json" in rest
    if as_json:
        rest.remove("--json")
    if len(rest) != 1 or rest[0].startswith("-"):
        return None
    return rest[0], as_json
