"""A cached rendering extended with appended rows is the rendering of all the rows (issue 18, item 1).

The guard keeps each conversation's rendering between calls and renders only what was appended; if
extending ever differed from rendering everything, a model would see a different request than the one
the same history renders to after a restart. These properties compare the two byte for byte, in both
formats, with memories and recalled snippets, and check the request weight the guard uses for the
provider's size limits against a walk over the whole request.
"""

from __future__ import annotations

import itertools
import json
from dataclasses import replace
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from sleepcompact.domain.attachments import request_weight
from sleepcompact.domain.records import MessageRecord
from sleepcompact.domain.rendering import (
    extended,
    finish,
    has_marker,
    history_of,
    render_anthropic,
    render_openai,
)
from tests.unit.test_rendering import Rows, build_rows, step


def _chunks(rows: list[MessageRecord], cuts: list[int]) -> list[list[MessageRecord]]:
    points = sorted({c % (len(rows) + 1) for c in cuts})
    bounds = [0, *points, len(rows)]
    return [rows[a:b] for a, b in itertools.pairwise(bounds)]


def _with_markers(rows: list[MessageRecord], at: list[int]) -> list[MessageRecord]:
    """Some rows stored with a ``cache_control`` of their own (a tool result's metadata, a block)."""
    out = list(rows)
    for k in at:
        if not out:
            break
        i = k % len(out)
        row = out[i]
        marker = {"type": "ephemeral"}
        if row.kind == "tool_result":
            out[i] = replace(row, metadata={**row.metadata, "cache_control": marker})
        elif isinstance(row.content, list) and row.content:
            out[i] = replace(row, content=[{**row.content[0], "cache_control": marker}, *row.content[1:]])
    return out


def _body_weight(system: str | None, messages: list[dict[str, Any]]) -> tuple[int, int]:
    return request_weight({"system": system, "messages": messages})


@settings(max_examples=300, deadline=None)
@given(
    steps=st.lists(step, min_size=0, max_size=16),
    order=st.lists(st.integers(0, 9), min_size=1, max_size=5),
    cuts=st.lists(st.integers(0, 60), max_size=6),
    markers=st.lists(st.integers(0, 60), max_size=3),
    system=st.sampled_from([None, "Caller system."]),
    memories=st.sampled_from([None, "<memories>\n- [2024-03-02] Dana likes tea\n</memories>"]),
    recalled=st.sampled_from([None, "<recalled>\n[seq 3] the build failed\n</recalled>"]),
    openai=st.booleans(),
)
def test_extending_a_rendering_equals_rendering_everything(
    steps: list[tuple[Any, ...]],
    order: list[int],
    cuts: list[int],
    markers: list[int],
    system: str | None,
    memories: str | None,
    recalled: str | None,
    openai: bool,
) -> None:
    rows = _with_markers(build_rows(steps, order), markers)
    chunks = _chunks(rows, cuts)
    history = history_of(chunks[0], openai=openai)
    for chunk in chunks[1:]:
        history = extended(history, chunk)
    done = finish(history, system, memories, recalled)
    if openai:
        assert done.messages == render_openai(rows, system, memories, recalled)
    else:
        full = render_anthropic(rows, system, memories, recalled)
        assert (done.system, done.messages) == (full.system, full.messages)
    assert done.weight == _body_weight(done.system, done.messages)
    assert done.marked == tuple(i for i, m in enumerate(done.messages) if has_marker(m))


def test_a_summary_in_the_appended_rows_renders_it_first() -> None:
    """A summary goes to the front of the conversation: the extension renders everything again."""
    rows = Rows().user("fix the build").assistant("looking").call("t1").result("t1", "ok").rows
    summary = replace(rows[-1], id=99, seq=99, role="user", kind="summary", content="[summary] fixed it")
    history = extended(history_of(rows, openai=False), [summary])
    assert finish(history, None, None, None).messages == render_anthropic([*rows, summary]).messages
    assert "[summary] fixed it" in json.dumps(finish(history, None, None, None).messages[0])


def test_turns_before_the_last_assistant_turn_are_shared_not_rendered_again() -> None:
    """What makes a call cost the rows appended since the last one: the old turns are reused."""
    rows = Rows()
    for i in range(50):
        rows.user(f"question {i}").assistant(f"answer {i}")
    history = history_of(rows.rows, openai=False)
    newer = extended(history, [replace(rows.rows[-1], id=1000, seq=1000, role="user", content="one more")])
    assert all(a is b for a, b in zip(history.sent[:99], newer.sent[:99], strict=True))
    assert len(newer.sent) == 101


def test_finish_never_changes_the_cached_turns() -> None:
    """Memories and snippets go into copies: the next call's request starts from the same turns."""
    rows = Rows().user("hi").assistant("hello").user("what did we say?").rows
    history = history_of(rows, openai=False)
    before = json.dumps(history.sent)
    finish(history, "sys", "<memories>x</memories>", "<recalled>y</recalled>")
    assert json.dumps(history.sent) == before
    assert finish(history, None, None, None).messages == render_anthropic(rows).messages
