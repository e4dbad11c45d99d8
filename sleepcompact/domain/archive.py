"""Undoing compactions in memory: the live rows a restore would bring back, without writing anything.

The admin re-run's dry run plans against exactly the state ``restore`` would produce, so what it prints
is what the real re-run would do.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from sleepcompact.domain.records import MessageRecord


@dataclass(frozen=True)
class Undo:
    """One applied compaction to take back: each row's prior state, and the summary row it wrote."""

    prior: Sequence[Mapping[str, Any]]
    summary_message_id: int | None


def _content(stored: str | None) -> Any:
    if stored is None:
        return None
    value = json.loads(stored)
    return value if isinstance(value, str | list) else str(value)


def restored_live_rows(rows: Sequence[MessageRecord], undos: Sequence[Undo]) -> list[MessageRecord]:
    """The live rows after undoing ``undos`` (newest first, as ``restore`` does), in seq order."""
    by_id = {r.id: r for r in rows}
    dropped: set[int] = set()
    for undo in undos:
        for p in undo.prior:
            row = by_id.get(int(p["id"]))
            if row is not None:
                by_id[row.id] = replace(
                    row,
                    state=str(p["state"]),
                    live_content=_content(p.get("live_content")),
                    live_tokens=int(p["live_tokens"]),
                    compaction_id=p.get("compaction_id"),
                )
        if undo.summary_message_id is not None:
            dropped.add(undo.summary_message_id)
    live = [r for r in by_id.values() if r.id not in dropped and r.is_live]
    return sorted(live, key=lambda r: (r.seq, r.part))
