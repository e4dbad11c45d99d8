"""The LLM-free steps of the compaction ladder (DESIGN section 4), and what each step changes.

Tool-provided summaries, middle-out truncation of oversized tool outputs, observation masking and the
last-rung truncation of the largest live messages. Each step edits the ``_Layout`` of one planning run
in place; ``sleepcompact.domain.ladder.plan`` decides which steps run, in which sections, and when to stop.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from sleepcompact.domain.budget import Budget
from sleepcompact.domain.messages import MESSAGE_OVERHEAD, Content, content_text
from sleepcompact.domain.records import MessageRecord

Count = Callable[[str], int]
TRUNCATION_MARKER = (
    "\n\n[... {removed:,} tokens truncated from the middle of this output; "
    "the full text: read_archived(seq={seq})]\n\n"
)
NAMED_TRUNCATION_MARKER = (
    "\n\n[... {removed:,} tokens truncated from the middle of this output, which named {names}; "
    "the full text: read_archived(seq={seq})]\n\n"
)
MASK_PLACEHOLDER = (
    "[tool output archived: {tool} returned {tokens:,} tokens; read it with read_archived(seq={seq})]"
)
TOOL_SUMMARY_VIEW = "[tool-provided summary; the full output: read_archived(seq={seq})] {summary}"
"""Every marker names the agent's recall tool (``domain.recall_tools``) that brings the original back."""


@dataclass(frozen=True)
class RowChange:
    """The new live view of one row."""

    message_id: int
    seq: int
    state: str
    live_content: Content | None
    live_tokens: int
    step: str


def rows_after(
    rows: Sequence[MessageRecord], changes: Sequence[RowChange], compaction_id: str
) -> list[MessageRecord]:
    """The live rows once ``changes`` are applied, in the same order: archived rows gone, the others
    with the live view, tokens and compaction the apply writes (``CompactionRepository.apply_changes``)."""
    by_id = {c.message_id: c for c in changes}
    out: list[MessageRecord] = []
    for row in rows:
        change = by_id.get(row.id)
        if change is None:
            out.append(row)
        elif change.state != "archived":
            out.append(row.with_view(change.state, change.live_content, change.live_tokens, compaction_id))
    return out


@dataclass(frozen=True)
class StepResult:
    """What one step did in one section."""

    step: str
    section: str
    messages: int
    tokens_saved: int


def _is_user_turn(row: MessageRecord) -> bool:
    return row.role == "user" and row.kind in ("message", "context")


def middle_out(text: str, tokens: int, cap: int, seq: int, count: Count) -> tuple[str, int]:
    """Keep the head and tail of ``text`` within ``cap`` tokens, with a marker saying what was cut and
    which identifiers the cut part named (in at most a quarter of the room)."""
    marker_budget = count(TRUNCATION_MARKER.format(removed=tokens, seq=seq)) + MESSAGE_OVERHEAD + 8
    keep = max(cap - marker_budget, 16)
    chars_per_token = max(len(text) / max(tokens, 1), 1.0)
    half = int(keep / 2 * chars_per_token)
    room = int(keep / 4 * chars_per_token)
    # Imported here: the ladder (so every Memory, and `sleepcompact check`) imports this module, and
    # only a truncation needs the identifier scan and the detector's ~100 rules.
    from sleepcompact.domain.summary_items import output_identifiers

    named = output_identifiers(text)
    # Shrink until the real count fits, however many tries that takes: ratio estimates can be far off on
    # odd text (dense ends around a long cheap middle: eight tries left 311 of 3,185 such cuts at caps
    # of 120 and more over their cap). Each try cuts a fifth at least, so half reaches 8 and the loop ends.
    while True:
        head, tail = text[:half], text[-half:]  # half is 8 at least: keep is 16, a token a character
        kept = count(head) + count(tail)
        removed = max(tokens - kept, 0)
        names = cut_identifiers(named, head + tail, room)
        marker = NAMED_TRUNCATION_MARKER if names else TRUNCATION_MARKER
        out = head + marker.format(removed=removed, seq=seq, names=names) + tail
        cost = count(out) + MESSAGE_OVERHEAD
        if cost <= cap or half <= 8:
            return out, cost
        # Shrink by what the count found, and by a fifth at least: a head and tail much denser than the
        # text's average (emoji around plain ASCII) were several times the cap with a fixed fifth.
        text_room = max(cap - (cost - kept), 0)
        half = max(8, int(half * min(0.8, text_room / max(kept, 1))))


def cut_identifiers(named: list[tuple[int, str, str]], kept: str, room: int) -> str:
    """Of the identifiers an output ``named`` (``summary_items.output_identifiers``), those its ``kept``
    part does not show (paths, ids, code names: the ones worth the most first), listed in text order
    within ``room`` characters; empty when there are none."""
    from sleepcompact.domain.identifiers import looks_secret  # see middle_out
    from sleepcompact.domain.injection import flag_imperatives

    found: dict[str, tuple[int, int]] = {}
    for n, (weight, value, _label) in enumerate(named):
        if value not in found and value not in kept and "`" not in value and "\n" not in value:
            found[value] = (weight, n)
    chosen: list[tuple[int, str]] = []
    used = 0
    for value, (_weight, n) in sorted(found.items(), key=lambda kv: kv[1]):
        if used + len(value) + 4 > room:
            continue
        if flag_imperatives(value) or looks_secret(value):
            continue
        chosen.append((n, value))
        used += len(value) + 4
    return ", ".join(f"`{v}`" for _n, v in sorted(chosen))


def _view_tokens(text: str, count: Count) -> int:
    return count(text) + MESSAGE_OVERHEAD


class _Layout:
    """Mutable working state of one planning run (kept private: plan() returns frozen values)."""

    def __init__(self, rows: Sequence[MessageRecord], budget: Budget, extra: int) -> None:
        self.rows = list(rows)
        self.tokens = [r.live_tokens for r in rows]
        self._sum = sum(self.tokens)  # kept with every change: rungs ask fits() once per row they touch
        self.changes: dict[int, RowChange] = {}
        self.budget = budget
        self.extra = extra
        self.steps: list[StepResult] = []
        # Row index -> (the view weighed, its attachments, its approximate bytes): the request limits are
        # checked several times a plan, and a row whose view did not change is not serialized again.
        self.loads: dict[int, tuple[object, int, int]] = {}

    def total(self) -> int:
        return self._sum + self.extra

    def fits(self, reserved: int = 0) -> bool:
        return self.budget.effective(self.total() + reserved) <= self.budget.target

    def set(self, i: int, state: str, view: Content | None, tokens: int, step: str) -> int:
        row = self.rows[i]
        saved = self.tokens[i] - tokens
        self.tokens[i] = tokens
        self._sum -= saved
        # An archived row leaves the context; its stored live figures stay what they were.
        stored = row.live_tokens if state == "archived" else tokens
        self.changes[row.id] = RowChange(row.id, row.seq, state, view, stored, step)
        return saved


def _tool_summaries(layout: _Layout, idx: list[int], count: Count) -> tuple[int, int]:
    saved = n = 0
    for i in idx:
        row = layout.rows[i]
        if row.kind != "tool_result" or row.state != "live" or not row.tool_summary or row.include_in_history:
            continue
        view = TOOL_SUMMARY_VIEW.format(seq=row.seq, summary=row.tool_summary)
        tokens = _view_tokens(view, count)
        if tokens < layout.tokens[i]:
            saved += layout.set(i, "masked", view, tokens, "tool_summary")
            n += 1
    return saved, n


def _truncate(layout: _Layout, idx: list[int], cap: int, count: Count) -> tuple[int, int]:
    saved = n = 0
    for i in idx:
        row = layout.rows[i]
        if (
            row.kind != "tool_result"
            or row.state != "live"
            or layout.tokens[i] <= cap
            or row.id in layout.changes
        ):
            continue
        text = content_text(row.content)
        if not text.strip():
            continue  # attachments only: their own rung names what they were ("[image archived ...]")
        view, tokens = middle_out(text, layout.tokens[i], cap, row.seq, count)
        if tokens < layout.tokens[i]:
            saved += layout.set(i, "truncated", view, tokens, "truncate")
            n += 1
    return saved, n


def _mask_candidates(layout: _Layout, protect: int, protected_turns: int) -> set[int]:
    """BaseAgent's walk: newest first, skip the last user turns, keep the newest ``protect`` tool tokens."""
    seen = turns = 0
    out: set[int] = set()
    for i in range(len(layout.rows) - 1, -1, -1):
        row = layout.rows[i]
        if _is_user_turn(row):
            turns += 1
        if turns < protected_turns:
            continue
        if row.kind != "tool_result" or row.state == "masked":
            continue
        change = layout.changes.get(row.id)
        if change is not None and change.state == "masked":
            continue
        seen += layout.tokens[i]
        if seen > protect:
            out.add(i)
    return out


def _placeholder(row: MessageRecord, count: Count) -> tuple[str, int]:
    view = MASK_PLACEHOLDER.format(tool=row.tool_name or "tool", tokens=row.token_count, seq=row.seq)
    return view, _view_tokens(view, count)


def _mask(layout: _Layout, idx: list[int], candidates: dict[int, tuple[str, int]]) -> tuple[int, int]:
    """Mask the rows of ``idx`` among ``candidates`` (placeholders counted once, by the caller)."""
    saved = n = 0
    for i in idx:
        if i not in candidates:
            continue
        view, tokens = candidates[i]
        if tokens < layout.tokens[i]:
            saved += layout.set(i, "masked", view, tokens, "mask")
            n += 1
    return saved, n


_TRUNCATABLE = ("message", "context", "tool_result")


def _truncate_kept(layout: _Layout, cap: int, reserved: int, count: Count, ceiling: int) -> None:
    """Last rung: middle-out the largest messages still live (never system rows), until the layout
    with ``reserved`` tokens more is at most ``ceiling`` (model tokens).

    Some agents return observations as user messages (SWE-agent's text formats), which no tool-output
    step may touch; without this the protected turns alone could exceed the window.
    """
    order = sorted(
        (i for i, r in enumerate(layout.rows) if r.role != "system" and r.kind in _TRUNCATABLE),
        key=lambda i: -layout.tokens[i],
    )
    saved = n = 0
    for i in order:
        # Largest first, so the loop ends at the first row within the cap: rows folded into the summary
        # (archived, 0 tokens in the layout) are never reached.
        if layout.budget.effective(layout.total() + reserved) <= ceiling or layout.tokens[i] <= cap:
            break
        row = layout.rows[i]
        view, tokens = middle_out(content_text(row.content), layout.tokens[i], cap, row.seq, count)
        if tokens < layout.tokens[i]:
            saved += layout.set(i, "truncated", view, tokens, "truncate_turn")
            n += 1
    if n:
        layout.steps.append(StepResult("truncate_turn", "CURRENT", n, saved))
