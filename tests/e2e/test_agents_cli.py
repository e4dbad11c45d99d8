"""The journal, memories and inline sleep commands, as a user runs them."""

from __future__ import annotations

from pathlib import Path

from sleepcompact import Memory
from sleepcompact.demo.synthetic import coding_agent
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

    args = ("sleep", "--conversation", cid, "--now", "--inline", "--key", "night-1", "--json")
    results = cli.ok(*args).json()["results"]
    assert results[cid]["consolidation"]["created"] == 1
    assert results[cid]["compaction"]["status"] == "applied"
    again = cli.ok(*args).json()["results"]
    assert again[cid]["already_done"] is True
    # Slept since its last activity: a sweep (without --now) finds nothing due.
    assert cli.ok("sleep", "--inline", "--json").json()["results"] == {}
    # Asked about by name, the sweep says why it did nothing (it used to print "examined 0").
    report = cli.ok("sleep", "--conversation", cid, "--inline", "--json").json()
    assert report["results"] == {} and report["examined"] == 1
    assert report["skipped"][cid].startswith(("already slept tonight", "no activity since its last sleep"))
    text = cli.ok("sleep", "--conversation", cid, "--inline").stdout
    assert f"{cid}: not due," in text and "--now ticks it anyway" in text

    (memory,) = cli.ok("memories", "list", cid, "--json").json()
    assert memory["content"].endswith("our CI runs Python 3.11") and memory["kind"] == "fact"
    assert cli.ok("memories", "search", cid, "python", "--json").json()[0]["id"] == memory["id"]


def test_sleep_queues_on_the_embedded_broker_without_a_worker_running(
    cli: Cli, sqlite_url: str, tmp_path: Path
) -> None:
    with Memory(database_url=sqlite_url) as mem:
        cid = mem.create_conversation("claude-sonnet-4-5")
    broker = cli.with_env(SLEEPCOMPACT_BROKER_URL=f"sqla+sqlite:///{tmp_path}/broker.db")
    result = broker.ok("sleep")
    assert "queued nightly sweep" in result.stdout and "worker" in result.stdout
    queued = broker.ok("sleep", "--now", "--conversation", cid, "--json").json()
    assert queued["enqueued"] == 1
    with Memory(database_url=sqlite_url) as mem:
        assert [t.status for t in mem.sleep.ticks(cid)] == ["queued"]
    # --key names a tick, so it only goes with --now; an unknown conversation is refused.
    assert broker.run("sleep", "--key", "k").returncode != 0
    missing = broker.run("sleep", "--now", "--conversation", "conv_missing")
    assert missing.returncode != 0 and "conv_missing" in missing.stderr


def test_a_bad_journal_entry_is_refused(cli: Cli, sqlite_url: str) -> None:
    with Memory(database_url=sqlite_url) as mem:
        cid = mem.create_conversation("claude-sonnet-4-5")
    result = cli.run("journal", "add", cid, "x", "--source-type", "rumour")
    assert result.returncode == 2 and "--source-type" in result.stderr and "'rumour'" in result.stderr
