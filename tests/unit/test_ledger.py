"""The action ledger: every folded action in order with its outcome, every request with its status,
identifiers labelled where they occur, and a ledger that rolls up rather than loses lines.

The trajectories are the real ones in ``../shared/data`` (22 SWE-agent runs, 42 mini-swe-agent runs):
how many actions each holds is read from the files' own structure (SWE-agent's ``action`` entries,
mini-swe-agent's ``<returncode>`` observations, the tool calls), not from the ledger's rules.
"""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path
from typing import Any

import pytest

from sleepcompact.adapters.tokenizer import load_counter
from sleepcompact.domain.formats import parse_import
from sleepcompact.domain.ledger import HEADING, fold_ledger, with_ledger
from sleepcompact.domain.prompt import SummaryInput
from sleepcompact.domain.summary import offline_summary
from tests.support.rows import rows_of
from tests.support.summaries import tool_call

COUNT = load_counter().count
TRAJECTORIES = Path(__file__).resolve().parents[3] / "shared" / "data" / "trajectories"
SWE = sorted((TRAJECTORIES / "swe-agent").glob("*.traj"))
MINI = TRAJECTORIES / "mini-swe-agent-dev.jsonl"


def ledger_lines(summary: str) -> list[str]:
    section = re.search(rf"^## {HEADING}\n(.*?)(?=^## |\Z)", summary, re.M | re.S)
    assert section is not None, "the summary has no action ledger"
    return [line.removeprefix("- ") for line in section.group(1).strip().splitlines()]


def actions_in(lines: list[str]) -> int:
    """Actions the ledger accounts for: its call lines, and the calls its rolled-up lines count."""
    calls = sum(1 for line in lines if re.match(r"seq \d+ call ", line))
    rolled = sum(int(n) for line in lines for n in re.findall(r"rolled up: (\d+) calls?", line))
    return calls + rolled


def swe_agent_actions(path: Path) -> int:
    """Assistant entries with an action that the harness answered (the entry after it)."""
    history = json.loads(path.read_text())["history"]
    return sum(
        1
        for entry, nxt in itertools.pairwise(history)
        if entry["role"] == "assistant" and (entry.get("tool_calls") or entry.get("action", "").strip())
        for _ in (entry.get("tool_calls") or [None])
        if nxt["role"] in ("user", "tool")
    )


def mini_records() -> list[tuple[int, dict[str, Any]]]:
    return [(n, json.loads(line)) for n, line in enumerate(MINI.read_text().splitlines(), 1) if line.strip()]


def summary_of(messages: list[dict[str, Any]], budget: int) -> str:
    rows = rows_of([m for m in messages if m["role"] != "system"], COUNT)
    return offline_summary(SummaryInput(rows, None, budget), COUNT)


@pytest.mark.parametrize("path", SWE, ids=[p.stem[:60] for p in SWE])
def test_every_action_of_a_swe_agent_run_is_listed_with_its_outcome(path: Path) -> None:
    (conversation,) = parse_import(path.read_bytes())
    lines = ledger_lines(summary_of(conversation.messages, 16_000))
    calls = [line for line in lines if re.match(r"seq \d+ call ", line)]
    assert len(calls) == swe_agent_actions(path)
    assert all(re.search(r" → (ok|error: .+)$", line) for line in calls), calls


def mini_actions(messages: list[dict[str, Any]]) -> int:
    """The harness's turns: an assistant message with a ```bash block, answered by the next message."""
    return sum(
        1
        for m, nxt in itertools.pairwise(messages)
        if m["role"] == "assistant" and "```bash" in m["content"] and nxt["role"] == "user"
    )


@pytest.mark.parametrize("number", range(1, 43))
def test_every_action_of_a_mini_swe_agent_run_is_listed_with_its_outcome(number: int) -> None:
    _n, record = mini_records()[number - 1]
    messages = [{"role": m["role"], "content": m["content"]} for m in record["messages"]]
    lines = ledger_lines(summary_of(messages, 40_000))
    calls = [line for line in lines if re.match(r"seq \d+ call shell", line)]
    assert len(calls) == mini_actions(messages)
    failed = sum(
        1 for m in messages if m["role"] == "user" and re.match(r"<returncode>\s*[1-9]", m["content"])
    )
    assert sum(" → error" in line for line in calls) >= failed
    assert not [line for line in lines if " request " in line][1:], "harness messages are not requests"


@pytest.mark.parametrize("budget", [600, 1200, 2400])
def test_a_tight_budget_rolls_old_actions_up_and_loses_none(budget: int) -> None:
    _n, record = max(mini_records(), key=lambda nr: len(nr[1]["messages"]))
    messages = [{"role": m["role"], "content": m["content"]} for m in record["messages"]]
    observed = mini_actions(messages)
    summary = summary_of(messages, budget)
    lines = ledger_lines(summary)
    assert COUNT(summary) <= budget
    assert actions_in(lines) == observed
    assert lines[0].startswith("seq ") and "rolled up" in lines[0]
    assert re.match(r"seq \d+ call ", lines[-1]), "the newest actions keep a line of their own"


# -- a customer-service run, small enough to read --------------------------------------------------------

RESERVATION = {"reservation_id": "ZFA04Y", "status": "confirmed", "flights": [{"flight_number": "HAT170"}]}


def support_run(*, answered: bool = True) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": "Please cancel my reservation ZFA04Y, the trip is off."},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [tool_call("c1", "get_reservation_details", {"reservation_id": "ZFA04Y"})],
        },
        {"role": "tool", "tool_call_id": "c1", "content": json.dumps(RESERVATION)},
        {
            "role": "assistant",
            "content": "It is confirmed; cancelling it now because you asked for a refund.",
            "tool_calls": [
                tool_call(
                    "c2", "cancel_reservation", {"reservation_id": "ZFA04Y", "reason": "change of plan"}
                )
            ],
        },
        {"role": "tool", "tool_call_id": "c2", "content": "Error: payment gateway timeout"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [tool_call("c3", "cancel_reservation", {"reservation_id": "ZFA04Y"})],
        },
        {
            "role": "tool",
            "tool_call_id": "c3",
            "content": json.dumps({"status": "cancelled", "refund": "$240.00"}),
        },
    ]
    if answered:
        messages.append(
            {"role": "assistant", "content": "Done: ZFA04Y is cancelled and $240.00 will be refunded."}
        )
    messages.append({"role": "user", "content": "What was the flight number?"})
    return messages


def test_a_finished_request_is_done_and_each_action_has_its_outcome() -> None:
    lines = ledger_lines(summary_of(support_run(), 2000))
    assert lines[0].startswith('seq 1 request "Please cancel my reservation ZFA04Y') and lines[0].endswith(
        "→ done"
    )
    calls = [line for line in lines if " call " in line]
    assert calls[0].endswith('get_reservation_details(reservation_id="ZFA04Y") → ok')
    assert calls[1].endswith("→ error: Error: payment gateway timeout")
    assert 'cancel_reservation(reservation_id="ZFA04Y") → ok' in calls[2]
    assert any(
        line.startswith("seq ") and "decision: It is confirmed; cancelling it now because" in line
        for line in lines
    )
    assert re.match(r'seq \d+ request "What was the flight number\?" → pending$', lines[-1]), lines[-1]


def test_a_request_whose_answer_stays_live_is_not_called_pending() -> None:
    rows = rows_of(support_run()[:-1], COUNT)
    folded, live = rows[:-1], rows[-1:]  # the final reply is not folded
    (request, *_rest) = fold_ledger(folded, live)
    assert request.text.endswith("→ done")
    (request, *_rest) = fold_ledger(folded)
    assert request.text.endswith("→ in progress")


def test_identifiers_are_labelled_and_field_names_and_stop_words_are_not_identifiers() -> None:
    summary = summary_of(support_run(), 2000)
    data = re.search(r"^## Critical data \(verbatim\)\n(.*?)(?=^## |\Z)", summary, re.M | re.S)
    assert data is not None
    bullets = data.group(1).strip().splitlines()
    assert any(re.match(r"- reservation_id=`ZFA04Y`", b) for b in bullets), bullets
    assert any("flight_number=`HAT170`" in b for b in bullets), bullets
    listed = [re.search(r"`([^`]+)`", b).group(1) for b in bullets if "`" in b]  # type: ignore[union-attr]
    assert not {"reservation_id", "flight_number", "status", "for", "will"} & set(listed)
    assert "Keywords:" not in summary


def test_a_rolling_summary_carries_the_previous_ledger_and_adds_the_new_lines() -> None:
    first = summary_of(support_run(answered=False), 2000)
    body = first.split("\n\n", 0)[0]
    more = rows_of(
        [*support_run(answered=False), {"role": "assistant", "content": "The flight was HAT170."}], COUNT
    )
    second = offline_summary(SummaryInput(more[-1:], body, 2000), COUNT)
    old, new = ledger_lines(first), ledger_lines(second)
    assert new[: len(old)] == old
    assert len(new) == len(old)  # the reply adds no action; the carried request keeps its line


def test_the_models_own_ledger_is_replaced_by_the_one_built_by_rules() -> None:
    model_text = "## Task and goals\n- cancel\n\n## Action ledger\n- made up\n\n## Next steps\n- none"
    built = '## Action ledger\n- seq 3 call cancel_reservation(reservation_id="ZFA04Y") → ok'
    merged = with_ledger(model_text, built)
    assert "made up" not in merged
    assert merged.index("## Task and goals") < merged.index(built) < merged.index("## Next steps")
