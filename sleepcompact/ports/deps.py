"""What every service is handed: the dependencies ``sleepcompact.bootstrap`` builds once per process."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

from sleepcompact.config import Settings
from sleepcompact.domain.ladder import Policy
from sleepcompact.domain.records import ConversationRecord
from sleepcompact.domain.render_cache import RenderCache
from sleepcompact.hooks import Hooks
from sleepcompact.ports.llm import Summarizer, TextRedactor, TokenCounter
from sleepcompact.ports.queue import TaskQueue
from sleepcompact.ports.uow import UnitOfWork


class Dependencies(Protocol):
    """One object instead of long parameter lists: settings, units of work, tokenizer, summarizer, queue.

    Services take it first and read what they need; nothing in it is built per call.
    """

    @property
    def settings(self) -> Settings:
        """The frozen settings (thresholds, limits, schedule)."""
        ...

    @property
    def policy(self) -> Policy:
        """The ladder's default policy (a conversation's own overrides apply on top)."""
        ...

    @property
    def counter(self) -> TokenCounter:
        """The token counter every figure is counted with."""
        ...

    @property
    def summarizer(self) -> Summarizer:
        """The summarizer the settings chose (built on first use)."""
        ...

    @property
    def queue(self) -> TaskQueue:
        """Where sleep ticks go (the Celery broker unless another queue was given)."""
        ...

    @property
    def hooks(self) -> Hooks:
        """The application's callbacks (``sleepcompact.hooks``); empty unless some were registered."""
        ...

    @property
    def render_cache(self) -> RenderCache:
        """This process's renderings of recently used conversations (``domain.render_cache``)."""
        ...

    def uow(self) -> UnitOfWork:
        """A fresh unit of work for writes (one transaction)."""
        ...

    def read_uow(self) -> UnitOfWork:
        """A fresh unit of work for reads (on SQLite it never waits for the write lock)."""
        ...

    def read_conversation(self, conversation_id: str) -> ConversationRecord | None:
        """The guard's decision read: the conversation row by primary key, no transaction around it."""
        ...

    def factors(self) -> Mapping[str, float]:
        """The calibrated tokenizer factors by model family, cached in-process."""
        ...

    def redactor(self, scope: str | None = None) -> TextRedactor:
        """A fresh redactor for one job, keyed with the deployment's redaction key: what leaves the
        process or becomes memory goes through it. ``scope`` (a conversation id, or an agent) keeps a
        secret's placeholder the same across every job of that scope and different in any other."""
        ...
