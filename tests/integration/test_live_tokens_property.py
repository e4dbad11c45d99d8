"""Property: after any sequence of appends (good and bad), live_tokens is the sum over live rows."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sleepcompact import Memory
from sleepcompact.domain.errors import SleepcompactError

text = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=0, max_size=300)


@st.composite
def actions(draw: st.DrawFn) -> list[tuple[str, Any]]:
    out: list[tuple[str, Any]] = []
    for _ in range(draw(st.integers(1, 12))):
        kind = draw(
            st.sampled_from(["user", "assistant", "call", "result", "orphan", "openai_call", "image"])
        )
        out.append((kind, draw(text)))
    return out


def _message(kind: str, body: str, n: int, calls: list[str]) -> dict[str, Any]:
    if kind == "user":
        return {"role": "user", "content": body}
    if kind == "assistant":
        return {"role": "assistant", "content": body}
    if kind == "call":
        return {
            "role": "assistant",
            "content": [
                {"type": "text", "text": body or "calling"},
                {"type": "tool_use", "id": f"t{n}", "name": "bash", "input": {"cmd": body}},
            ],
        }
    if kind == "openai_call":
        return {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": f"t{n}", "type": "function", "function": {"name": "grep", "arguments": "{}"}}
            ],
        }
    if kind == "result":
        target = calls[-1] if calls else "none-yet"
        return {"role": "user", "content": [{"type": "tool_result", "tool_use_id": target, "content": body}]}
    if kind == "image":
        return {
            "role": "user",
            "content": [
                {
                    "type": "image",
                    "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="},
                },
                {"type": "text", "text": body or "look"},
            ],
        }
    return {"role": "tool", "tool_call_id": f"orphan{n}", "content": body}


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(script=actions())
def test_live_tokens_equals_sum_over_live_rows(memory: Memory, script: list[tuple[str, Any]]) -> None:
    cid = memory.create_conversation("claude-sonnet-4-5")
    calls: list[str] = []
    accepted = 0
    for n, (kind, body) in enumerate(script):
        try:
            memory.append(cid, _message(kind, body, n, calls))
            accepted += 1
            if kind in ("call", "openai_call"):
                calls.append(f"t{n}")
        except SleepcompactError:
            pass
    conv = memory.admin.conversation(cid)
    rows = memory.export(cid).messages
    assert conv.live_tokens == sum(r["live_tokens"] for r in rows if r["state"] != "archived")
    assert conv.live_messages == sum(1 for r in rows if r["state"] != "archived")
    assert len(memory.export(cid).appended) == accepted
    assert [r["seq"] for r in rows] == list(range(1, len(rows) + 1))
