"""A conversation's rendering right after a compaction, built from its rendering before it: what the
guard's emergency path sends, without reading the rows back or rendering every turn again (issue 18,
item 2: an emergency close to its plan).

A compaction's LLM-free steps (masking old tool output, middle-out truncation, tool-provided summaries)
change the live view of some rows and nothing else: every row stays live, in its place and its turn.
Then only the turns holding a changed row are rendered again, a user turn after the turn before it,
which is all a turn's rendering depends on (the tool-call pairing repair looks one turn back for the
calls a result answers, and answers an assistant turn's unanswered calls in the turn after it, which is
rendered again too). Any other change (a summary folded in, rows archived, a view that became empty and would
join two turns, a leading system row) renders every row, from memory.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from typing import Any

from sleepcompact.domain.records import MessageRecord
from sleepcompact.domain.rendering import RenderedHistory, add_turn, history_of, paired_turns, row_blocks


def recompacted(before: RenderedHistory, rows: Sequence[MessageRecord]) -> RenderedHistory:
    """The rendering of ``rows`` (the live rows after a compaction of ``before.rows``): equal to
    ``history_of(rows)``, reusing every turn of ``before`` the compaction left as it was."""
    changed = _view_changes(before, rows)
    if changed is None:
        return history_of(rows, openai=before.openai)
    if not changed:
        return before
    body = tuple(changed.get(r.id, r) for r in before.body)
    dirty = _dirty_turns(before, [i for i, r in enumerate(before.body) if r.id in changed])
    turns = list(before.turns)
    for t in sorted(dirty):
        turns[t] = _turn_again(before, body, t)
    return _reassembled(before, tuple(rows), body, turns, dirty)


def _view_changes(before: RenderedHistory, rows: Sequence[MessageRecord]) -> dict[int, MessageRecord] | None:
    """The rows whose live view alone changed, by id; None when anything else changed."""
    if len(rows) != len(before.rows):
        return None
    in_body = {r.id for r in before.body} if len(before.body) != len(before.rows) else None
    changed: dict[int, MessageRecord] = {}
    for old, new in zip(before.rows, rows, strict=True):
        if old is new:
            continue
        same_place = (old.id, old.seq, old.part, old.role, old.kind) == (
            new.id,
            new.seq,
            new.part,
            new.role,
            new.kind,
        )
        if not same_place or new.state == "archived" or (in_body is not None and old.id not in in_body):
            return None
        if _shown(old, before.openai) != _shown(new, before.openai):
            return None  # a row that appears or vanishes would join or split turns
        changed[new.id] = new
    return changed


def _shown(row: MessageRecord, openai: bool) -> bool:
    """Whether the row renders to any block (a result or a system row always does)."""
    return row.kind == "tool_result" or row.role == "system" or bool(row_blocks(row, openai=openai))


def _dirty_turns(before: RenderedHistory, indexes: Sequence[int]) -> set[int]:
    """The turns holding the changed rows (``indexes`` in ``before.body``), and the turn after each
    assistant turn among them (it answers that turn's calls)."""
    dirty: set[int] = set()
    last = len(before.turns) - 1
    for i in indexes:
        t = bisect_right(before.starts, i) - 1
        dirty.add(t)
        if before.turns[t]["role"] == "assistant" and t < last:
            dirty.add(t + 1)
    return dirty


def _turn_again(before: RenderedHistory, body: Sequence[MessageRecord], t: int) -> dict[str, Any]:
    """Turn ``t`` rendered again from ``body``: an assistant turn alone, a user turn after the turn
    before it (whose calls it answers).

    The window splits into the same turns as before: where turns begin depends only on which rows
    render and on their side, and ``_view_changes`` lets through no change to either (a view that
    would make a row vanish or appear renders everything again). So the window's last turn is ``t``.
    """
    starts = before.starts
    user = before.turns[t]["role"] == "user"
    lo = t - 1 if user and t > 0 and starts[t - 1] >= 0 else t
    end = starts[t + 1] if t + 1 < len(starts) else len(body)
    turns, _ = paired_turns(body[starts[lo] : end], openai=before.openai)
    return turns[-1]


def _reassembled(
    before: RenderedHistory,
    rows: tuple[MessageRecord, ...],
    body: tuple[MessageRecord, ...],
    turns: list[dict[str, Any]],
    dirty: set[int],
) -> RenderedHistory:
    """The history with ``turns``: the messages, offsets, weights and markers of every run of turns
    between two dirty ones copied over as slices (shifted), the dirty turns' built again."""
    sent: list[dict[str, Any]] = []
    offsets: list[int] = []
    weights: list[tuple[int, int]] = [(0, 0)]
    marked: list[int] = []
    clean_from = 0
    for t in [*sorted(dirty), len(turns)]:
        _copy_run(before, clean_from, t, sent, offsets, weights, marked)
        clean_from = t + 1
        if t == len(turns):
            break
        offsets.append(len(sent))
        add_turn(turns[t], before.openai, sent, weights, marked)
    offsets.append(len(sent))
    return RenderedHistory(
        before.openai,
        rows,
        before.system_parts,
        body,
        tuple(turns),
        before.starts,
        tuple(sent),
        tuple(offsets),
        tuple(weights),
        tuple(marked),
        before.stable,
    )


def _copy_run(
    before: RenderedHistory,
    first: int,
    end: int,
    sent: list[dict[str, Any]],
    offsets: list[int],
    weights: list[tuple[int, int]],
    marked: list[int],
) -> None:
    """Append turns ``first``..``end`` (exclusive) of ``before``, unchanged, at the end of the lists."""
    if first >= end:
        return
    lo, hi = before.offsets[first], before.offsets[end]
    shift = len(sent) - lo
    offsets.extend(o + shift for o in before.offsets[first:end])
    sent.extend(before.sent[lo:hi])
    da = weights[-1][0] - before.weights[lo][0]
    db = weights[-1][1] - before.weights[lo][1]
    weights.extend((a + da, b + db) for a, b in before.weights[lo + 1 : hi + 1])
    m = before.marked
    marked.extend(i + shift for i in m[bisect_left(m, lo) : bisect_left(m, hi)])
