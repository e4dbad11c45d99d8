"""The identifiers a cut took: what an action-ledger line lists when a call's arguments were cut for room.

A script written with a heredoc, a config passed inline: the ledger shows 240 characters of a call's
arguments, and the names in the rest (``django.db.backends.sqlite3``, ``:memory:``) are what a later
call types again. So the line lists them (``; cut: `a`, `b```), each name once, on the newest line
that has it.
"""

from __future__ import annotations

from collections.abc import Sequence

from sleepcompact.domain.identifiers import find_identifiers
from sleepcompact.domain.summary_items import NOT_IDENTIFIERS

CUT = "; cut: "
"""How a line's list starts (a carried ledger finds it by this)."""
_NAME_CHARS = 100  # a longer identifier (a whole statement) is not listed from a cut argument
_LINE_CHARS = 400  # the most a line lists of what its cut argument named


def cut_names(full: str, shown: str) -> tuple[str, ...]:
    """The identifiers of ``full`` that its cut rendering ``shown`` lost (a script's names, the settings
    of a config written inline), in order; an argument is cut for room, its identifiers are kept."""
    if len(full) <= len(shown):
        return ()
    return tuple(
        i.value
        for i in find_identifiers(full)
        if i.kind != "error"
        and len(i.value) <= _NAME_CHARS
        and "`" not in i.value
        and "→" not in i.value
        and i.value not in shown
        and i.value.casefold() not in NOT_IDENTIFIERS
    )


def listed(lines: Sequence[tuple[Sequence[str], str]]) -> list[str]:
    """For each line, newest first, as (the names its cut took, the line's text): the list it shows,
    empty when it shows none. A name is listed on the newest line that names it (a script rewritten
    five times lists its names once, at its last version), and not where the line's own text shows it;
    the oldest lines, the first rolled up, carry the fewest."""
    seen: set[str] = set()
    out: list[str] = []
    for names, text in lines:
        fresh = [n for n in dict.fromkeys(names) if n not in seen]
        seen.update(i.value for i in find_identifiers(text))
        kept, size = [], 0
        for name in fresh:
            size += len(name) + 4
            if size > _LINE_CHARS:
                break
            kept.append(name)
        seen.update(kept)
        out.append(CUT + ", ".join(f"`{n}`" for n in kept) if kept else "")
    return out
