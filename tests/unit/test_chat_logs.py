"""MemoryBank companion-chat histories import as one dated conversation per user.

The file maps each user's name to a profile and a ``history`` of days (``"YYYY-MM-DD"``), each a
list of ``{query, response}`` turns. Each user becomes one conversation: queries and responses
alternate as user and assistant messages in date order, every message stamped with its day (UTC
midnight), the profile kept as provenance in the metadata and never said by anyone. Also here:
``json_shapes.source_time``, the reading of a log's clock that every importer shares.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from sleepcompact.domain.errors import ImportFormatError
from sleepcompact.domain.formats import parse_import
from sleepcompact.domain.json_shapes import source_time

MEMORYBANK = Path("/work/shared/data/conversations/memorybank/memory_bank_en.json")


def user(history: dict[str, Any], **profile: Any) -> dict[str, Any]:
    """A user record shaped like memory_bank_en.json's (empty profile fields, as the file has them)."""
    record: dict[str, Any] = {
        "name": profile.pop("name", "Someone"),
        "summary": {},
        "personality": {},
        "overall_history": "",
        "history": history,
        "meta_information": {},
    }
    record.update(profile)
    return record


def turn(query: str | None, response: str | None) -> dict[str, Any]:
    return {"query": query, "response": response}


def bank(**users: dict[str, Any]) -> bytes:
    return json.dumps(users).encode()


TWO_USERS = bank(
    Emily=user({"2023-04-27": [turn("Hello, I am Emily.", "Hello, Emily.")]}, name="Emily"),
    Jason=user(
        {
            "2023-04-28": [turn("I like chess.", "Chess is fun."), turn("Any openings?", "Try the Italian.")],
            "2023-04-27": [turn("Hi, I am Jason.", "Hi Jason.")],
        },
        name="Jason",
    ),
)


def day(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


# -- records ------------------------------------------------------------------------------------------


def test_every_user_is_one_conversation_in_file_order() -> None:
    convs = parse_import(TWO_USERS, all_records=True)
    assert [c.metadata["user"] for c in convs] == ["Emily", "Jason"]
    assert [c.metadata["record"] for c in convs] == [1, 2]
    assert all(c.metadata["source_format"] == "memorybank" for c in convs)


def test_one_record_picks_one_user_and_the_default_is_the_first() -> None:
    (second,) = parse_import(TWO_USERS, record=2)
    assert second.metadata["user"] == "Jason"
    (first,) = parse_import(TWO_USERS)
    assert first.metadata["user"] == "Emily"


def test_a_record_past_the_last_user_is_an_import_error() -> None:
    with pytest.raises(ImportFormatError, match="record 3 is out of range: the file holds 2 records"):
        parse_import(TWO_USERS, record=3)


# -- messages and their days ----------------------------------------------------------------------------


def test_days_come_in_date_order_whatever_the_file_order() -> None:
    (jason,) = parse_import(TWO_USERS, record=2)
    assert [m["content"] for m in jason.messages if m["role"] == "user"] == [
        "Hi, I am Jason.",
        "I like chess.",
        "Any openings?",
    ]
    assert jason.metadata["days"] == ["2023-04-27", "2023-04-28"]


def test_queries_and_responses_alternate_as_user_and_assistant() -> None:
    (jason,) = parse_import(TWO_USERS, record=2)
    assert [m["role"] for m in jason.messages] == ["user", "assistant"] * 3
    assert jason.messages[-1] == {"role": "assistant", "content": "Try the Italian."}


def test_every_message_is_stamped_with_its_day_at_utc_midnight() -> None:
    (jason,) = parse_import(TWO_USERS, record=2)
    assert jason.sent_at == (day("2023-04-27"),) * 2 + (day("2023-04-28"),) * 4
    assert all(t is not None and t.tzinfo is UTC for t in jason.sent_at)


def test_a_turn_without_a_response_yields_the_user_message_alone() -> None:
    doc = bank(Ann=user({"2023-05-01": [turn("Are you there?", None), turn("Hello?", "Yes.")]}))
    (conv,) = parse_import(doc)
    assert [(m["role"], m["content"]) for m in conv.messages] == [
        ("user", "Are you there?"),
        ("user", "Hello?"),
        ("assistant", "Yes."),
    ]


# -- the profile is provenance, not conversation ---------------------------------------------------------


def test_the_profile_lands_in_metadata_and_never_in_a_message() -> None:
    meta_info = {"name": "Ivy", "personality": "curious, bold", "hobbies": "rock climbing"}
    doc = bank(
        Ivy=user(
            {"2023-05-02": [turn("I went climbing.", "How was it?")]},
            name="Ivy",
            meta_information=meta_info,
            summary={"overall": "Ivy loves the outdoors."},
            overall_history="Ivy talked about climbing.",
        )
    )
    (conv,) = parse_import(doc)
    assert conv.metadata["meta_information"] == meta_info
    assert conv.metadata["summary"] == {"overall": "Ivy loves the outdoors."}
    assert conv.metadata["overall_history"] == "Ivy talked about climbing."
    assert "personality" not in conv.metadata  # empty in the file: nothing to keep
    said = json.dumps(conv.messages)
    for profile_text in ("rock climbing", "curious, bold", "loves the outdoors", "talked about climbing"):
        assert profile_text not in said


def test_names_padded_with_spaces_are_stripped() -> None:
    doc = bank(**{" Jason ": user({"2023-05-01": [turn("Hi.", "Hello.")]}, name="Jason")})
    (conv,) = parse_import(doc)
    assert conv.metadata["user"] == "Jason"


# -- bad records ---------------------------------------------------------------------------------------


def test_a_null_query_is_an_import_error_naming_user_day_and_turn() -> None:
    history = {"2023-05-01": [turn("Hi.", "Hello."), turn(None, "Are you still there?")]}
    doc = bank(**{" Linda": user(history, name="Linda")})
    with pytest.raises(ImportFormatError, match=r"Linda, 2023-05-01, turn 2: .*no content") as err:
        parse_import(doc)
    assert "' Linda'" not in str(err.value)


def test_a_day_that_is_not_a_list_is_an_import_error_naming_user_and_day() -> None:
    doc = bank(Roland=user({"2023-05-01": {"query": "Hi.", "response": "Hello."}}))
    with pytest.raises(ImportFormatError, match=r"Roland: the day 2023-05-01 holds a JSON object"):
        parse_import(doc)


def test_a_day_that_is_not_a_date_is_an_import_error_naming_it() -> None:
    doc = bank(Roland=user({"2023-05-01": [turn("Hi.", "Hello.")], "May 2nd": [turn("Hi.", "Hello.")]}))
    with pytest.raises(ImportFormatError, match=r"Roland: the day 'May 2nd' is not a date"):
        parse_import(doc)


def test_a_turn_that_is_not_an_object_is_an_import_error() -> None:
    doc = bank(Roland=user({"2023-05-01": ["Hi."]}))
    with pytest.raises(ImportFormatError, match=r"Roland, 2023-05-01, turn 1 is a JSON string"):
        parse_import(doc)


def test_a_bad_user_fails_the_import_of_every_record_at_once() -> None:
    doc = bank(
        Good=user({"2023-05-01": [turn("Hi.", "Hello.")]}), Bad=user({"2023-05-01": [turn(None, "x")]})
    )
    with pytest.raises(ImportFormatError, match="Bad"):
        parse_import(doc, all_records=True)
    (good,) = parse_import(doc, record=1)
    assert good.metadata["user"] == "Good"


# -- source_time -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2025-06-01T10:20:30Z", datetime(2025, 6, 1, 10, 20, 30, tzinfo=UTC)),
        ("2025-06-01T10:20:30.123Z", datetime(2025, 6, 1, 10, 20, 30, 123000, tzinfo=UTC)),
        ("2025-06-01T12:20:30+02:00", datetime(2025, 6, 1, 10, 20, 30, tzinfo=UTC)),
        ("2025-06-01T01:00:00-05:30", datetime(2025, 6, 1, 6, 30, tzinfo=UTC)),
        ("2025-06-01T10:20:30", datetime(2025, 6, 1, 10, 20, 30, tzinfo=UTC)),
        ("2023-04-27", datetime(2023, 4, 27, tzinfo=UTC)),
        ("  2023-04-27  ", datetime(2023, 4, 27, tzinfo=UTC)),
    ],
)
def test_source_time_reads_a_logs_clock_as_utc(text: str, expected: datetime) -> None:
    parsed = source_time(text)
    assert parsed == expected
    assert parsed is not None and parsed.tzinfo is UTC


@pytest.mark.parametrize(
    "value", ["yesterday", "2023-13-01", "2023-02-30", "", "   ", None, 1714000000, [], {}]
)
def test_source_time_of_garbage_or_nothing_is_none(value: Any) -> None:
    assert source_time(value) is None


# -- the real file ---------------------------------------------------------------------------------------


@pytest.mark.skipif(not MEMORYBANK.exists(), reason="the shared MemoryBank file is not present")
def test_the_real_memorybank_file_is_15_conversations_with_566_user_messages() -> None:
    convs = parse_import(MEMORYBANK.read_bytes(), source=MEMORYBANK.name, all_records=True)
    assert len(convs) == 15
    assert sum(1 for c in convs for m in c.messages if m["role"] == "user") == 566
    for conv in convs:
        assert len(conv.sent_at) == len(conv.messages)
        assert list(conv.sent_at) == sorted(t for t in conv.sent_at if t is not None)
        assert conv.metadata["user"] == conv.metadata["user"].strip()
