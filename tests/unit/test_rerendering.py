"""The rendering after a compaction, built from the one before it, is the rendering of the compacted
rows (issue 18, item 2).

The guard's emergency path no longer reads the compacted rows back and renders them all: it re-renders
only the turns the compaction changed. If that ever differed from rendering every row, the model would
get one request right after an emergency and another for the same history after a restart; these
properties compare the two, field by field, for any history and any set of changed views (including
views that became empty, rows archived, a summary added, and leading system rows).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from sleepcompact.domain.records import MessageRecord
from sleepcompact.domain.rendering import RenderedHistory, finish, history_of, render_anthropic
from sleepcompact.domain.rerendering import recompacted
from tests.unit.test_rendering import Rows, build_rows, step

NEW_VIEW = st.sampled_from(
    [
        "[tool output archived: bash returned 1,204 tokens; read it with read_archived(seq=4)]",
        "head of the output\n\n[... 900 tokens truncated from the middle of this output]\n\ntail",
        "",
        [{"type": "text", "text": "a block view"}],
    ]
)
EDIT = st.tuples(st.integers(0, 200), st.sampled_from(["view", "archive"]), NEW_VIEW)


def _fields(h: RenderedHistory) -> tuple[Any, ...]:
    return (
        h.rows,
        h.system_parts,
        h.body,
        h.turns,
        h.starts,
        h.sent,
        h.offsets,
        h.weights,
        h.marked,
        h.stable,
    )


def _compacted(rows: list[MessageRecord], edits: list[tuple[int, str, Any]]) -> list[MessageRecord]:
    out: list[MessageRecord | None] = list(rows)
    for k, what, view in edits:
        i = k % len(rows)
        row = out[i]
        if row is None:
            continue
        if what == "archive":
            out[i] = None
        else:
            out[i] = replace(row, state="masked", live_content=view, live_tokens=7, compaction_id="cmp_1")
    return [r for r in out if r is not None]


@settings(max_examples=400, deadline=None)
@given(
    steps=st.lists(step, min_size=1, max_size=16),
    order=st.lists(st.integers(0, 9), min_size=1, max_size=5),
    edits=st.lists(EDIT, max_size=6),
    summary=st.booleans(),
    openai=st.booleans(),
)
def test_the_rendering_after_a_compaction_equals_rendering_the_compacted_rows(
    steps: list[tuple[Any, ...]],
    order: list[int],
    edits: list[tuple[int, str, Any]],
    summary: bool,
    openai: bool,
) -> None:
    rows = build_rows(steps, order)
    if not rows:
        return
    after = _compacted(rows, edits)
    if summary:
        last = rows[-1]
        after.append(replace(last, id=999, seq=999, role="user", kind="summary", content="[summary] so far"))
    before = history_of(rows, openai=openai)
    assert _fields(recompacted(before, after)) == _fields(history_of(after, openai=openai))


def _tool_loop(n: int) -> list[MessageRecord]:
    rows = Rows().user("fix the failing test")
    for i in range(n):
        rows.call(f"t{i}").result(f"t{i}", f"output {i} " * 50)
    return rows.user("go on").rows


def test_masking_old_tool_output_re_renders_only_the_turns_that_hold_it() -> None:
    """What keeps an emergency close to its plan: the turns a compaction did not touch are shared."""
    rows = _tool_loop(40)
    before = history_of(rows, openai=False)
    masked = {r.id for r in rows if r.kind == "tool_result"}
    masked = set(sorted(masked)[:3])
    after = [
        replace(r, state="masked", live_content="[archived]", live_tokens=3) if r.id in masked else r
        for r in rows
    ]
    again = recompacted(before, after)
    reused = sum(1 for a, b in zip(before.sent, again.sent, strict=True) if a is b)
    assert reused == len(before.sent) - 3
    assert finish(again, None, None, None).messages == render_anthropic(after).messages


def test_a_compaction_that_changed_nothing_keeps_the_rendering() -> None:
    rows = _tool_loop(3)
    before = history_of(rows, openai=True)
    assert recompacted(before, list(rows)) is before
