"""Two LLM-free rungs that remove what the model no longer needs, before anything is summarized.

* **Thinking**: an assistant turn's thinking blocks matter only while its tool loop is open; the
  provider drops older ones itself. Outside the current turn they leave the live view (the original,
  with its signature, stays in the archive); the tokens they cost are saved.
* **Attachments**: images and documents outside the protected turns are replaced, all at once, by a
  placeholder naming what they were and where the original is. The rung also runs when the request
  would carry more attachments or bytes than the provider accepts (100 images, 32 MB), whatever the
  tokens. Inside the protected turns (a long agent loop is one turn) they go oldest first, only while
  the layout does not fit or is over those limits, and never from the newest step.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from sleepcompact.domain.attachments import (
    MAX_IMAGES_PER_REQUEST,
    MAX_REQUEST_BYTES,
    attachment_bytes,
    attachment_tokens,
    count_attachments,
    is_attachment,
)
from sleepcompact.domain.messages import part_tokens
from sleepcompact.domain.steps import Count, _is_user_turn, _Layout

ATTACHMENT_PLACEHOLDER = "[{kind} archived ({tokens:,} tokens); the original: read_archived(seq={seq})]"
THINKING = ("thinking", "redacted_thinking")


@dataclass(frozen=True)
class RequestLimits:
    """What one request may carry besides tokens (the provider refuses more)."""

    max_attachments: int = MAX_IMAGES_PER_REQUEST
    max_bytes: int = MAX_REQUEST_BYTES


def _blocks(content: Any) -> list[dict[str, Any]]:
    return content if isinstance(content, list) else []


def newest_turn_start(layout: _Layout) -> int:
    """Index of the newest user turn: the tool loop that may still need its thinking starts there."""
    starts = [i for i, r in enumerate(layout.rows) if _is_user_turn(r)]
    return starts[-1] if starts else 0


def drop_thinking(layout: _Layout, count: Count) -> tuple[int, int]:
    """Take thinking blocks out of assistant turns before the current one; (tokens saved, rows)."""
    saved = n = 0
    for i in range(newest_turn_start(layout)):
        row = layout.rows[i]
        blocks = _blocks(_view(layout, i))
        if row.role != "assistant" or not any(b.get("type") in THINKING for b in blocks):
            continue
        kept = [b for b in blocks if b.get("type") not in THINKING]
        if kept:
            saved += layout.set(i, "masked", kept, part_tokens(kept, count), "thinking")
        else:
            saved += layout.set(i, "archived", None, 0, "thinking")
        n += 1
    return saved, n


def _protected_from(layout: _Layout, protected_turns: int) -> int:
    """Index from which the last ``protected_turns`` user turns run (nothing before it is protected)."""
    starts = [i for i, r in enumerate(layout.rows) if _is_user_turn(r)]
    return starts[-protected_turns] if protected_turns and len(starts) >= protected_turns else 0


def elide_attachments(
    layout: _Layout,
    count: Count,
    protected_turns: int,
    *,
    until_fits: bool,
    limits: RequestLimits,
    protect_from: int | None = None,
) -> tuple[int, int]:
    """Replace attachments outside the protected turns (or before row ``protect_from``), oldest first,
    by placeholders; stop when the layout fits and is within ``limits`` (``until_fits``), or go through
    them all; (saved, rows)."""
    views = {i: _view(layout, i) for i in range(len(layout.rows))}
    attachments, size = _layout_load(layout)
    saved = n = 0
    end = _protected_from(layout, protected_turns) if protect_from is None else protect_from
    for i in range(end):
        over = attachments > limits.max_attachments or size > limits.max_bytes
        if until_fits and layout.fits() and not over:
            break
        blocks = _blocks(views[i])
        seq = layout.rows[i].seq
        kept = [_swap(b, seq, count, over) for b in blocks]
        if kept == blocks:
            continue
        removed, freed = _load(blocks)
        attachments, size = attachments - removed, size - freed + _load(kept)[1]
        saved += layout.set(i, "masked", kept, part_tokens(kept, count), "attachments")
        n += 1
    return saved, n


def _swap(block: dict[str, Any], seq: int, count: Count, over_limits: bool) -> dict[str, Any]:
    """An attachment's placeholder, unless it is not an attachment or costs less than its placeholder
    (a 16x16 icon is one token; its placeholder twenty) and the request is within the limits."""
    if not is_attachment(block):
        return block
    placeholder = _placeholder(block, seq, count)
    if not over_limits and attachment_tokens(block, count) <= count(placeholder["text"]):
        return block
    return placeholder


def _placeholder(block: dict[str, Any], seq: int, count: Count) -> dict[str, Any]:
    tokens = attachment_tokens(block, count)
    return {
        "type": "text",
        "text": ATTACHMENT_PLACEHOLDER.format(kind=block.get("type"), tokens=tokens, seq=seq),
    }


def _view(layout: _Layout, i: int) -> Any:
    """Row ``i`` as the layout has it now (None once archived)."""
    row = layout.rows[i]
    change = layout.changes.get(row.id)
    if change is None:
        return row.view
    return None if change.state == "archived" else change.live_content


def _load(view: Any) -> tuple[int, int]:
    """(attachments, approximate request bytes) of one live view (None once archived)."""
    if view is None:
        return 0, 0
    if isinstance(view, str):
        return 0, len(view)
    size = sum(attachment_bytes(b) if is_attachment(b) else len(json.dumps(b)) for b in view)
    return count_attachments(view), size


def _layout_load(layout: _Layout) -> tuple[int, int]:
    """``_load`` of every live view of the layout, each row weighed again only when its view changed."""
    attachments = size = 0
    for i in range(len(layout.rows)):
        view = _view(layout, i)
        held = layout.loads.get(i)
        if held is None or held[0] is not view:
            held = (view, *_load(view))
            layout.loads[i] = held
        attachments, size = attachments + held[1], size + held[2]
    return attachments, size


def within(layout: _Layout, limits: RequestLimits) -> bool:
    """Whether the live rows stay within the provider's per-request limits."""
    attachments, size = _layout_load(layout)
    return attachments <= limits.max_attachments and size <= limits.max_bytes
