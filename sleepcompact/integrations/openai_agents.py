"""An OpenAI Agents SDK session backed by sleepcompact: ``SleepcompactSession``.

``Runner.run(agent, input, session=SleepcompactSession("user-42", mem))`` reads the history from
sleepcompact before the run and writes every new item back after each turn:

* ``add_items`` converts Responses API items to stored messages with the importer of
  ``sleepcompact import`` (``domain.agent_logs.responses_items``): a ``message``, a ``function_call``
  (an assistant tool call), a ``function_call_output`` (its result), a ``reasoning`` item (stored and
  counted, never replayed); any other item is stored verbatim and replayed as text;
* ``get_items`` runs the guard (``prepare_context(..., fmt="openai")``) and converts what it returns
  back to Responses input items, so the history the runner gets always fits: compacted history comes
  back as its summary and the turns kept; ``limit`` keeps the newest items of that;
* ``pop_item`` archives the newest stored item (never deletes it) and returns it; adding that same item
  back restores it rather than appending a copy;
* ``clear_session`` archives the whole conversation (``Memory.clear``), restorable.

The conversation is created on the first write with ``model`` and ``context_window``. ``system`` and
``tools`` (the agent's instructions and tool definitions, in OpenAI chat form) are what the runner adds
to each call besides the history: the guard counts them, so the history it returns leaves room for
them. ``ContextOverflow`` propagates from ``get_items`` when they and the newest turn alone do not fit.
``last_context`` (the guard's ``PreparedContext``) and ``last_action`` say what the guard did; each call
also logs the guard's canonical ``guard`` event.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar, cast

try:
    from agents.items import TResponseInputItem
    from agents.memory.session_settings import SessionSettings
    from agents.models.fake_id import FAKE_RESPONSES_ID
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "sleepcompact.integrations.openai_agents needs the OpenAI Agents SDK: "
        "pip install 'sleepcompact[agents]'"
    ) from exc

from sleepcompact.api import Memory
from sleepcompact.domain.agent_logs import responses_items
from sleepcompact.domain.errors import CompactionNotFound, ConversationNotFound, InvalidMessage, NotRestorable
from sleepcompact.domain.guard import Action
from sleepcompact.integrations._backing import Backing, archive_newest, split_system
from sleepcompact.services.prepared import PreparedContext

__all__ = ["SleepcompactSession", "chat_to_items"]

T = TypeVar("T")

_CONTENT_PARTS = frozenset(
    {"text", "output_text", "refusal", "input_text", "image_url", "input_image", "file"}
)


class SleepcompactSession:
    """A session of the OpenAI Agents SDK (its ``Session`` protocol) stored in a sleepcompact
    conversation whose id is ``conversation_id`` (1 to 40 characters).

    ``memory=None`` builds ``Memory.from_env()`` on first use. See the module docstring for what each
    method does; the SDK calls them, applications rarely do.
    """

    session_settings: SessionSettings | None = None

    def __init__(
        self,
        conversation_id: str,
        memory: Memory | None = None,
        *,
        model: str | None = None,
        context_window: int | None = None,
        system: str | None = None,
        tools: Sequence[Mapping[str, Any]] | None = None,
        session_settings: SessionSettings | None = None,
    ) -> None:
        self.session_id = conversation_id
        self.session_settings = session_settings
        self.system = system
        self.tools = [dict(t) for t in tools] if tools else None
        self._backing = Backing(memory, model=model, context_window=context_window)
        self._lock = threading.Lock()  # one operation of this session at a time
        self._popped: list[tuple[str, str]] = []  # (compaction id, fingerprint) of each pop, newest last

    @property
    def conversation_id(self) -> str:
        """The sleepcompact conversation (the session id)."""
        return self.session_id

    @property
    def memory(self) -> Memory:
        """The Memory behind the session (built from the environment on first use if none was given)."""
        return self._backing.memory

    @property
    def last_context(self) -> PreparedContext | None:
        """The guard's latest answer (its action, tokens, usable budget, compaction id), or None."""
        return self._backing.last_context

    @property
    def last_action(self) -> Action | None:
        """What the guard did on the latest ``get_items`` (``none``, ``sleep_requested``,
        ``emergency_compacted``, ``fallback_compacted``), or None before the first."""
        return self._backing.last_action

    # -- the Session protocol -------------------------------------------------------------------------

    async def get_items(self, limit: int | None = None) -> list[TResponseInputItem]:
        """The history as the guard prepared it (it fits), as Responses input items; ``limit``: the
        newest ``limit`` of them."""
        return await self._run(self._get_items, limit)

    async def add_items(self, items: list[TResponseInputItem]) -> None:
        """Store new items (all or none; a malformed one raises a typed ``InvalidMessage``)."""
        await self._run(self._add_items, list(items))

    async def pop_item(self) -> TResponseInputItem | None:
        """Archive the newest stored item and return it as it was added (without its ``id``); None
        when the session is empty. The row stays in the archive: ``memory.compactions.restore(id)``
        (the id is in ``memory.compactions.history(...)``, trigger ``clear``, step ``pop``) or adding
        the returned item back before anything new brings it back (like any restore, it also undoes a
        compaction made since)."""
        return await self._run(self._pop_item)

    async def clear_session(self) -> None:
        """Archive every live message (``Memory.clear``; ``restore`` brings them back)."""
        await self._run(self._clear)

    # -- the work, in a worker thread -----------------------------------------------------------------

    async def _run(self, fn: Callable[..., T], *args: Any) -> T:
        def locked() -> T:
            with self._lock:
                return fn(*args)

        return await asyncio.to_thread(locked)

    def _get_items(self, limit: int | None) -> list[TResponseInputItem]:
        ctx = self._backing.prepare(self.session_id, system=self.system, tools=self.tools)
        if ctx is None:
            return []
        stored_system, messages = split_system(ctx.messages, self.system)
        head = [{"role": "system", "content": stored_system}] if stored_system else []
        items = chat_to_items([*head, *messages])
        if limit is not None:
            items = items[-limit:] if limit > 0 else []
        return cast(list[TResponseInputItem], items)

    def _add_items(self, items: list[Any]) -> None:
        plain = [_plain(item) for item in items]
        while plain and self._popped and self._popped[-1][1] == _fingerprint(plain[0]):
            compaction_id, _ = self._popped.pop()
            try:
                self.memory.compactions.restore(compaction_id)
            except (NotRestorable, CompactionNotFound):
                break  # restored or undone meanwhile: append it as a new item instead
            plain.pop(0)
        if not plain:
            return
        # Only items put back right after their pop are restored (in place); once something new is
        # appended, an older pop restored later would come back before it.
        self._popped.clear()
        messages = [found.data for found in responses_items(plain, InvalidMessage)]
        self._backing.append_many(self.session_id, messages)

    def _pop_item(self) -> TResponseInputItem | None:
        popped = archive_newest(self.memory, self.session_id)
        if popped is None:
            return None
        compaction_id, original = popped
        item = _stored_item(original)
        self._popped.append((compaction_id, _fingerprint(item)))
        return cast(TResponseInputItem, item)

    def _clear(self) -> None:
        self._popped.clear()
        try:
            self.memory.clear(self.session_id)
        except ConversationNotFound:
            return  # nothing stored yet: nothing to clear


# -- Responses items <-> chat messages ---------------------------------------------------------------


def _plain(item: Any) -> dict[str, Any]:
    """An item as a plain dict (the SDK passes dicts; a pydantic item is dumped)."""
    if hasattr(item, "model_dump"):
        return cast(dict[str, Any], item.model_dump(exclude_unset=True))
    if not isinstance(item, Mapping):
        raise InvalidMessage(f"a session item must be an object, got {type(item).__name__}")
    return dict(item)


def _fingerprint(item: Mapping[str, Any]) -> str:
    return json.dumps({k: v for k, v in item.items() if k != "id"}, sort_keys=True, default=str)


def chat_to_items(messages: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """OpenAI chat messages (what ``prepare_context(..., fmt="openai")`` returns) as Responses API
    input items: an assistant message becomes a ``message`` item (text as ``output_text``) followed by
    a ``function_call`` per tool call, a ``role: tool`` message a ``function_call_output``, a user or
    system message an input message (text parts as ``input_text``, images as ``input_image``)."""
    out: list[dict[str, Any]] = []
    for msg in messages:
        out.extend(_items_of(msg))
    return out


def _items_of(msg: Mapping[str, Any]) -> list[dict[str, Any]]:
    role, content = msg.get("role"), msg.get("content")
    if role in ("tool", "function"):
        output = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
        return [{"type": "function_call_output", "call_id": msg.get("tool_call_id"), "output": output}]
    if role != "assistant":
        parts = content if isinstance(content, str) else [_input_part(p) for p in content or []]
        return [{"role": role, "content": parts}]
    blocks = [b for b in content if isinstance(b, Mapping)] if isinstance(content, list) else []
    items = [dict(b) for b in blocks if b.get("type") not in _CONTENT_PARTS]  # stored items (reasoning)
    parts = [_output_part(b) for b in blocks if b.get("type") in _CONTENT_PARTS]
    if isinstance(content, str) and content:
        parts = [{"type": "output_text", "text": content, "annotations": []}]
    if parts:
        # The SDK's own placeholder id: its chat converter reads an output message by it (keeping the tool
        # calls that follow on the same assistant turn) and its Responses model drops it before sending.
        message = {"id": FAKE_RESPONSES_ID, "type": "message", "role": "assistant", "content": parts}
        items.append({**message, "status": "completed"})
    for call in msg.get("tool_calls") or []:
        fn = call.get("function") or {}
        items.append(
            {
                "type": "function_call",
                "call_id": call.get("id"),
                "name": fn.get("name"),
                "arguments": fn.get("arguments") or "{}",
            }
        )
    return items


def _output_part(part: Mapping[str, Any]) -> dict[str, Any]:
    if part.get("type") in ("output_text", "refusal"):
        return dict(part)
    return {"type": "output_text", "text": str(part.get("text", "")), "annotations": []}


def _input_part(part: Mapping[str, Any]) -> dict[str, Any]:
    kind = part.get("type")
    if kind in ("input_text", "input_image", "input_file"):
        return dict(part)
    if kind == "text":
        return {"type": "input_text", "text": str(part.get("text", ""))}
    if kind == "image_url":
        image = part.get("image_url") or {}
        url = image.get("url") if isinstance(image, Mapping) else image
        detail = image.get("detail", "auto") if isinstance(image, Mapping) else "auto"
        return {"type": "input_image", "image_url": url, "detail": detail}
    if kind == "file":
        return {"type": "input_file", **dict(part.get("file") or {})}
    return {"type": "input_text", "text": json.dumps(dict(part), ensure_ascii=False)}


def _stored_item(message: Mapping[str, Any]) -> dict[str, Any]:
    """The item a stored message came from (``responses_items`` made it): its stored form back as the
    one Responses item it was added as."""
    items = _items_of(message)
    content = message.get("content")
    if message.get("role") in ("user", "system", "developer") and isinstance(content, list):
        return {"role": message.get("role"), "content": content}  # the parts exactly as added
    return items[0] if len(items) == 1 else {"type": "message", **dict(message)}
