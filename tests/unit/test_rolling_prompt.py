"""A rolling summary folds new turns into the previous summary. Its action ledger carries the previous
ledger's lines before the new ones; the model sees that ledger once, as data between <ledger> tags, and
is asked for a narrative that leaves room for it."""

from __future__ import annotations

from sleepcompact.domain.prompt import PROMPT_INPUT_LIMIT, SummaryInput, prepared_prompt
from tests.support.rows import record


def _count(text: str) -> int:
    return len(text.split())


_FIRST = (
    record(1, "user", "message", "Please fix the failing test in src/app.py"),
    record(2, "assistant", "message", "I will run the tests and fix it."),
)
_NEXT = (
    record(3, "user", "message", "Now add a changelog entry for it."),
    record(4, "assistant", "message", "Added the entry to CHANGELOG.md."),
)
_OLD_REQUEST = '- seq 1 request "Please fix the failing test in src/app.py" → answered'
_NEW_REQUEST = '- seq 3 request "Now add a changelog entry for it." → answered'


def _previous_summary() -> str:
    _, _, ledger = prepared_prompt(SummaryInput(_FIRST, None, 500), _count)
    assert _OLD_REQUEST in ledger
    return f"## Task and goals\n- fix the failing test\n\n{ledger}"


def test_the_ledger_keeps_the_previous_summarys_lines_before_the_new_ones() -> None:
    _, _, ledger = prepared_prompt(SummaryInput(_NEXT, _previous_summary(), 500), _count)
    lines = ledger.splitlines()
    assert lines[0] == "## Action ledger"
    assert lines.index(_OLD_REQUEST) < lines.index(_NEW_REQUEST)


def test_the_previous_ledger_reaches_the_model_once_as_ledger_data() -> None:
    narrative, prompt, ledger = prepared_prompt(SummaryInput(_NEXT, _previous_summary(), 500), _count)
    assert narrative.previous_summary == "## Task and goals\n- fix the failing test"
    assert prompt.user.count(_OLD_REQUEST) == 1
    assert f"<ledger>\n{ledger}\n</ledger>" in prompt.user
    previous = prompt.user.split("<previous_summary>")[1].split("</previous_summary>")[0]
    assert "Action ledger" not in previous


def test_the_narrative_is_asked_for_what_the_ledger_leaves_of_the_cap() -> None:
    narrative, prompt, ledger = prepared_prompt(SummaryInput(_NEXT, _previous_summary(), 500), _count)
    assert narrative.max_tokens == 500 - _count(ledger) - 2
    assert f"Stay under {narrative.max_tokens} tokens." in prompt.system


def test_a_transcript_over_the_input_limit_is_clipped_middle_out() -> None:
    # One pasted log of 200,000 words: the prompt carries its head and tail within the input limit.
    log = " ".join(f"line{i}" for i in range(200_000))
    rows = (*_FIRST, record(3, "user", "message", f"Here is the log: {log}"))
    _, prompt, _ = prepared_prompt(SummaryInput(rows, None, 500), _count)
    assert _count(prompt.user) <= PROMPT_INPUT_LIMIT
    assert "tokens clipped from the middle here; the original is archived" in prompt.user
    assert "line0 line1 " in prompt.user and " line199998 line199999" in prompt.user
