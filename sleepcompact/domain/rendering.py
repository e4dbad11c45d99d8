"""Render live rows as what an LLM call takes: Anthropic Messages or OpenAI chat.

The Anthropic API is strict: the first message is a user message, roles
alternate, every ``tool_use`` is answered by a ``tool_result`` at the start
of the very next user message, and no content is empty. Rows are merged and,
where history itself breaks those rules (an orphan result, a call never
answered), repaired in the rendering only; the stored rows stay as they were.

A conversation's rendering is kept between calls (``RenderedHistory``): appending rows re-renders
only from the last assistant turn on, because no later row can change a turn before it (merging joins
a row to the turn just before it; pairing repairs look one turn back and one forward). The turns it
hands out are shared with that cache: read them, copy before changing.

Recalled memories (``recall.memory_block``) travel on the user side, never in
the system prompt: they come from journal entries, and material that is not
the caller's own instructions never gets a system role. Anthropic: a text
block opening the first user message. OpenAI: a user message right after the
system message. With no rows there is no turn to attach them to, so they are
left out.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sleepcompact.domain.attachments import request_weight
from sleepcompact.domain.blocks import EMPTY_RESULT
from sleepcompact.domain.messages import Content, content_text
from sleepcompact.domain.openai_turns import RESUMED_PLACEHOLDER, flatten, openai_turn
from sleepcompact.domain.records import MessageRecord, logical_order

UNANSWERED_RESULT = "[no result was recorded for this tool call]"
OPENAI_ONLY = ("input_audio", "file", "input_file")
"""Parts OpenAI accepts and Anthropic does not: an Anthropic rendering names them in text instead."""
NOT_REPLAYED = ("reasoning",)
"""Stored, exported and counted, but in neither request: a Responses API ``reasoning`` item (its
encrypted state goes back only through the Responses API, and chat completions has no place for it)."""


@dataclass(frozen=True)
class Rendered:
    """A request body's two halves: the system text and the messages."""

    system: str | None
    messages: list[dict[str, Any]]


def _blocks(content: Content, *, openai: bool = False) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    # On the way to an OpenAI rendering, OpenAI's own parts stay as they are.
    return [dict(b) if openai else _anthropic_block(b) for b in content if b.get("type") not in NOT_REPLAYED]


def _anthropic_block(block: dict[str, Any]) -> dict[str, Any]:
    """A stored block as Anthropic takes it: verbatim, but for OpenAI-only parts, named in text."""
    if block.get("type") in OPENAI_ONLY:
        return {"type": "text", "text": f"[{block.get('type')} attachment omitted: not supported here]"}
    return dict(block)


def _result_block(row: MessageRecord, *, openai: bool = False) -> dict[str, Any]:
    block: dict[str, Any] = {"type": "tool_result", "tool_use_id": row.tool_call_id}
    view = row.view
    # Both providers want a result to say something: an empty one says that it was empty.
    block["content"] = (
        (view if isinstance(view, str) else _blocks(view, openai=openai)) if view else EMPTY_RESULT
    )
    if row.metadata.get("is_error"):
        block["is_error"] = True
    if isinstance(row.metadata.get("cache_control"), dict):
        block["cache_control"] = dict(row.metadata["cache_control"])
    return block


def row_blocks(row: MessageRecord, *, openai: bool) -> list[dict[str, Any]]:
    """One row's blocks in its turn (none: the row is left out of the request)."""
    if row.kind == "tool_result":
        return [_result_block(row, openai=openai)]
    if row.role == "system":
        # A system message mid-conversation: the API has no such role, so it travels as user text.
        return [{"type": "text", "text": f"[system] {content_text(row.view)}"}]
    return _blocks(row.view, openai=openai)


def _side(row: MessageRecord) -> str:
    return "assistant" if row.role == "assistant" else "user"


def paired_turns(body: Sequence[MessageRecord], *, openai: bool) -> tuple[list[dict[str, Any]], list[int]]:
    """The rows (in logical order, leading system rows taken out) as paired turns, and for each turn
    the index in ``body`` of the row that opened it. With ``openai``, OpenAI-only parts are kept."""
    messages: list[dict[str, Any]] = []
    starts: list[int] = []
    for i, row in enumerate(body):
        side = _side(row)
        blocks = row_blocks(row, openai=openai)
        if not blocks:
            continue
        if messages and messages[-1]["role"] == side:
            messages[-1]["content"].extend(blocks)
        else:
            messages.append({"role": side, "content": blocks})
            starts.append(i)
    messages = _repair_tool_pairing(messages)  # one turn for one turn: ``starts`` stays aligned
    for msg in messages:
        if msg["role"] == "user":
            # tool_result blocks must open their user turn.
            msg["content"].sort(key=lambda b: 0 if b.get("type") == "tool_result" else 1)
    return messages, starts


def _repair_tool_pairing(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Answer every call in the next user turn; turn results that answer nothing there into text."""
    out: list[dict[str, Any]] = []
    for i, msg in enumerate(messages):
        if msg["role"] == "user":
            prev_calls = _call_ids(out[-1]) if out and out[-1]["role"] == "assistant" else set()
            fixed: list[dict[str, Any]] = []
            answered: set[str] = set()
            for block in msg["content"]:
                is_result = block.get("type") == "tool_result"
                tid = block.get("tool_use_id")
                if is_result and (tid not in prev_calls or tid in answered):
                    # A result answering no call of the previous turn, or answering it again, travels as text.
                    text = flatten(block.get("content", ""))
                    fixed.append({"type": "text", "text": f"[tool result {block.get('tool_use_id')}] {text}"})
                else:
                    if is_result:
                        answered.add(str(block.get("tool_use_id")))
                    fixed.append(block)
            msg = {"role": "user", "content": fixed}
        out.append(msg)
        if msg["role"] == "assistant":
            calls = _call_ids(msg)
            nxt = messages[i + 1] if i + 1 < len(messages) else None
            if calls and nxt is not None:
                answered = {b.get("tool_use_id") for b in nxt["content"] if b.get("type") == "tool_result"}
                missing = [c for c in _ordered_call_ids(msg) if c not in answered]
                if missing:
                    synthetic = [
                        {
                            "type": "tool_result",
                            "tool_use_id": c,
                            "content": UNANSWERED_RESULT,
                            "is_error": True,
                        }
                        for c in missing
                    ]
                    nxt["content"][:0] = synthetic
            elif calls and nxt is None:
                pass  # the caller is about to send the results with its next turn
    return out


def _call_ids(msg: dict[str, Any]) -> set[str]:
    return set(_ordered_call_ids(msg))


def _ordered_call_ids(msg: dict[str, Any]) -> list[str]:
    return [str(b["id"]) for b in msg["content"] if b.get("type") == "tool_use"]


def simplified(msg: dict[str, Any]) -> dict[str, Any]:
    """A turn that is one text block is sent as a plain string, as clients usually write it."""
    content = msg["content"]
    if len(content) == 1 and content[0].get("type") == "text" and set(content[0]) == {"type", "text"}:
        return {"role": msg["role"], "content": content[0]["text"]}
    return msg


@dataclass(frozen=True)
class RenderedHistory:
    """The live rows of one conversation rendered once, for one format, to be extended as rows arrive.

    Nothing in it is changed after it is built: ``extended`` shares the turns that cannot change and
    builds new ones for the rest. ``sent`` are the messages as sent, without memories or recalled
    snippets (``finish`` adds those to copies); ``weights`` are their running ``request_weight`` sums.
    """

    openai: bool
    rows: tuple[MessageRecord, ...]  # the live rows, in stored order
    system_parts: tuple[str, ...]  # the leading system rows' text
    body: tuple[MessageRecord, ...]  # logical order, leading system rows taken out
    turns: tuple[dict[str, Any], ...]  # Anthropic-form turns (blocks), before memories and snippets
    starts: tuple[int, ...]  # per turn: index in ``body`` of its first row (-1: the resumed placeholder)
    sent: tuple[dict[str, Any], ...]  # the turns as sent: simplified (Anthropic) or converted (OpenAI)
    offsets: tuple[int, ...]  # per turn: where its messages start in ``sent`` (and the end, last)
    weights: tuple[tuple[int, int], ...]  # (attachments, bytes) of sent[:i], for every i
    marked: tuple[int, ...]  # indexes in ``sent`` of messages carrying a stored ``cache_control``
    stable: int  # the last assistant turn: re-rendering starts there (-1: none yet)


def history_of(rows: Sequence[MessageRecord], *, openai: bool) -> RenderedHistory:
    """Render every live row."""
    body = logical_order(rows)
    parts: list[str] = []
    while body and body[0].role == "system":
        parts.append(content_text(body[0].view))
        body.pop(0)
    turns, starts = paired_turns(body, openai=openai)
    if turns and turns[0]["role"] != "user":
        turns.insert(0, {"role": "user", "content": [{"type": "text", "text": RESUMED_PLACEHOLDER}]})
        starts.insert(0, -1)
    return _assembled(openai, tuple(rows), tuple(parts), tuple(body), turns, starts, None)


def extended(history: RenderedHistory, new: Sequence[MessageRecord]) -> RenderedHistory:
    """``history`` with ``new`` rows appended (all after its rows): equal to ``history_of`` all of them.

    Only the turns from the last assistant turn on are rendered again. A summary row (which goes to the
    front in logical order) or a history with no assistant turn yet is rendered whole."""
    if not new:
        return history
    rows = (*history.rows, *new)
    if history.stable < 0 or any(r.kind == "summary" for r in new):
        return history_of(rows, openai=history.openai)
    body = (*history.body, *new)
    begin = history.starts[history.stable]
    tail, tail_starts = paired_turns(body[begin:], openai=history.openai)
    turns = [*history.turns[: history.stable], *tail]
    starts = [*history.starts[: history.stable], *(s + begin for s in tail_starts)]
    return _assembled(history.openai, rows, history.system_parts, body, turns, starts, history)


def _assembled(
    openai: bool,
    rows: tuple[MessageRecord, ...],
    parts: tuple[str, ...],
    body: tuple[MessageRecord, ...],
    turns: list[dict[str, Any]],
    starts: list[int],
    prev: RenderedHistory | None,
) -> RenderedHistory:
    """The history with ``sent``, ``offsets`` and ``weights`` built for the turns ``prev`` lacks."""
    keep = prev.stable if prev is not None else 0
    cut = prev.offsets[keep] if prev is not None else 0
    sent = list(prev.sent[:cut]) if prev is not None else []
    offsets = list(prev.offsets[:keep]) if prev is not None else []
    weights = list(prev.weights[: cut + 1]) if prev is not None else [(0, 0)]
    marked = [i for i in prev.marked if i < cut] if prev is not None else []
    for turn in turns[keep:]:
        offsets.append(len(sent))
        add_turn(turn, openai, sent, weights, marked)
    offsets.append(len(sent))
    stable = next((i for i in range(len(turns) - 1, -1, -1) if turns[i]["role"] == "assistant"), -1)
    return RenderedHistory(
        openai,
        rows,
        parts,
        body,
        tuple(turns),
        tuple(starts),
        tuple(sent),
        tuple(offsets),
        tuple(weights),
        tuple(marked),
        stable,
    )


def add_turn(
    turn: dict[str, Any],
    openai: bool,
    sent: list[dict[str, Any]],
    weights: list[tuple[int, int]],
    marked: list[int],
) -> None:
    """Append one turn's messages as sent, their running weights and where they carry a marker."""
    simple = simplified(turn)
    for msg in openai_turn(simple) if openai else (simple,):
        if has_marker(msg):
            marked.append(len(sent))
        sent.append(msg)
        a, b = request_weight(msg)
        weights.append((weights[-1][0] + a, weights[-1][1] + b))


def has_marker(msg: dict[str, Any]) -> bool:
    """Whether a message carries a ``cache_control`` on one of its blocks (stored with the message)."""
    content = msg.get("content")
    return isinstance(content, list) and any(isinstance(b, dict) and "cache_control" in b for b in content)


@dataclass(frozen=True)
class Finished:
    """A request's system text and messages, and their ``request_weight`` without a walk over them."""

    system: str | None
    messages: list[dict[str, Any]]
    weight: tuple[int, int]
    marked: tuple[int, ...]  # indexes in ``messages`` carrying a ``cache_control`` (``has_marker``)


def finish(
    history: RenderedHistory, system: str | None, memories: str | None, recalled: str | None
) -> Finished:
    """The request from the cached turns: the caller's system prompt before the stored one, the memory
    block opening the first user turn (OpenAI: a user message after the system message), the recalled
    snippets closing the newest user turn. Only the turns those change are copied."""
    system_text = "\n\n".join(p for p in (system, *history.system_parts) if p) or None
    turns = history.turns
    changed: dict[int, list[dict[str, Any]]] = {}
    if memories and turns and not history.openai:
        # The first user turn answers no call, so it has no tool_result block that must stay first.
        changed[0] = [{"type": "text", "text": memories}, *turns[0]["content"]]
    newest = next((i for i in range(len(turns) - 1, -1, -1) if turns[i]["role"] == "user"), None)
    if recalled and newest is not None:
        # Last in the newest user turn: after its tool results, and after everything a cache holds.
        changed[newest] = [*changed.get(newest, turns[newest]["content"]), {"type": "text", "text": recalled}]
    messages = list(history.sent)
    attachments, size = history.weights[-1]
    lengths: dict[int, int] = {}
    for i in sorted(changed, reverse=True):  # from the end, so earlier offsets stay right
        simple = simplified({"role": turns[i]["role"], "content": changed[i]})
        new = openai_turn(simple) if history.openai else [simple]
        lo, hi = history.offsets[i], history.offsets[i + 1]
        for old in messages[lo:hi]:
            a, b = request_weight(old)
            attachments, size = attachments - a, size - b
        for msg in new:
            a, b = request_weight(msg)
            attachments, size = attachments + a, size + b
        messages[lo:hi] = new
        lengths[i] = len(new)
    head: list[dict[str, Any]] = []
    if history.openai:
        if system_text:
            head.append({"role": "system", "content": system_text})
        if memories and turns:
            head.append({"role": "user", "content": memories})
        system_text = None
    for msg in head:
        a, b = request_weight(msg)
        attachments, size = attachments + a, size + b
    messages[:0] = head
    frame_a, frame_b = request_weight({"system": system_text, "messages": []})
    weight = (attachments + frame_a, size + frame_b + 2 * len(messages))
    return Finished(system_text, messages, weight, _marked(history, lengths, len(head), messages))


def _marked(
    history: RenderedHistory, lengths: dict[int, int], shift: int, messages: list[dict[str, Any]]
) -> tuple[int, ...]:
    """Where ``messages`` carry a stored marker: the cached indexes, moved past the messages put in front
    (``shift``) and the turns ``finish`` replaced (``lengths``: turn -> its new number of messages),
    whose messages are checked again."""
    out: list[int] = []
    delta, pos = shift, 0
    for turn in sorted(lengths):
        lo, hi = history.offsets[turn], history.offsets[turn + 1]
        out.extend(i + delta for i in history.marked if pos <= i < lo)
        out.extend(j for j in range(lo + delta, lo + delta + lengths[turn]) if has_marker(messages[j]))
        delta += lengths[turn] - (hi - lo)
        pos = hi
    out.extend(i + delta for i in history.marked if i >= pos)
    return tuple(out)


def render_anthropic(
    rows: Sequence[MessageRecord],
    system: str | None = None,
    memories: str | None = None,
    recalled: str | None = None,
) -> Rendered:
    """Anthropic Messages form of the live rows, with ``system`` prepended to any stored system text.

    ``memories`` (the recalled-notes block) opens the first user message as a text block of its own;
    ``recalled`` (archived snippets, ``history_recall``) closes the newest user turn.
    """
    done = finish(history_of(rows, openai=False), system, memories, recalled)
    return Rendered(system=done.system, messages=done.messages)


def render_openai(
    rows: Sequence[MessageRecord],
    system: str | None = None,
    memories: str | None = None,
    recalled: str | None = None,
) -> list[dict[str, Any]]:
    """OpenAI chat form: system first, tool calls on assistant turns, one tool message per result.

    ``memories`` (the recalled-notes block) is a user message of its own right after the system message.
    Thinking blocks are Anthropic's and are left out; server tool blocks travel as their text.
    """
    return finish(history_of(rows, openai=True), system, memories, recalled).messages
