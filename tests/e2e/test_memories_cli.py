"""Correcting and deleting memories from the command line, as a user does it."""

from __future__ import annotations

from sleepcompact import Memory
from tests.e2e.conftest import Cli


def _remembered(url: str) -> tuple[str, dict[str, int]]:
    """A conversation of tenant t1's agent a1 whose memory holds two statements; their ids by content."""
    with Memory(database_url=url) as mem:
        cid = mem.create_conversation("claude-sonnet-4-5", tenant_id="t1", agent_id="a1")
        for fact in ("[2024-03-02] Dana lives in Paris.", "[2024-03-02] Dana has a cat called Miso."):
            mem.journal.add(cid, fact, tags=["fact"], origin="pre_compaction")
        mem.memories.consolidate(cid)
        return cid, {m.content: m.id for m in mem.memories.list(cid)}


def test_correct_and_delete_archive_the_memory_and_list_all_shows_why(db_cli: Cli) -> None:
    cid, ids = _remembered(str(db_cli.database_url))
    paris, cat = ids["[2024-03-02] Dana lives in Paris."], ids["[2024-03-02] Dana has a cat called Miso."]

    new = db_cli.ok("memories", "correct", str(paris), "Dana lives in Lyon.", "--conversation", cid, "--json")
    corrected = new.json()
    assert corrected["content"] == "Dana lives in Lyon." and corrected["corrects"] == paris
    assert corrected["source_trust"] == 0.9 and corrected["invalidated_at"] is None
    text = db_cli.ok("memories", "delete", str(cat), "--tenant", "t1", "--agent", "a1")
    assert f"memory {cat} deleted (deleted by user)" in text.stdout

    valid = db_cli.ok("memories", "list", cid, "--json").json()
    assert [m["content"] for m in valid] == ["Dana lives in Lyon."]
    everything = {m["id"]: m for m in db_cli.ok("memories", "list", cid, "--all", "--json").json()}
    assert everything[paris]["invalidation_reason"] == "corrected by user"
    assert everything[paris]["superseded_by"] == corrected["id"]
    assert everything[cat]["invalidation_reason"] == "deleted by user"
    table = db_cli.ok("memories", "list", cid, "--all").stdout
    assert "no: deleted by user" in table and "no: corrected by user" in table
    assert db_cli.ok("memories", "search", cid, "Miso", "--json").json() == []


def test_unknown_ids_and_other_tenants_memories_exit_1_and_change_nothing(db_cli: Cli) -> None:
    cid, ids = _remembered(str(db_cli.database_url))
    paris = ids["[2024-03-02] Dana lives in Paris."]
    for args in (
        ("memories", "delete", str(paris)),  # the default tenant's agent has no such memory
        ("memories", "delete", str(paris), "--tenant", "t2", "--agent", "a1"),
        ("memories", "correct", str(paris + 100), "x", "--conversation", cid),
        ("memories", "delete", str(paris), "--json", "--tenant", "t1", "--agent", "a2"),
    ):
        result = db_cli.run(*args)
        assert result.returncode == 1, result.describe()
        assert "unknown memory" in result.stderr and "Traceback" not in result.stderr
    both = db_cli.run("memories", "delete", str(paris), "--conversation", cid, "--tenant", "t1")
    assert both.returncode == 1 and "not both" in both.stderr
    assert [m["id"] for m in db_cli.ok("memories", "list", cid, "--json").json()] == sorted(ids.values())
    assert db_cli.run("memories", "delete", "not-a-number").returncode == 2  # a usage error
