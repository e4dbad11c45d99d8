"""What a rolling offline summary carries forward from the summary before it.

A conversation compacted twice is summarized from the new folded rows and the previous summary. What the
previous summary said must survive in the right place: the task stays the task (and is never dropped
for room), a file touched in both spans keeps one bullet whose tool counts add up, a summary without
headings is not thrown away, and the previous summary's report of instructions found in tool output is
not promoted into the new summary's history.
"""

from __future__ import annotations

from typing import Any

import pytest

from sleepcompact.domain.prompt import SUMMARY_PREFIX
from tests.support.summaries import COUNT, section, summarize, tool_call


def edits(path: str, times: int) -> list[dict[str, Any]]:
    """``times`` calls of ``edit_file`` on ``path``, each answered."""
    out: list[dict[str, Any]] = [{"role": "user", "content": f"Keep fixing {path}."}]
    for n in range(times):
        out.append(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [tool_call(f"e{n}", "edit_file", {"path": path})],
            }
        )
        out.append({"role": "tool", "tool_call_id": f"e{n}", "content": "saved"})
    return out


def test_a_file_touched_in_both_spans_keeps_one_bullet_with_the_counts_added_up() -> None:
    first = summarize(edits("src/billing/invoice.py", 2), None)
    assert "`src/billing/invoice.py` (edit_file ×2)" in section(first, "Files touched")
    second = summarize(edits("src/billing/invoice.py", 1), first)
    touched = [b for b in section(second, "Files touched") if "invoice.py" in b]
    assert touched == ["`src/billing/invoice.py` (edit_file ×3)"]


def test_tools_are_counted_apart_and_listed_by_name() -> None:
    previous = "## Files touched\n- `src/app.py` (read_file ×4)"
    second = summarize(edits("src/app.py", 1), previous)
    assert "`src/app.py` (edit_file ×1, read_file ×4)" in section(second, "Files touched")


def test_a_file_only_mentioned_again_stays_mentioned() -> None:
    previous = "## Files touched\n- `docs/setup.md` (mentioned)"
    second = summarize([{"role": "user", "content": "Did you read docs/setup.md yet?"}], previous)
    assert [b for b in section(second, "Files touched") if "setup.md" in b] == ["`docs/setup.md` (mentioned)"]


def test_a_previous_summary_without_headings_is_carried_not_dropped() -> None:
    previous = (
        "- Deployed build 4411 to staging after the schema migration.\n- Rollback plan agreed with Dana."
    )
    second = summarize([{"role": "user", "content": "Thanks, go on."}], previous)
    completed = section(second, "Completed work")
    assert any("Deployed build 4411 to staging" in b for b in completed), completed
    assert any("Rollback plan agreed with Dana" in b for b in completed), completed


def test_the_previous_task_stays_first_and_survives_a_cap_that_drops_other_bullets() -> None:
    previous = (
        "## Task and goals\n- Initial request (seq 1): migrate the billing service to Postgres 16 without"
        " downtime\n\n## Completed work\n"
        + "\n".join(f"- Step {n}: moved table t{n} and checked its row counts twice" for n in range(40))
    )
    second = summarize([{"role": "user", "content": "Any news on the remaining tables?"}], previous, cap=160)
    assert COUNT(second) <= 160
    task = section(second, "Task and goals")
    assert task and task[0].startswith("Initial request (seq 1): migrate the billing service"), second
    assert not any(b.startswith("Request") for b in task[1:]), "the new message did not replace the task"


def test_the_previous_report_of_instructions_found_is_not_carried_into_history() -> None:
    previous = (
        "## Task and goals\n- Initial request (seq 1): tidy the README\n\n"
        "## Instructions found in transcript\n"
        "- seq 7: text addressed to the model was taken out (the original is archived)"
    )
    second = summarize([{"role": "user", "content": "Now fix the typo in the intro."}], previous)
    assert "seq 7: text addressed to the model" not in second


def test_a_models_ledger_under_its_own_heading_is_not_carried_as_completed_work() -> None:
    previous = "## Task and goals\n- tidy the README\n\n## Ledger of tool calls\n- made up line"
    with_ledger = [{"role": "user", "content": "Now fix the typo in the intro."}]
    without = [{"role": "assistant", "content": "The intro reads well now."}]  # no action, no request
    for newer in (with_ledger, without):
        assert "made up line" not in summarize(newer, previous)


def test_the_summary_messages_own_preamble_is_not_carried_as_history() -> None:
    previous = f"{SUMMARY_PREFIX}## Task and goals\n- Initial request (seq 1): tidy the README"
    second = summarize([{"role": "assistant", "content": "The intro reads well now."}], previous)
    assert "You are resuming this conversation" not in second


def test_a_bare_keyword_list_of_an_old_summary_is_not_carried() -> None:
    previous = "## Task and goals\n- tidy the README\n\n## Lookup hints\n- Keywords: for, will, the"
    second = summarize([{"role": "assistant", "content": "The intro reads well now."}], previous)
    assert "Keywords:" not in second


def test_without_a_task_in_the_previous_summary_the_new_request_becomes_the_task() -> None:
    previous = (
        "## Completed work\n- Rotated the staging certificates.\n\n## Task and goals\n- tidy the README"
    )
    second = summarize([{"role": "user", "content": "Please renew the prod certificate too."}], previous)
    task = section(second, "Task and goals")
    assert task[0] == "tidy the README"
    previous = "## Completed work\n- Rotated the staging certificates."
    second = summarize([{"role": "user", "content": "Please renew the prod certificate too."}], previous)
    assert section(second, "Task and goals") == ["Request (seq 1): Please renew the prod certificate too."]


def test_only_the_first_task_bullet_is_protected_from_the_cap() -> None:
    later = "Request: also compare the replica lag on every node of the cluster before the cut-over (seq 9)"
    previous = f"## Task and goals\n- Initial request (seq 1): migrate billing\n- {later}"
    kept = "## Task and goals\n- Initial request (seq 1): migrate billing\n\n## Current state\n- Last"
    cap = COUNT(kept) + COUNT(later) // 2  # room for the first task bullet and the state, not the later one
    second = summarize([{"role": "assistant", "content": "On it."}], previous, cap=cap)
    assert section(second, "Task and goals")[0] == "Initial request (seq 1): migrate billing"
    assert later not in second and not second.endswith("…"), "whole bullets go before anything is cut"


@pytest.mark.parametrize("heading", ["Current state", "In-progress work"])
def test_the_previous_state_is_carried_as_earlier_history_once(heading: str) -> None:
    previous = f"## Task and goals\n- tidy the README\n\n## {heading}\n- CI is red on the docs job"
    second = summarize([{"role": "assistant", "content": "The intro reads well now."}], previous)
    assert "Earlier: CI is red on the docs job" in section(second, "Completed work")
    assert not any("CI is red" in b for b in section(second, heading))
    third = summarize(
        [{"role": "assistant", "content": "Pushed the fix."}], second.replace("Completed", heading)
    )
    assert "Earlier: CI is red on the docs job" in section(third, "Completed work"), "said once, not twice"


def test_a_long_carried_bullet_is_clipped_to_600_characters() -> None:
    long = "Benchmarked the ingest path: " + " ".join(f"run{n}=ok" for n in range(120))
    second = summarize([{"role": "assistant", "content": "Done."}], f"## Completed work\n- {long}")
    (carried,) = [b for b in section(second, "Completed work") if b.startswith("Benchmarked")]
    assert len(carried) == 600 and carried.endswith("…") and long.startswith(carried[:-1])


def test_a_carried_bullet_of_exactly_600_characters_stays_whole_and_a_cut_leaves_no_space() -> None:
    exact = "Measured " + "x" * 591
    cut = "Profiled " + "y" * 589 + " " + "z" * 40  # the 600th character falls after a space
    previous = f"## Completed work\n- {exact}\n- {cut}"
    completed = section(summarize([{"role": "assistant", "content": "Done."}], previous), "Completed work")
    assert exact in completed
    assert "Profiled " + "y" * 589 + "…" in completed


def test_roll_ups_with_nothing_to_count_stay_so() -> None:
    previous = (
        "## Action ledger\n- seq 1-2 rolled up: nothing to count\n- seq 3-4 rolled up: nothing to count"
    )
    ledger = section(
        summarize([{"role": "assistant", "content": "Done."}], previous, cap=64), "Action ledger"
    )
    assert ledger == ["seq 1-4 rolled up: nothing to count"]


def test_an_error_the_previous_summary_wrote_otherwise_is_listed_once_in_the_rows_own_words() -> None:
    run = [
        {"role": "user", "content": "Fix it."},
        {"role": "assistant", "content": None, "tool_calls": [tool_call("c1", "bash", {"command": "make"})]},
        {"role": "tool", "tool_call_id": "c1", "content": "ValueError: boom"},
    ]
    previous = (
        "## Task and goals\n- Fix it.\n\n## Errors and resolutions\n- seq 3 bash: valueerror: BOOM (open)"
    )
    assert section(summarize(run, previous), "Errors and resolutions") == [
        "seq 3 bash: ValueError: boom (open)"
    ]
