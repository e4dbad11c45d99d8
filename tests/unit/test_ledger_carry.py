"""A previous summary's action ledger, carried into the next summary: kept line for line while there is
room, its call lines' lists of cut names dropped first when there is not, then its oldest lines rolled
up into one line that counts exactly what they held (calls by tool, errors, requests by status,
decisions), its own earlier roll-up included, so no action is lost from the count."""

from __future__ import annotations

import math

import pytest

from sleepcompact.domain.ledger import SHARE
from tests.support.summaries import COUNT, section, summarize

ROLLED = (
    "seq 1-6 rolled up: 4 calls (edit_file ×3, run_tests ×1), 1 error; 2 requests (1 done, 1 answered);"
    " 1 decision"
)
REQUEST = 'seq 7 request "Please make the importer accept gzip files" → done'
CUT_LIST = "; cut: `gzip.open`, `io.BytesIO`"
WRITE = (
    f'seq 8 call write_file(path="src/importer.py", content="import gzip\\nfrom io import …"{CUT_LIST}) → ok'
)
FAILED = (
    'seq 10 call run_tests(target="tests/test_importer.py") → error: AssertionError: expected 3 rows, got 0'
)
DECISION = "seq 12 decision: switched to streaming reads because the files are 4 GB"
LEDGER = [ROLLED, REQUEST, WRITE, FAILED, DECISION]
PREVIOUS = "## Task and goals\n- Initial request (seq 1): importer\n\n## Action ledger\n" + "\n".join(
    f"- {line}" for line in LEDGER
)
NOTHING_NEW = [{"role": "assistant", "content": "Still reading the logs."}]  # adds no ledger line


def carried(cap: int) -> list[str]:
    summary = summarize(NOTHING_NEW, PREVIOUS, cap=cap)
    assert COUNT(summary) <= cap
    return section(summary, "Action ledger")


def test_with_room_every_carried_line_is_kept_byte_for_byte() -> None:
    assert carried(2000) == LEDGER


def test_the_cut_names_go_first_and_the_call_line_stays() -> None:
    assert carried(320) == [ROLLED, REQUEST, WRITE.replace(CUT_LIST, ""), FAILED, DECISION]


def test_the_oldest_lines_roll_up_with_their_counts_added_to_the_earlier_roll_up() -> None:
    assert carried(300) == [
        "seq 1-8 rolled up: 5 calls (edit_file ×3, run_tests ×1, write_file ×1), 1 error; 3 requests"
        " (2 done, 1 answered); 1 decision",
        FAILED,
        DECISION,
    ]


@pytest.mark.parametrize("cap", [150, 200])
def test_a_ledger_rolled_up_whole_still_counts_every_action(cap: int) -> None:
    assert carried(cap) == [
        "seq 1-12 rolled up: 6 calls (edit_file ×3, run_tests ×2, write_file ×1), 2 errors; 3 requests"
        " (2 done, 1 answered); 2 decisions"
    ]


def rolled_or_bare(lines: list[str], cap: int) -> list[str]:
    previous = "## Task and goals\n- t\n\n## Action ledger\n" + "\n".join(f"- {line}" for line in lines)
    summary = summarize(NOTHING_NEW, previous, cap=cap)
    assert COUNT(summary) <= cap
    return section(summary, "Action ledger")


@pytest.mark.parametrize(
    ("argument", "outcome"),
    [
        ("command=\"echo 'a; cut: b' | sort\"", "ok"),  # the list's own marker inside an argument
        ('expr="f(x) → y"', "ok"),  # an outcome arrow inside an argument
        ('target="t.py"', "error: assert f(x) → None"),  # and inside the outcome
    ],
)
def test_only_the_list_of_cut_names_is_taken_out_of_a_line_whatever_its_text(
    argument: str, outcome: str
) -> None:
    line = f"seq 30 call shell({argument}{CUT_LIST}) → {outcome}"
    bare = line.replace(CUT_LIST, "")
    newer = [f"seq {n} decision: kept batch {n} small because the disk is slow" for n in range(31, 36)]
    assert rolled_or_bare([line, *newer], 2000)[0] == line
    # Room for the ledger without the list, not with it (the ledger takes at most SHARE of the cap).
    cap = math.ceil(COUNT(ledger_text([bare, *newer])) / SHARE) + 1
    assert int(cap * SHARE) < COUNT(ledger_text([line, *newer]))
    assert rolled_or_bare([line, *newer], cap) == [bare, *newer]


def ledger_text(lines: list[str]) -> str:
    return "## Action ledger\n" + "\n".join(f"- {line}" for line in lines)


def test_a_call_line_a_model_wrote_without_arguments_is_still_counted() -> None:
    lines = ["seq 3 call deploy → ok", "seq 4 call deploy → error: quota", REQUEST.replace("seq 7", "seq 5")]
    (line,) = rolled_or_bare(lines, 60)
    assert line.startswith("seq 3-5 rolled up: 2 calls (tool ×2), 1 error; 1 request (1 done)"), line


def test_a_roll_up_of_one_call_says_one_call() -> None:
    lines = ['seq 3 call shell(command="make") → ok', "seq 4 decision: ship it because the tests pass"]
    assert rolled_or_bare(lines, 40) == ["seq 3-4 rolled up: 1 call (shell ×1), 0 errors; 1 decision"]


def test_a_request_line_without_a_status_counts_as_pending_and_a_roll_up_without_errors_as_none() -> None:
    lines = [
        'seq 3 request "Add a CSV export"',
        "seq 4-9 rolled up: 2 requests (2 done)",
        "seq 10 decision: x because y",
        "seq 11 call make() → ok",
    ]
    assert rolled_or_bare(lines, 90) == [
        "seq 3-11 rolled up: 1 call (make ×1), 0 errors; 3 requests (2 done, 1 pending); 1 decision"
    ]


def test_a_roll_up_lists_the_most_used_tools_first_and_ties_by_name() -> None:
    lines = [
        "seq 3 call zeta() → ok",
        "seq 4 call alpha() → ok",
        "seq 5 call run_tests() → ok",
        "seq 6 call run_tests() → ok",
    ]
    assert rolled_or_bare(lines, 60) == [
        "seq 3-6 rolled up: 4 calls (run_tests ×2, alpha ×1, zeta ×1), 0 errors"
    ]
