"""Small readings of parsed JSON that the import formats share."""

from __future__ import annotations

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
