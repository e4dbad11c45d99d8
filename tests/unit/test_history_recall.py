"""What the request path's recall adds to the newest user turn (``domain.history_recall``): the block the
model reads, the query it is chosen with, and when no search runs at all."""

from __future__ import annotations

from datetime import UTC, datetime

from sleepcompact.domain.history_recall import (
    CLOSE_TAG,
    HEADER,
    OPEN_TAG,
    ArchivedSnippet,
    has_archive,
    history_block,
    recall_query,
)
from tests.support.rows import rows_of


def _count(text: str) -> int:
    return len(text.split())


def test_the_block_lists_each_snippet_on_its_own_line_with_seq_speaker_and_day() -> None:
    block = history_block(
        [
            ArchivedSnippet(
                12, "user", datetime(2024, 5, 6, 21, 30, tzinfo=UTC), "I finished Dune last night"
            ),
            ArchivedSnippet(40, "assistant", None, "Noted: table for two at 8pm"),
        ]
    )
    assert block == (
        f"{OPEN_TAG}\n{HEADER}\n"
        "[seq 12, user, 2024-05-06] I finished Dune last night\n"
        "[seq 40, assistant] Noted: table for two at 8pm\n"
        f"{CLOSE_TAG}"
    )
    assert history_block([]) == ""


def test_the_query_is_the_newest_user_message_not_a_tool_result() -> None:
    rows = rows_of(
        [
            {"role": "user", "content": "Which book did I mention on May 6th?"},
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": "t1", "name": "search", "input": {"q": "book"}}],
            },
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "no hits"}]},
        ],
        _count,
    )
    assert recall_query(rows) == "Which book did I mention on May 6th?"
    assert recall_query(rows[1:]) == ""  # no request at all: nothing to search with
    assert recall_query(rows_of([{"role": "user", "content": "x" * 5_000}], _count)) == "x" * 2_000


def test_a_search_runs_only_when_a_row_has_left_the_context() -> None:
    # Seqs start at 1, so with every row live there are next_seq - 1 live rows.
    assert not has_archive(live_messages=5, next_seq=6)
    assert has_archive(live_messages=4, next_seq=6)
    assert not has_archive(live_messages=0, next_seq=1)  # an empty conversation
