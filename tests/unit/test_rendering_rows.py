"""How single rows render in each format (``rendering.row_blocks`` through ``history_of``): parts only
OpenAI takes are kept for OpenAI and named in text for Anthropic, in a message and inside a tool result;
an empty text and a replay-only ``reasoning`` item send nothing and do not end the turn; a result's
stored cache marker goes with it. Mutation testing found these reached only by slower integration tests.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from sleepcompact.domain.rendering import history_of
from tests.unit.test_ladder import PartSpec, Rows, result

AUDIO = {"type": "input_audio", "input_audio": {"data": "UklGRg==", "format": "wav"}}
OMITTED = {"type": "text", "text": "[input_audio attachment omitted: not supported here]"}
REASONING = {"type": "reasoning", "id": "rs_1", "summary": []}


def _sent(rows: Rows, openai: bool) -> list[dict[str, Any]]:
    return list(history_of(rows.rows, openai=openai).sent)


def test_an_openai_only_part_is_kept_for_openai_and_named_for_anthropic() -> None:
    rows = Rows().system("rules").user([{"type": "text", "text": "listen"}, AUDIO])
    assert _sent(rows, openai=False) == [
        {"role": "user", "content": [{"type": "text", "text": "listen"}, OMITTED]}
    ]
    assert _sent(rows, openai=True) == [
        {"role": "user", "content": [{"type": "text", "text": "listen"}, AUDIO]}
    ]


def test_a_tool_result_in_blocks_keeps_or_names_its_openai_only_part() -> None:
    b = Rows().system("rules").user("transcribe the call")
    b.assistant(None, ("c1", "fetch_audio", {"id": 7}))
    b.results(result("c1", "fetch_audio", "placeholder"))
    rows = b.rows
    rows[-1] = rows[-1].with_view("live", [{"type": "text", "text": "here it is"}, AUDIO], 20, None)
    anthropic = history_of(rows, openai=False).turns[-1]["content"][0]
    assert anthropic["content"] == [{"type": "text", "text": "here it is"}, OMITTED]
    openai = history_of(rows, openai=True).turns[-1]["content"][0]
    assert openai["content"] == [{"type": "text", "text": "here it is"}, AUDIO]


def test_empty_text_and_reasoning_send_nothing_and_the_turn_goes_on() -> None:
    b = Rows().system("rules").user("first")
    b.message(PartSpec("assistant", "message", ""), PartSpec("assistant", "message", [REASONING]))
    b.message(PartSpec("assistant", "message", "the answer"))
    b.user("thanks")
    assert _sent(b, openai=False) == [
        {"role": "user", "content": "first"},
        {"role": "assistant", "content": "the answer"},
        {"role": "user", "content": "thanks"},
    ]


def test_a_results_stored_cache_marker_goes_with_it() -> None:
    b = Rows().system("rules").user("read it")
    b.assistant(None, ("c1", "read_file", {"path": "a.py"}))
    b.results(result("c1", "read_file", "print(1)"))
    rows = b.rows
    marker = {"type": "ephemeral", "ttl": "1h"}
    rows[-1] = replace(rows[-1], metadata={"cache_control": marker})
    block = history_of(rows, openai=False).turns[-1]["content"][0]
    assert block == {
        "type": "tool_result",
        "tool_use_id": "c1",
        "content": "print(1)",
        "cache_control": marker,
    }
    assert block["cache_control"] is not marker, "a copy: the stored row is not shared with the request"
