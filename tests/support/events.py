"""The telemetry events a test saw: what the library emitted (``sleepcompact.telemetry``) while it ran."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from sleepcompact.telemetry import subscribe, unsubscribe


@contextmanager
def recorded(name: str) -> Iterator[list[dict[str, Any]]]:
    """The fields of every ``name`` event emitted inside the block, in order."""
    seen: list[dict[str, Any]] = []

    def observer(event: str, fields: Mapping[str, Any]) -> None:
        if event == name:
            seen.append(dict(fields))

    subscribe(observer)
    try:
        yield seen
    finally:
        unsubscribe(observer)
