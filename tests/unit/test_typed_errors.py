"""The typed errors say what went wrong in one line a user can act on, and carry its figures.

The CLI prints the message, the API returns it, and callers branch on the attributes (a retry after
``retry_after``, the lease owner, the tool call id to fix): mutation testing found none of these read by
any test (docs/mutation.md).
"""

from __future__ import annotations

import pytest

from sleepcompact.domain.errors import (
    ConversationBusy,
    DuplicateToolCall,
    DuplicateToolResult,
    ImportFormatError,
    InvalidMessage,
    LLMError,
    MemoryNotFound,
    OrphanToolResult,
    RequestTooLarge,
    SleepcompactError,
    TransientLLMError,
)


@pytest.mark.parametrize(
    ("error", "message"),
    [
        (
            OrphanToolResult("call_9"),
            "tool result for unknown tool call id 'call_9': no earlier tool call has it",
        ),
        (
            DuplicateToolCall("call_9"),
            "tool call id 'call_9' is already used by a call that has no result yet "
            "(an id may be reused only after its earlier call has its result)",
        ),
        (DuplicateToolResult("call_9"), "tool call 'call_9' already has a result"),
    ],
)
def test_a_rejected_tool_message_names_its_call_id(error: InvalidMessage, message: str) -> None:
    assert str(error) == message
    assert error.tool_call_id == "call_9"  # type: ignore[attr-defined]
    assert isinstance(error, SleepcompactError)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({}, "not JSON"),
        ({"line": 3}, "line 3: not JSON"),
        ({"line": 0}, "line 0: not JSON"),  # a line is named even when it is 0
        ({"source": "log.jsonl"}, "log.jsonl: not JSON"),
        ({"source": "log.jsonl", "line": 3}, "log.jsonl: line 3: not JSON"),
        ({"source": ""}, "not JSON"),
    ],
)
def test_an_import_error_says_where_then_why(kwargs: dict[str, object], message: str) -> None:
    error = ImportFormatError("not JSON", **kwargs)  # type: ignore[arg-type]
    assert str(error) == message
    assert (error.reason, error.line, error.source) == ("not JSON", kwargs.get("line"), kwargs.get("source"))


def test_a_transient_llm_error_says_when_to_retry() -> None:
    error = TransientLLMError("rate limited", retry_after=12.5)
    assert (str(error), error.retry_after, error.transient) == ("rate limited", 12.5, True)
    assert TransientLLMError("overloaded").retry_after is None
    assert LLMError("bad key").transient is False


def test_a_busy_conversation_names_the_worker_that_holds_it() -> None:
    error = ConversationBusy("conv-1", owner="worker-7:1234")
    assert str(error) == "conversation conv-1 is being compacted by another worker; retry later"
    assert (error.conversation_id, error.owner) == ("conv-1", "worker-7:1234")
    assert ConversationBusy("conv-1").owner is None


def test_a_request_too_large_gives_its_figures_against_the_limits() -> None:
    error = RequestTooLarge(
        "conv-1", attachments=120, size=40_000_000, max_attachments=100, max_bytes=32_000_000
    )
    assert str(error) == (
        "conversation conv-1: the request would carry 120 images or documents and 40,000,000 bytes, "
        "over the provider's limits (100, 32,000,000 bytes), "
        "even with every attachment before the newest step archived"
    )
    assert (error.conversation_id, error.attachments, error.size, error.max_attachments, error.max_bytes) == (
        "conv-1",
        120,
        40_000_000,
        100,
        32_000_000,
    )


def test_an_unknown_memory_is_named_by_its_id() -> None:
    error = MemoryNotFound(42)
    assert (str(error), error.memory_id) == ("unknown memory: 42", 42)
