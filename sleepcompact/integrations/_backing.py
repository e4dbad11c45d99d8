"""What both framework adapters need from sleepcompact: a ``Memory`` built on first use, conversations
created on first write, the guard's latest answer, and archiving the newest message (``pop``).

No framework is imported here.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from typing import Any

from sleepcompact.api import Memory
from sleepcompact.domain.errors import ConversationNotFound, InvalidSetting
from sleepcompact.domain.guard import Action
from sleepcompact.services.prepared import PreparedContext

"""The step name of a pop's compaction record (its trigger is ``clear``: a re-run never undoes it)."""


class Backing:
    """Conversations on a ``Memory`` that is built (``Memory.from_env()``) only when first needed.

    ``model`` and ``context_window`` are what a conversation is created with when an adapter writes to
    one that does not exist yet. ``last_context`` is the guard's latest ``PreparedContext``.
    """

    def __init__(self, memory: Memory | None, *, model: str | None, context_window: int | None) -> None:
        self._memory = memory
        self._lock = threading.Lock()
        self.model = model
        self.context_window = context_window
        self.last_context: PreparedContext | None = None

    @property
    def memory(self) -> Memory:
        """The Memory, built from the environment on first use when none was given."""
        with self._lock:
            if self._memory is None:
                self._memory = Memory.from_env()
            return self._memory

    @property
    def last_action(self) -> Action | None:
        """What the guard did on the latest call (``none``, ``sleep_requested``, ``emergency_compacted``,
        ``fallback_compacted``), or None before the first."""
        return self.last_context.action if self.last_context is not None else None

    def append_many(self, conversation_id: str, messages: Sequence[Mapping[str, Any]]) -> None:
        """Append all or none, creating the conversation first when it does not exist."""
        if not messages:
            return
        try:
            self.memory.append_many(conversation_id, messages, fmt="openai")
        except ConversationNotFound:
            self.create(conversation_id)
            self.memory.append_many(conversation_id, messages, fmt="openai")

    def create(self, conversation_id: str) -> None:
        """Create the conversation (another process creating it meanwhile is fine)."""
        mem = self.memory
        try:
            mem.create_conversation(
                self.model, conversation_id=conversation_id, context_window=self.context_window
            )
        except InvalidSetting as refused:
            try:
                mem.check(conversation_id)  # it exists now: created concurrently, nothing to do
            except ConversationNotFound:
                raise refused from None  # the id or a setting was refused: that error says why

    def prepare(
        self,
        conversation_id: str,
        *,
        system: str | None,
        tools: Sequence[Mapping[str, Any]] | None,
        create: bool = False,
    ) -> PreparedContext | None:
        """The guard's context in OpenAI chat form (``ContextOverflow`` propagates); None when the
        conversation does not exist and ``create`` is false."""
        try:
            ctx = self.memory.prepare_context(conversation_id, system=system, tools=tools, fmt="openai")
        except ConversationNotFound:
            if not create:
                return None
            self.create(conversation_id)
            ctx = self.memory.prepare_context(conversation_id, system=system, tools=tools, fmt="openai")
        self.last_context = ctx
        return ctx


def split_system(
    messages: list[dict[str, Any]], system: str | None
) -> tuple[str | None, list[dict[str, Any]]]:
    """The leading system message's text without the caller's own ``system`` (which the framework
    sends itself), and the other messages. Stored system messages stay; None when nothing is left."""
    if not messages or messages[0].get("role") != "system":
        return None, messages
    text = str(messages[0].get("content") or "")
    if system and text.startswith(system):
        text = text[len(system) :].lstrip("\n")
    return text or None, messages[1:]


def archive_newest(memory: Memory, conversation_id: str) -> tuple[str, dict[str, Any]] | None:
    """Archive the newest live message (``Memory.pop``): the record's id and the message as appended,
    None when the conversation is missing or has nothing live."""
    try:
        return memory.pop(conversation_id)
    except ConversationNotFound:
        return None
