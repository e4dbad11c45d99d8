"""Import formats: detection, conversion and all-or-nothing errors, on real and inline samples."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from sleepcompact.domain.errors import ImportFormatError
from sleepcompact.domain.formats import SOURCE_FORMATS, ParsedConversation, parse_import
from sleepcompact.domain.messages import normalize
from sleepcompact.domain.tool_ids import CallBook, bind_parts

DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "trajectories"
SWE_AGENT = DATA / "swe-agent"
MINI = DATA / "mini-swe-agent-dev.jsonl"
TRAJS = sorted(SWE_AGENT.glob("*.traj"))

# The trajectories live in ../shared/data beside the checkout (CI has them there); their absence is a
# broken setup, so the tests fail rather than skip.
needs_data = pytest.mark.usefixtures("trajectory_data")


def _one(data: bytes | str, **kwargs: Any) -> ParsedConversation:
    raw = data.encode("utf-8") if isinstance(data, str) else data
    convs = parse_import(raw, source="sample", **kwargs)
    assert len(convs) == 1
    return convs[0]


def _jsonl(*rows: object) -> bytes:
    return "".join(json.dumps(r) + "\n" for r in rows).encode("utf-8")


def _pairing(messages: list[dict[str, Any]]) -> tuple[list[str], list[str]]:
    """All tool call ids and result ids, asserting every result answers an earlier call."""
    calls: list[str] = []
    results: list[str] = []
    for msg in messages:
        norm = normalize(msg, fmt="auto")
        for rid in norm.tool_result_ids:
            assert rid in calls, f"orphan tool result {rid}"
            results.append(rid)
        calls.extend(norm.tool_call_ids)
    return calls, results


def _bound(messages: list[dict[str, Any]]) -> tuple[list[str], list[str]]:
    """The keys every tool call and result is bound to, turn by turn (``domain.tool_ids``)."""
    book = CallBook()
    calls: list[str] = []
    results: list[str] = []
    for msg in messages:
        parts = normalize(msg, fmt="auto").parts
        for part, key in zip(parts, bind_parts(book, parts), strict=True):
            if key is not None:
                (calls if part.kind == "tool_call" else results).append(key)
    return calls, results


def _traj(name_start: str) -> Path:
    matches = [p for p in TRAJS if p.name.startswith(name_start)]
    assert len(matches) == 1, matches
    return matches[0]


# -- SWE-agent trajectories ------------------------------------------------------------------------


@needs_data
def test_the_shared_data_holds_the_expected_files() -> None:
    assert len(TRAJS) == 22


@needs_data
@pytest.mark.parametrize("path", TRAJS, ids=[p.name[:60] for p in TRAJS])
def test_every_swe_agent_trajectory_parses_into_one_clean_conversation(path: Path) -> None:
    history = json.loads(path.read_bytes())["history"]
    conv = _one(path.read_bytes())
    assert conv.metadata["source_format"] == "swe_agent_traj"
    assert len(conv.messages) == len(history)  # no entry in the data answers several calls
    assert [m["role"] for m in conv.messages] == [h["role"] for h in history]
    for msg in conv.messages:
        assert set(msg) <= {"role", "content", "tool_calls", "tool_call_id"}
    calls, results = _bound(conv.messages)
    assert len(calls) == len(set(calls))
    assert sorted(results) == sorted(calls)  # every call is answered exactly once
    assert conv.messages[0]["role"] == "system"


@needs_data
def test_function_calling_simple_yields_openai_tool_calls_and_results() -> None:
    conv = _one(_traj("function_calling_simple").read_bytes())
    assert len(conv.messages) == 12
    assert conv.model is None
    assert conv.metadata == {"source_format": "swe_agent_traj"}
    calls, results = _pairing(conv.messages)
    assert len(calls) == 5
    assert results == calls
    call = conv.messages[2]
    assert call["role"] == "assistant"
    assert call["tool_calls"] == [
        {
            "id": "call_PbWErNIge3YTrli3fiVvmIid",
            "type": "function",
            "function": {"name": "find_file", "arguments": '{"file_name":"missing_colon.py"}'},
        }
    ]
    assert call["content"].startswith("The `SyntaxError` in `missing_colon.py`")
    result = conv.messages[3]
    assert result["role"] == "tool"
    assert result["tool_call_id"] == "call_PbWErNIge3YTrli3fiVvmIid"
    assert result["content"].startswith('Found 1 matches for "missing_colon.py"')
    assert [p.tool_name for p in normalize(conv.messages[10]).parts if p.kind == "tool_call"] == ["submit"]


@needs_data
def test_replayed_trajectory_reused_call_ids_are_kept_and_scoped_to_their_turn() -> None:
    path = _traj("replay__marshmallow-code__marshmallow-1867__function_calling__install-1")
    conv = _one(path.read_bytes())
    assert len(conv.messages) == 24
    assert conv.model == "gpt-4o"
    assert conv.metadata["exit_status"] == "submitted"
    assert conv.metadata["submission"].lstrip().startswith("diff --git a/src/marshmallow/fields.py")
    # The ids stay as the trajectory wrote them: the same id for four bash calls.
    stem = "call_5iDdbOYybq7L19vqXmR0DPaU"
    bash_ids = [
        c["id"] for m in conv.messages for c in m.get("tool_calls", []) if c["function"]["name"] == "bash"
    ]
    assert bash_ids == [stem] * 4
    assert conv.messages[9]["tool_call_id"] == stem
    assert conv.messages[9]["content"].startswith("AUTHORS.rst")
    # Bound turn by turn, each call gets its own key and each result answers the call just before it.
    calls, results = _bound(conv.messages)
    assert len(calls) == 11 and results == calls
    assert [k for k in calls if k.startswith(stem)] == [stem, f"{stem}_2", f"{stem}_3", f"{stem}_4"]


@needs_data
def test_other_function_calling_trajectories_have_the_counts_checked_by_hand() -> None:
    conv = _one(
        _traj("replay__marshmallow-code__marshmallow-1867__function_calling_replace_from").read_bytes()
    )
    # Its model is SWE-agent's "replay" pseudo-model, which names no LLM.
    assert (len(conv.messages), conv.model) == (28, None)
    calls, results = _bound(conv.messages)
    assert (len(calls), results == calls, sum(1 for k in calls if k.endswith(("_2", "_3", "_4", "_5")))) == (
        13,
        True,
        4,
    )

    conv = _one(_traj("testdata__gpt4__swe-agent-test-repo").read_bytes())
    assert (len(conv.messages), conv.model) == (10, "gpt-4o")
    calls, _ = _bound(conv.messages)
    assert calls == [
        "call_fJuazlMUN5fQDQ73G6XSpYpx",
        "call_OhmPHGZp0XJ6JRnNkQaYcBMs",
        "call_DVnbJcFrvwPsrPt3KfIMf7OH",
        "call_dcF76aXH6e1pzqRwGxOwpuxb",
    ]


@needs_data
def test_non_function_calling_trajectory_keeps_text_and_provenance() -> None:
    conv = _one(_traj("ctf__crypto__katy").read_bytes())
    assert len(conv.messages) == 37
    assert conv.metadata["submission"] == "125379498"
    assert conv.metadata["environment"] == "swe_main"
    assert conv.metadata["model_stats"]["api_calls"] == 0
    assert not any("tool_calls" in m for m in conv.messages)


# -- mini-swe-agent ------------------------------------------------------------------------------------


@needs_data
def test_mini_swe_agent_all_records() -> None:
    convs = parse_import(MINI.read_bytes(), all_records=True)
    assert len(convs) == 42
    for i, conv in enumerate(convs, start=1):
        assert conv.metadata["source_format"] == "mini_swe_agent"
        assert conv.metadata["record"] == i
        assert isinstance(conv.metadata["instance_id"], str) and conv.metadata["instance_id"]
        assert isinstance(conv.metadata["submission"], str)
        assert conv.model == "google/gemini-3-pro-preview"
        assert conv.messages[0]["role"] == "system"
    first = convs[0]
    assert first.metadata["instance_id"] == "astropy__astropy-12907"
    assert first.metadata["resolved"] is True
    assert first.metadata["exit_status"] == "Submitted"
    assert first.metadata["api_calls"] == 20
    assert first.metadata["agent"] == "mini-swe-agent 1.15.0"
    assert "messages" not in first.metadata
    assert len({c.metadata["instance_id"] for c in convs}) == 42


@needs_data
def test_mini_swe_agent_selects_one_record() -> None:
    data = MINI.read_bytes()
    third = json.loads(data.split(b"\n")[2])
    conv = _one(data, record=3)
    assert conv.metadata["instance_id"] == third["instance_id"] == "django__django-10880"
    assert conv.metadata["line"] == 3
    assert len(conv.messages) == len(third["messages"]) == 64
    assert conv.messages == third["messages"]
    assert _one(data).metadata["instance_id"] == "astropy__astropy-12907"  # record 1 by default


@needs_data
@pytest.mark.parametrize("number", [0, 43, -1])
def test_mini_swe_agent_record_out_of_range(number: int) -> None:
    with pytest.raises(
        ImportFormatError, match=f"record {number} is out of range: the file holds 42 records"
    ):
        parse_import(MINI.read_bytes(), record=number)


def test_a_single_mini_swe_agent_record_on_one_line() -> None:
    row = {
        "instance_id": "x__y-1",
        "model": "m",
        "submission": "",
        "messages": [{"role": "user", "content": "hi"}],
    }
    conv = _one(json.dumps(row))
    assert conv.metadata["source_format"] == "mini_swe_agent"
    assert conv.metadata["instance_id"] == "x__y-1"
    assert conv.model == "m"


# -- generic formats on inline samples -------------------------------------------------------------

ANTHROPIC = [
    {"role": "user", "content": "What is in /tmp?"},
    {
        "role": "assistant",
        "content": [
            {"type": "text", "text": "Let me look."},
            {"type": "tool_use", "id": "toolu_1", "name": "bash", "input": {"cmd": "ls /tmp"}},
        ],
    },
    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "a.txt"}]},
    {"role": "assistant", "content": "One file: a.txt."},
]
OPENAI = [
    {"role": "system", "content": "Be brief."},
    {"role": "user", "content": "Weather in Paris?"},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": "weather", "arguments": '{"city":"Paris"}'},
            }
        ],
    },
    {"role": "tool", "tool_call_id": "call_1", "content": "18C"},
    {"role": "assistant", "content": "18C in Paris."},
]


def test_source_formats_are_listed() -> None:
    assert SOURCE_FORMATS == (
        "json_array",
        "json_object",
        "jsonl_messages",
        "swe_agent_traj",
        "mini_swe_agent",
        "sleepcompact_export",
        "claude_code",
        "responses_items",
        "langchain_messages",
        "memorybank",
    )


@pytest.mark.parametrize("sample", [ANTHROPIC, OPENAI], ids=["anthropic", "openai"])
def test_json_array(sample: list[dict[str, Any]]) -> None:
    conv = _one(json.dumps(sample, indent=2))
    assert conv.messages == sample
    assert conv.metadata == {"source_format": "json_array"}
    assert conv.model is None
    calls, results = _pairing(conv.messages)
    assert calls == results and len(calls) == 1


def test_json_object_with_system_string_and_model() -> None:
    doc = {"model": "claude-x", "system": "You are terse.", "messages": ANTHROPIC}
    conv = _one(json.dumps(doc))
    assert conv.messages == [{"role": "system", "content": "You are terse."}, *ANTHROPIC]
    assert conv.metadata == {"source_format": "json_object"}
    assert conv.model == "claude-x"


def test_json_object_with_system_blocks_and_openai_messages() -> None:
    doc = {
        "system": [{"type": "text", "text": "Part one."}, {"type": "text", "text": "Part two."}],
        "messages": OPENAI,
    }
    conv = _one(json.dumps(doc))
    assert conv.messages[0] == {"role": "system", "content": "Part one.\nPart two."}
    assert conv.messages[1:] == OPENAI
    assert conv.model is None


def test_json_object_without_system() -> None:
    assert _one(json.dumps({"messages": OPENAI})).messages == OPENAI


@pytest.mark.parametrize("sample", [ANTHROPIC, OPENAI], ids=["anthropic", "openai"])
def test_jsonl_messages_with_blank_lines_and_crlf(sample: list[dict[str, Any]]) -> None:
    text = "\r\n\r\n".join(json.dumps(m) for m in sample) + "\r\n"
    conv = _one(text)
    assert conv.messages == sample
    assert conv.metadata == {"source_format": "jsonl_messages"}


def test_sleepcompact_export() -> None:
    doc = {"format": "sleepcompact.export/1", "conversation": {"id": "conv-42"}, "appended": OPENAI}
    conv = _one(json.dumps(doc))
    assert conv.messages == OPENAI
    assert conv.metadata == {"source_format": "sleepcompact_export", "exported_conversation_id": "conv-42"}


def test_unknown_export_version_is_refused() -> None:
    with pytest.raises(ImportFormatError, match=r"unknown export format 'sleepcompact\.export/9'"):
        parse_import(json.dumps({"format": "sleepcompact.export/9", "appended": []}).encode())


def test_bom_is_stripped() -> None:
    conv = _one(b"\xef\xbb\xbf" + json.dumps(ANTHROPIC).encode())
    assert conv.messages == ANTHROPIC


def test_one_conversation_formats_take_record_one_only() -> None:
    data = json.dumps(OPENAI).encode()
    assert len(parse_import(data, all_records=True)) == 1
    assert _one(data, record=1).messages == OPENAI
    with pytest.raises(ImportFormatError, match=r"record 2 is out of range: the file holds 1 record$"):
        parse_import(data, record=2)
    with pytest.raises(ImportFormatError, match="either one record or all records"):
        parse_import(data, record=1, all_records=True)


# -- SWE-agent oddities on inline samples ----------------------------------------------------------


def test_traj_with_python_literal_tool_calls_and_text_block_content() -> None:
    calls = (
        "[{'function': {'arguments': '{\"file_name\":\"x.py\"}', 'name': 'find_file'}, "
        "'id': 'call_Pb1', 'type': 'function'}]"
    )
    history = [
        {"role": "system", "content": "sys", "agent": "main"},
        {"role": "user", "content": [{"type": "text", "text": "fix it", "cache_control": {"type": "x"}}]},
        {
            "role": "assistant",
            "content": "Find it.",
            "agent": "main",
            "message_type": "action",
            "thought": "Find it.",
            "action": "find_file x.py",
            "tool_calls": calls,
        },
        {
            "role": "tool",
            "content": "found",
            "agent": "main",
            "message_type": "observation",
            "tool_call_ids": "['call_Pb1']",
        },
    ]
    conv = _one(json.dumps({"history": history, "info": {"exit_status": "submitted", "submission": "d"}}))
    assert conv.messages == [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": "fix it"},
        {
            "role": "assistant",
            "content": "Find it.",
            "tool_calls": [
                {
                    "id": "call_Pb1",
                    "type": "function",
                    "function": {"name": "find_file", "arguments": '{"file_name":"x.py"}'},
                }
            ],
        },
        {"role": "tool", "content": "found", "tool_call_id": "call_Pb1"},
    ]
    assert conv.metadata == {"source_format": "swe_agent_traj", "exit_status": "submitted", "submission": "d"}


def test_traj_tool_message_answering_several_calls_becomes_one_message_per_id() -> None:
    history = [
        {"role": "user", "content": "go"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {"id": "a", "type": "function", "function": {"name": "ls", "arguments": "{}"}},
                {"id": "b", "type": "function", "function": {"name": "pwd", "arguments": {"x": 1}}},
            ],
        },
        {"role": "tool", "content": "out", "tool_call_ids": ["a", "b"]},
    ]
    conv = _one(json.dumps({"history": history}))
    assert conv.messages[1]["tool_calls"][1]["function"]["arguments"] == '{"x": 1}'
    assert conv.messages[2] == {"role": "tool", "content": "out", "tool_call_id": "a"}
    assert conv.messages[3]["tool_call_id"] == "b"
    assert "tool call a" in conv.messages[3]["content"]
    assert _pairing(conv.messages) == (["a", "b"], ["a", "b"])


def test_traj_errors() -> None:
    with pytest.raises(ImportFormatError, match="'history' must be a list, got a JSON object"):
        parse_import(json.dumps({"history": {"role": "user"}}).encode())
    with pytest.raises(ImportFormatError, match=r"history\[1\]: a tool message needs 'tool_call_ids'"):
        parse_import(
            json.dumps(
                {"history": [{"role": "user", "content": "x"}, {"role": "tool", "content": "y"}]}
            ).encode()
        )
    bad = {"history": [{"role": "assistant", "content": "x", "tool_calls": "[{'id': "}]}
    with pytest.raises(
        ImportFormatError, match=r"history\[0\].tool_calls is neither JSON nor a Python literal"
    ):
        parse_import(json.dumps(bad).encode())
    with pytest.raises(ImportFormatError, match=r"history\[0\] is a JSON string"):
        parse_import(json.dumps({"history": ["hello"]}).encode())


# -- errors ------------------------------------------------------------------------------------------


def test_invalid_utf8_names_line_and_byte_offset() -> None:
    data = _jsonl({"role": "user", "content": "a"}, {"role": "assistant", "content": "b"})
    bad_offset = len(data) + len(b'{"role": "user", "content": "')
    data += b'{"role": "user", "content": "\xff"}\n'
    with pytest.raises(ImportFormatError) as info:
        parse_import(data, source="chat.jsonl")
    assert info.value.line == 3
    assert (
        str(info.value) == f"chat.jsonl: line 3: bytes that are not valid UTF-8 at byte offset {bad_offset}"
    )


def test_invalid_utf8_offset_counts_the_bom() -> None:
    with pytest.raises(ImportFormatError, match=r"line 1: .* at byte offset 4$"):
        parse_import(b"\xef\xbb\xbf[\xc3")


def test_malformed_jsonl_names_the_line() -> None:
    data = b'{"role": "user", "content": "a"}\n{"role": "assistant", "content": }\n{"role": "user"}\n'
    with pytest.raises(ImportFormatError) as info:
        parse_import(data, source="chat.jsonl")
    assert info.value.line == 2
    assert str(info.value).startswith("chat.jsonl: line 2: malformed JSON: Expecting value")


def test_malformed_single_json_names_line_and_column() -> None:
    data = b'[\n  {"role": "user",\n   "content": "x",,\n  }\n]\n'
    with pytest.raises(ImportFormatError) as info:
        parse_import(data)
    assert info.value.line == 3
    assert "line 3: malformed JSON at column 19" in str(info.value)


@pytest.mark.parametrize("data", [b"", b"  \n\n\t", b"\xef\xbb\xbf\n"])
def test_empty_file(data: bytes) -> None:
    with pytest.raises(ImportFormatError, match="the file is empty"):
        parse_import(data)


def test_empty_conversation() -> None:
    with pytest.raises(ImportFormatError, match="no messages"):
        parse_import(b"[]")


def test_non_object_jsonl_line() -> None:
    with pytest.raises(ImportFormatError) as info:
        parse_import(b'{"role": "user", "content": "a"}\n[1, 2]\n')
    assert info.value.line == 2
    assert "expected a JSON object on each line, got a JSON array" in str(info.value)


def test_non_object_array_element() -> None:
    with pytest.raises(ImportFormatError, match="element 1 is a JSON string, expected a message object"):
        parse_import(json.dumps([{"role": "user", "content": "a"}, "b"]).encode())


@pytest.mark.parametrize("doc", ["42", '"text"', '{"foo": 1}'])
def test_unrecognized_documents(doc: str) -> None:
    with pytest.raises(ImportFormatError):
        parse_import(doc.encode())


def test_orphan_tool_result_in_json_names_the_message() -> None:
    msgs = [{"role": "user", "content": "hi"}, {"role": "tool", "tool_call_id": "call_9", "content": "x"}]
    with pytest.raises(ImportFormatError, match=r"element 1: tool result for unknown tool call id 'call_9'"):
        parse_import(json.dumps(msgs).encode())


def test_orphan_anthropic_tool_result_in_jsonl_names_the_line() -> None:
    result = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_9", "content": "x"}]}
    with pytest.raises(ImportFormatError) as info:
        parse_import(_jsonl({"role": "user", "content": "hi"}, result))
    assert info.value.line == 2
    assert "unknown tool call id 'toolu_9'" in str(info.value)


def test_tool_result_before_its_call_is_an_orphan() -> None:
    msgs = [OPENAI[3], OPENAI[2]]
    with pytest.raises(ImportFormatError, match="element 0: tool result for unknown tool call id 'call_1'"):
        parse_import(json.dumps(msgs).encode())


def test_a_tool_call_id_reused_after_its_result_imports() -> None:
    msgs = [*OPENAI[1:4], OPENAI[2], OPENAI[3]]
    conv = _one(json.dumps({"messages": msgs}).encode())
    assert conv.messages == msgs  # kept as written; bound turn by turn
    assert _bound(conv.messages) == (["call_1", "call_1_2"], ["call_1", "call_1_2"])


def test_a_tool_call_id_repeated_while_unanswered_names_the_message() -> None:
    msgs = [*OPENAI[1:3], OPENAI[2], OPENAI[3]]
    with pytest.raises(
        ImportFormatError, match=r"messages\[2\]: tool call id 'call_1' is already used by a call"
    ):
        parse_import(json.dumps({"messages": msgs}).encode())


def test_invalid_message_names_where_and_why() -> None:
    with pytest.raises(ImportFormatError, match=r"messages\[1\]: unknown role 'robot'"):
        parse_import(
            json.dumps(
                {"messages": [{"role": "user", "content": "a"}, {"role": "robot", "content": "b"}]}
            ).encode()
        )
    with pytest.raises(ImportFormatError) as info:
        parse_import(
            _jsonl(
                {"role": "user", "content": "a"},
                {"role": "user", "content": "b"},
                {"role": "user", "content": ""},
            )
        )
    assert info.value.line == 3
    assert "the user message has no content" in str(info.value)


def test_mini_record_with_a_bad_message_names_the_line_and_index() -> None:
    rows = [
        {"instance_id": "a", "messages": [{"role": "user", "content": "ok"}]},
        {"instance_id": "b", "messages": [{"role": "user", "content": "ok"}, {"role": "user"}]},
    ]
    assert _one(_jsonl(*rows)).metadata["instance_id"] == "a"
    with pytest.raises(ImportFormatError) as info:
        parse_import(_jsonl(*rows), record=2)
    assert info.value.line == 2
    assert "messages[1]: the user message has no content" in str(info.value)


def test_mixed_jsonl_is_refused_at_the_odd_line() -> None:
    data = _jsonl(
        {"instance_id": "a", "messages": [{"role": "user", "content": "ok"}]},
        {"role": "user", "content": "x"},
    )
    with pytest.raises(ImportFormatError) as info:
        parse_import(data, all_records=True)
    assert info.value.line == 2


def test_an_unrelated_format_key_does_not_make_an_export() -> None:
    conv = _one(json.dumps({"format": "chat", "messages": OPENAI}))
    assert conv.metadata == {"source_format": "json_object"}
