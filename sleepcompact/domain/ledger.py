"""The action ledger: what was done, in order, in every summary (offline and LLM alike).

A summary that drops the actions already completed makes a resumed model redo them. The ledger is a
line per event of the folded messages, in seq order, built by rules from the rows themselves:

* each tool call with its tool name, its arguments (``key="value"``: identifiers verbatim, long values
  cut middle-out) and its outcome (``ok``, or ``error:`` and the error's first line). Agents that act in
  text (a fenced shell block answered by ``<returncode>``, SWE-agent's observations) count too;
* each user request with its status, derived from what followed it: ``done`` (actions, then a reply),
  ``answered`` (a reply without actions), ``in progress`` (actions and no reply yet), ``pending``;
* each decision the assistant stated.

A previous summary's ledger is carried forward line by line. When the ledger outgrows its share of the
summary, its oldest lines are rolled up into one counting line (tools, errors, requests by status), so
the ledger stays a line per recent action and a tally of the rest.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

from sleepcompact.domain.cut_names import CUT, cut_names, listed
from sleepcompact.domain.identifiers import error_lines
from sleepcompact.domain.injection import flag_imperatives
from sleepcompact.domain.messages import content_text
from sleepcompact.domain.records import MessageRecord, call_input
from sleepcompact.domain.sentences import is_decision, split_sentences, strip_lead_in

HEADING = "Action ledger"
STATUSES = ("done", "answered", "in progress", "pending")
_VALUE_CHARS = 90  # a longer argument keeps its head and tail around an ellipsis
_ARGS_CHARS = 240
_TEXT_CHARS = 160
_OUTCOME = ") → "
_FENCE = re.compile(r"```([\w+-]*)[ \t]*\n(.*?)\n[ \t]*```", re.S)
_SHELLS = ("", "bash", "sh", "shell", "console")
_XML_ACTION = re.compile(r"<command>\s*(.+?)\s*</command>", re.S)
_OBSERVATION = re.compile(
    r"^\s*(?:<returncode>|OBSERVATION:?)|\(Current directory: |\nbash-\$|<output>|EXACTLY ONE action"
)
_NOT_RUN = re.compile(r"EXACTLY ONE action|format your action")
_RETURN_CODE = re.compile(r"<returncode>\s*(-?\d+)\s*</returncode>")
# pytest's own failure lines count too ("FAILED tests/x.py::t - ...", "E       AssertionError"): an agent
# that calls pytest without an error flag (OpenAI chat has none) saw its tests fail, not pass.
_FAILED = re.compile(
    r"Traceback \(most recent call last\)|EXECUTION TIMED OUT"
    r"|^(?:\w*Error|\w*Exception|(?i:error|fatal))\b[:(]|^FAILED \S|^E\s{2,}\w*(?:Error|Exception)\b",
    re.M,
)
_GAP = re.compile(
    r"\b(?:I (?:don't|do not|can't|cannot) (?:know|tell|find|help)|no information|not sure)\b", re.I
)
_REASON = re.compile(
    r"\b(?:because|since|so that|instead of|rather than|to avoid|root cause|the cause|caused by|due to)\b",
    re.I,
)
_ASK = re.compile(
    r"(?:please|pls|can you|could you|would you|will you|help|tell me|show me|give me|let me know|find|fix"
    r"|write|make|create|add|remove|delete|update|change|check|run|test|explain|recommend|suggest|book"
    r"|cancel|send|look (?:up|into|at)|i need you|i want you|i'd like you|i would like you)\b",
    re.I,
)
_THOUGHT = re.compile(r"^\s*(?:THOUGHT|DISCUSSION|Thought)\s*:\s*")
_LINE = re.compile(r"^seq (\d+)(?:-(\d+))? (call|request|decision|rolled up)\b(.*)$")
_SECTION = re.compile(rf"^##\s+{HEADING}\s*\n.*?(?=^##\s|\Z)", re.M | re.S)
SHARE = 0.45
"""The most of a summary's tokens the ledger takes before its oldest lines are rolled up."""


@dataclass
class Entry:
    """One ledger line, with what a roll-up counts of it."""

    seq: int
    last_seq: int
    kind: str  # call, request, decision, rolled up
    text: str  # the line after "seq N "
    tools: Counter[str] = field(default_factory=Counter)
    errors: int = 0
    statuses: Counter[str] = field(default_factory=Counter)
    decisions: int = 0
    names: tuple[str, ...] = ()  # identifiers of a call's cut arguments, before they are listed
    cut: str = ""  # how the line lists them ("; cut: `a`, `b`"): the first thing to go for room
    cut_at: int = 0  # where in ``text`` the list goes: the end of the call's arguments

    def render(self) -> str:
        span = f"{self.seq}-{self.last_seq}" if self.last_seq != self.seq else f"{self.seq}"
        text = self.text
        if self.cut:  # inside the call's parentheses, the outcome last as on every call line
            text = f"{text[: self.cut_at]}{self.cut}{text[self.cut_at :]}"
        return f"seq {span} {text}"


def cut_middle(text: str, limit: int) -> str:
    """``text`` on one line, at most about ``limit`` characters: head and tail around an ellipsis."""
    line = " ".join(text.split())
    if len(line) <= limit:
        return line
    head = limit * 2 // 3
    return f"{line[:head]}…{line[len(line) - (limit - head - 1) :]}"


def _arguments(tool_input: dict[str, object]) -> tuple[str, str]:
    """The arguments as the ledger shows them (long values cut middle-out), and in full."""
    parts, full = [], []
    for key, value in tool_input.items():
        shown = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True)
        parts.append(f"{key}={json.dumps(cut_middle(str(shown), _VALUE_CHARS), ensure_ascii=False)}")
        full.append(str(shown))
    return cut_middle(", ".join(parts), _ARGS_CHARS), "\n".join(full)


def _outcome(text: str, is_error: bool) -> str:
    """``ok`` or ``error: <first line>`` for a tool's output."""
    code = _RETURN_CODE.search(text)
    if "EXECUTION TIMED OUT" in text or re.search(r"\btimed out and has been killed\b", text):
        return "error: timed out"
    failed = is_error or (int(code.group(1)) != 0 if code else _FAILED.search(text) is not None)
    if not failed and not _NOT_RUN.search(text):
        return "ok"
    lines = error_lines(text, 1) or [ln for ln in (s.strip() for s in text.splitlines()) if ln][:1]
    first = _RETURN_CODE.sub("", lines[0]).strip() if lines else ""
    if first and flag_imperatives(first):
        # Tool output that gives orders is not copied into history, not even as an error line.
        return "error: (its message addressed the model; the original is archived)"
    return (
        f"error: {cut_middle(first, 120)}" if first else f"error: exit code {code.group(1) if code else '?'}"
    )


@dataclass(frozen=True)
class _TextAction:
    """A command an agent gave in text, and whether its message ends with it."""

    seq: int
    command: str
    at_end: bool


def _text_action(row: MessageRecord) -> _TextAction | None:
    """The (last) shell block or ``<command>`` of an assistant message, for agents that act in text."""
    text = content_text(row.content).rstrip()
    blocks = [b for b in _FENCE.finditer(text) if b.group(1).lower() in _SHELLS and b.group(2).strip()]
    if blocks:
        return _TextAction(row.seq, blocks[-1].group(2).strip(), not text[blocks[-1].end() :].strip())
    found = _XML_ACTION.search(text)
    return _TextAction(row.seq, found.group(1).strip(), True) if found else None


def _is_request(row: MessageRecord, first: bool) -> bool:
    """A user message that asks for something: a question or an imperative (the first message always
    counts: it is the task). Telling, greeting and agreeing are not requests."""
    return first or any(
        sentence.rstrip().endswith("?") or _ASK.match(strip_lead_in(sentence))
        for sentence in split_sentences(content_text(row.content))
    )


@dataclass
class _Scan:
    """The folded rows classified once: calls with outcomes, requests, decisions."""

    entries: list[Entry] = field(default_factory=list)
    request_at: list[int] = field(default_factory=list)  # entry indexes of requests, for their status


def _scan(rows: Sequence[MessageRecord]) -> _Scan:
    results = {r.tool_call_id: r for r in rows if r.kind == "tool_result" and r.tool_call_id}
    # The messages that act: a tool call is a later part of its message, whose first part (its text, if
    # any) sits ``part`` seqs before it.
    acting = {r.seq - r.part for r in rows if r.kind == "tool_call"}
    scan, pending_action, first_user = _Scan(), None, True
    for row in rows:
        if row.kind == "tool_call":
            result = results.get(row.tool_call_id or "")
            outcome = (
                _outcome(content_text(result.content), bool(result.metadata.get("is_error")))
                if result
                else "no result"
            )
            shown, full = _arguments(call_input(row))
            _call(scan, row.seq, row.tool_name or "tool", shown, outcome, cut_names(full, shown))
        elif row.role == "assistant" and row.kind == "message":
            pending_action = _text_action(row)
            _decisions(scan, row, acting=pending_action is not None or row.seq in acting)
        elif row.role == "user" and row.kind == "message":
            text = content_text(row.content)
            # What answers an action a message ends with is its output; else only what looks like one.
            harness = _OBSERVATION.search(text) is not None
            if pending_action and (pending_action.at_end or harness):
                cut = cut_middle(pending_action.command, _ARGS_CHARS)
                command = json.dumps(cut, ensure_ascii=False)
                names = cut_names(pending_action.command, cut)
                _call(scan, pending_action.seq, "shell", f"command={command}", _outcome(text, False), names)
            elif harness:
                pass  # the harness's own feedback ("provide exactly one action"): neither action nor request
            elif _is_request(row, first_user):
                text = f'request "{cut_middle(content_text(row.content), _TEXT_CHARS)}"'
                scan.request_at.append(len(scan.entries))
                scan.entries.append(Entry(row.seq, row.seq, "request", text))
            first_user, pending_action = False, None
    return scan


def _decisions(scan: _Scan, row: MessageRecord, *, acting: bool) -> None:
    """The decisions an assistant message states. Next to an action, only those that give a reason:
    "Let's open fields.py" is the action the ledger already lists, "X because Y" is not."""
    for sentence in split_sentences(content_text(row.content)):
        if not is_decision(sentence) or sentence.endswith("?") or (acting and not _REASON.search(sentence)):
            continue
        text = f"decision: {cut_middle(_THOUGHT.sub('', sentence), _TEXT_CHARS)}"
        scan.entries.append(Entry(row.seq, row.seq, "decision", text, decisions=1))


def _call(scan: _Scan, seq: int, tool: str, args: str, outcome: str, names: tuple[str, ...] = ()) -> None:
    entry = Entry(seq, seq, "call", f"call {tool}({args}) → {outcome}", Counter({tool: 1}))
    entry.errors = int(outcome.startswith("error"))
    entry.names, entry.cut_at = names, len(f"call {tool}({args}")
    scan.entries.append(entry)


def _with_names(entries: Sequence[Entry]) -> None:
    """Each call whose arguments were cut lists what the cut took (``cut_names.listed``)."""
    newest_first = list(reversed(entries))
    for entry, cut in zip(newest_first, listed([(e.names, e.text) for e in newest_first]), strict=True):
        if cut:
            entry.cut = cut


def request_status(rows: Sequence[MessageRecord], seq: int, following: Sequence[MessageRecord] = ()) -> str:
    """What became of the request at ``seq``: from the rows after it, up to the next request."""
    acted = replied = gap = False
    action: _TextAction | None = None
    for row in (r for r in [*rows, *following] if r.seq > seq):
        if row.role == "user" and row.kind == "message":
            harness = _OBSERVATION.search(content_text(row.content)) is not None
            if not harness and not (action and action.at_end):
                break  # the next request
            action = None
        elif row.kind == "tool_call":
            acted, replied = True, False
        elif row.role == "assistant" and row.kind == "message":
            action = _text_action(row)
            if action is not None:
                acted, replied = True, False
            else:
                replied, gap = True, _GAP.search(content_text(row.content)) is not None
    if acted:
        return "done" if replied else "in progress"
    if replied:
        return "answered (the assistant could not say)" if gap else "answered"
    return "pending"


def fold_ledger(rows: Sequence[MessageRecord], following: Sequence[MessageRecord] = ()) -> list[Entry]:
    """The ledger lines of the folded ``rows`` (originals, in seq order); ``following`` are the rows that
    stay live after them, so a request answered there is not called pending."""
    ordered = sorted(rows, key=lambda r: (r.seq, r.part))
    scan = _scan(ordered)
    for index in scan.request_at:
        entry = scan.entries[index]
        status = request_status(ordered, entry.seq, following)
        entry.text = f"{entry.text} → {status}"
        entry.statuses[status.split(" (")[0]] += 1
    _with_names(scan.entries)
    return scan.entries


def carried_ledger(previous_summary: str | None) -> list[Entry]:
    """The ledger lines of a previous summary, with their tallies read back."""
    if not previous_summary:
        return []
    section = re.search(rf"^##\s+{HEADING}\s*\n(.*?)(?=^##\s|\Z)", previous_summary, re.M | re.S)
    entries = []
    for raw in section.group(1).splitlines() if section else []:
        match = _LINE.match(raw.removeprefix("- ").strip())
        if match:
            entries.append(_parsed(match))
    return entries


def _parsed(match: re.Match[str]) -> Entry:
    first, last, kind, rest = int(match.group(1)), match.group(2), match.group(3), match.group(4)
    entry = Entry(first, int(last) if last else first, kind, f"{kind}{rest}")
    if kind == "call" and CUT in rest and _OUTCOME in rest:
        start = entry.text.rindex(CUT)
        end = entry.text.find(_OUTCOME, start)
        if end > start:
            entry.text, entry.cut = entry.text[:start] + entry.text[end:], entry.text[start:end]
            entry.cut_at = start
    if kind == "call":
        tool = re.match(r"\s*([^(\s]+)\(", rest)
        entry.tools[tool.group(1) if tool else "tool"] += 1
        entry.errors = int("→ error" in rest)
    elif kind == "request":
        status = re.search(r"→ ([a-z ]+?)(?: \(|$)", rest)
        entry.statuses[status.group(1) if status else "pending"] += 1
    elif kind == "decision":
        entry.decisions = 1
    else:
        entry.tools.update({t: int(n) for t, n in re.findall(r"([\w.-]+) ×(\d+)", rest)})
        errors = re.search(r"(\d+) errors?", rest)
        entry.errors = int(errors.group(1)) if errors else 0
        entry.statuses.update(
            {s: int(n) for n, s in re.findall(r"(\d+) (done|answered|in progress|pending)", rest)}
        )
        decisions = re.search(r"(\d+) decisions?", rest)
        entry.decisions = int(decisions.group(1)) if decisions else 0
    return entry


def roll_up(entries: Sequence[Entry]) -> Entry:
    """One line counting what ``entries`` did."""
    tools: Counter[str] = Counter()
    statuses: Counter[str] = Counter()
    for e in entries:
        tools.update(e.tools)
        statuses.update(e.statuses)
    errors, decisions = sum(e.errors for e in entries), sum(e.decisions for e in entries)
    parts = []
    if tools:
        used = ", ".join(f"{t} ×{n}" for t, n in sorted(tools.items(), key=lambda kv: (-kv[1], kv[0])))
        calls = sum(tools.values())
        parts.append(f"{calls} call{'s' * (calls != 1)} ({used}), {errors} error{'s' * (errors != 1)}")
    if statuses:
        by_status = ", ".join(f"{statuses[s]} {s}" for s in STATUSES if statuses[s])
        requests = sum(statuses.values())
        parts.append(f"{requests} request{'s' * (requests != 1)} ({by_status})")
    if decisions:
        parts.append(f"{decisions} decision{'s' * (decisions != 1)}")
    text = "rolled up: " + ("; ".join(parts) or "nothing to count")
    return Entry(entries[0].seq, entries[-1].last_seq, "rolled up", text, tools, errors, statuses, decisions)


def bounded(entries: list[Entry], budget: int, count: Callable[[str], int]) -> list[Entry]:
    """The ledger within ``budget`` tokens: the oldest lines rolled up, a quarter at a time; a quarter
    that lists what its cut arguments named first loses those lists, then is rolled up."""
    kept = list(entries)
    while len(kept) > 1 and count(render(kept)) > budget:
        head = 1 if kept[0].kind == "rolled up" else 0
        take = max(2, (len(kept) - head) // 4) + head
        if any(e.cut for e in kept[:take]):
            kept = [replace(e, cut="") for e in kept[:take]] + kept[take:]
            continue
        kept = [roll_up(kept[:take]), *kept[take:]]
    return kept


def render(entries: Sequence[Entry]) -> str:
    """The ledger section, ``## Action ledger`` and a bullet per line (empty when there is none)."""
    if not entries:
        return ""
    return f"## {HEADING}\n" + "\n".join(f"- {e.render()}" for e in entries)


def with_ledger(summary: str, ledger: str) -> str:
    """``summary`` with its own ledger section (if it wrote one) replaced by ``ledger``, placed right
    after the task section (or first)."""
    body = without_ledger(summary)
    if not ledger:
        return body
    task = re.search(r"^##\s+Task and goals\s*\n.*?(?=^##\s|\Z)", body, re.M | re.S)
    if task is None:
        return f"{ledger}\n\n{body}".strip()
    end = task.end()
    return f"{body[:end].rstrip()}\n\n{ledger}\n\n{body[end:].lstrip()}".strip()


def without_ledger(summary: str) -> str:
    """``summary`` without its ledger section."""
    return _SECTION.sub("", summary).strip()


def ledger_section(
    rows: Sequence[MessageRecord],
    previous_summary: str | None,
    following: Sequence[MessageRecord],
    max_tokens: int,
    count: Callable[[str], int],
) -> str:
    """The ledger a summary of ``rows`` carries: the previous summary's lines, then the new ones, the
    oldest rolled up to stay within ``SHARE`` of ``max_tokens``."""
    entries = [*carried_ledger(previous_summary), *fold_ledger(rows, following)]
    return render(bounded(entries, int(max_tokens * SHARE), count))
