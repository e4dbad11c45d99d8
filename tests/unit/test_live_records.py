"""``live_record``: a new row as the store holds it right after the append.

The evaluation policies keep their conversations in memory with it, so it must give exactly the row a
store would return: every field of the new message carried over, live as itself (no live view, its
live tokens its own count), with the id, conversation and time it is given, and its own copy of the
metadata.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from sleepcompact.domain.records import MessageRecord, NewMessage, live_record

WHEN = datetime(2025, 3, 4, 5, 6, 7, tzinfo=UTC)

# every field set to something other than its default, so none can be dropped unseen
RESULT = NewMessage(
    seq=7,
    part=2,
    role="tool",
    kind="tool_result",
    content=[{"type": "text", "text": "3 tests passed"}],
    raw='{"role": "tool", "content": "3 tests passed"}',
    tool_name="bash",
    tool_call_id="c1:call_9",
    token_count=41,
    tool_summary="tests pass",
    tool_summary_tokens=3,
    include_in_history=True,
    metadata={"is_error": False, "exit_code": 0},
    call_ref="call_9",
)
PLAIN = NewMessage(
    seq=1, part=0, role="user", kind="message", content="hello", raw=None, tool_name=None, tool_call_id=None,
    token_count=5,
)  # fmt: skip


@pytest.mark.parametrize(
    ("row", "record"),
    [
        (
            RESULT,
            MessageRecord(
                id=12,
                conversation_id="conv-a",
                seq=7,
                part=2,
                role="tool",
                kind="tool_result",
                content=[{"type": "text", "text": "3 tests passed"}],
                raw='{"role": "tool", "content": "3 tests passed"}',
                tool_name="bash",
                tool_call_id="c1:call_9",
                token_count=41,
                state="live",
                live_content=None,
                live_tokens=41,
                created_at=WHEN,
                tool_summary="tests pass",
                tool_summary_tokens=3,
                include_in_history=True,
                compaction_id=None,
                metadata={"is_error": False, "exit_code": 0},
                call_ref="call_9",
            ),
        ),
        (
            PLAIN,
            MessageRecord(
                id=1,
                conversation_id="conv-a",
                seq=1,
                part=0,
                role="user",
                kind="message",
                content="hello",
                raw=None,
                tool_name=None,
                tool_call_id=None,
                token_count=5,
                state="live",
                live_content=None,
                live_tokens=5,
                created_at=WHEN,
            ),
        ),
    ],
)
def test_a_new_row_is_stored_live_as_itself(row: NewMessage, record: MessageRecord) -> None:
    assert live_record(row, id=record.id, conversation_id="conv-a", created_at=WHEN) == record


def test_the_record_is_live_and_shows_its_own_content() -> None:
    record = live_record(RESULT, id=12, conversation_id="conv-a", created_at=WHEN)
    assert record.is_live and record.view == RESULT.content


def test_the_record_keeps_its_own_copy_of_the_metadata() -> None:
    row = NewMessage(
        seq=3, part=0, role="assistant", kind="message", content="ok", raw=None, tool_name=None,
        tool_call_id=None, token_count=2, metadata={"model": "m1"},
    )  # fmt: skip
    record = live_record(row, id=3, conversation_id="conv-a", created_at=WHEN)
    row.metadata["model"] = "changed later"
    assert record.metadata == {"model": "m1"}
