"""What the guard returns (``prepare_context``): the call to send, its figures, and what it took."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sleepcompact.domain.cache_breakpoints import CacheTTL, with_breakpoints
from sleepcompact.domain.guard import Action
from sleepcompact.services.context import ContextView


@dataclass(frozen=True)
class PreparedContext:
    """What the next LLM call should send, how big it is, and what the guard did to get there."""

    view: ContextView
    tools: list[dict[str, Any]] | None
    action: Action
    compaction_id: str | None = None
    reason: str = ""
    cache_ttl: CacheTTL | None = None  # breakpoints in request() (Anthropic format); None: none added

    @property
    def system(self) -> str | None:
        """The system prompt (Anthropic format; in OpenAI format it is the first message)."""
        return self.view.system

    @property
    def messages(self) -> list[dict[str, Any]]:
        """The messages, in the requested format."""
        return self.view.messages

    @property
    def tokens(self) -> int:
        """Everything the call carries (system, tools, memories, messages), in the model's tokens."""
        return self.view.tokens

    @property
    def usable(self) -> int:
        """The usable budget (window minus output reserve)."""
        return self.view.budget.usable

    def request(self) -> dict[str, Any]:
        """Keyword arguments for ``anthropic.Anthropic().messages.create`` (or OpenAI's ``messages``).

        In Anthropic format, with prompt caching on (``SLEEPCOMPACT_PROMPT_CACHE``, default 5m), it carries
        cache breakpoints (``domain.cache_breakpoints``); OpenAI caches the same stable prefix by itself."""
        if self.view.format == "openai":
            out: dict[str, Any] = {"messages": self.messages}
            if self.tools:
                out["tools"] = self.tools
            return out
        out = {"messages": self.messages}
        if self.system:
            out["system"] = self.system
        if self.tools:
            out["tools"] = self.tools
        if self.cache_ttl is None:
            return out
        return with_breakpoints(out, self.cache_ttl, marked=self.view.marked)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return {
            **self.view.to_dict(),
            "tools": self.tools,
            "action": self.action,
            "compaction_id": self.compaction_id,
            "reason": self.reason,
        }
