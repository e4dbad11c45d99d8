"""The rendering after a compaction equals rendering the compacted rows, on the shapes the property test
of ``test_rerendering.py`` never draws (docs/mutation.md): images (the request's attachment and byte
weights), stored cache markers, an OpenAI-only part beside a result whose view changes, a turn whose
number of sent messages changes, the newest turn changed.

Every row of one conversation is given each new view in turn, in both formats, and the result is
compared with the full rendering field by field.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from sleepcompact.domain.records import MessageRecord
from sleepcompact.domain.rendering import history_of
from sleepcompact.domain.rerendering import recompacted
from tests.support.png import blank
from tests.unit.test_rendering import Rows
from tests.unit.test_rerendering import _fields

IMAGE = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": blank(16, 16)}}
MARKED = {"type": "text", "text": "the spec, cached", "cache_control": {"type": "ephemeral"}}
FILE = {"type": "input_file", "file_id": "file-abc123"}  # OpenAI-only: named in text for Anthropic

VIEWS: list[Any] = [
    "[tool output archived: bash returned 1,204 tokens; read it with read_archived(seq=4)]",
    [{"type": "text", "text": "[image archived (85 tokens); the original: read_archived(seq=2)]"}],
    [
        {"type": "text", "text": "one"},
        {"type": "text", "text": "two", "cache_control": {"type": "ephemeral"}},
    ],
    [IMAGE, {"type": "text", "text": "now with a picture"}],
    "",  # a view that became empty: the row would vanish (rendered in full)
    # OpenAI-only parts, kept in that format alone
    [
        {"type": "image_url", "image_url": {"url": "https://example.com/a.png"}},
        {"type": "text", "text": "see"},
    ],
]


def _conversation(ends_with_results: bool = False) -> list[MessageRecord]:
    b = Rows().system("rules").user([IMAGE, {"type": "text", "text": "what is in this picture?"}])
    b.assistant("a black square").user([MARKED, {"type": "text", "text": "read the spec"}])
    b.call("c1").call("c2").result("c1", [IMAGE, {"type": "text", "text": "screenshot"}]).result("c2", "ok")
    b.user("and the other one?").assistant([{"type": "text", "text": "checking"}]).call("c3")
    b.result("c3", "output " * 40).user([IMAGE, MARKED, FILE, {"type": "text", "text": "compare"}])
    b.assistant("they differ").call("c4").result("c4", "done")
    return b.rows if ends_with_results else b.assistant("all done").rows


@pytest.mark.parametrize("ends_with_results", [False, True], ids=["answered", "results-last"])
@pytest.mark.parametrize("openai", [False, True], ids=["anthropic", "openai"])
def test_any_one_view_changed_renders_as_the_compacted_rows_do(openai: bool, ends_with_results: bool) -> None:
    rows = _conversation(ends_with_results)
    before = history_of(rows, openai=openai)
    if not openai:  # markers and attachments to carry over
        assert before.marked and before.weights[-1][0] == 3
    for i, row in enumerate(rows):
        if row.role == "system":
            continue
        for view in VIEWS:
            after = [
                *rows[:i],
                replace(row, state="masked", live_content=view, live_tokens=7),
                *rows[i + 1 :],
            ]
            again = recompacted(before, after)
            assert _fields(again) == _fields(history_of(after, openai=openai)), (i, view)
            assert again.openai is openai


@pytest.mark.parametrize("openai", [False, True], ids=["anthropic", "openai"])
def test_two_views_changed_far_apart_render_as_the_compacted_rows_do(openai: bool) -> None:
    rows = _conversation()
    before = history_of(rows, openai=openai)
    body = [i for i, r in enumerate(rows) if r.role != "system"]
    for a in body:
        for b in body:
            if b <= a + 2:
                continue
            after = list(rows)
            after[a] = replace(rows[a], state="masked", live_content=VIEWS[3], live_tokens=7)
            after[b] = replace(rows[b], state="masked", live_content=VIEWS[1], live_tokens=7)
            again = recompacted(before, after)
            assert _fields(again) == _fields(history_of(after, openai=openai)), (a, b)
