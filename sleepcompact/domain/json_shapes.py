"""Small JSON helpers: readings of parsed JSON the import formats share, and records made JSON-ready."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import fields, is_dataclass
from datetime import UTC, datetime
from typing import Any

_JSON_KINDS: tuple[tuple[type, str], ...] = (
    (bool, "boolean"),
    (dict, "object"),
    (list, "array"),
    (str, "string"),
)


def json_kind(value: Any) -> str:
    """The JSON name of a parsed value's type, for error messages."""
    if value is None:
        return "null"
    return next((name for kind, name in _JSON_KINDS if isinstance(value, kind)), "number")


def join_text(content: Any) -> Any:
    """A list made only of text blocks as one string (dropping cache_control and the like)."""
    if content is None:
        return ""
    if isinstance(content, list) and all(
        isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str) for b in content
    ):
        return "\n".join(b["text"] for b in content)
    return content


def json_problem(value: Any, max_depth: int) -> str | None:
    """Why ``value`` (parsed JSON, or Python data about to be stored as JSON) could not be stored and
    sent back as valid JSON: nesting deeper than ``max_depth`` or a NaN / Infinity; None when it can.

    Iterative, so a value nested far past the interpreter's recursion limit is measured, not crashed on."""
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, float) and not math.isfinite(item):
            return f"{item!r} is not a finite number (JSON has no NaN or Infinity)"
        if isinstance(item, Mapping | list | tuple):
            if depth > max_depth:
                return f"nested deeper than {max_depth} levels"
            children = item.values() if isinstance(item, Mapping) else item
            stack.extend((child, depth + 1) for child in children)
    return None


def json_ready(value: Any) -> Any:
    """A record (or anything holding records) as JSON-ready values: dataclasses become dicts, tuples
    lists, datetimes ISO 8601 text. What every public result's ``to_dict()`` is built on."""
    if is_dataclass(value) and not isinstance(value, type):
        return {f.name: json_ready(getattr(value, f.name)) for f in fields(value)}
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, Mapping):
        return {str(k): json_ready(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_ready(v) for v in value]
    return value


def source_time(value: Any) -> datetime | None:
    """A timestamp a log gives (ISO 8601 text, with ``Z`` or an offset, or a bare date) as an aware UTC
    datetime; None when absent or unreadable, since a log's clock is provenance, not something to
    refuse an import over. A time without an offset is taken as UTC."""
    if not isinstance(value, str) or not value.strip():
        return None
    text = value.strip()
    try:
        parsed = datetime.fromisoformat(text)  # a bare date reads as its midnight
    except ValueError:
        return None
    return parsed.replace(tzinfo=UTC) if parsed.tzinfo is None else parsed.astimezone(UTC)
