"""The journal, memories and inline sleep commands, as a user runs them."""

from __future__ import annotations

from sleepcompact import Memory
from sleepcompact.synthetic import coding_agent
from tests.e2e.conftest import Cli


def test_journal_consolidates_into_memories_during_an_inline_sleep(cli: Cli, sqlite_url: str) -> None:
    conv = coding_agent(seed=0)
    with Memory(database_url=sqlite_url) as mem:
        cid = mem.create_conversation(
            "claude-sonnet-4-5", context_window=16_000, tenant_id="t1", agent_id="coder"
        )
        mem.append_many(cid, [{"role": "system", "content": conv.system}, *conv.messages])
    cli.ok("journal", "add", cid, "our CI runs Python 3.11", "--tag", "fact")
    (entry,) = cli.ok("journal", "list", cid, "--json").json()
    assert entry["status"] == "pending" and entry["origin"] == "manual"

    results = cli.ok("sleep", "--conversation", cid, "--inline", "--key", "night-1", "--json").json()
    assert results[cid]["consolidation"]["created"] == 1
    assert results[cid]["compaction"]["status"] == "applied"
    again = cli.ok("sleep", "--conversation", cid, "--inline", "--key", "night-1", "--json").json()
    assert again[cid]["already_done"] is True

    (memory,) = cli.ok("memories", "list", cid, "--json").json()
    assert memory["content"].endswith("our CI runs Python 3.11") and memory["kind"] == "fact"
    assert cli.ok("memories", "search", cid, "python", "--json").json()[0]["id"] == memory["id"]


def test_sleep_without_inline_says_what_is_missing(cli: Cli) -> None:
    result = cli.run("sleep")
    assert result.returncode != 0
    assert "--inline" in result.stderr and result.stdout == ""


def test_a_bad_journal_entry_is_refused(cli: Cli, sqlite_url: str) -> None:
    with Memory(database_url=sqlite_url) as mem:
        cid = mem.create_conversation("claude-sonnet-4-5")
    result = cli.run("journal", "add", cid, "x", "--source-type", "rumour")
    assert result.returncode != 0 and "source_type" in result.stderr
