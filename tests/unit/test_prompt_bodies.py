"""What the summarization prompt shows of each message: a tool call as its arguments in canonical JSON
(keys sorted, non-ASCII as written, so the model copies paths and names exactly), any other message as
its text, and a count of the images it cannot show."""

from __future__ import annotations

from sleepcompact.domain.prompt import SummaryInput, build_prompt
from tests.support.rows import record


def _entries() -> list[str]:
    call = [{"type": "tool_use", "id": "c1", "name": "edit", "input": {"path": "café.py", "a": 1}}]
    search = {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {"query": "fts5"}}
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}}
    rows = (
        record(1, "assistant", "tool_call", call, tool_name="edit", tool_call_id="c1"),
        record(2, "assistant", "message", [search, {"type": "text", "text": "Found it."}]),
        record(3, "user", "message", [{"type": "text", "text": "See the screenshot."}, image]),
        record(4, "user", "message", "No picture here."),
    )
    user = build_prompt(SummaryInput(rows, None, 100)).user
    return user.split('messages="4">\n')[1].split("\n</transcript>")[0].split("\n")


def test_a_tool_call_shows_its_arguments_as_sorted_json_with_non_ascii_as_written() -> None:
    assert _entries()[0] == '[seq 1] tool call (edit): {"a": 1, "path": "café.py"}'


def test_a_message_that_opens_with_a_server_tool_call_shows_its_text() -> None:
    # Only a tool_call row is shown as bare arguments; a message's server tool call is part of its text.
    assert _entries()[1:3] == ['[seq 2] assistant: web_search {"query": "fts5"}', "Found it."]


def test_images_are_counted_not_shown() -> None:
    assert _entries()[3:] == [
        "[seq 3] user: See the screenshot.",
        "[1 image(s) not shown]",
        "[seq 4] user: No picture here.",
    ]
