"""The rows a restore brings back, as the admin re-run's dry run predicts them (docs/mutation.md).

Mutation testing found every field of the prediction unchecked: the dry run must plan against exactly the
state ``restore`` writes, so each row gets back its prior state, live view, live tokens and compaction,
the summary rows the undone compactions wrote are gone, and archived rows stay out.
"""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from sleepcompact.domain.archive import Undo, restored_live_rows
from sleepcompact.domain.records import MessageRecord

T0 = datetime(2026, 11, 24, tzinfo=UTC)


def _row(id_: int, seq: int, **changes: Any) -> MessageRecord:
    row = MessageRecord(
        id=id_,
        conversation_id="c",
        seq=seq,
        part=0,
        role="user",
        kind="message",
        content=f"original {id_}",
        raw=None,
        tool_name=None,
        tool_call_id=None,
        token_count=100,
        state="live",
        live_content=None,
        live_tokens=100,
        created_at=T0,
    )
    return replace(row, **changes)


def _prior(id_: int, state: str, live: Any, tokens: int, compaction: str | None) -> dict[str, Any]:
    return {
        "id": id_,
        "state": state,
        "live_content": None if live is None else json.dumps(live),
        "live_tokens": tokens,
        "compaction_id": compaction,
    }


def _seen(rows: list[MessageRecord]) -> list[tuple[int, str, Any, int, str | None]]:
    return [(r.id, r.state, r.live_content, r.live_tokens, r.compaction_id) for r in rows]


# After two compactions: c1 masked row 2 and wrote summary row 10; c2 archived rows 1 and 2, changed
# row 3's view and wrote summary row 11. Row 5 was archived before either and stays archived.
ROWS = [
    _row(1, 1, state="archived", live_tokens=0, compaction_id="c2"),
    _row(2, 2, state="archived", live_tokens=0, compaction_id="c2"),
    _row(3, 3, state="masked", live_content=["[new view]"], live_tokens=5, compaction_id="c2"),
    _row(4, 4),
    _row(5, 0, state="archived", live_tokens=0, compaction_id="c0"),
    _row(10, 0, part=1, content="summary 1", compaction_id="c1"),
    _row(11, 0, part=2, content="summary 2", compaction_id="c2"),
]
UNDO_C2 = Undo(
    prior=[
        _prior(1, "live", None, 100, None),
        _prior(2, "masked", "[output of seq 2 masked]", 7, "c1"),
        _prior(3, "masked", [{"type": "text", "text": "[older view]"}], 9, "c1"),
    ],
    summary_message_id=11,
)
UNDO_C1 = Undo(prior=[_prior(2, "live", None, 100, None)], summary_message_id=10)


def test_undoing_the_newest_compaction_brings_back_each_rows_prior_state() -> None:
    assert _seen(restored_live_rows(ROWS, [UNDO_C2])) == [
        (10, "live", None, 100, "c1"),
        (1, "live", None, 100, None),
        (2, "masked", "[output of seq 2 masked]", 7, "c1"),
        (3, "masked", [{"type": "text", "text": "[older view]"}], 9, "c1"),
        (4, "live", None, 100, None),
    ]


def test_undoing_both_takes_each_row_back_through_both() -> None:
    assert _seen(restored_live_rows(ROWS, [UNDO_C2, UNDO_C1])) == [
        (1, "live", None, 100, None),
        (2, "live", None, 100, None),
        (3, "masked", [{"type": "text", "text": "[older view]"}], 9, "c1"),
        (4, "live", None, 100, None),
    ]


def test_an_undo_without_a_summary_row_drops_no_row() -> None:
    undo = Undo(prior=[_prior(1, "live", None, 100, None)], summary_message_id=None)
    assert [r.id for r in restored_live_rows(ROWS, [undo])] == [10, 11, 1, 3, 4]
