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

from sleepcompact._version import __version__
from sleepcompact.aio import AsyncMemory
from sleepcompact.api import Memory
from sleepcompact.config import Settings
from sleepcompact.domain.budget import Budget, Thresholds
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
from sleepcompact.domain.guard import Check
from sleepcompact.domain.journal import JournalEntryRecord, MemoryRecord
from sleepcompact.domain.records import ConversationRecord
from sleepcompact.domain.schedule import TickRecord
from sleepcompact.services.batches import BatchReport
from sleepcompact.services.context import ContextView, ConversationStats, DatabaseStats
from sleepcompact.services.conversations import Appended
from sleepcompact.services.guard import PreparedContext
from sleepcompact.services.history import CompactionInfo, SearchHit
from sleepcompact.services.memories import ConsolidationReport
from sleepcompact.services.outcomes import CompactionOutcome
from sleepcompact.services.rerun import RerunPreview, RerunResult
from sleepcompact.services.sleep import TickResult
from sleepcompact.services.sweeps import SweepReport
from sleepcompact.services.transfer import ConversationExport

__all__ = [
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
