"""sleepcompact: sleep-time compaction for long-running LLM agents.

Keep every conversation inside its model's context window without losing what
matters. The public surface is small::

    from sleepcompact import Memory

    mem = Memory.from_env()
    cid = mem.create_conversation(model="claude-sonnet-4-5")
    mem.append(cid, {"role": "user", "content": "hello"})
"""

from sleepcompact.api import DatabaseNotInitialized, Memory
from sleepcompact.config import Settings
from sleepcompact.domain.budget import Budget, Thresholds
from sleepcompact.domain.errors import (
    ContentTooLarge,
    ContextOverflow,
    ConversationBusy,
    ConversationNotFound,
    DuplicateToolCall,
    DuplicateToolResult,
    EmptyContent,
    ImportFormatError,
    InvalidEncoding,
    InvalidMessage,
    InvalidSetting,
    MalformedContent,
    OrphanToolResult,
    SleepcompactError,
    UnknownKind,
    UnknownRole,
)
from sleepcompact.domain.guard import Check
from sleepcompact.services.context import ContextView
from sleepcompact.services.conversations import Appended
from sleepcompact.services.guard import PreparedContext

__all__ = [
    "Appended",
    "Budget",
    "Check",
    "ContentTooLarge",
    "ContextOverflow",
    "ContextView",
    "ConversationBusy",
    "ConversationNotFound",
    "DatabaseNotInitialized",
    "DuplicateToolCall",
    "DuplicateToolResult",
    "EmptyContent",
    "ImportFormatError",
    "InvalidEncoding",
    "InvalidMessage",
    "InvalidSetting",
    "MalformedContent",
    "Memory",
    "OrphanToolResult",
    "PreparedContext",
    "Settings",
    "SleepcompactError",
    "Thresholds",
    "UnknownKind",
    "UnknownRole",
]
