"""The preserve window: which of a conversation's newest rows a summary leaves live (DESIGN section 4).

``choose_keep_from`` protects the last user turns (up to the hard threshold when they alone do not fit
the target) and keeps more of the newest rows while they fit the target and the preserve window asks for
them; a boundary never splits an appended assistant message nor leaves an orphan tool result first.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sleepcompact.domain.messages import MESSAGE_OVERHEAD
from sleepcompact.domain.records import MessageRecord
from sleepcompact.domain.steps import _is_user_turn, _Layout

if TYPE_CHECKING:  # the ladder defines the policy and imports this module
    from sleepcompact.domain.ladder import Policy


def choose_keep_from(
    layout: _Layout,
    body: list[int],
    head_tokens: int,
    previous_tokens: int,
    policy: Policy,
    force: bool,
    before: int,
) -> int:
    """Index into ``body`` of the first row the summary leaves live.

    The last user turns are what the model is acting on: kept whole when the result fits the target,
    and also above it when it fits under hard and the compaction still saves what it must (else it would
    be recorded as stalled); the next compaction folds them once newer turns arrive. Folding or cutting
    them to reach the target lost what the next call needed most. When they do not fit, fewer turns are
    protected, down to the current one.
    """
    tokens, budget = layout.tokens, layout.budget
    summary_cap = policy.summary_cap(budget.usable)
    allowance = int(budget.target / budget.safety_factor) - head_tokens - summary_cap - MESSAGE_OVERHEAD
    ceiling = int(budget.hard / budget.safety_factor) - head_tokens - summary_cap - MESSAGE_OVERHEAD
    body_tokens, total = sum(tokens[i] for i in body), layout.total()
    keep_from = 0
    for protected in range(max(policy.protected_user_turns, 1), -1, -1):
        keep_from = _keep_from(layout, body, protected, allowance, policy, by_count=force and layout.fits())
        kept = sum(tokens[body[j]] for j in range(keep_from, len(body)))
        if kept <= allowance:
            break
        if keep_from > 0 and kept <= ceiling:
            replaced = body_tokens - kept + previous_tokens
            after = total - replaced + policy.summary_size(budget.usable, replaced) + MESSAGE_OVERHEAD
            if before - after >= policy.stall_ratio * before:
                break
    return keep_from


def _valid_boundary(row: MessageRecord) -> bool:
    """The first kept row may not be a tool result (its call would be gone) nor split an assistant message."""
    return row.kind != "tool_result" and (row.role != "assistant" or row.part == 0)


def _keep_from(
    layout: _Layout,
    body: list[int],
    protected_turns: int,
    allowance: int,
    policy: Policy,
    by_count: bool = False,
) -> int:
    """Index into ``body`` of the first row to keep: the protected turns always, more while they fit."""
    rows, tokens, budget = layout.rows, layout.tokens, layout.budget
    turns, must_keep = 0, len(body)
    for j in range(len(body) - 1, -1, -1):
        if protected_turns == 0:
            # Keep only the CURRENT section: the newest assistant message and what answers it.
            if rows[body[j]].role == "assistant" and rows[body[j]].part == 0:
                must_keep = j
                turns = 1
                break
            continue
        if _is_user_turn(rows[body[j]]):
            turns += 1
            must_keep = j
            if turns >= protected_turns:
                break
    if turns == 0:
        must_keep = len(body) - 1
    # A protected turn is kept whole: back to the first part of the message it starts in.
    while must_keep > 0 and rows[body[must_keep]].part > 0:
        must_keep -= 1
    preserve_tokens = int(budget.usable * policy.preserve_ratio / budget.safety_factor)
    keep_from, kept_tokens, kept_n = len(body), 0, 0
    for j in range(len(body) - 1, -1, -1):
        t = tokens[body[j]]
        # A forced (entry-count) compaction is about the number of messages: the count bounds the window.
        preserved = kept_n >= policy.preserve_messages and (by_count or kept_tokens >= preserve_tokens)
        if j < must_keep and (kept_tokens + t > allowance or preserved):
            break
        keep_from, kept_tokens, kept_n = j, kept_tokens + t, kept_n + 1
    # A boundary never splits an appended message and never leaves an orphan tool result first.
    while keep_from < len(body) and not _valid_boundary(rows[body[keep_from]]):
        keep_from += 1
    return keep_from
