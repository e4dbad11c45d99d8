"""``rows_after``: the live rows a compaction leaves, computed in memory (the guard renders the call after
an emergency compaction from them without reading the rows back, so a wrong row here is a wrong request).
"""

from __future__ import annotations

from sleepcompact.domain.steps import RowChange, rows_after
from tests.unit.test_ladder import Rows, result


def test_changed_rows_carry_their_new_view_and_archived_rows_are_gone() -> None:
    b = Rows().system("rules").user("read the log")
    b.assistant("reading", ("c1", "read_file", {"path": "app.log"}))
    b.results(result("c1", "read_file", "line\n" * 400))
    b.user("thanks")
    rows = b.rows
    masked, archived = rows[4], rows[2]
    changes = [
        RowChange(masked.id, masked.seq, "masked", "[output masked: read_archived(seq=5)]", 12, "mask"),
        RowChange(archived.id, archived.seq, "archived", None, archived.live_tokens, "summarize"),
    ]
    after = rows_after(rows, changes, "cmp-1")
    assert [r.seq for r in after] == [r.seq for r in rows if r.id != archived.id]
    new = next(r for r in after if r.id == masked.id)
    assert (new.state, new.live_content, new.live_tokens, new.compaction_id) == (
        "masked",
        "[output masked: read_archived(seq=5)]",
        12,
        "cmp-1",
    )
    assert (new.content, new.seq, new.tool_call_id, new.token_count) == (
        masked.content,
        masked.seq,
        masked.tool_call_id,
        masked.token_count,
    )
    assert new.view == "[output masked: read_archived(seq=5)]"
    assert masked.state == "live" and masked.live_content is None, "the snapshot's rows are not changed"
    untouched = [r for r in after if r.id not in (masked.id, archived.id)]
    assert all(any(r is s for s in rows) for r in untouched), "rows no change names are the same objects"


def test_no_changes_leave_the_rows_as_they_are() -> None:
    rows = Rows().system("rules").user("hello").assistant("hi").rows
    assert rows_after(rows, [], "cmp-1") == rows
