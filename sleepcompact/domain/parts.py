"""What one appended message becomes: parts, each a row to be, in Anthropic form."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sleepcompact.domain.blocks import Content


@dataclass(frozen=True)
class Part:
    """One row to be: a role, a kind and its content in Anthropic form (``tool_call_id``: the tool
    call id as the caller sent it; the store binds it to a conversation-unique key)."""

    role: str
    kind: str
    content: Content
    tool_call_id: str | None = None
    tool_name: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class NormalizedMessage:
    """An appended message: the verbatim payload and the parts it becomes."""

    raw: str
    parts: tuple[Part, ...]

    @property
    def tool_call_ids(self) -> tuple[str, ...]:
        """Ids of the tool calls this message makes."""
        return tuple(p.tool_call_id for p in self.parts if p.kind == "tool_call" and p.tool_call_id)

    @property
    def tool_result_ids(self) -> tuple[str, ...]:
        """Ids of the tool calls this message answers."""
        return tuple(p.tool_call_id for p in self.parts if p.kind == "tool_result" and p.tool_call_id)
