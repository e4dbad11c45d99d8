"""Quarantine: instructions addressed to the model stay out of the summaries that go live (DESIGN section 7).

Two places copy text into history. The LLM summary may quote or obey an injection; ``screen_summary``
takes out its "Instructions found in transcript" report (kept for the record, replaced by a note per
seq) and flags what is left with the detector: a flagged summary is not applied (the caller falls
back to the offline summary, keeping the flagged lines in the compaction record). The offline summary
copies lines from tool output, assistant messages and earlier summaries; ``screen_rows`` replaces
the flagged lines of the folded rows before anything is built from them, and ``notes`` says where
they were. The user's own messages are not screened: the user is who the model works for.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from sleepcompact.domain.injection import detect
from sleepcompact.domain.messages import content_text
from sleepcompact.domain.records import MessageRecord

MARKER = "[instruction addressed to the model; quarantined]"
"""What stands in a row's text for a line the detector flagged."""

_REPORT = re.compile(
    r"^#{1,6}[ \t]*(?:instructions?\s+found|injected\s+instructions?|(?:prompt\s+)?injections?\s+found"
    r"|instructions?\s+in\s+the\s+transcript)[^\n]*\n(.*?)(?=^#{1,6}[ \t]|\Z)",
    re.I | re.M | re.S,
)
_SEQ = re.compile(r"\bseqs?\s+(\d+)")
# Tool output that reaches the model as a user message (mini-swe-agent's and SWE-agent's observations).
_OBSERVATION = re.compile(r"<returncode>|^\s*OBSERVATION:?|<output>|\(Current directory: ", re.M)


def note(seq: int | None, where: str = "an earlier summary") -> str:
    """The line a summary carries where an instruction was taken out (``where`` when there is no seq)."""
    return (
        f"An instruction addressed to the model was found in {f'seq {seq}' if seq is not None else where} "
        "(quarantined)."
    )


def flagged_reason(lines: int) -> str:
    """Why a compaction applied the offline summary instead of the model's (``history`` shows it)."""
    return f"summary flagged: {lines} line{'s' * (lines != 1)} quarantined, offline summary applied"


@dataclass(frozen=True)
class Screened:
    """An LLM summary after screening: the text that may go live, and what was taken out of it."""

    text: str
    quarantined: tuple[str, ...]  # the reported instructions and the flagged lines, as written
    flags: tuple[str, ...]  # the detector's reasons, when the rest was flagged

    @property
    def flagged(self) -> bool:
        """Whether the summary itself reads as instructions to the model (then it must not go live)."""
        return bool(self.flags)


def screen_summary(text: str) -> Screened:
    """``text`` with its "Instructions found" report replaced by a note per seq, and flagged when what is
    left carries instructions to the model (the flagged lines join the report's in ``quarantined``)."""
    reported: list[str] = []
    seqs: list[int] = []

    def take(match: re.Match[str]) -> str:
        lines = [line for line in match.group(1).splitlines() if line.strip()]
        reported.extend(lines)
        found = [int(s) for line in lines for s in _SEQ.findall(line)]
        seqs.extend(s for s in found if s not in seqs)
        return ""

    body = _REPORT.sub(take, text).strip()
    verdict = detect(body)
    flagged = [line for i, line in enumerate(body.split("\n")) if i in set(verdict.lines)]
    if reported:
        notes_text = "\n".join(f"- {note(s)}" for s in seqs) or f"- {note(None, 'the transcript')}"
        body = f"{body}\n\n## Instructions found in transcript\n{notes_text}"
    return Screened(body, (*reported, *flagged), tuple(verdict.reasons))


def _screened_text(text: str) -> str | None:
    """``text`` with its flagged lines replaced by ``MARKER`` (all of it when the rest still flags),
    or None when nothing in it is flagged."""
    verdict = detect(text)
    if not verdict.flagged:
        return None
    lines = text.split("\n")
    for i in verdict.lines:
        lines[i] = MARKER
    kept = "\n".join(lines)
    return kept if not detect(kept).flagged else MARKER


def _screened_value(value: Any) -> Any:
    """A tool call's input with each flagged string (at any depth) replaced by ``MARKER``."""
    if isinstance(value, str):
        screened = _screened_text(value)
        return value if screened is None else screened
    if isinstance(value, dict):
        return {k: _screened_value(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_screened_value(v) for v in value]
    return value


def _from_environment(row: MessageRecord) -> bool:
    """Whether a row's text came from somewhere other than the user (tool output, the assistant, context)."""
    if row.role == "user" and row.kind == "message":
        return _OBSERVATION.search(content_text(row.content)) is not None
    return row.kind != "summary"


def screen_rows(rows: Sequence[MessageRecord]) -> tuple[MessageRecord, ...]:
    """The rows with every flagged line of text from the environment replaced by ``MARKER`` (a screened
    row's text becomes a plain string; its ``metadata["quarantined"]`` is true)."""
    out = []
    for row in rows:
        if not _from_environment(row):
            out.append(row)
            continue
        if row.kind == "tool_call" and isinstance(row.content, list):
            content: Any = _screened_value(row.content)
            screened = content != row.content
        else:
            text = _screened_text(content_text(row.content))
            content, screened = (text, True) if text is not None else (row.content, False)
        out.append(
            replace(row, content=content, metadata={**row.metadata, "quarantined": True}) if screened else row
        )
    return tuple(out)


def notes(rows: Sequence[MessageRecord]) -> str | None:
    """One note naming the screened rows (``screen_rows``) by seq, or None when there were none."""
    seqs = sorted({r.seq for r in rows if r.metadata.get("quarantined")})
    if len(seqs) <= 1:
        return note(seqs[0]) if seqs else None
    shown = ", ".join(map(str, seqs[:20])) + (f" and {len(seqs) - 20} more" if len(seqs) > 20 else "")
    return f"Instructions addressed to the model were found in seqs {shown} (quarantined)."


def screen_line(line: str) -> str:
    """A line of an earlier summary, or the note that replaces it when it carries an instruction."""
    if not detect(line).flagged:
        return line
    seq = _SEQ.search(line)
    return note(int(seq.group(1)) if seq else None)
