"""``sleepcompact mcp``: the console script as an MCP server on stdio, driven by the MCP SDK's own client
(``stdio_client`` and ``ClientSession``) the way Claude Desktop or an IDE starts it.

The database is a temporary SQLite file holding a compacted conversation. A hook module that keeps
printing to stdout is loaded into the server: the client reading stdout reports every line that is not
protocol (to its message handler), and there must be none.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from sleepcompact import Memory
from tests.e2e.conftest import SCRIPT, Cli
from tests.support.noisy_hook import LINE

T = TypeVar("T")
REPO = Path(__file__).resolve().parents[2]
CANARY = "sk-ant-api03-CANARYmcp0a1b2c3d4e5f6g7h8i9j0k1l2m3n4o5p6q7r8"
FACT = f"I started a pottery class on Thursdays at the Clayhouse studio; its door code is {CANARY}."
REMEMBERED = "I live in Lisbon"
TOOLS = {"search_history", "read_archived", "stats", "memories"}


def _compacted(url: str) -> tuple[str, int]:
    """A conversation whose first message (the fact) was archived by a compaction, and that seq."""
    with Memory(database_url=url) as mem:
        cid = mem.create_conversation("claude-haiku-4-5", context_window=4_000)
        (seq,) = mem.append(cid, {"role": "user", "content": FACT}).seqs
        for n in range(40):
            mem.append(cid, {"role": "user", "content": f"Weather note {n}: clouds over the harbour."})
            mem.append(cid, {"role": "assistant", "content": f"Noted weather {n}."})
        assert mem.compactions.compact(cid, force=True).status == "applied"
        assert {m["seq"]: m["state"] for m in mem.export(cid).messages}[seq] == "archived"
        mem.journal.add(cid, REMEMBERED, tags=["fact"])
        mem.memories.consolidate(cid)
    return cid, seq


def _serve(
    cli: Cli, tmp_path: Path, *args: str, work: Callable[[ClientSession], Awaitable[T]]
) -> tuple[T, str]:
    """Start ``sleepcompact mcp ARGS`` under the SDK's client, run ``work`` in an initialized session;
    its result and the server's stderr. Fails if the client saw anything on stdout but protocol."""
    faults: list[Exception] = []

    async def on_message(message: Any) -> None:
        if isinstance(message, Exception):  # a stdout line that is not a JSON-RPC message
            faults.append(message)

    env = {**cli.env(), "SLEEPCOMPACT_HOOKS": "tests.support.noisy_hook:register", "PYTHONPATH": str(REPO)}
    params = StdioServerParameters(command=str(SCRIPT), args=["mcp", *args], env=env, cwd=cli.cwd)
    stderr = tmp_path / "mcp-stderr.log"

    async def run() -> T:
        with stderr.open("w", encoding="utf-8") as errlog:
            async with (
                stdio_client(params, errlog=errlog) as (read, write),
                ClientSession(read, write, message_handler=on_message) as session,
            ):
                await session.initialize()
                return await work(session)

    result = asyncio.run(run())
    assert faults == [], f"the server wrote something other than protocol to stdout: {faults}"
    return result, stderr.read_text(encoding="utf-8")


async def _call(session: ClientSession, tool: str, **arguments: Any) -> tuple[bool, str, Any]:
    """(is_error, text, structured content) of one tool call."""
    result = await session.call_tool(tool, arguments)
    text = "\n".join(getattr(block, "text", "") for block in result.content)
    return bool(result.is_error), text, result.structured_content


def test_a_client_lists_the_tools_and_gets_the_archived_text_back(cli: Cli, tmp_path: Path) -> None:
    assert cli.database_url is not None
    cid, seq = _compacted(cli.database_url)

    async def work(session: ClientSession) -> dict[str, Any]:
        listed = (await session.list_tools()).tools
        return {
            "tools": {t.name: t.input_schema for t in listed},
            "search": await _call(session, "search_history", conversation_id=cid, query="pottery class"),
            "read": await _call(session, "read_archived", conversation_id=cid, seq=seq),
            "stats": await _call(session, "stats", conversation_id=cid),
            "memories": await _call(session, "memories", conversation_id=cid),
            "lisbon": await _call(session, "memories", conversation_id=cid, query="Lisbon"),
            "unknown": await _call(session, "stats", conversation_id="no-such-conversation"),
            "bad seq": await _call(session, "read_archived", conversation_id=cid, seq=9_999),
            "no id": await _call(session, "search_history", query="pottery"),
        }

    got, stderr = _serve(cli, tmp_path, work=work)
    assert set(got["tools"]) == TOOLS
    assert all("conversation_id" in schema["required"] for schema in got["tools"].values())
    assert got["tools"]["search_history"]["required"] == ["conversation_id", "query"]

    is_error, text, _ = got["search"]
    assert not is_error and f"[seq {seq}, user" in text and "Clayhouse studio" in text
    is_error, text, _ = got["read"]
    assert (
        not is_error and "pottery class on Thursdays at the Clayhouse studio" in text and "archived" in text
    )
    assert CANARY not in json.dumps(got), "a secret in the archive left through the MCP server"

    is_error, _, stats = got["stats"]
    assert not is_error and stats["conversation_id"] == cid and stats["compactions"] == 1
    assert stats["messages_by_state"]["archived"] >= 1 and stats["live_tokens"] <= stats["usable"]
    with Memory(database_url=cli.database_url) as mem:
        remembered = [m.to_dict() for m in mem.memories.list(cid)]
    assert not got["memories"][0] and got["memories"][2]["result"] == remembered
    assert [m["content"] for m in got["lisbon"][2]["result"]] == [REMEMBERED]

    is_error, text, _ = got["unknown"]
    assert is_error and "no-such-conversation" in text
    assert got["bad seq"][1].startswith("Error: this conversation has no message with seq 9999")
    assert got["no id"][0], "a call without a conversation must fail when the server has no default"
    # The hook's prints all went to stderr, while the server was built and while it served.
    assert f"{LINE} while registering" in stderr and f"{LINE} 1\n" in stderr


def test_with_a_default_conversation_the_client_may_leave_it_out(cli: Cli, tmp_path: Path) -> None:
    assert cli.database_url is not None
    cid, seq = _compacted(cli.database_url)

    async def work(session: ClientSession) -> dict[str, Any]:
        listed = (await session.list_tools()).tools
        return {
            "schema": {t.name: t.input_schema for t in listed}["read_archived"],
            "read": await _call(session, "read_archived", seq=seq),
            "search": await _call(session, "search_history", query="Clayhouse", limit=1),
            "stats": await _call(session, "stats"),
        }

    got, _ = _serve(cli, tmp_path, "--conversation", cid, work=work)
    assert got["schema"]["required"] == ["seq"]
    assert got["schema"]["properties"]["conversation_id"]["default"] == cid
    assert not got["read"][0] and "Clayhouse studio" in got["read"][1]
    assert not got["search"][0] and f"[seq {seq}," in got["search"][1]
    assert got["stats"][2]["conversation_id"] == cid


def test_an_unknown_default_conversation_fails_before_serving(cli: Cli) -> None:
    result = cli.run("mcp", "--conversation", "no-such-conversation")
    assert result.returncode == 1 and result.stdout == ""
    assert "no-such-conversation" in result.stderr
