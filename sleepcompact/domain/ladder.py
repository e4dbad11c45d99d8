"""The compaction ladder: plan the cheapest layout that fits (DESIGN section 4).

``plan(snapshot, budget, policy, count)`` is pure. It walks the steps
cheapest first (tool-provided summaries, thinking of past turns, attachments
outside the protected turns, middle-out truncation, observation masking, then
extraction and summarization of the prefix outside the preserve window) over
the sections HISTORY, IN_LOOP and CURRENT, and stops at the first layout whose
tokens fit the target (and whose attachments and bytes fit the provider's limits).
The last user turns are kept whole up to the hard threshold, so a layout that
summarizes may land above the target when they alone are large.
The LLM call itself happens outside: the plan says what to summarize and how large
the summary may be. The LLM-free steps themselves, and the row changes they make,
live in ``sleepcompact.domain.steps`` and ``sleepcompact.domain.elision``; which
newest rows a summary leaves live, in ``sleepcompact.domain.preserve``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, fields, replace

from sleepcompact.domain.budget import Budget
from sleepcompact.domain.elision import (
    RequestLimits,
    drop_thinking,
    elide_attachments,
    newest_turn_start,
    within,
)
from sleepcompact.domain.messages import MESSAGE_OVERHEAD
from sleepcompact.domain.preserve import choose_keep_from
from sleepcompact.domain.records import ConversationRecord, MessageRecord, logical_order
from sleepcompact.domain.steps import (
    Count,
    RowChange,
    StepResult,
    _is_user_turn,
    _Layout,
    _mask,
    _mask_candidates,
    _placeholder,
    _tool_summaries,
    _truncate,
    _truncate_kept,
)

SECTIONS = ("HISTORY", "IN_LOOP", "CURRENT")


@dataclass(frozen=True)
class Policy:
    """Tunable defaults (DESIGN section 3). ``None`` means: derive from the usable budget."""

    tool_output_cap: int = 2500
    protect_tokens: int | None = None
    minimum_saving: int | None = None
    preserve_messages: int = 20
    preserve_ratio: float = 0.35
    protected_user_turns: int = 2
    summary_ratio: float = 0.30
    summary_max_tokens: int = 2048
    min_messages_to_summarize: int = 5
    stall_ratio: float = 0.05
    # Not a rung: the archived snippets recalled into the request (``history_recall``), per conversation
    # like the rest of this policy; None means the setting (``SLEEPCOMPACT_RECALL_BUDGET``).
    recall_budget_tokens: int | None = None
    # Not a rung either: instructions added to this conversation's summary requests, on every path.
    summary_instructions: str | None = None

    def cap(self, usable: int) -> int:
        """Single tool output cap, scaled down for small windows (a 16k plan cannot hold 2,500 tokens)."""
        return max(200, min(self.tool_output_cap, usable // 10))

    def protect(self, usable: int) -> int:
        """Newest tool output kept verbatim: min(40k, 25% of usable)."""
        return self.protect_tokens if self.protect_tokens is not None else min(40_000, usable // 4)

    def minimum(self, usable: int) -> int:
        """Smallest saving worth masking for: min(20k, 10% of usable)."""
        return self.minimum_saving if self.minimum_saving is not None else min(20_000, usable // 10)

    def summary_cap(self, usable: int) -> int:
        """Largest summary: 2,048 tokens, less in small windows."""
        return max(128, min(self.summary_max_tokens, usable // 10))

    def summary_size(self, usable: int, replaced: int) -> int:
        """The largest summary of ``replaced`` tokens: 30% of them, within the cap, at least 64."""
        return max(64, min(self.summary_cap(usable), int(replaced * self.summary_ratio)))


@dataclass(frozen=True)
class Snapshot:
    """The live rows of a conversation at one epoch (nothing here changes while the LLM runs)."""

    conversation_id: str
    epoch: int
    last_seq: int
    rows: tuple[MessageRecord, ...]
    summaries_so_far: int = 0
    extra_tokens: int = 0  # a caller's system prompt and tools, counted against the budget too


@dataclass(frozen=True)
class SummaryRequest:
    """What to fold into the rolling summary, and how large it may be."""

    rows: tuple[MessageRecord, ...]
    previous: MessageRecord | None
    max_tokens: int
    tokens_replaced: int

    @property
    def first_seq(self) -> int:
        """The oldest seq folded (the previous summary's own range is in its compaction)."""
        return self.rows[0].seq if self.rows else (self.previous.seq if self.previous else 0)

    @property
    def last_seq(self) -> int:
        """The newest seq folded."""
        return self.rows[-1].seq if self.rows else (self.previous.seq if self.previous else 0)


@dataclass(frozen=True)
class Plan:
    """The layout chosen, with the tokens each step saves."""

    tokens_before: int
    target: int
    changes: tuple[RowChange, ...]
    steps: tuple[StepResult, ...]
    summary: SummaryRequest | None
    tokens_after: int  # estimated, with the summary at its maximum size
    fits: bool
    reason: str
    sections: dict[str, int] = field(default_factory=dict)
    over_limits: bool = False  # the live rows carried more attachments or bytes than one request may

    @property
    def is_noop(self) -> bool:
        """Nothing to change."""
        return not self.changes and self.summary is None


def assign_sections(rows: Sequence[MessageRecord]) -> list[str]:
    """HISTORY before the current turn; CURRENT the newest assistant message and results; IN_LOOP between."""
    n = len(rows)
    turn_start = next((i for i in range(n - 1, -1, -1) if _is_user_turn(rows[i])), 0)
    last_assistant = next((i for i in range(n - 1, turn_start - 1, -1) if rows[i].role == "assistant"), None)
    current_start = n
    # turn_start is a user row, or 0 when there is none: then an assistant message first is CURRENT too.
    if last_assistant is not None:
        current_start = last_assistant
        while current_start > turn_start and rows[current_start].part != 0:
            current_start -= 1
    return ["HISTORY" if i < turn_start else "CURRENT" if i >= current_start else "IN_LOOP" for i in range(n)]


def plan(
    snapshot: Snapshot,
    budget: Budget,
    policy: Policy,
    count: Count,
    *,
    force_summary: bool = False,
    limits: RequestLimits | None = None,
) -> Plan:
    """Choose the cheapest layout that fits ``budget.target`` and the provider's request ``limits``
    (attachments and bytes); see the module docstring."""
    limits = limits or RequestLimits()
    rows = tuple(logical_order(snapshot.rows))
    layout = _Layout(rows, budget, snapshot.extra_tokens)
    before = layout.total()
    sections = assign_sections(rows)
    by_section = {s: [i for i, sec in enumerate(sections) if sec == s] for s in SECTIONS}
    section_sizes = {s: sum(rows[i].live_tokens for i in by_section[s]) for s in SECTIONS}
    over_limits = not within(layout, limits)
    if layout.fits() and not force_summary and not over_limits:
        return Plan(
            before, budget.target, (), (), None, before, True, "already under the target", section_sizes
        )
    _llm_free_steps(layout, by_section, policy, count, force_summary, limits)
    if layout.fits() and not force_summary:
        reason = "fits after LLM-free steps"
        if not within(layout, limits):
            reason = "the protected turns alone exceed the provider's request limits (attachments, bytes)"
        return replace(_finish(layout, before, None, reason, section_sizes), over_limits=over_limits)
    summary = _summary_request(layout, policy, force_summary, before)
    summary_size = summary.max_tokens + MESSAGE_OVERHEAD if summary else 0
    if not layout.fits(summary_size):
        # With a summary, what is still over the target is the protected turns, kept up to hard (below):
        # cut them only as far as hard requires. Without one, cut down to the target.
        ceiling = budget.hard if summary is not None else budget.target
        _truncate_kept(layout, policy.cap(budget.usable), summary_size, count, ceiling)
    if summary is None:
        if not layout.fits():
            reason = "cannot fit: too few messages outside the preserve window to summarize"
        elif layout.steps:
            reason = "fits after the LLM-free steps; nothing worth summarizing"
        else:
            reason = "already under the target; too few messages worth summarizing"
        return _finish(layout, before, None, reason, section_sizes)
    return _finish(layout, before, summary, "summarize the prefix outside the preserve window", section_sizes)


def _llm_free_steps(
    layout: _Layout,
    by_section: dict[str, list[int]],
    policy: Policy,
    count: Count,
    force_summary: bool,
    limits: RequestLimits,
) -> None:
    """The rungs that need no LLM, cheapest first, each only while the layout does not fit yet."""
    usable = layout.budget.usable
    # The mask candidates come from the layout as loaded, as they always have; each placeholder is
    # counted once, here, and the mask step reuses it.
    candidates = {
        i: _placeholder(layout.rows[i], count)
        for i in _mask_candidates(layout, policy.protect(usable), policy.protected_user_turns)
    }
    mask_allowed = sum(layout.tokens[i] - view[1] for i, view in candidates.items()) >= policy.minimum(usable)

    def go() -> bool:
        return not layout.fits() or force_summary

    def record(name: str, section: str, result: tuple[int, int]) -> None:
        if result[1]:
            layout.steps.append(StepResult(name, section, result[1], result[0]))

    for section in SECTIONS:
        if go():
            record("tool_summary", section, _tool_summaries(layout, by_section[section], count))
    if go():
        record("thinking", "HISTORY", drop_thinking(layout, count))
    if go() or not within(layout, limits):
        # Every attachment outside the protected turns at once: an old screenshot is costly and rarely
        # needed again, its text stays, and one change keeps the cached prefix stable afterwards.
        protected = policy.protected_user_turns
        elided = elide_attachments(layout, count, protected, until_fits=False, limits=limits)
        record("attachments", "HISTORY", elided)
    for section in SECTIONS:
        if go():
            record("truncate", section, _truncate(layout, by_section[section], policy.cap(usable), count))
    if mask_allowed:
        for section in SECTIONS:
            if go():
                record("mask", section, _mask(layout, by_section[section], candidates))
    if not layout.fits() or not within(layout, limits):
        # One long agent loop is all "current turn", and a request over the provider's limits cannot be
        # sent at all: archive attachments inside the protected turns too (the text around them stays),
        # keeping the newest step (the newest assistant message and its results, else the user's turn).
        current = min(by_section["CURRENT"], default=newest_turn_start(layout))
        elided = elide_attachments(layout, count, 0, until_fits=True, limits=limits, protect_from=current)
        record("attachments", "IN_LOOP", elided)
    if not layout.fits():
        # Then mask inside the loop too, keeping the newest tool output.
        inner = {
            i: _placeholder(layout.rows[i], count)
            for i in _mask_candidates(layout, policy.protect(usable), 0)
        }
        for section in SECTIONS:
            if not layout.fits():
                record("mask", section, _mask(layout, by_section[section], inner))


def _summary_request(layout: _Layout, policy: Policy, force: bool, before: int) -> SummaryRequest | None:
    rows, tokens = layout.rows, layout.tokens
    head = 0
    while head < len(rows) and rows[head].role == "system" and rows[head].kind != "summary":
        head += 1  # leading system instructions stay as they are
    previous = next((r for r in rows[head:] if r.kind == "summary"), None)
    body = [i for i in range(head, len(rows)) if rows[i].kind != "summary"]
    if not body:
        return None
    head_tokens = sum(tokens[:head]) + layout.extra
    previous_tokens = previous.live_tokens if previous else 0
    keep_from = choose_keep_from(layout, body, head_tokens, previous_tokens, policy, force, before)
    evicted = [body[j] for j in range(keep_from)]
    # Five messages is the least worth an LLM call when summarizing is optional (a forced or entry-count
    # compaction); when the layout does not fit otherwise, any prefix is worth folding.
    optional = force and layout.fits()
    if not evicted or (optional and len(evicted) < policy.min_messages_to_summarize and previous is None):
        return None
    replaced = sum(tokens[i] for i in evicted) + previous_tokens
    max_tokens = policy.summary_size(layout.budget.usable, replaced)
    for i in evicted:
        layout.set(i, "archived", rows[i].live_content, 0, "summarize")
    if previous is not None:
        layout.set(rows.index(previous), "archived", previous.live_content, 0, "summarize")
    return SummaryRequest(tuple(rows[i] for i in evicted), previous, max_tokens, replaced)


def _finish(
    layout: _Layout, before: int, summary: SummaryRequest | None, reason: str, sections: dict[str, int]
) -> Plan:
    steps = list(layout.steps)
    after = layout.total()
    if summary is not None:
        after += summary.max_tokens + MESSAGE_OVERHEAD
        steps.append(
            StepResult(
                "summarize", "HISTORY", len(summary.rows), summary.tokens_replaced - summary.max_tokens
            )
        )
    fits = layout.budget.effective(after) <= layout.budget.target
    if not fits and summary is not None:
        reason = "summarized as far as the preserve window allows; still over the target"
    return Plan(
        before,
        layout.budget.target,
        tuple(layout.changes.values()),
        tuple(steps),
        summary,
        after,
        fits,
        reason,
        sections,
    )


def with_summary_size(p: Plan, summary_tokens: int) -> Plan:
    """The plan's figures once the real summary's size is known."""
    if p.summary is None:
        return p
    after = p.tokens_after - p.summary.max_tokens + summary_tokens
    steps = tuple(
        replace(s, tokens_saved=p.summary.tokens_replaced - summary_tokens) if s.step == "summarize" else s
        for s in p.steps
    )
    return replace(p, tokens_after=after, steps=steps)


def conversation_policy(conv: ConversationRecord, default: Policy) -> Policy:
    """The ladder's policy with the conversation's own overrides (stored in its metadata) applied."""
    overrides = conv.metadata.get("policy") or {}
    known = {f.name for f in fields(Policy)}
    return replace(default, **{k: v for k, v in overrides.items() if k in known})
