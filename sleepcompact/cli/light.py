"""What the commands share that needs neither Typer nor Rich: the facade built from the environment and
JSON output. ``quick`` answers its commands with this alone, so they start without the Typer app."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from sleepcompact.config import Settings
from sleepcompact.logs import configure_logging

if TYPE_CHECKING:
    from sleepcompact.api import Memory


def memory(*, auto_migrate: bool | None = None, offline: bool = False) -> Memory:
    """The facade for this command, configured from the environment, with the CLI's logging."""
    from sleepcompact.api import Memory

    return Memory(settings(offline=offline), auto_migrate=auto_migrate)


def settings(*, offline: bool = False) -> Settings:
    """The settings from the environment (``offline``: with the offline summarizer), and the CLI's
    logging configured from them."""
    chosen = Settings.from_env()
    if offline:
        chosen = chosen.with_overrides(summarizer="offline")
    configure_logging(chosen)
    return chosen


def json_text(data: Any) -> str:
    """``data`` as indented JSON (typed results by their ``to_dict()``)."""
    return json.dumps(plain(data), indent=2, ensure_ascii=False, default=str)


def plain(data: Any) -> Any:
    """A typed result (or a list or dict of them) as plain JSON-ready data."""
    if isinstance(data, list | tuple):
        return [plain(d) for d in data]
    if isinstance(data, dict):
        return {k: plain(v) for k, v in data.items()}
    to_dict = getattr(data, "to_dict", None)
    return to_dict() if callable(to_dict) else data
