"""The offline summary under caps too small for all of it: identifiers are the last bullets to go.

The summary drops its least important bullets first (``domain.summary._fit``). Here every cap of a
series (from far too small up to just under the uncapped summary) must drop something, and at each one:

* an identifier a message or a tool input named (a ``Critical data`` or ``Files touched`` bullet) is
  dropped only once no prose bullet is left (completed work, current state, preferences, errors,
  next steps, lookup hints);
* an identifier drawn from a tool output is dropped only once the completed-work and lookup-hint
  bullets are gone;
* a bullet that is kept is kept verbatim, as the uncapped summary has it (the task, truncated as a last
  resort, and the action ledger, which rolls up, are budgeted apart).

No tolerance: one bullet out of order fails the test. The conversations are synthetic ones and two
real SWE-agent runs from ``../shared/data`` (whose summaries also list files the agent only mentioned).
The series is chosen so that both regimes are met for every conversation: caps where identifiers had
to go (and no prose stayed), and caps where every identifier stayed while prose was dropped.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from sleepcompact.demo.synthetic import coding_agent, personal_assistant
from sleepcompact.domain.formats import parse_import
from sleepcompact.domain.prompt import SummaryInput
from sleepcompact.domain.summary import offline_summary
from tests.unit.test_summary import count, rows_of

IDENTIFIER_SECTIONS = ("Critical data (verbatim)", "Files touched")
APART = ("Task and goals", "Action ledger")  # the protected task and the ledger, budgeted on their own
LOW_PROSE = ("Completed work", "Lookup hints")
UNCAPPED = 100_000


def _bullets(summary: str) -> list[tuple[str, str]]:
    """(section, bullet line) of every bullet, in order."""
    out, section = [], ""
    for line in summary.splitlines():
        heading = re.match(r"^## (.+)$", line)
        if heading:
            section = heading.group(1)
        elif line.startswith("- "):
            out.append((section, line))
    return out


def _caps(full_tokens: int) -> list[int]:
    """48, 96, 192, ... up to just under the uncapped summary: each one must drop something."""
    caps, cap = [], 48
    while cap < full_tokens:
        caps.append(cap)
        cap *= 2
    return caps


SWE_AGENT = ("function_calling_simple.traj", "ctf__crypto__katy.traj")  # files touched and mentioned


@pytest.mark.parametrize(
    "source",
    ["coding-0", "coding-3", "assistant-0", "assistant-2", *SWE_AGENT],
)
def test_identifiers_outrank_prose_at_every_cap_that_must_drop_something(
    source: str, trajectory_data: Path
) -> None:
    if source in SWE_AGENT:
        messages = parse_import((trajectory_data / "swe-agent" / source).read_bytes())[0].messages
    else:
        kind, seed = source.split("-")
        messages = (coding_agent if kind == "coding" else personal_assistant)(seed=int(seed)).messages
    rows = rows_of(messages)
    full = offline_summary(SummaryInput(rows, None, UNCAPPED), count)
    everything = _bullets(full)
    full_lines = [b for _, b in everything]
    named = [b for s, b in everything if s in IDENTIFIER_SECTIONS and "tool output)" not in b]
    from_outputs = [b for s, b in everything if s in IDENTIFIER_SECTIONS and "tool output)" in b]
    assert named and any(s not in (*IDENTIFIER_SECTIONS, *APART) for s, _ in everything)
    identifiers_went = identifiers_stayed_prose_went = False
    for cap in _caps(count(full)):
        summary = offline_summary(SummaryInput(rows, None, cap), count)
        assert count(summary) <= cap
        kept = _bullets(summary)
        lines = {b for _, b in kept}
        # What is kept is kept verbatim (the task and the ledger shrink on their own terms; a cut aside).
        whole = [b for s, b in kept if s not in APART][: -1 if summary.endswith("…") else None]
        assert set(whole) <= set(full_lines), cap
        assert len(kept) < len(everything), cap  # and this cap had to drop something
        prose = [b for s, b in kept if s not in (*IDENTIFIER_SECTIONS, *APART)]
        if any(b not in lines for b in named):
            assert prose == [], (cap, [b for b in named if b not in lines][:3], prose[:3])
            identifiers_went = True
        elif len(prose) < len([s for s, _ in everything if s not in (*IDENTIFIER_SECTIONS, *APART)]):
            identifiers_stayed_prose_went = True
        if any(b not in lines for b in from_outputs):
            low = [b for s, b in kept if s in LOW_PROSE]
            assert low == [], (cap, [b for b in from_outputs if b not in lines][:3], low[:3])
    assert identifiers_went and identifiers_stayed_prose_went
