"""End-to-end: the lossless export and import through the installed ``sleepcompact`` command.

A conversation is seeded in-process (a 16k free-plan window, compacted twice, with journal entries and
memories), then exported with ``--with-memory`` to a file and imported back: into a fresh database
under its own ids, beside the original with ``--new-ids``, and, exported per agent, under another
tenant. Errors are one line on stderr with exit status 1.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from sleepcompact import Memory
from sleepcompact.demo.synthetic import coding_agent
from tests.e2e.conftest import Cli


def _seed(url: str) -> str:
    conv = coding_agent(seed=1)
    with Memory(database_url=url) as mem:
        cid = mem.create_conversation("claude-sonnet-4-5", plan="free", tenant_id="acme", agent_id="coder")
        mem.append_many(cid, [{"role": "system", "content": conv.system}, *conv.messages])
        assert mem.compactions.compact(cid, force=True).status == "applied"
        mem.append_many(cid, coding_agent(seed=2).messages)
        assert mem.compactions.compact(cid, force=True).status == "applied"
        mem.journal.add(cid, "The user wants every ticket id kept in summaries", source_type="direct")
        mem.memories.consolidate(cid)
    return cid


def _without_ids(doc: dict[str, Any]) -> dict[str, Any]:
    """What a copy must share with its original: every row field but the ids and references."""
    ids = ("id", "compaction_id", "summary_message_id", "previous_compaction_id", "metadata")
    return {
        "conversation": {k: v for k, v in doc["conversation"].items() if k not in ("id", "tenant_id")},
        "appended": doc["appended"],
        "messages": [{k: v for k, v in m.items() if k not in ids} for m in doc["messages"]],
        "compactions": [{k: v for k, v in c.items() if k not in ids} for c in doc["compactions"]],
        "journal": [j["content"] for j in doc["journal"]],
        "memories": [(m["content"], m["kind"], m["invalidated_at"]) for m in doc["memories"]],
    }


def test_export_with_memory_then_import_with_new_ids(cli: Cli, sqlite_url: str, tmp_path: Path) -> None:
    cid = _seed(sqlite_url)
    written = cli.ok("export", cid, "--with-memory", "-o", "f.json", "--json").json()
    assert written["output"] == "f.json" and written["conversations"] == 1 and written["messages"] > 0
    doc = json.loads((tmp_path / "f.json").read_text(encoding="utf-8"))
    assert doc["format"] == "sleepcompact.export/2" and doc["format_version"] == 2
    assert doc["conversation"]["context_window"] == 16_000 and doc["conversation"]["plan"] == "free"
    assert {m["state"] for m in doc["messages"]} >= {"live", "archived"}
    assert doc["journal"] and doc["memories"]

    # Beside the original, ids kept: refused, one line naming the way out.
    refused = cli.run("import", "f.json").typed_error()
    assert f"conversation '{cid}' already exists" in refused and "--new-ids" in refused

    # A copy under another tenant (the same agent would hold the journal and memories twice).
    (copy,) = cli.ok("import", "f.json", "--new-ids", "--tenant", "acme-2", "--json").json()[
        "conversation_ids"
    ]
    assert copy != cid
    again = cli.ok("export", copy, "--with-memory").json()
    assert _without_ids(again) == _without_ids(doc)
    assert cli.ok("stats", copy, "--json").json()["context_window"] == 16_000
    original = cli.ok("context", cid, "--json").json()
    copied = cli.ok("context", copy, "--json").json()
    assert copied["messages"] == original["messages"] and copied["tokens"] == original["tokens"]
    assert cli.ok("history", copy, "--json").json()[-1]["status"] == "applied"

    # Into a fresh database the same file restores the conversation under its own id, exactly.
    fresh = Cli(f"sqlite:///{tmp_path}/fresh.db", tmp_path)
    assert fresh.ok("import", "f.json", "--json").json()["conversation_ids"] == [cid]
    assert fresh.ok("export", cid, "--with-memory").json() == doc
    last = doc["compactions"][-1]["id"]
    assert last in fresh.ok("restore", last).stdout


def test_an_agent_export_moves_to_another_tenant(cli: Cli, sqlite_url: str, tmp_path: Path) -> None:
    cid = _seed(sqlite_url)
    written = cli.ok("export", "--agent", "coder", "--tenant", "acme", "-o", "agent.json", "--json").json()
    assert written["conversations"] == 1
    fresh = Cli(f"sqlite:///{tmp_path}/fresh.db", tmp_path)
    ids = fresh.ok("import", "agent.json", "--tenant-map", "acme=globex", "--json").json()
    assert ids["conversation_ids"] == [cid]
    (row,) = fresh.ok("conversations", "--json").json()
    assert (row["id"], row["tenant_id"], row["agent_id"]) == (cid, "globex", "coder")
    moved = fresh.ok("export", "--agent", "coder", "--tenant", "globex").json()
    assert moved["tenant_id"] == "globex" and moved["memories"]
    assert all(m["tenant_id"] == "globex" for m in moved["memories"])


def test_export_and_import_errors_are_one_line(cli: Cli, sqlite_url: str, tmp_path: Path) -> None:
    cid = _seed(sqlite_url)
    assert "a conversation id or --agent" in cli.run("export").typed_error()
    assert "a conversation id or --agent" in cli.run("export", cid, "--agent", "coder").typed_error()
    assert "no conversation and no memory" in cli.run("export", "--agent", "nobody").typed_error()
    cli.ok("export", cid, "-o", "f.json")
    assert "OLD=NEW" in cli.run("import", "f.json", "--tenant-map", "acme").typed_error()
    assert (
        "cannot be given for a lossless export" in cli.run("import", "f.json", "--plan", "pro").typed_error()
    )

    cli.ok("export", cid, "--shareable", "-o", "shared.json")
    assert "shareable export" in cli.run("import", "shared.json", "--new-ids").typed_error()

    doc = json.loads((tmp_path / "f.json").read_text(encoding="utf-8"))
    (tmp_path / "future.json").write_text(json.dumps({**doc, "format_version": 3}), encoding="utf-8")
    assert "version 3; this release reads versions 1, 2" in cli.run("import", "future.json").typed_error()
    doc["messages"][-1]["compaction_id"] = "cmp_missing"
    (tmp_path / "broken.json").write_text(json.dumps(doc), encoding="utf-8")
    error = cli.run("import", "broken.json", "--new-ids").typed_error()
    assert "broken.json" in error and "cmp_missing" in error
