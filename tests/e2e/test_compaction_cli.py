"""End-to-end: compaction through the installed ``sleepcompact`` command, as a user runs it.

A synthetic coding-agent conversation (about 38k tokens) is seeded in-process into an 8k window, far
over its target, so the ladder truncates, masks and summarizes with the offline summarizer. Every
assertion is on what the command prints (exit status, stdout, stderr); in-process ``Memory`` calls only
seed the database or prove that a dry run wrote nothing.
"""

from __future__ import annotations

import re
from typing import Any

from sleepcompact import Memory
from sleepcompact.demo.synthetic import SyntheticConversation, coding_agent
from tests.e2e.conftest import Cli

WINDOW = 8000
# Seed 1 leaves a truncated tool output in the kept turns, so a placeholder survives the summary.
SEED = 1
PLACEHOLDER = re.compile(r"read_archived\(seq=(\d+)\)")


def _seed(url: str) -> tuple[str, SyntheticConversation]:
    conv = coding_agent(seed=SEED)
    with Memory(database_url=url) as mem:
        cid = mem.create_conversation("claude-sonnet-4-5", context_window=WINDOW)
        mem.append_many(cid, [{"role": "system", "content": conv.system}, *conv.messages])
    return cid, conv


def _text(content: Any) -> str:
    """Every string inside some content (text blocks, tool results), joined."""
    if isinstance(content, str):
        return content
    if isinstance(content, dict):
        return "\n".join(_text(v) for v in content.values())
    if isinstance(content, list):
        return "\n".join(_text(v) for v in content)
    return ""


def test_dry_run_prints_the_plan_and_writes_nothing(cli: Cli, sqlite_url: str) -> None:
    cid, _ = _seed(sqlite_url)
    with Memory(database_url=sqlite_url) as mem:
        before = mem.stats(cid)

    out = cli.ok("compact", cid, "--dry-run", "--json").json()

    assert out["status"] == "dry_run"
    assert out["compaction_id"] is None
    plan = out["plan"]
    assert plan["tokens_before"] == before.live_tokens
    assert plan["fits"] is True
    steps = [s["step"] for s in plan["steps"]]
    assert "summarize" in steps and {"truncate", "mask"} & set(steps), steps
    assert all(s["tokens_saved"] > 0 and s["messages"] > 0 for s in plan["steps"])
    summarize = plan["summarize"]
    assert summarize["messages"] > 0 and summarize["rolling"] is False
    assert summarize["first_seq"] <= summarize["last_seq"]
    assert 0 < summarize["max_tokens"] < summarize["tokens_replaced"]
    assert out["tokens_after"] < out["tokens_before"]
    with Memory(database_url=sqlite_url) as mem:
        assert mem.compactions.history(cid) == []
        assert mem.stats(cid) == before


def test_compact_unknown_conversation_fails_clearly(cli: Cli) -> None:
    result = cli.run("compact", "conv_does_not_exist", "--json")
    assert result.typed_error() == "error: unknown conversation: 'conv_does_not_exist'"


def test_compact_history_search_and_restore(cli: Cli, sqlite_url: str) -> None:
    cid, conv = _seed(sqlite_url)
    original = cli.ok("export", cid).json()
    rows_by_seq = {row["seq"]: row for row in original["messages"]}

    # compact: applied, smaller, under the target that stats reports
    out = cli.ok("compact", cid, "--json").json()
    assert out["status"] == "applied", out
    assert out["tokens_after"] < out["tokens_before"]
    assert out["summary"] and out["summary_tokens"] > 0
    compaction_id = out["compaction_id"]
    stats = cli.ok("stats", cid, "--json").json()
    assert stats["live_tokens"] == out["tokens_after"]
    assert stats["target"] == out["target"]
    assert stats["tokens"] <= stats["target"], stats
    assert stats["messages_by_state"].get("archived", 0) > 0

    # history: the compaction with its figures
    (entry,) = cli.ok("history", cid, "--json").json()
    assert entry["id"] == compaction_id
    assert entry["status"] == "applied" and entry["trigger"] == "manual"
    assert entry["tokens_before"] == out["tokens_before"]
    assert entry["tokens_after"] == out["tokens_after"]
    assert entry["tokens_saved"] == out["tokens_before"] - out["tokens_after"] > 0
    assert [s["step"] for s in entry["steps"]] == [s["step"] for s in out["steps"]]
    assert entry["summary"] == out["summary"]
    assert entry["summarizer_provider"] == "offline"

    # a placeholder in the live context points to the original of its row
    context = cli.ok("context", cid, "--json").json()
    seqs = PLACEHOLDER.findall(_text(context["messages"]))
    assert seqs, "no masked or truncated placeholder is left in the live context"
    seq = int(seqs[0])
    (hit,) = cli.ok("search", cid, f"seq:{seq}", "--json").json()
    assert hit["seq"] == seq
    assert hit["state"] in ("masked", "truncated")
    assert hit["content"] == rows_by_seq[seq]["content"]
    assert "read_archived(" not in _text(hit["content"])

    # an identifier from the summarized prefix is found in an archived original
    ticket = conv.identifiers[5]
    hits = cli.ok("search", cid, ticket, "--json").json()
    archived = [h for h in hits if h["state"] == "archived"]
    assert archived, hits
    assert all(ticket in _text(h["content"]) for h in archived)
    assert all(h["content"] == rows_by_seq[h["seq"]]["content"] for h in archived)

    # restore: the exact rows from before; a second restore is refused
    restored = cli.ok("restore", compaction_id)
    assert compaction_id in restored.stdout
    after = cli.ok("export", cid).json()
    assert after["messages"] == original["messages"]
    assert after["appended"] == original["appended"]

    again = cli.run("restore", compaction_id)
    assert again.returncode != 0, again.describe()
    assert compaction_id in again.stderr
    assert "only applied compactions can be restored" in again.stderr
    assert "Traceback" not in again.stderr


def test_batch_needs_a_summarizer_with_a_batch_api(cli: Cli, sqlite_url: str) -> None:
    cid, _ = _seed(sqlite_url)
    result = cli.run("batch", "submit", cid)
    assert result.returncode != 0
    assert "no batch API" in result.stderr and result.stdout == ""
    assert cli.ok("history", cid, "--json").json() == []


def test_check_prints_the_guards_decision_and_writes_nothing(cli: Cli, sqlite_url: str) -> None:
    cid, _ = _seed(sqlite_url)
    decision = cli.ok("check", cid, "--json").json()
    assert decision["decision"] == "compact_now" and decision["usable"] == 6000
    assert decision["tokens"] > decision["hard"] > decision["soft"]
    text = cli.ok("check", cid).stdout
    assert text.startswith("compact_now:") and "6,000 usable" in text
    assert cli.ok("history", cid, "--json").json() == []
    assert cli.run("check", "conv_missing").typed_error() == "error: unknown conversation: 'conv_missing'"


def test_rerun_dry_run_then_rerun(cli: Cli, sqlite_url: str) -> None:
    cid, _ = _seed(sqlite_url)
    first = cli.ok("compact", cid, "--json").json()["compaction_id"]
    before = cli.ok("export", cid).json()
    dry = cli.ok("rerun", cid, "--dry-run")
    assert "dry run, nothing written" in dry.stdout and first in dry.stdout
    assert "old summary" in dry.stdout and "new summary" in dry.stdout
    assert cli.ok("export", cid).json() == before  # nothing written
    done = cli.ok("rerun", "--compaction", first, "--json").json()
    assert done["undone"] == [first] and done["outcome"]["trigger"] == "admin_rerun"
    statuses = [h["status"] for h in cli.ok("history", cid, "--json").json()]
    assert sorted(statuses) == ["applied", "reverted"]
    both = cli.run("rerun", cid, "--compaction", first)
    assert both.returncode != 0
    missing = cli.run("rerun", "--compaction", "cmp_missing")
    assert missing.typed_error() == "error: unknown compaction: 'cmp_missing'"
