"""Property: whatever the history, ``prepare_context`` returns a valid Anthropic request that fits, or a
``ContextOverflow`` only when what compaction may not touch is itself too big."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from sleepcompact import ContextOverflow, Memory, Settings
from sleepcompact.domain.validation import anthropic_problems
from tests.support.queues import RecordingQueue

WORDS = ["invoice", "total", "PAY597", "rounding", "src/billing/tax.py", "assert", "cents", "ok", "error"]


@st.composite
def turn(draw: st.DrawFn, n: int) -> list[dict[str, Any]]:
    """A user message, then either a plain answer or a tool call with its (possibly huge) result."""
    words = st.lists(st.sampled_from(WORDS), min_size=1, max_size=30).map(" ".join)
    user = {"role": "user", "content": draw(words)}
    if not draw(st.booleans()):
        return [user, {"role": "assistant", "content": draw(words)}]
    tid = f"toolu_{n}"
    size = draw(st.sampled_from([5, 50, 400, 3000]))
    output = "\n".join(f"line {i}: {draw(st.sampled_from(WORDS))}" for i in range(size))
    return [
        user,
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": tid, "name": "bash", "input": {"c": "x"}}],
        },
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": tid, "content": output}]},
        {"role": "assistant", "content": draw(words)},
    ]


@st.composite
def history(draw: st.DrawFn) -> list[dict[str, Any]]:
    count = draw(st.integers(min_value=1, max_value=14))
    return [m for i in range(count) for m in draw(turn(i))]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    messages=history(),
    window=st.sampled_from([4_000, 8_000, 16_000]),
    system=st.sampled_from([None, "Be brief.", "Follow the repository's rules. " * 300]),
)
def test_the_guard_always_returns_a_fitting_valid_call_or_a_justified_overflow(
    tmp_path_factory: Any, messages: list[dict[str, Any]], window: int, system: str | None
) -> None:
    path: Path = tmp_path_factory.mktemp("guard")
    mem = Memory(Settings(database_url=f"sqlite:///{path}/g.db"), queue=RecordingQueue())
    try:
        cid = mem.create_conversation("claude-sonnet-4-5", context_window=window)
        mem.append_many(cid, messages)
        before = len(mem.export(cid).appended)
        try:
            ctx = mem.prepare_context(cid, system=system)
        except ContextOverflow as err:
            event("overflow")
            assert err.fixed_tokens > err.usable
            return
        event(ctx.action)
        assert ctx.tokens <= ctx.usable
        assert anthropic_problems(ctx.messages) == []
        assert len(mem.export(cid).appended) == before  # nothing lost, whatever ran
    finally:
        mem.close()
