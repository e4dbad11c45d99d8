"""The offline summary of a small coding run, whole and exact: every section, every bullet, in order.

The summary is what a resumed model reads instead of the folded turns. These cases pin what it says
of one run folded whole, folded with its last rows left live, folded onto a previous summary in an
LLM's own headings, and squeezed under three budgets (which bullets go first, and how the ledger
rolls up rather than losing its lines). Each text was read and judged before it was pinned here.
"""

from __future__ import annotations

from typing import Any

import pytest

from sleepcompact.adapters.tokenizer import load_counter
from sleepcompact.domain.prompt import SummaryInput
from sleepcompact.domain.summary import _assistant_items, _user_items, offline_summary
from tests.support.rows import rows_of
from tests.support.summaries import tool_call

COUNT = load_counter().count

RUN: list[dict[str, Any]] = [
    {"role": "user", "content": "Please fix the failing test in src/app/models.py. I prefer small commits."},
    {
        "role": "assistant",
        "content": "I will run the tests first because they fail.",
        "tool_calls": [tool_call("c1", "bash", {"command": "pytest -q tests/unit"})],
    },
    {
        "role": "tool",
        "tool_call_id": "c1",
        "content": "FAILED tests/unit/test_models.py::test_total - AssertionError: expected 10.50, got 10.49",
    },
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [tool_call("c2", "edit", {"path": "src/app/models.py"})],
    },
    {"role": "tool", "tool_call_id": "c2", "content": "done"},
    {"role": "assistant", "content": "Fixed the rounding in compute_total. Next I will run the whole suite."},
    {"role": "user", "content": "Also update the changelog?"},
]
# A previous summary in a model's own headings: its goal is the task, its progress is history now,
# the instructions it reported are not carried, its bare keyword list neither, its ledger line by line.
PREVIOUS = (
    "# Summary\n## Goal\n- Fix the bug (seq 1)\n## Progress\n1. edited the file\n"
    "## Instructions found in tool output\n- ignore all\n## Important identifiers\n"
    "* `src/app/models.py` (edit ×1)\nKeywords: a b c\n## Action ledger\n"
    '- seq 1 call bash(command="ls") → ok\n## Misc notes\n- something else'
)

WHOLE = [
    "## Task and goals",
    ("- Initial request (seq 1): Please fix the failing test in src/app/models.py. I prefer small commits."),
    "",
    "## Action ledger",
    ('- seq 1 request "Please fix the failing test in src/app/models.py. I prefer small commits." → done'),
    "- seq 2 decision: I will run the tests first because they fail.",
    (
        '- seq 3 call bash(command="pytest -q tests/unit") → error: FAILED '
        "tests/unit/test_models.py::test_total - AssertionError: expected 10.50, got "
        "10.49"
    ),
    '- seq 5 call edit(path="src/app/models.py") → ok',
    "- seq 7 decision: Next I will run the whole suite.",
    '- seq 8 request "Also update the changelog?" → pending',
    "",
    "## Completed work",
    "- Fixed the rounding in compute_total. (seq 7)",
    ("- Folded 8 messages (seq 1-8): 2 from the user, 2 from the assistant, 2 tool results (1 with errors)."),
    "- Tools used: bash ×1, edit ×1.",
    "",
    "## Current state",
    (
        "- Last assistant message (seq 7): Fixed the rounding in compute_total. Next I "
        "will run the whole suite."
    ),
    "",
    "## Next steps",
    "- Open request (seq 8, pending): Also update the changelog?",
    "",
    "## Constraints and user preferences",
    "- I prefer small commits. (seq 1)",
    "",
    "## Critical data (verbatim)",
    "- command=`pytest -q tests/unit`",
    "- code=`compute_total`",
    "- code=`AssertionError` (seq 4, tool output)",
    "",
    "## Files touched",
    "- `tests/unit` (bash ×1)",
    "- `src/app/models.py` (edit ×1)",
    "",
    "## Errors and resolutions",
    (
        "- seq 4 bash: FAILED tests/unit/test_models.py::test_total - AssertionError: "
        "expected 10.50, got 10.49 (open)"
    ),
    "",
    "## Lookup hints",
    (
        "- Originals archived as seq 1-8: read_archived(seq) returns one in full, "
        "search_history(query) finds them by their words."
    ),
]

ANSWERED_LATER = [
    "## Task and goals",
    ("- Initial request (seq 1): Please fix the failing test in src/app/models.py. I prefer small commits."),
    "",
    "## Action ledger",
    ('- seq 1 request "Please fix the failing test in src/app/models.py. I prefer small commits." → done'),
    "- seq 2 decision: I will run the tests first because they fail.",
    (
        '- seq 3 call bash(command="pytest -q tests/unit") → error: FAILED '
        "tests/unit/test_models.py::test_total - AssertionError: expected 10.50, got "
        "10.49"
    ),
    '- seq 5 call edit(path="src/app/models.py") → no result',
    "",
    "## Completed work",
    ("- Folded 5 messages (seq 1-5): 1 from the user, 1 from the assistant, 1 tool results (1 with errors)."),
    "- Tools used: bash ×1, edit ×1.",
    "",
    "## Current state",
    "- Last assistant message (seq 2): I will run the tests first because they fail.",
    "",
    "## Constraints and user preferences",
    "- I prefer small commits. (seq 1)",
    "",
    "## Critical data (verbatim)",
    "- command=`pytest -q tests/unit`",
    "- code=`AssertionError` (seq 4, tool output)",
    "",
    "## Files touched",
    "- `tests/unit` (bash ×1)",
    "- `src/app/models.py` (edit ×1)",
    "",
    "## Errors and resolutions",
    (
        "- seq 4 bash: FAILED tests/unit/test_models.py::test_total - AssertionError: "
        "expected 10.50, got 10.49 (open)"
    ),
    "",
    "## Lookup hints",
    (
        "- Originals archived as seq 1-5: read_archived(seq) returns one in full, "
        "search_history(query) finds them by their words."
    ),
]

ROLLING = [
    "## Task and goals",
    "- Fix the bug (seq 1)",
    "",
    "## Action ledger",
    '- seq 1 call bash(command="ls") → ok',
    "- seq 7 decision: Next I will run the whole suite.",
    '- seq 8 request "Also update the changelog?" → pending',
    "",
    "## Completed work",
    "- Earlier: edited the file",
    "- something else",
    "- Fixed the rounding in compute_total. (seq 7)",
    ("- Folded 3 messages (seq 6-8): 1 from the user, 1 from the assistant, 1 tool results (0 with errors)."),
    "",
    "## Current state",
    (
        "- Last assistant message (seq 7): Fixed the rounding in compute_total. Next I "
        "will run the whole suite."
    ),
    "",
    "## Next steps",
    "- Open request (seq 8, pending): Also update the changelog?",
    "",
    "## Critical data (verbatim)",
    "- `src/app/models.py` (edit ×1)",
    "- code=`compute_total`",
    "",
    "## Lookup hints",
    (
        "- Originals archived as seq 6-8: read_archived(seq) returns one in full, "
        "search_history(query) finds them by their words."
    ),
]

AT_300 = [
    "## Task and goals",
    ("- Initial request (seq 1): Please fix the failing test in src/app/models.py. I prefer small commits."),
    "",
    "## Action ledger",
    ('- seq 1 request "Please fix the failing test in src/app/models.py. I prefer small commits." → done'),
    "- seq 2 decision: I will run the tests first because they fail.",
    (
        '- seq 3 call bash(command="pytest -q tests/unit") → error: FAILED '
        "tests/unit/test_models.py::test_total - AssertionError: expected 10.50, got "
        "10.49"
    ),
    '- seq 5 call edit(path="src/app/models.py") → ok',
    "- seq 7 decision: Next I will run the whole suite.",
    '- seq 8 request "Also update the changelog?" → pending',
    "",
    "## Next steps",
    "- Open request (seq 8, pending): Also update the changelog?",
    "",
    "## Constraints and user preferences",
    "- I prefer small commits. (seq 1)",
    "",
    "## Critical data (verbatim)",
    "- command=`pytest -q tests/unit`",
    "- code=`compute_total`",
    "- code=`AssertionError` (seq 4, tool output)",
    "",
    "## Files touched",
    "- `tests/unit` (bash ×1)",
    "- `src/app/models.py` (edit ×1)",
    "",
    "## Errors and resolutions",
    (
        "- seq 4 bash: FAILED tests/unit/test_models.py::test_total - AssertionError: "
        "expected 10.50, got 10.49 (open)"
    ),
]

AT_200 = [
    "## Task and goals",
    ("- Initial request (seq 1): Please fix the failing test in src/app/models.py. I prefer small commits."),
    "",
    "## Action ledger",
    "- seq 1-5 rolled up: 2 calls (bash ×1, edit ×1), 1 error; 1 request (1 done); 1 decision",
    "- seq 7 decision: Next I will run the whole suite.",
    '- seq 8 request "Also update the changelog?" → pending',
    "",
    "## Constraints and user preferences",
    "- I prefer small commits. (seq 1)",
    "",
    "## Critical data (verbatim)",
    "- command=`pytest -q tests/unit`",
    "- code=`compute_total`",
    "",
    "## Files touched",
    "- `tests/unit` (bash ×1)",
    "- `src/app/models.py` (edit ×1)",
    "",
    "## Errors and resolutions",
    (
        "- seq 4 bash: FAILED tests/unit/test_models.py::test_total - AssertionError: "
        "expected 10.50, got 10.49 (open)"
    ),
]

AT_60 = [
    "## Task and goals",
    "- Initial request (seq 1): Please fix …",
    "",
    "## Action ledger",
    ("- seq 1-8 rolled up: 2 calls (bash ×1, edit ×1), 1 error; 2 requests (1 done, 1 pending); 2 decisions"),
]

ROWS = rows_of(RUN, COUNT)


@pytest.mark.parametrize(
    ("inp", "expected"),
    [
        (SummaryInput(ROWS, None, 2000), WHOLE),
        # the edit's result and the reply stay live: the request is done, the edit has no result yet
        (SummaryInput(ROWS[:5], None, 2000, ROWS[5:]), ANSWERED_LATER),
        (SummaryInput(ROWS[5:], PREVIOUS, 2000), ROLLING),
        # state and completed work go before critical data, files and errors
        (SummaryInput(ROWS, None, 300), AT_300),
        # the ledger's oldest lines roll up; the open request's bullet goes, its ledger line stays
        (SummaryInput(ROWS, None, 200), AT_200),
        # the task is cut only as a last resort, with a mark
        (SummaryInput(ROWS, None, 60), AT_60),
    ],
    ids=["whole", "answered-later", "rolling", "at-300", "at-200", "at-60"],
)
def test_the_offline_summary_of_a_small_run_says_exactly_this(inp: SummaryInput, expected: list[str]) -> None:
    summary = offline_summary(inp, COUNT)
    assert summary.split("\n") == expected
    assert COUNT(summary) <= inp.max_tokens


def test_a_summary_of_nothing_says_nothing_was_folded() -> None:
    assert (
        offline_summary(SummaryInput((), None, 50), COUNT) == "## Task and goals\n- No messages were folded."
    )


def clipped(text: str, limit: int) -> str:
    """``text`` as the summary clips it to ``limit`` characters."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def request_lines(summary: str) -> list[str]:
    return [line for line in summary.splitlines() if "request" in line.lower()]


def test_the_only_request_is_the_task_and_not_also_an_open_step() -> None:
    summary = offline_summary(SummaryInput(ROWS[:5], None, 2000), COUNT)
    assert "## Next steps" not in summary
    task = "Please fix the failing test in src/app/models.py. I prefer small commits."
    assert request_lines(summary) == [
        f"- Initial request (seq 1): {task}",
        f'- seq 1 request "{task}" → in progress',
    ]


def test_a_request_answered_in_the_live_rows_is_not_an_open_step() -> None:
    rows = rows_of([*RUN, {"role": "assistant", "content": "Updated the changelog too."}], COUNT)
    summary = offline_summary(SummaryInput(rows[:8], None, 2000, rows[8:]), COUNT)
    assert "## Next steps" not in summary
    assert request_lines(summary)[1:] == [
        '- seq 1 request "Please fix the failing test in src/app/models.py. I prefer small commits." → done',
        '- seq 8 request "Also update the changelog?" → answered',
    ]


TRIP: list[dict[str, Any]] = [
    {"role": "user", "content": "Plan my trip. I live in Lisbon."},
    {"role": "assistant", "content": "Sure."},
    {"role": "user", "content": "I prefer window seats."},
    {"role": "assistant", "content": "Noted."},
    {"role": "user", "content": "I never fly at night."},
    {"role": "assistant", "content": "Noted."},
    {"role": "user", "content": "Book the Friday flight please."},
    {"role": "assistant", "content": None, "tool_calls": [tool_call("c1", "book", {"day": "Friday"})]},
]


def test_the_users_facts_go_before_their_preferences_and_older_before_newer() -> None:
    rows = list(rows_of(TRIP, COUNT))
    users = [r for r in rows if r.role == "user"]
    assert [(it.section, it.text, it.priority, it.rank) for it in _user_items(rows, users, False, False)] == [
        ("Constraints and user preferences", "I live in Lisbon. (seq 1)", 8, (0,)),
        ("Task and goals", "Initial request (seq 1): Plan my trip. I live in Lisbon.", 11, ()),
        ("Constraints and user preferences", "I prefer window seats. (seq 3)", 9, (-1,)),
        ("Constraints and user preferences", "I never fly at night. (seq 5)", 9, (-2,)),
    ]
    summary = offline_summary(SummaryInput(tuple(rows), None, 2000), COUNT)
    assert "## Next steps\n- Open request (seq 7, in progress): Book the Friday flight please.\n" in summary


@pytest.mark.parametrize("extra", [0, 1])  # at the limit, and one over it
def test_requests_and_preferences_are_clipped_at_their_lengths(extra: int) -> None:
    task, preference, request = (
        "t" * (600 + extra),
        "I prefer " + "p" * (290 + extra) + ".",
        "r" * (400 + extra),
    )
    assert (len(task), len(preference), len(request)) == (600 + extra, 300 + extra, 400 + extra)
    chat = [
        {"role": "user", "content": task},
        {"role": "assistant", "content": "ok"},
        {"role": "user", "content": preference},
        {"role": "assistant", "content": "ok"},
        {"role": "user", "content": request},
    ]
    summary = offline_summary(SummaryInput(rows_of(chat, COUNT), None, 4000), COUNT)

    assert f"- Initial request (seq 1): {clipped(task, 600)}\n" in summary
    assert f"- {clipped(preference, 300)} (seq 3)\n" in summary
    assert f"- Open request (seq 5, pending): {clipped(request, 400)}\n" in summary


def test_each_user_message_is_the_task_a_request_or_a_preference() -> None:
    chat = [
        {"role": "user", "content": "Fix the parser please."},
        {
            "role": "assistant",
            "content": "What is broken? Fixed the parser. I decided to use regex. Remaining: the docs.",
        },
        {"role": "user", "content": "Thanks. Why did it break?"},
        {"role": "assistant", "content": "Completed the docs too. Next, the changelog."},
        {"role": "user", "content": "I prefer short answers."},
        {"role": "user", "content": "ok"},
    ]
    rows = list(rows_of(chat, COUNT))
    users = [r for r in rows if r.role == "user"]
    expected = [
        ("Task and goals", "Initial request (seq 1): Fix the parser please.", 11, ()),
        ("Task and goals", "Request: Thanks. Why did it break? (seq 3)", 6, (-1,)),
        ("Constraints and user preferences", "I prefer short answers. (seq 5)", 9, (-2,)),
    ]
    assert [
        (it.section, it.text, it.priority, it.rank) for it in _user_items(rows, users, False, False)
    ] == expected
    rolling = _user_items(rows, users, False, True)
    assert rolling[0].text == "Request (seq 1): Fix the parser please."
    # the assistant's work, newest message first; its questions and decisions are not bullets here
    assistants = [r for r in rows if r.role == "assistant"]
    assert [(it.section, it.text, it.priority, it.rank) for it in _assistant_items(assistants)] == [
        ("Completed work", "Completed the docs too. (seq 4)", 6, (0,)),
        ("Next steps", "Next, the changelog. (seq 4)", 5, (0,)),
        ("Completed work", "Fixed the parser. (seq 2)", 6, (1,)),
        ("Next steps", "Remaining: the docs. (seq 2)", 5, (1,)),
        (
            "Current state",
            "Last assistant message (seq 4): Completed the docs too. Next, the changelog.",
            8,
            (),
        ),
    ]


def test_a_fold_without_a_user_message_says_so_as_its_task() -> None:
    rows = rows_of(
        [{"role": "assistant", "content": "Done."}, {"role": "assistant", "content": "Fixed."}], COUNT
    )
    assert offline_summary(SummaryInput(rows, None, 500), COUNT).split("\n\n")[0] == (
        "## Task and goals\n- No user request in seq 1-2; see the archive."
    )


@pytest.mark.parametrize("extra", [0, 1])  # at the limit, and one over it
def test_a_request_a_completed_step_and_the_last_message_are_clipped_at_their_lengths(extra: int) -> None:
    request, done, last = "q" * (300 + extra), "Fixed " + "d" * (293 + extra) + ".", "m" * (400 + extra)
    assert (len(request), len(done), len(last)) == (300 + extra, 300 + extra, 400 + extra)
    chat = [
        {"role": "user", "content": "Fix it."},
        {"role": "user", "content": request},
        {"role": "assistant", "content": done},
        {"role": "user", "content": "ok"},
        {"role": "assistant", "content": last},
    ]
    summary = offline_summary(SummaryInput(rows_of(chat, COUNT), None, 4000), COUNT)

    assert f"- Request: {clipped(request, 300)} (seq 2)\n" in summary
    assert f"- {clipped(done, 300)} (seq 3)\n" in summary
    assert f"- Last assistant message (seq 5): {clipped(last, 400)}\n" in summary


def test_the_tools_used_are_listed_most_used_first_and_ties_by_name() -> None:
    chat: list[dict[str, Any]] = [{"role": "user", "content": "Go."}]
    for i, name in enumerate(["zed", "bash", "edit", "bash", "zed", "abc"]):
        chat.append(
            {"role": "assistant", "content": None, "tool_calls": [tool_call(f"c{i}", name, {"x": str(i)})]}
        )
        chat.append({"role": "tool", "tool_call_id": f"c{i}", "content": "ok"})
    summary = offline_summary(SummaryInput(rows_of(chat, COUNT), None, 2000), COUNT)
    assert "\n- Tools used: bash ×2, zed ×2, abc ×1, edit ×1.\n" in summary
