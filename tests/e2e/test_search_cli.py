"""``sleepcompact search`` as a user runs it: ranked hits with one snippet each, and every filter flag."""

from __future__ import annotations

import json
from pathlib import Path

from sleepcompact import Memory
from tests.e2e.conftest import Cli

DIARY = {
    "Dana": {
        "name": "Dana",
        "history": {
            "2024-05-04": [
                {"query": "I cooked mapo tofu tonight.", "response": "Sounds spicy! Did you like it?"},
                {"query": "Yes, very spicy.", "response": "Great."},
            ],
            "2024-05-05": [
                {"query": "I cooked a lemon tart for my sister.", "response": "How did it turn out?"}
            ],
            "2024-05-06": [{"query": "Nothing cooked today, we ate out.", "response": "Where did you go?"}],
        },
    }
}


def _diary(cli: Cli, tmp_path: Path) -> str:
    path = tmp_path / "diary.json"
    path.write_text(json.dumps(DIARY), encoding="utf-8")
    (cid,) = cli.ok("import", path, "--json").json()["conversation_ids"]
    return str(cid)


def test_search_ranks_a_question_and_prints_one_snippet_per_hit(cli: Cli, tmp_path: Path) -> None:
    cid = _diary(cli, tmp_path)
    hits = cli.ok("search", cid, "What did I cook on May 5th?", "--json").json()
    assert hits[0]["snippet"] == "I cooked a lemon tart for my sister."
    assert hits[0]["created_at"].startswith("2024-05-05") and isinstance(hits[0]["score"], float)
    assert len(hits) > 1  # any word may match: the other days' cooking follows
    text = cli.ok("search", cid, "lemon tart").stdout
    assert text.startswith("seq 5 user/message (live, ") and "I cooked a lemon tart for my sister." in text
    assert cli.ok("search", cid, "zebra").stdout.strip() == "no match"


def test_search_flags_narrow_the_hits(cli: Cli, tmp_path: Path) -> None:
    cid = _diary(cli, tmp_path)
    every = cli.ok("search", cid, "cooked spicy", "--json").json()
    assert len(every) == 5
    assert len(cli.ok("search", cid, "cooked spicy", "--limit", "2", "--json").json()) == 2
    roles = {h["role"] for h in cli.ok("search", cid, "cooked spicy", "--role", "assistant", "--json").json()}
    assert roles == {"assistant"}
    window = cli.ok("search", cid, "cooked spicy", "--seq", "2-5", "--json").json()
    assert [h["seq"] for h in window] and all(2 <= h["seq"] <= 5 for h in window)
    assert [h["seq"] for h in cli.ok("search", cid, "cooked", "--seq", "5", "--json").json()] == [5]
    assert all(h["seq"] >= 5 for h in cli.ok("search", cid, "cooked spicy", "--seq", "5-", "--json").json())
    day = cli.ok("search", cid, "cooked", "--since", "2024-05-05", "--until", "2024-05-05", "--json").json()
    assert [h["snippet"] for h in day] == ["I cooked a lemon tart for my sister."]
    assert {
        h["created_at"][:10]
        for h in cli.ok("search", cid, "cooked", "--since", "2024-05-06", "--json").json()
    } == {"2024-05-06"}


def test_search_budget_keeps_the_best_hits_that_fit(cli: Cli, tmp_path: Path) -> None:
    cid = _diary(cli, tmp_path)
    every = cli.ok("search", cid, "cooked spicy", "--json").json()
    fitted = cli.ok("search", cid, "cooked spicy", "--budget", "12", "--json").json()
    assert 0 < len(fitted) < len(every) and fitted == every[: len(fitted)]
    assert cli.ok("search", cid, "cooked spicy", "--budget", "0", "--json").json() == []


def test_search_by_tool_and_bad_flags(cli: Cli, sqlite_url: str) -> None:
    mem = Memory(database_url=sqlite_url)
    try:
        cid = mem.create_conversation("claude-sonnet-4-5")
        mem.append_many(
            cid,
            [
                {"role": "user", "content": "Find invoice 77."},
                {
                    "role": "assistant",
                    "content": [
                        {"type": "tool_use", "id": "t1", "name": "lookup_invoice", "input": {"order": 77}}
                    ],
                },
                {
                    "role": "user",
                    "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "invoice 77: 120"}],
                },
                {"role": "assistant", "content": "Invoice 77 totals 120."},
            ],
        )
    finally:
        mem.close()
    hits = cli.ok("search", cid, "invoice", "--tool", "lookup_invoice", "--json").json()
    assert hits and {h["tool_name"] for h in hits} == {"lookup_invoice"}
    assert cli.run("search", cid, "invoice", "--seq", "two-three").returncode == 2
    assert cli.run("search", cid, "invoice", "--since", "05/05/2024").returncode == 2
    assert cli.run("search", cid, "invoice", "--role", "robot").returncode == 2
    assert cli.run("search", cid, "invoice", "--limit", "0").returncode == 2
    missing = cli.run("search", "no-such-conversation", "invoice")
    assert missing.returncode == 1 and "no-such-conversation" in missing.stderr
