"""Claude Code session transcripts read as their main thread, with every other record accounted for.

``agent_logs.claude_code`` takes the ``(line, record)`` pairs of a ``~/.claude/projects/*.jsonl`` file
and returns the user and assistant messages in file order (each named ``line N`` with its line and the
record's ``timestamp``), an assistant message streamed as several records with one ``message.id``
joined back into one, the session's provenance (``session_id``, ``summaries``, and a count of every
record skipped and why), and the model that spoke (never Claude Code's own ``<synthetic>`` one).
``looks_like_claude_code`` tells such a record from other JSON. Record shapes follow
``tests/fixtures/claude_code/session.jsonl`` (see ``tests/integration/test_agent_logs.py``).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest

from sleepcompact.domain.agent_logs import CLAUDE_CODE_TYPES, Located, claude_code, looks_like_claude_code
from sleepcompact.domain.errors import ImportFormatError
from sleepcompact.domain.formats import parse_import

SESSION = "3f2a9c4e-7b1d-4e8a-9c55-0d6e2b7a1f10"
MODEL = "claude-sonnet-4-5-20250929"


def user(content: Any, **extra: Any) -> dict[str, Any]:
    record: dict[str, Any] = {
        "parentUuid": None,
        "isSidechain": False,
        "userType": "external",
        "sessionId": SESSION,
        "type": "user",
        "message": {"role": "user", "content": content},
        "uuid": "u-1",
        "timestamp": "2025-11-03T09:59:58.120Z",
    }
    record.update(extra)
    return record


def assistant(msg_id: str, content: Any, *, model: str | None = MODEL, **extra: Any) -> dict[str, Any]:
    record: dict[str, Any] = {
        "parentUuid": "u-1",
        "isSidechain": False,
        "userType": "external",
        "sessionId": SESSION,
        "type": "assistant",
        "requestId": "req_1",
        "message": {
            "model": model,
            "id": msg_id,
            "type": "message",
            "role": "assistant",
            "content": content,
            "stop_reason": None,
        },
        "uuid": "a-1",
        "timestamp": "2025-11-03T09:59:59.870Z",
    }
    record.update(extra)
    return record


def text(words: str) -> dict[str, Any]:
    return {"type": "text", "text": words}


def use(call_id: str) -> dict[str, Any]:
    return {"type": "tool_use", "id": call_id, "name": "Bash", "input": {"command": "pytest"}}


def result(call_id: str) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": call_id, "content": "1 passed"}


def numbered(*records: dict[str, Any]) -> list[tuple[int, dict[str, Any]]]:
    return [(n, r) for n, r in enumerate(records, start=1)]


# -- the main thread -----------------------------------------------------------------------------------


def test_messages_are_named_by_their_line_and_keep_the_time_they_were_sent() -> None:
    rows = [
        (3, user("Why does the leap-day test fail?")),
        (5, assistant("msg_A", [text("Looking.")], timestamp="2025-11-03T10:00:01.250+02:00")),
    ]
    out, meta, model = claude_code(rows)
    assert out == [
        Located(
            {"role": "user", "content": "Why does the leap-day test fail?"},
            "record",
            3,
            datetime(2025, 11, 3, 9, 59, 58, 120000, tzinfo=UTC),
        ),
        Located(
            {"role": "assistant", "content": [text("Looking.")]},
            "record",
            5,
            datetime(2025, 11, 3, 8, 0, 1, 250000, tzinfo=UTC),
        ),
    ]
    assert meta == {"source_format": "claude_code", "skipped_records": {}, "session_id": SESSION}
    assert model == MODEL


def test_a_record_without_a_readable_timestamp_has_no_sent_time() -> None:
    out, _, _ = claude_code(numbered(user("hi", timestamp="yesterday"), user("again", timestamp=None)))
    assert [m.sent_at for m in out] == [None, None]


def test_the_role_is_the_messages_own_else_the_records_type() -> None:
    no_role = user("hi")
    del no_role["message"]["role"]
    odd_role = user("hi")
    odd_role["message"]["role"] = "system"
    out, _, _ = claude_code(numbered(no_role, odd_role))
    assert [m.data["role"] for m in out] == ["user", "system"]


def test_an_assistant_message_streamed_over_records_is_joined_at_the_first_one() -> None:
    out, _, _ = claude_code(
        numbered(
            user("Run the tests."),
            assistant("msg_A", [{"type": "thinking", "thinking": "Run them.", "signature": "c2ln"}]),
            assistant("msg_A", [text("Running.")], timestamp="2025-11-03T10:00:09Z"),
            assistant("msg_A", [use("toolu_1")], timestamp="2025-11-03T10:00:10Z"),
        )
    )
    assert len(out) == 2
    joined = out[1]
    assert joined.where == "record" and joined.line == 2
    assert joined.sent_at == datetime(2025, 11, 3, 9, 59, 59, 870000, tzinfo=UTC)
    assert joined.data == {
        "role": "assistant",
        "content": [
            {"type": "thinking", "thinking": "Run them.", "signature": "c2ln"},
            text("Running."),
            use("toolu_1"),
        ],
    }


def test_a_later_streamed_message_joins_the_last_message_not_an_earlier_one() -> None:
    out, _, _ = claude_code(
        numbered(
            user("Run the tests."),
            assistant("msg_A", [use("toolu_1")]),
            user([result("toolu_1")]),
            assistant("msg_B", [text("One passed.")]),
            assistant("msg_B", [use("toolu_2")]),
        )
    )
    assert [m.data["content"] for m in out] == [
        "Run the tests.",
        [use("toolu_1")],
        [result("toolu_1")],
        [text("One passed."), use("toolu_2")],
    ]


def test_a_session_may_open_with_a_streamed_assistant_message() -> None:
    out, _, _ = claude_code(numbered(assistant("msg_A", [text("Hello.")]), assistant("msg_A", [use("t1")])))
    assert [m.data["content"] for m in out] == [[text("Hello."), use("t1")]]


def test_a_streamed_message_that_began_as_text_keeps_that_text_as_a_block() -> None:
    out, _, _ = claude_code(numbered(assistant("msg_A", "Let me look."), assistant("msg_A", [use("t1")])))
    assert [m.data["content"] for m in out] == [[text("Let me look."), use("t1")]]


@pytest.mark.parametrize("first", ["", None], ids=["empty", "null"])
def test_a_streamed_message_that_began_empty_gains_no_empty_block(first: Any) -> None:
    out, _, _ = claude_code(numbered(assistant("msg_A", first), assistant("msg_A", [use("t1")])))
    assert [m.data["content"] for m in out] == [[use("t1")]]


def test_a_later_streamed_record_holding_a_string_joins_as_a_text_block() -> None:
    records = [assistant("msg_A", [use("t1")]), assistant("msg_A", "Done."), assistant("msg_A", "")]
    out, _, _ = claude_code(numbered(*records))
    assert [m.data["content"] for m in out] == [[use("t1"), text("Done.")]]


def test_records_with_different_message_ids_stay_separate_messages() -> None:
    out, _, _ = claude_code(numbered(assistant("msg_A", [text("One.")]), assistant("msg_B", [text("Two.")])))
    assert [m.data["content"] for m in out] == [[text("One.")], [text("Two.")]]


def test_assistant_records_without_a_message_id_are_never_joined() -> None:
    out, _, _ = claude_code(numbered(assistant("", [text("One.")]), assistant("", [text("Two.")])))
    assert [m.data["content"] for m in out] == [[text("One.")], [text("Two.")]]


def test_user_records_are_never_joined_even_when_their_messages_share_an_id() -> None:
    first = user([result("t1")])
    first["message"]["id"] = "m-1"
    second = user([result("t2")])
    second["message"]["id"] = "m-1"
    out, _, _ = claude_code(numbered(first, second))
    assert [m.data["content"] for m in out] == [[result("t1")], [result("t2")]]


def test_a_user_message_between_two_records_of_one_id_breaks_the_join() -> None:
    between = user([result("t1")])
    between["message"]["id"] = "msg_A"
    out, _, _ = claude_code(
        numbered(assistant("msg_A", [use("t1")]), between, assistant("msg_A", [text("Done.")]))
    )
    assert [m.data["content"] for m in out] == [[use("t1")], [result("t1")], [text("Done.")]]


# -- provenance ----------------------------------------------------------------------------------------


def test_records_outside_the_main_thread_are_counted_by_reason() -> None:
    snapshot = {"type": "file-history-snapshot", "messageId": "u-1", "snapshot": {}}
    queued = {"type": "queue-operation", "operation": "enqueue", "sessionId": SESSION}
    untyped = {"uuid": "x-1", "message": {"role": "user", "content": "?"}}
    rows = numbered(
        snapshot,
        queued,
        untyped,
        {"type": "system", "content": "Compacted.", "uuid": "s-1"},
        user("caveat", isMeta=True),
        assistant("msg_S", [text("subagent")], isSidechain=True),
        user("sub task", isSidechain=True),
        user(None, message="not a message"),
        {**user(None), "message": None},
        {"type": "summary", "leafUuid": "l-1"},  # a summary without its text is a skipped record
        user("Real question."),
    )
    out, meta, model = claude_code(rows)
    assert [m.data["content"] for m in out] == ["Real question."]
    assert meta["skipped_records"] == {
        "file-history-snapshot": 1,
        "queue-operation": 1,
        "untyped": 1,
        "system": 1,
        "meta": 1,
        "sidechain": 2,
        "no message": 2,
        "summary": 1,
    }
    assert "summaries" not in meta
    assert model is None


def test_summaries_are_kept_in_order_as_provenance_not_messages() -> None:
    rows = numbered(
        {"type": "summary", "summary": "Fix the leap-day bug", "leafUuid": "l-1"},
        user("hi"),
        {"type": "summary", "summary": "Run the tests", "leafUuid": "l-2"},
    )
    out, meta, _ = claude_code(rows)
    assert [m.data["content"] for m in out] == ["hi"]
    assert meta["summaries"] == ["Fix the leap-day bug", "Run the tests"]
    assert meta["skipped_records"] == {}


def test_a_message_record_with_a_summary_field_is_still_a_message() -> None:
    out, meta, _ = claude_code(numbered(user("hi", summary="not a session summary")))
    assert [m.data["content"] for m in out] == ["hi"]
    assert "summaries" not in meta


def test_the_session_id_is_the_first_one_given() -> None:
    rows = numbered(
        {"type": "summary", "summary": "S", "leafUuid": "l-1"},
        user("hi", sessionId=""),
        user("again", sessionId="s-2"),
        user("more", sessionId="s-3"),
    )
    assert claude_code(rows)[1]["session_id"] == "s-2"


def test_a_log_without_a_session_id_has_none_in_its_provenance() -> None:
    rows = numbered({"type": "summary", "summary": "S", "leafUuid": "l-1"}, {"type": "user", "uuid": "u"})
    out, meta, model = claude_code(rows)
    assert (out, model) == ([], None)
    assert meta == {
        "source_format": "claude_code",
        "skipped_records": {"no message": 1},
        "summaries": ["S"],
    }


def test_an_empty_log_reads_as_nothing() -> None:
    assert claude_code([]) == ([], {"source_format": "claude_code", "skipped_records": {}}, None)


# -- the model -----------------------------------------------------------------------------------------


def test_the_model_is_the_last_real_one_an_assistant_named() -> None:
    rows = numbered(
        assistant("msg_A", [text("One.")], model="claude-opus-4-1"),
        assistant("msg_B", [text("Two.")]),
        assistant("msg_C", [text("API Error")], model="<synthetic>"),
        assistant("msg_D", [text("No model.")], model=None),
    )
    assert claude_code(rows)[2] == MODEL


def test_a_model_named_in_a_user_record_is_not_the_sessions_model() -> None:
    said = user("hi")
    said["message"]["model"] = "gpt-4o"
    assert claude_code(numbered(said))[2] is None


def test_an_empty_model_name_is_no_model() -> None:
    assert claude_code(numbered(assistant("msg_A", [text("Hi.")], model="")))[2] is None


# -- detection -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", CLAUDE_CODE_TYPES)
@pytest.mark.parametrize("key", ["sessionId", "leafUuid", "uuid"])
def test_a_typed_record_with_any_one_session_key_is_claude_code(kind: str, key: str) -> None:
    assert looks_like_claude_code({"type": kind, key: "x"})


def test_a_record_without_session_bookkeeping_is_not_claude_code() -> None:
    assert not looks_like_claude_code({"type": "user", "message": {"role": "user", "content": "hi"}})


def test_a_record_of_another_type_is_not_claude_code_whatever_its_keys() -> None:
    keys = {"sessionId": "s", "leafUuid": "l", "uuid": "u"}
    assert not looks_like_claude_code({"type": "message", **keys})
    assert not looks_like_claude_code(keys)


def test_a_bad_record_is_named_by_its_line_once() -> None:
    """The import names the line; the record's own label does not repeat it."""
    rows = [user("hi"), assistant("msg_1", 5)]
    with pytest.raises(ImportFormatError) as caught:
        parse_import("\n".join(map(json.dumps, rows)).encode(), source="session.jsonl")
    assert str(caught.value) == (
        "session.jsonl: line 2: record: assistant message: "
        "content must be a string or a list of blocks, got int"
    )
