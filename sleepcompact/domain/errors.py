"""Typed errors. Every one says what was wrong, and none leaves a partial write."""

from __future__ import annotations


class SleepcompactError(Exception):
    """Base class of every error sleepcompact raises on purpose."""


class ConversationNotFound(SleepcompactError):
    """The conversation id names no conversation."""

    def __init__(self, conversation_id: str) -> None:
        super().__init__(f"unknown conversation: {conversation_id!r}")
        self.conversation_id = conversation_id


class InvalidMessage(SleepcompactError):
    """A message that cannot be appended. Subclasses name the reason."""


class UnknownRole(InvalidMessage):
    """The role is not one of system, user, assistant, tool."""


class UnknownKind(InvalidMessage):
    """The kind is not one a caller may append (message, context)."""


class EmptyContent(InvalidMessage):
    """The message carries no content at all."""


class ContentTooLarge(InvalidMessage):
    """The message is larger than the configured limit."""

    def __init__(self, size: int, limit: int) -> None:
        super().__init__(f"content is {size} bytes, over the limit of {limit} bytes")
        self.size = size
        self.limit = limit


class InvalidEncoding(InvalidMessage):
    """Text that is not valid UTF-8."""


class MalformedContent(InvalidMessage):
    """Content of the wrong type or shape (a block without a type, arguments that are not JSON...)."""


class OrphanToolResult(InvalidMessage):
    """A tool result whose tool_call_id matches no earlier tool call of the conversation."""

    def __init__(self, tool_call_id: str) -> None:
        super().__init__(
            f"tool result for unknown tool call id {tool_call_id!r}: no earlier tool call has it"
        )
        self.tool_call_id = tool_call_id


class DuplicateToolCall(InvalidMessage):
    """A tool call id repeated while a call with it is still unanswered (an id may be reused once its
    earlier call has its result)."""

    def __init__(self, tool_call_id: str) -> None:
        super().__init__(
            f"tool call id {tool_call_id!r} is already used by a call that has no result yet "
            "(an id may be reused only after its earlier call has its result)"
        )
        self.tool_call_id = tool_call_id


class DuplicateToolResult(InvalidMessage):
    """A result whose id names only calls that already have one (the API accepts one result per call)."""

    def __init__(self, tool_call_id: str) -> None:
        super().__init__(f"tool call {tool_call_id!r} already has a result")
        self.tool_call_id = tool_call_id


class ImportFormatError(SleepcompactError):
    """An import file that cannot be read. `line` is 1-based when the problem has a line."""

    def __init__(self, reason: str, *, line: int | None = None, source: str | None = None) -> None:
        where = ""
        if source:
            where += f"{source}: "
        if line is not None:
            where += f"line {line}: "
        super().__init__(f"{where}{reason}")
        self.reason = reason
        self.line = line
        self.source = source


class InvalidSetting(SleepcompactError):
    """A configuration value (environment variable or argument) that cannot be used."""


class LLMError(SleepcompactError):
    """A summarizer call that failed. ``transient`` errors are worth retrying; the others are not."""

    transient = False


class TransientLLMError(LLMError):
    """Rate limited, overloaded, a server error, a timeout or a dropped connection: retry later."""

    transient = True

    def __init__(self, message: str, *, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class PermanentLLMError(LLMError):
    """Bad request, bad credentials, no permission, no such model, or a spend limit: no retry helps."""


class InvalidSummary(SleepcompactError):
    """A summary that is empty, a refusal, cut off at max_tokens, or longer than what it replaces."""


class ConversationBusy(SleepcompactError):
    """Another worker (or the guard) holds the conversation's lease; try again after it expires."""

    def __init__(self, conversation_id: str, owner: str | None = None) -> None:
        super().__init__(f"conversation {conversation_id} is being compacted by another worker; retry later")
        self.conversation_id = conversation_id
        self.owner = owner


class InvalidScores(SleepcompactError):
    """An importance-rescoring reply that is not a JSON array of one integer per journal entry."""


class ContextOverflow(SleepcompactError):
    """The call cannot fit: what compaction may not touch (system prompt, tools, the current turn) is too big,
    or auto-compaction is off and the context is over the usable budget. All figures in model tokens."""

    def __init__(
        self,
        conversation_id: str,
        *,
        tokens: int,
        usable: int,
        system_tokens: int,
        tools_tokens: int,
        current_turn_tokens: int,
        fixed_tokens: int,
    ) -> None:
        super().__init__(
            f"conversation {conversation_id} needs {tokens} tokens but {usable} are usable: the system "
            f"prompt ({system_tokens}), tools ({tools_tokens}) and current turn ({current_turn_tokens}) "
            f"alone take {fixed_tokens}"
        )
        self.conversation_id = conversation_id
        self.tokens = tokens
        self.usable = usable
        self.system_tokens = system_tokens
        self.tools_tokens = tools_tokens
        self.current_turn_tokens = current_turn_tokens
        self.fixed_tokens = fixed_tokens


class StoreUnavailable(SleepcompactError):
    """The database could not be reached, or the connection was lost mid-transaction (a server restart,
    a terminated backend, a network fault, a full or read-only disk). The transaction was rolled back,
    so nothing of it was written; retrying later is safe. Raised where the store meets its callers
    (the unit of work, the guard's read, startup), never as a raw driver error."""


class StoreBusy(StoreUnavailable):
    """The database stayed locked by another writer past the busy timeout (SQLite's
    ``SLEEPCOMPACT_SQLITE_BUSY_TIMEOUT``; on PostgreSQL a lock or serialization conflict). Nothing was
    written; retry."""


class DatabaseNotInitialized(SleepcompactError):
    """The database has not been migrated to this version's schema; run ``sleepcompact init``."""


class CompactionNotFound(SleepcompactError):
    """The compaction id names no compaction."""


class MemoryNotFound(SleepcompactError):
    """The memory id names no memory of this tenant's agent (another tenant's memory is not found either)."""

    def __init__(self, memory_id: int) -> None:
        super().__init__(f"unknown memory: {memory_id}")
        self.memory_id = memory_id


class NotRestorable(SleepcompactError):
    """Only applied compactions can be restored (or re-run)."""


class NothingToRerun(SleepcompactError):
    """The conversation has no applied compaction since its last clear."""


class RequestTooLarge(SleepcompactError):
    """The protected turns alone carry more attachments or bytes than the provider accepts in one request
    (raised by the guard before the call, with the figures, once the ladder has archived every attachment
    it may: what the protected turns hold is the caller's to shrink)."""

    def __init__(
        self, conversation_id: str, *, attachments: int, size: int, max_attachments: int, max_bytes: int
    ):
        super().__init__(
            f"conversation {conversation_id}: the request would carry {attachments} images or documents and "
            f"{size:,} bytes, over the provider's limits ({max_attachments}, {max_bytes:,} bytes), even with "
            "every attachment before the newest step archived"
        )
        self.conversation_id = conversation_id
        self.attachments = attachments
        self.size = size
        self.max_attachments = max_attachments
        self.max_bytes = max_bytes
