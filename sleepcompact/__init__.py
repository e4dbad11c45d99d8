"""sleepcompact: sleep-time compaction for long-running LLM agents.

Keep every conversation inside its model's context window without losing what matters. The public
surface is small::

    from sleepcompact import Memory

    mem = Memory.from_env()
    cid = mem.create_conversation(model="claude-sonnet-4-5")
    mem.append(cid, {"role": "user", "content": "hello"})
    ctx = mem.prepare_context(cid, system="You are a careful agent.")  # before every LLM call

Everything else is reached from ``Memory``'s namespaces (``mem.compactions``, ``mem.journal``,
``mem.memories``, ``mem.sleep``, ``mem.admin``); every result is a typed, frozen object with
``to_dict()``. As a library, sleepcompact logs nowhere unless the application configures logging
(``sleepcompact.logs`` says how).
"""

from typing import TYPE_CHECKING, Any

from sleepcompact._lazy import resolve
from sleepcompact._version import __version__
from sleepcompact.domain.errors import (
    CompactionNotFound,
    ContentTooLarge,
    ContextOverflow,
    ConversationBusy,
    ConversationNotFound,
    DatabaseNotInitialized,
    DuplicateToolCall,
    DuplicateToolResult,
    EmptyContent,
    ImportFormatError,
    InvalidEncoding,
    InvalidMessage,
    InvalidSetting,
    LLMError,
    MalformedContent,
    MemoryNotFound,
    NothingToRerun,
    NotRestorable,
    OrphanToolResult,
    PermanentLLMError,
    RequestTooLarge,
    SleepcompactError,
    StoreBusy,
    StoreUnavailable,
    TransientLLMError,
    UnknownKind,
    UnknownRole,
)

if TYPE_CHECKING:  # the real names for type checkers; at run time they load on first use
    from sleepcompact.aio import AsyncMemory
    from sleepcompact.api import Memory
    from sleepcompact.config import Settings
    from sleepcompact.domain.budget import Budget, Thresholds
    from sleepcompact.domain.guard import Check
    from sleepcompact.domain.journal import JournalEntryRecord, MemoryRecord
    from sleepcompact.domain.records import ConversationRecord
    from sleepcompact.domain.schedule import TickRecord
    from sleepcompact.services.batches import BatchReport
    from sleepcompact.services.context import ContextView, ConversationStats, DatabaseStats
    from sleepcompact.services.conversations import Appended
    from sleepcompact.services.history import CompactionInfo, SearchHit
    from sleepcompact.services.memories import ConsolidationReport
    from sleepcompact.services.outcomes import CompactionOutcome
    from sleepcompact.services.prepared import PreparedContext
    from sleepcompact.services.rerun import RerunPreview, RerunResult
    from sleepcompact.services.sleep import TickResult
    from sleepcompact.services.sweeps import SweepReport
    from sleepcompact.services.transfer import AgentExport, ConversationExport

# ``import sleepcompact`` stays light (the version and the errors): the rest, and SQLAlchemy, Celery or
# the SDKs behind it, load when a name is first used (PEP 562), so a CLI or an application that only
# catches our errors does not pay for the whole stack.
_LAZY: dict[str, str] = {
    "AsyncMemory": "sleepcompact.aio",
    "Memory": "sleepcompact.api",
    "Settings": "sleepcompact.config",
    "Budget": "sleepcompact.domain.budget",
    "Thresholds": "sleepcompact.domain.budget",
    "Check": "sleepcompact.domain.guard",
    "JournalEntryRecord": "sleepcompact.domain.journal",
    "MemoryRecord": "sleepcompact.domain.journal",
    "ConversationRecord": "sleepcompact.domain.records",
    "TickRecord": "sleepcompact.domain.schedule",
    "BatchReport": "sleepcompact.services.batches",
    "ContextView": "sleepcompact.services.context",
    "ConversationStats": "sleepcompact.services.context",
    "DatabaseStats": "sleepcompact.services.context",
    "Appended": "sleepcompact.services.conversations",
    "PreparedContext": "sleepcompact.services.prepared",
    "CompactionInfo": "sleepcompact.services.history",
    "SearchHit": "sleepcompact.services.history",
    "ConsolidationReport": "sleepcompact.services.memories",
    "CompactionOutcome": "sleepcompact.services.outcomes",
    "RerunPreview": "sleepcompact.services.rerun",
    "RerunResult": "sleepcompact.services.rerun",
    "TickResult": "sleepcompact.services.sleep",
    "SweepReport": "sleepcompact.services.sweeps",
    "ConversationExport": "sleepcompact.services.transfer",
    "AgentExport": "sleepcompact.services.transfer",
}


def __getattr__(name: str) -> Any:
    return resolve(globals(), __name__, _LAZY, name)


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


__all__ = [
    "AgentExport",
    "Appended",
    "AsyncMemory",
    "BatchReport",
    "Budget",
    "Check",
    "CompactionInfo",
    "CompactionNotFound",
    "CompactionOutcome",
    "ConsolidationReport",
    "ContentTooLarge",
    "ContextOverflow",
    "ContextView",
    "ConversationBusy",
    "ConversationExport",
    "ConversationNotFound",
    "ConversationRecord",
    "ConversationStats",
    "DatabaseNotInitialized",
    "DatabaseStats",
    "DuplicateToolCall",
    "DuplicateToolResult",
    "EmptyContent",
    "ImportFormatError",
    "InvalidEncoding",
    "InvalidMessage",
    "InvalidSetting",
    "JournalEntryRecord",
    "LLMError",
    "MalformedContent",
    "Memory",
    "MemoryNotFound",
    "MemoryRecord",
    "NotRestorable",
    "NothingToRerun",
    "OrphanToolResult",
    "PermanentLLMError",
    "PreparedContext",
    "RequestTooLarge",
    "RerunPreview",
    "RerunResult",
    "SearchHit",
    "Settings",
    "SleepcompactError",
    "StoreBusy",
    "StoreUnavailable",
    "SweepReport",
    "Thresholds",
    "TickRecord",
    "TickResult",
    "TransientLLMError",
    "UnknownKind",
    "UnknownRole",
    "__version__",
]
