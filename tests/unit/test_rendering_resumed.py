"""A history whose live rows open with the assistant (a conversation resumed mid-way) renders with a
placeholder user turn first; growing its cached rendering, or re-rendering it after a compaction changed
one row's view, must give what rendering the rows whole gives."""

from __future__ import annotations

import pytest

from sleepcompact.domain.rendering import extended, history_of
from sleepcompact.domain.rerendering import recompacted
from tests.unit.test_ladder import Rows


def _rows() -> Rows:
    return Rows().system("rules").assistant("where were we").user("go on").assistant("step one")


@pytest.mark.parametrize("openai", [False, True])
def test_a_resumed_history_grows_like_the_whole(openai: bool) -> None:
    b = _rows()
    before = list(b.rows)
    b.user("and then").assistant("step two")
    grown = extended(history_of(before, openai=openai), b.rows[len(before) :])
    whole = history_of(b.rows, openai=openai)
    assert whole.turns[0] == {"role": "user", "content": [{"type": "text", "text": "[conversation resumed]"}]}
    assert (grown.sent, grown.turns, grown.starts) == (whole.sent, whole.turns, whole.starts)


@pytest.mark.parametrize("openai", [False, True])
def test_a_resumed_history_re_renders_like_the_whole_after_any_one_view_changes(openai: bool) -> None:
    b = _rows().user("and then").assistant("step two")
    before = history_of(b.rows, openai=openai)
    for i in range(1, len(b.rows)):
        rows = list(b.rows)
        rows[i] = rows[i].with_view("masked", f"[masked {i}]", 4, "cmp-1")
        again, whole = recompacted(before, rows), history_of(rows, openai=openai)
        assert (again.sent, again.turns, again.starts) == (whole.sent, whole.turns, whole.starts), i
