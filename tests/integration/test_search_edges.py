"""Archive search at its edges, where mutation testing (docs/mutation.md, seventh session) found bugs no
test noticed: a token budget met exactly, a moment given in another time zone or naive on a machine that
is not on UTC, a question naming a day beside an explicit date range, and the recall tool's page
around hits that are not plain messages or are the assistant's."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from datetime import UTC, date, datetime, timedelta, timezone

import pytest

from sleepcompact import ConversationNotFound, InvalidSetting, Memory


def _said(mem: Memory, *texts: str) -> str:
    cid = mem.create_conversation("claude-sonnet-4-5")
    mem.append_many(cid, [{"role": "user", "content": t} for t in texts])
    return cid


def _page(mem: Memory, cid: str, query: str) -> str:
    call = {"type": "tool_use", "id": "t", "name": "search_history", "input": {"query": query}}
    return str(mem.handle_tool_call(cid, call)["content"])


def _talk(mem: Memory, *messages: tuple[str, object]) -> str:
    cid = mem.create_conversation("claude-haiku-4-5", context_window=8_000)
    for role, content in messages:
        mem.append(cid, {"role": role, "content": content})
    return cid


def _looked_up(
    mem: Memory, question: str, tool: str, tool_input: dict[str, str], result: str, answer: str
) -> str:
    """The user asks, the assistant calls ``tool``, the result comes back, the assistant answers."""
    use = {"type": "tool_use", "id": "toolu_1", "name": tool, "input": tool_input}
    return _talk(
        mem,
        ("user", question),
        ("assistant", [use]),
        ("user", [{"type": "tool_result", "tool_use_id": "toolu_1", "content": result}]),
        ("assistant", answer),
    )


def test_a_budget_of_exactly_the_snippets_tokens_keeps_them_and_one_less_drops_the_last(
    memory: Memory,
) -> None:
    cid = _said(memory, *[f"Entry {n} about the lighthouse keeper and the storm." for n in range(10)])
    every = memory.search_history(cid, "lighthouse storm")
    count = memory._deps.counter.count
    exact = sum(count(h.snippet) for h in every[:3])
    assert memory.search_history(cid, "lighthouse storm", budget_tokens=exact) == every[:3]
    assert memory.search_history(cid, "lighthouse storm", budget_tokens=exact - 1) == every[:2]


# -- moments in time zones ----------------------------------------------------------------------------


NIGHT = datetime(2024, 5, 4, tzinfo=UTC)


def _night(mem: Memory) -> str:
    """Three notes at 21:30, 22:30 and 23:30 UTC on 4 May 2024."""
    cid = mem.create_conversation("claude-sonnet-4-5")
    for hour in (21, 22, 23):
        note = {"role": "user", "content": f"Night note at {hour}:30 about the telescope."}
        mem.append(cid, note, sent_at=NIGHT + timedelta(hours=hour, minutes=30))
    return cid


def _hours(mem: Memory, cid: str, since: datetime) -> list[int]:
    return sorted(
        h.created_at.hour for h in mem.search_history(cid, "telescope", since=since) if h.created_at
    )


def test_a_moment_in_another_zone_bounds_the_search_at_that_instant(memory: Memory) -> None:
    cid = _night(memory)
    midnight_in_cairo = datetime(2024, 5, 5, 0, 0, tzinfo=timezone(timedelta(hours=2)))  # 22:00 UTC
    assert _hours(memory, cid, midnight_in_cairo) == [22, 23]


@pytest.fixture
def kolkata_clock() -> Iterator[None]:
    """The process's local time zone at UTC+05:30 for one test (naive times must not follow it)."""
    before = os.environ.get("TZ")
    os.environ["TZ"] = "Asia/Kolkata"
    time.tzset()
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("TZ", None)
        else:
            os.environ["TZ"] = before
        time.tzset()


def test_a_naive_moment_is_utc_whatever_the_machines_zone(memory: Memory, kolkata_clock: None) -> None:
    cid = _night(memory)
    assert _hours(memory, cid, datetime(2024, 5, 4, 22, 0)) == [22, 23]
    assert _hours(memory, cid, datetime(2024, 5, 4, 22, 0, tzinfo=UTC)) == [22, 23]


# -- a day named in the question -----------------------------------------------------------------------


def _diary(mem: Memory) -> str:
    history = {
        "2024-05-04": [{"query": "I baked bread with rye flour.", "response": "Lovely."}],
        "2024-05-05": [{"query": "For grandma's birthday I baked a cake.", "response": "So glad."}],
        "2024-05-06": [
            {"query": f"Baked rye loaf number {n}, this one with seeds.", "response": "Nice."}
            for n in range(6)
        ],
    }
    (cid,) = mem.import_({"Dana": {"name": "Dana", "history": history}})
    return cid


def test_an_explicit_date_range_wins_over_a_day_the_question_names(memory: Memory) -> None:
    cid = _diary(memory)
    # Without a range, the named day comes first, though its row matches one word of two.
    first = memory.search_history(cid, "baked rye on May 5th", limit=3)[0]
    assert first.created_at is not None and first.created_at.date() == date(2024, 5, 5)
    # With one, the range decides: May 5th is not pulled in front of the rows that match.
    ranged = memory.search_history(cid, "baked rye on May 5th", limit=3, since=date(2024, 5, 4))
    assert [h.created_at.date() for h in ranged if h.created_at] != [date(2024, 5, 5)] * len(ranged)
    assert ranged[0].created_at is not None and ranged[0].created_at.date() != date(2024, 5, 5)
    assert all("rye" in h.snippet.lower() for h in ranged[:2])


def test_the_named_day_and_the_matching_rows_together_stay_within_the_limit(memory: Memory) -> None:
    cid = _diary(memory)
    for limit in (2, 3, 5):
        hits = memory.search_history(cid, "baked rye on May 5th", limit=limit)
        assert len(hits) == limit
        assert len({h.seq for h in hits}) == limit


# -- the recall tool's page around its hits -------------------------------------------------------------


def test_an_assistant_hit_shows_the_users_message_it_answered(memory: Memory) -> None:
    cid = _talk(
        memory,
        ("user", "Quick one before I leave for the airport."),
        ("assistant", "Sure, go ahead."),
        ("user", "Where did I park last time?"),
        ("assistant", "You parked on level P3, bay 41, near the elevator."),
        ("user", "Thanks!"),
    )
    page = _page(memory, cid, "level P3 bay 41 elevator")
    lines = page.splitlines()
    assert lines[1].startswith("1. [seq 4, assistant"), page
    assert any("[seq 3, user] Where did I park last time?" in line for line in lines[2:4]), page


def test_a_tool_call_hit_shows_no_exchange_and_the_next_hits_still_do(memory: Memory) -> None:
    cid = _looked_up(
        memory,
        "Check the invoice ledger for ACME-7731, please.",
        "ledger",
        {"invoice": "ACME-7731"},
        "paid",
        "ACME-7731 was paid on time.",
    )
    memory.append(cid, {"role": "user", "content": "Great, so ACME-7731 is settled."})
    memory.append(cid, {"role": "assistant", "content": "Yes, nothing is outstanding."})
    page = _page(memory, cid, "ACME-7731")
    # Every message naming the invoice is a hit; the tool call's own row is one too. Under the user's
    # last hit comes the assistant's reply, whatever rank the tool call took.
    assert "[seq 6, assistant] Yes, nothing is outstanding." in page, page
    # A tool call has no exchange of its own: nothing of another kind is shown as a partner.
    assert "paid\n" not in page.replace("was paid", ""), page


def test_a_hit_on_a_tool_call_alone_shows_no_exchange_around_it(memory: Memory) -> None:
    cid = _looked_up(
        memory,
        "Can you look something up for me?",
        "lookup",
        {"ticket": "ZQX-4417"},
        "closed",
        "It is closed.",
    )
    page = _page(memory, cid, "ZQX-4417")
    assert page.splitlines()[0].startswith("1 result"), page
    assert "[seq 1, user]" not in page and "It is closed." not in page, page


def test_the_reply_under_a_users_hit_is_a_message_never_a_tool_call(memory: Memory) -> None:
    question = "Will the harbour kayak tour in Bergen run tomorrow?"
    cid = _looked_up(
        memory, question, "weather", {"city": "Oslo"}, "rain", "Rain is expected, so probably not."
    )
    page = _page(memory, cid, "harbour kayak tour")
    assert "1. [seq 1, user" in page, page
    assert "weather" not in page and "Oslo" not in page, page


def test_a_message_bordering_two_hits_is_shown_once(memory: Memory) -> None:
    cid = _talk(
        memory,
        ("user", "Morning!"),
        ("assistant", "Good morning. Did the sourdough starter rise overnight?"),
        ("user", "It doubled, smells tangy and bubbly."),
        ("assistant", "Then the sourdough starter is ready to bake with."),
    )
    page = _page(memory, cid, "sourdough starter")
    assert page.count("It doubled, smells tangy") == 1, page


def test_a_limit_of_one_gives_the_best_hit(memory: Memory) -> None:
    cid = _said(memory, "The red kite nests high.", "A red kite circled twice.", "No birds today.")
    (best,) = memory.search_history(cid, "red kite", limit=1)
    assert best == memory.search_history(cid, "red kite")[0]


def test_until_a_moment_includes_that_instant_and_not_the_next_microsecond(memory: Memory) -> None:
    cid = memory.create_conversation("claude-sonnet-4-5")
    at = datetime(2024, 5, 4, 12, 0, 0, 500_000, tzinfo=UTC)
    memory.append(cid, {"role": "user", "content": "Meter reading one."}, sent_at=at)
    memory.append(
        cid, {"role": "user", "content": "Meter reading two."}, sent_at=at + timedelta(microseconds=1)
    )
    hits = memory.search_history(cid, "meter reading", until=at)
    assert [h.snippet for h in hits] == ["Meter reading one."]


# -- errors say what was wrong ------------------------------------------------------------------------


def test_bad_arguments_and_unknown_conversations_are_named_in_the_error(memory: Memory) -> None:
    cid = _said(memory, "hello")
    with pytest.raises(InvalidSetting, match="limit must be at least 1, got 0"):
        memory.search_history(cid, "hello", 0)
    with pytest.raises(InvalidSetting, match="budget_tokens must not be negative, got -5"):
        memory.search_history(cid, "hello", budget_tokens=-5)
    with pytest.raises(ConversationNotFound, match="conv_missing"):
        memory.search_history("conv_missing", "hello")
    with pytest.raises(ConversationNotFound, match="conv_missing"):
        memory.compactions.history("conv_missing")
