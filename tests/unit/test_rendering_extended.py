"""``rendering.extended``: the cached rendering grown by the rows appended since, equal to rendering the
whole history; here with a part only OpenAI takes (stored as an OpenAI caller sent it), which the
OpenAI rendering keeps and the Anthropic one names in text."""

from __future__ import annotations

from sleepcompact.domain.rendering import extended, history_of
from tests.unit.test_ladder import Rows

AUDIO = {"type": "input_audio", "input_audio": {"data": "UklGRg==", "format": "wav"}}


def test_an_openai_only_part_appended_later_renders_as_in_the_whole_history() -> None:
    b = Rows().system("rules").user("q1").assistant("a1")
    before = list(b.rows)
    b.user([{"type": "text", "text": "listen to this"}, AUDIO]).assistant("heard it")
    for openai in (True, False):
        grown = extended(history_of(before, openai=openai), b.rows[len(before) :])
        whole = history_of(b.rows, openai=openai)
        assert grown.sent == whole.sent and grown.turns == whole.turns
    openai_turn = extended(history_of(before, openai=True), b.rows[len(before) :]).turns[-2]
    assert AUDIO in openai_turn["content"], "kept for OpenAI"
