"""The archived snippets the next call carries in its newest user turn (``domain.history_recall``)."""

from __future__ import annotations

import math
from collections.abc import Sequence

from sleepcompact.domain.budget import Budget
from sleepcompact.domain.history_recall import ArchivedSnippet, has_archive, history_block, recall_query
from sleepcompact.domain.ladder import conversation_policy
from sleepcompact.domain.messages import MESSAGE_OVERHEAD
from sleepcompact.domain.records import ConversationRecord, MessageRecord
from sleepcompact.ports import Dependencies
from sleepcompact.services.history import search_history

RECALL_SHARE = 0.20
"""The snippets never take more than this share of the usable budget, whatever the setting."""
RECALL_LIMIT = 8
"""Most snippets one call carries (the budget usually stops it first)."""


def recall_budget(deps: Dependencies, conv: ConversationRecord) -> int:
    """The conversation's recall budget in model tokens: its own policy's, else the setting (0: off)."""
    own = conversation_policy(conv, deps.policy).recall_budget_tokens
    return deps.settings.recall_budget_tokens if own is None else own


def recall_allowance(deps: Dependencies, conv: ConversationRecord, budget: Budget) -> int:
    """Counted tokens the block may take: min(the recall budget, 20% of usable), in our counter's tokens."""
    wanted = min(recall_budget(deps, conv), RECALL_SHARE * budget.usable)
    return math.floor(wanted / budget.safety_factor)


def recalled_history(
    deps: Dependencies,
    conv: ConversationRecord,
    rows: Sequence[MessageRecord],
    budget: Budget,
    others: int,
) -> tuple[str, list[ArchivedSnippet], int]:
    """The block, the snippets in it and its counted tokens: the best archived matches of the newest user
    message that fit ``recall_allowance`` and the room the call's other content (``others``, counted
    tokens) leaves under the hard threshold. No search runs when nothing is archived.

    The block only fills free room: it never makes a call due for compaction, and no compaction keeps
    room for it. A compaction rewrites the cached prefix and folds turns the model may need next, which
    speculative snippets are not worth; right after one there is room again (target to hard). On the
    tune half of the coding trajectories this kept 0.016 more references at 8k than a block that could
    push the call over hard with a reserve kept for it (docs/evaluation.md, *Recall that only fills
    free room*)."""
    headroom = math.floor(budget.hard / budget.safety_factor) - others
    allowance = min(recall_allowance(deps, conv, budget), headroom) - MESSAGE_OVERHEAD
    query = recall_query(rows)
    if allowance <= 0 or not query.strip() or not has_archive(conv.live_messages, conv.next_seq):
        return "", [], 0
    count = deps.counter.count
    room = allowance - count(history_block([ArchivedSnippet(0, "user", None, "")]))
    hits = search_history(deps, conv.id, query, RECALL_LIMIT, include_live=False, budget_tokens=max(0, room))
    # The other half of each exchange is left out here (the tool shows it): on the tune split it cost
    # more answers, by the room it took, than it brought.
    chosen = [
        ArchivedSnippet(h.seq, _who(h.role, h.kind, h.tool_name), h.created_at, h.snippet) for h in hits
    ]
    while chosen and count(history_block(chosen)) > allowance:  # line prefixes cost a little too
        chosen.pop()
    block = history_block(chosen)
    return block, chosen, (count(block) + MESSAGE_OVERHEAD if block else 0)


def _who(role: str, kind: str, tool: str | None) -> str:
    if kind == "tool_result":
        return f"output of {tool or 'a tool'}"
    if kind == "tool_call":
        return f"call to {tool or 'a tool'}"
    return "summary" if kind == "summary" else role
