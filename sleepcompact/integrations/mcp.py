"""An MCP server (``sleepcompact mcp``) that gives any MCP client a conversation's archive.

Four tools, each for the conversation the client names (``conversation_id``), or the one the server
was started with (``--conversation``):

* ``search_history(query, limit)`` and ``read_archived(seq, offset)``: the agent's recall tools,
  answered by the same service as ``Memory.handle_tool_call`` (same ranking, paging, redaction, and the
  same readable error for a bad call);
* ``stats()``: the conversation's counts, tokens and budget (``Memory.stats``);
* ``memories(query)``: what the conversation's agent remembers long-term (``mem.memories``).

It runs on stdio: stdout carries the protocol and nothing else. Logs go to stderr (the CLI's logging),
and so does anything printed (a hook's, a library's, from any thread) while the server is built and
while it runs (``stdout_for_protocol_only``). The calls run through ``AsyncMemory``, so the server's
event loop never waits on the database.

Written against the ``mcp`` SDK's ``MCPServer`` (mcp 2; ``FastMCP`` in mcp 1, used when that is what is
installed). Importing this module imports the SDK: ``pip install 'sleepcompact[mcp]'``.
"""

from __future__ import annotations

import importlib
import io
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Annotated, Any, BinaryIO, TextIO, TypeVar

from pydantic import Field  # the tools' argument schemas (pydantic comes with the SDKs, Anthropic's too)

from sleepcompact.aio import AsyncMemory
from sleepcompact.domain.errors import SleepcompactError
from sleepcompact.domain.recall_tools import DEFAULT_LIMIT, MAX_LIMIT, READ, SEARCH, tool_definitions


def _sdk() -> tuple[Any, type[Exception]]:
    """The SDK's server class and the error a tool raises for an answer the client should read."""
    try:
        module = importlib.import_module("mcp.server.mcpserver")
        errors = importlib.import_module("mcp.server.mcpserver.exceptions")
        return module.MCPServer, errors.ToolError
    except ImportError:
        pass
    try:  # mcp 1.x: the same API under its first name
        module = importlib.import_module("mcp.server.fastmcp")
        errors = importlib.import_module("mcp.server.fastmcp.exceptions")
        return module.FastMCP, errors.ToolError
    except ImportError as exc:
        raise ImportError(
            "sleepcompact.integrations.mcp needs the MCP SDK: pip install 'sleepcompact[mcp]'"
        ) from exc


SERVER_CLASS, ToolError = _sdk()
T = TypeVar("T")

INSTRUCTIONS = (
    "sleepcompact keeps long agent conversations inside their context window by archiving old turns. "
    "These tools read one conversation's archive: search_history finds archived messages, "
    "read_archived returns one in full, stats gives its size and budget, memories what its agent "
    "remembers long-term."
)
_WHICH = "The conversation's id."
_DEFAULT = "The conversation's id (default: {cid}, the conversation this server was started for)."

ConversationId = Annotated[str, Field(description=_WHICH, min_length=1)]
Query = Annotated[str, Field(description="Words, identifiers or quoted phrases to look for.")]
Limit = Annotated[int, Field(ge=1, le=MAX_LIMIT, description=f"Most hits (default {DEFAULT_LIMIT}).")]
Seq = Annotated[int, Field(ge=1, description="The seq of the archived message.")]
Offset = Annotated[int, Field(ge=0, description="Character offset to start at (default 0).")]
MemoryQuery = Annotated[
    str | None, Field(description="Only memories containing every word of this (default: all).")
]


def build_server(amem: AsyncMemory, conversation: str | None = None) -> Any:
    """The MCP server (an ``MCPServer``) over ``amem``, serving ``conversation`` when the client names
    none. ``amem`` is closed when the server stops."""

    @asynccontextmanager
    async def lifespan(_server: Any) -> AsyncIterator[None]:
        try:
            yield None
        finally:
            await amem.close()  # waits for the calls still running

    server = SERVER_CLASS(name="sleepcompact", instructions=INSTRUCTIONS, lifespan=lifespan)
    descriptions = {t["name"]: t["description"] for t in tool_definitions("anthropic")}
    for name, tool in _tools(amem).items():
        # Required unless the server has a default conversation; the schema then shows that default.
        if conversation is not None:
            tool.__kwdefaults__ = {**(tool.__kwdefaults__ or {}), "conversation_id": conversation}
        text = descriptions.get(name, tool.__doc__ or "")
        server.tool(name=name, description=" ".join(text.split()))(tool)
    return server


def _tools(amem: AsyncMemory) -> dict[str, Callable[..., Awaitable[Any]]]:
    """The four tools (keyword-only, so ``build_server`` can give ``conversation_id`` a default)."""

    async def search_history(
        *, conversation_id: ConversationId, query: Query, limit: Limit = DEFAULT_LIMIT
    ) -> str:
        return await _recall(amem, conversation_id, SEARCH, {"query": query, "limit": limit})

    async def read_archived(*, conversation_id: ConversationId, seq: Seq, offset: Offset = 0) -> str:
        return await _recall(amem, conversation_id, READ, {"seq": seq, "offset": offset})

    async def stats(*, conversation_id: ConversationId) -> dict[str, Any]:
        """The conversation's counts (messages by state and kind, compactions), its live tokens, its
        context window and budget (usable, soft, hard, target), and how full it is."""
        return (await _answer(amem.stats(conversation_id))).to_dict()

    async def memories(*, conversation_id: ConversationId, query: MemoryQuery = None) -> list[dict[str, Any]]:
        """What the conversation's agent remembers long-term (shared by the agent's conversations), with
        each memory's trust and source; with a query, only memories containing every word of it."""
        found = amem.memories.search(conversation_id, query) if query else amem.memories.list(conversation_id)
        return [m.to_dict() for m in await _answer(found)]

    return {SEARCH: search_history, READ: read_archived, "stats": stats, "memories": memories}


async def _answer(call: Awaitable[T]) -> T:
    """The call's result; a typed error (an unknown conversation...) becomes an error the client reads."""
    try:
        return await call
    except SleepcompactError as exc:
        raise ToolError(str(exc)) from None


async def _recall(amem: AsyncMemory, conversation_id: str, name: str, arguments: dict[str, Any]) -> str:
    """Run one recall tool through ``handle_tool_call`` (as an Anthropic ``tool_use`` block) and return
    its text; a call it answers as an error is raised so the client sees ``isError``."""
    call = {"type": "tool_use", "id": "mcp", "name": name, "input": arguments}
    result = await _answer(amem.handle_tool_call(conversation_id, call))
    text = str(result["content"])
    if result.get("is_error"):
        raise ToolError(text.removeprefix("Error: "))
    return text


class PrintsToStderr(io.TextIOBase):
    """``sys.stdout`` for everything but the protocol: text written to it (``print``) goes to stderr,
    while its binary ``buffer`` stays the process's real stdout, which the SDK takes for the protocol
    (mcp 2 by the file descriptor behind it, mcp 1 by the buffer itself)."""

    def __init__(self, stdout: TextIO, stderr: TextIO) -> None:
        super().__init__()
        self._stdout = stdout
        self._stderr = stderr

    @property
    def buffer(self) -> BinaryIO:
        """The real stdout's buffer: the protocol's wire, for the SDK only."""
        return self._stdout.buffer

    @property
    def encoding(self) -> str:  # type: ignore[override]  # read-only here, as on sys.stdout itself
        """The encoding of stderr, where the text goes."""
        return self._stderr.encoding

    def writable(self) -> bool:
        """Always: it is an output stream."""
        return True

    def write(self, text: str) -> int:
        """Write ``text`` to stderr."""
        return self._stderr.write(text)

    def flush(self) -> None:
        """Flush stderr."""
        self._stderr.flush()


@contextmanager
def stdout_for_protocol_only() -> Iterator[None]:
    """While it lasts, whatever is printed goes to stderr and stdout carries only what the SDK writes
    there: wrap both building the server (a hook module may print on import) and running it (a
    thread may print at any time)."""
    saved = sys.stdout
    sys.stdout = PrintsToStderr(saved, sys.stderr)
    try:
        yield
    finally:
        sys.stdout = saved


def serve(amem: AsyncMemory, conversation: str | None = None) -> None:
    """Serve on stdio until the client closes the connection (then ``amem`` is closed)."""
    with stdout_for_protocol_only():
        build_server(amem, conversation).run("stdio")


__all__ = ["INSTRUCTIONS", "PrintsToStderr", "build_server", "serve", "stdout_for_protocol_only"]
