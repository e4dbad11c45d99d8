"""The agent-log shapes an import reads from one JSON document (not JSONL): a LangChain message list,
a Responses item list, a single Claude Code record and a single mini-swe-agent record, each read as
its own format, and an error in one named by its line."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest

from sleepcompact.domain.errors import ImportFormatError
from sleepcompact.domain.formats import ParsedConversation, parse_import


def _read(doc: Any) -> ParsedConversation:
    (conversation,) = parse_import(json.dumps(doc).encode(), source="x.json")
    return conversation


def _refusal(doc: Any) -> str:
    with pytest.raises(ImportFormatError) as caught:
        parse_import(json.dumps(doc).encode(), source="x.json")
    return str(caught.value)


def test_a_langchain_message_list_is_read_as_langchain() -> None:
    parsed = _read(
        [{"type": "human", "data": {"content": "hi"}}, {"type": "ai", "data": {"content": "hello"}}]
    )
    assert parsed.messages == [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]
    assert parsed.metadata == {"source_format": "langchain_messages"}


def test_a_responses_item_list_is_read_as_responses_items() -> None:
    reply = [{"type": "output_text", "text": "hello"}]
    parsed = _read(
        [
            {"type": "message", "role": "user", "content": "hi"},
            {"type": "message", "role": "assistant", "content": reply},
        ]
    )
    assert parsed.messages == [{"role": "user", "content": "hi"}, {"role": "assistant", "content": reply}]
    assert parsed.metadata == {"source_format": "responses_items"}


def _claude_record(content: Any) -> dict[str, Any]:
    return {
        "type": "user",
        "sessionId": "s1",
        "uuid": "u1",
        "timestamp": "2025-01-02T03:04:05Z",
        "message": {"role": "user", "content": content},
    }


def test_a_single_claude_code_record_is_read_as_a_session_of_one() -> None:
    parsed = _read(_claude_record("hi"))
    assert parsed.messages == [{"role": "user", "content": "hi"}]
    assert parsed.metadata == {"source_format": "claude_code", "skipped_records": {}, "session_id": "s1"}
    assert parsed.sent_at == (datetime(2025, 1, 2, 3, 4, 5, tzinfo=UTC),)


def test_a_bad_single_claude_code_record_is_on_line_one() -> None:
    with pytest.raises(ImportFormatError) as caught:
        parse_import(json.dumps(_claude_record(5)).encode(), source="x.json")
    assert caught.value.line == 1
    assert str(caught.value).endswith("user message: content must be a string or a list of blocks, got int")


def test_a_single_mini_swe_agent_record_is_record_one_on_line_one() -> None:
    parsed = _read(
        {"instance_id": "django-1", "model": "m1", "messages": [{"role": "user", "content": "fix"}]}
    )
    assert parsed.messages == [{"role": "user", "content": "fix"}]
    assert parsed.metadata == {
        "source_format": "mini_swe_agent",
        "record": 1,
        "line": 1,
        "instance_id": "django-1",
        "model": "m1",
    }
    assert parsed.model == "m1"
    assert _refusal({"instance_id": "django-1", "messages": [{"role": "user", "content": 5}]}) == (
        "x.json: line 1: messages[0]: user message: content must be a string or a list of blocks, got int"
    )


def test_a_single_message_object_is_a_conversation_of_one_message_on_line_one() -> None:
    parsed = _read({"role": "user", "content": "hi"})
    assert parsed.messages == [{"role": "user", "content": "hi"}]
    assert parsed.metadata == {"source_format": "jsonl_messages"}
    assert _refusal({"role": "user", "content": 5}) == (
        "x.json: line 1: message: user message: content must be a string or a list of blocks, got int"
    )


def _lines(rows: list[dict[str, Any]]) -> bytes:
    return "\n".join(map(json.dumps, rows)).encode()


def test_a_claude_code_session_is_one_record_however_many_lines() -> None:
    with pytest.raises(ImportFormatError) as caught:
        parse_import(_lines([_claude_record("hi"), _claude_record("again")]), source="x.jsonl", record=2)
    assert str(caught.value) == "x.jsonl: record 2 is out of range: the file holds 1 record"


def test_a_file_is_read_as_claude_code_by_its_first_five_lines() -> None:
    """Five plain messages first: the file is a message list, and a Claude Code record after them is a
    message without a role."""
    plain = [{"role": ("user", "assistant")[i % 2], "content": f"m{i}"} for i in range(5)]
    with pytest.raises(ImportFormatError) as caught:
        parse_import(_lines([*plain, _claude_record("hi")]), source="x.jsonl")
    assert caught.value.line == 6
    assert "message: unknown role None" in str(caught.value)
    parsed = parse_import(_lines([*plain[:4], _claude_record("hi")]), source="x.jsonl")
    assert parsed[0].metadata["source_format"] == "claude_code"


def test_responses_items_one_per_line_are_one_conversation() -> None:
    items = [
        {"type": "message", "role": "user", "content": "hi"},
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "hello"}]},
    ]
    (parsed,) = parse_import(_lines(items), source="x.jsonl", all_records=True)
    assert parsed.metadata == {"source_format": "responses_items"}
    assert [m["role"] for m in parsed.messages] == ["user", "assistant"]
    with pytest.raises(ImportFormatError) as caught:
        parse_import(_lines(items), source="x.jsonl", record=2)
    assert str(caught.value) == "x.jsonl: record 2 is out of range: the file holds 1 record"


def test_a_jsonl_message_list_is_one_record() -> None:
    rows = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]
    with pytest.raises(ImportFormatError) as caught:
        parse_import(_lines(rows), source="x.jsonl", record=2)
    assert str(caught.value) == "x.jsonl: record 2 is out of range: the file holds 1 record"


def test_a_json_object_keeps_its_system_prompt_and_model() -> None:
    user = {"role": "user", "content": "x"}
    blocks = _read(
        {"messages": [user], "system": [{"type": "text", "text": "be brief"}], "model": "claude-x"}
    )
    assert blocks.messages == [{"role": "system", "content": "be brief"}, user]
    assert (blocks.metadata, blocks.model) == ({"source_format": "json_object"}, "claude-x")
    assert _read({"messages": [user], "system": "  ", "model": 5}).messages == [user]
    assert _read({"messages": [user], "model": 5}).model is None
    assert _read({"messages": [], "system": "s"}).messages == [{"role": "system", "content": "s"}]


def test_a_version_1_export_is_read_with_its_conversation_id_and_model() -> None:
    user = {"role": "user", "content": "x"}
    doc = {"format": "sleepcompact.export/1", "appended": [user], "conversation": {"id": "c1", "model": "m"}}
    parsed = _read(doc)
    assert parsed.messages == [user]
    assert parsed.metadata == {"source_format": "sleepcompact_export", "exported_conversation_id": "c1"}
    assert parsed.model == "m"
    bare = _read({**doc, "conversation": {"id": None, "model": 5}})
    assert (bare.metadata, bare.model) == ({"source_format": "sleepcompact_export"}, None)


def test_a_system_prompt_that_cannot_be_stored_is_named_as_the_system_prompt() -> None:
    doc = b'{"messages": [{"role": "user", "content": "x"}], "system": "a\\ud800b"}'
    with pytest.raises(ImportFormatError) as caught:
        parse_import(doc, source="x.json")
    assert (
        str(caught.value)
        == "x.json: system: message: text that is not valid UTF-8 (lone surrogate at offset 1)"
    )


def test_a_mini_swe_agent_records_model_that_is_not_a_name_is_kept_as_provenance_only() -> None:
    parsed = _read({"instance_id": "a", "model": 5, "messages": [{"role": "user", "content": "x"}]})
    assert parsed.model is None
    assert parsed.metadata["model"] == 5


def test_a_claude_code_session_names_its_model() -> None:
    reply = {
        "id": "msg_1",
        "model": "claude-x",
        "role": "assistant",
        "content": [{"type": "text", "text": "yo"}],
    }
    answer = {"type": "assistant", "sessionId": "s1", "uuid": "u2", "parentUuid": "u1", "message": reply}
    (parsed,) = parse_import(_lines([_claude_record("hi"), answer]), source="x.jsonl")
    assert parsed.model == "claude-x"


def test_a_format_without_a_clock_gives_no_times() -> None:
    assert _read([{"role": "user", "content": "hi"}]).sent_at == ()
    assert _read({"messages": [{"role": "user", "content": "hi"}]}).sent_at == ()
