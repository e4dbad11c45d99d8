"""The clock and the ids the services stamp on what they write (one place, so tests can reason about them)."""

from __future__ import annotations

import secrets
from datetime import UTC, datetime


def utcnow() -> datetime:
    """The current time in UTC."""
    return datetime.now(UTC)


def new_id(prefix: str) -> str:
    """A short random id with a readable prefix, e.g. ``conv_4f1c...``."""
    return f"{prefix}_{secrets.token_hex(8)}"
