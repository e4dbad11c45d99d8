"""Escaped text seen as its decoded self, with a way back to the original positions.

A secret inside a JSON string that is itself inside a JSON string (tool-call arguments as a transcript
shows them, a tool result holding a serialized request) reaches the redactor as ``{\\"password\\":
\\"hunter2\\"}``: no rule written for plain text can read the label or the value through the
backslashes. An :class:`EscapeView` is the same text with one level of JSON string escapes decoded;
rules run on it as on any text, and every hit is mapped back to the span of the original it came from,
whole escape sequences included, so a replacement never cuts an escape in half.

Decoding is one pass of a regular expression over the text and the map is one entry per escape, so
building every view takes linear time.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass

# The escapes JSON defines; anything else after a backslash (a Windows path) is left as it is.
_ESCAPE = re.compile(r'\\(?:(["\\/bfnrt])|u([0-9a-fA-F]{4}))')
_SIMPLE = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}
MAX_DEPTH = 3
"""Levels of nesting decoded: a JSON string in a JSON string in a transcript is as deep as agents go."""


@dataclass(frozen=True)
class EscapeView:
    """Text with one more level of escapes decoded than its parent (the original, or another view).

    ``_view_at[k]`` is the view index just after the k-th decoded escape and ``_shift[k]`` how many
    more characters the parent has than the view before that index.
    """

    text: str
    parent: EscapeView | None
    _view_at: tuple[int, ...]
    _shift: tuple[int, ...]

    def _to_parent(self, index: int) -> int:
        k = bisect.bisect_right(self._view_at, index) - 1
        return index + (self._shift[k] if k >= 0 else 0)

    def windows(self, radius: int = 512) -> list[tuple[int, int]]:
        """Spans of the view around its decoded escapes, merged, widened to whole lines (up to
        ``radius`` characters more on each side).

        Text far from any escape reads the same in the view as in the parent, where the rules have
        already run; so only these spans need reading again."""
        out: list[tuple[int, int]] = []
        text = self.text
        for after in self._view_at:
            start, end = max(0, after - 1 - radius), min(len(text), after + radius)
            if out and start <= out[-1][1] + radius:
                out[-1] = (out[-1][0], end)
            else:
                out.append((start, end))
        return [_whole_lines(text, start, end, radius) for start, end in out]

    def to_original(self, start: int, end: int) -> tuple[int, int]:
        """The span of the original text that ``text[start:end]`` was decoded from."""
        view: EscapeView | None = self
        while view is not None:
            start, end = view._to_parent(start), view._to_parent(end)
            view = view.parent
        return start, end


def _whole_lines(text: str, start: int, end: int, reach: int) -> tuple[int, int]:
    """``start``..``end`` widened to the line boundaries within ``reach`` characters (else by ``reach``)."""
    before = text.rfind("\n", max(0, start - reach), start)
    after = text.find("\n", end, end + reach)
    return (
        before + 1 if before >= 0 else max(0, start - reach),
        after if after >= 0 else min(len(text), end + reach),
    )


def _decoded(text: str, parent: EscapeView | None) -> EscapeView | None:
    """One level decoded, or None when the text holds no escape to decode."""
    pieces: list[str] = []
    view_at: list[int] = []
    shift: list[int] = []
    pos = size = extra = 0
    for m in _ESCAPE.finditer(text):
        pieces.append(text[pos : m.start()])
        size += m.start() - pos
        simple = m.group(1)
        pieces.append(_SIMPLE[simple] if simple is not None else chr(int(m.group(2), 16)))
        size += 1
        extra += m.end() - m.start() - 1
        view_at.append(size)
        shift.append(extra)
        pos = m.end()
    if not view_at:
        return None
    pieces.append(text[pos:])
    return EscapeView("".join(pieces), parent, tuple(view_at), tuple(shift))


def escape_views(text: str, depth: int = MAX_DEPTH) -> list[EscapeView]:
    """The decoded views of ``text``, shallowest first (none when it holds no JSON escape)."""
    views: list[EscapeView] = []
    current, parent = text, None
    while len(views) < depth and "\\" in current:
        view = _decoded(current, parent)
        if view is None:
            break
        views.append(view)
        current, parent = view.text, view
    return views
