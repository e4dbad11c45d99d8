"""End-to-end: the installed ``sleepcompact`` command, run as a subprocess on real trajectories.

Assertions are on what a user sees: the exit status, stdout and stderr.
In-process ``Memory`` calls are used only to set a database up or to prove
that nothing was written.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from sleepcompact import Memory
from sleepcompact.domain.formats import parse_import
from sleepcompact.domain.validation import anthropic_problems
from tests.e2e.conftest import MINI_JSONL, SWE_SECOND, SWE_SIMPLE, Cli, Result
from tests.integration.conftest import snapshot

CONV_ID = re.compile(r"^conv_[0-9a-f]+$")
CANARY = "CANARYsecret123"


def _parsed(path: Path, *, record: int | None = None) -> list[dict[str, object]]:
    return parse_import(path.read_bytes(), record=record)[0].messages


def _seed(url: str, path: Path = SWE_SIMPLE) -> str:
    """Import a trajectory in-process (setup only) and return its conversation id."""
    with Memory(database_url=url) as mem:
        return mem.import_(path)[0]


# -- init ---------------------------------------------------------------------------------------------


def test_init_on_fresh_database_prints_schema_and_is_idempotent(database_url: str, tmp_path: Path) -> None:
    cli = Cli(database_url, tmp_path)
    first = cli.ok("init")
    match = re.search(r"is at schema (\S+)", first.stdout)
    assert match, first.describe()
    assert "database " in first.stdout
    second = cli.ok("init")
    assert f"is at schema {match.group(1)}" in second.stdout


# -- import / export ----------------------------------------------------------------------------------


def test_import_traj_then_export_has_every_message(db_cli: Cli) -> None:
    imported = db_cli.ok("import", SWE_SIMPLE)
    ids = imported.stdout.split()
    assert len(ids) == 1 and CONV_ID.match(ids[0]), imported.describe()

    exported = db_cli.ok("export", ids[0]).json()
    assert exported["format"] == "sleepcompact.export/2"
    assert exported["conversation"]["id"] == ids[0]
    assert exported["appended"] == _parsed(SWE_SIMPLE)
    assert exported["messages"], "export has no rows"
    assert all(row.get("state") for row in exported["messages"])


def test_import_mini_swe_agent_all_records(cli: Cli) -> None:
    data = cli.ok("import", MINI_JSONL, "--all", "--json").json()
    ids = data["conversation_ids"]
    assert len(ids) == 42
    assert len(set(ids)) == 42
    assert all(CONV_ID.match(i) for i in ids)


def test_import_one_record_with_options_lands_in_stats(cli: Cli) -> None:
    out = cli.ok(
        "import", MINI_JSONL, "--record", "3", "--model", "claude-haiku-4-5",
        "--context-window", "32000", "--tenant", "t1", "--agent", "a1", "--json",
    ).json()  # fmt: skip
    assert len(out["conversation_ids"]) == 1
    cid = out["conversation_ids"][0]

    stats = cli.ok("stats", cid, "--json").json()
    assert stats["context_window"] == 32000
    assert stats["tenant_id"] == "t1"
    assert stats["agent_id"] == "a1"
    assert stats["model"] == "claude-haiku-4-5"
    assert stats["usable"] < 32000

    third = _parsed(MINI_JSONL, record=3)
    assert third != _parsed(MINI_JSONL, record=1)
    assert cli.ok("export", cid).json()["appended"] == third


def test_import_into_named_conversation_then_append_a_second_file(cli: Cli) -> None:
    assert cli.ok("import", SWE_SIMPLE, "--conversation", "my-conv-1").stdout.split() == ["my-conv-1"]
    assert cli.ok("import", SWE_SECOND, "--conversation", "my-conv-1").stdout.split() == ["my-conv-1"]

    exported = cli.ok("export", "my-conv-1").json()
    assert exported["appended"] == _parsed(SWE_SIMPLE) + _parsed(SWE_SECOND)
    assert exported["conversation"]["live_messages"] > len(_parsed(SWE_SIMPLE))


def test_import_all_with_one_conversation_id_is_refused(cli: Cli, sqlite_url: str) -> None:
    result = cli.run("import", MINI_JSONL, "--all", "--conversation", "same-id")
    assert result.returncode != 0, result.describe()
    assert "--conversation names one conversation" in result.stderr
    assert result.stdout == ""
    with Memory(database_url=sqlite_url) as mem:
        assert mem.stats().conversations == 0


def test_import_into_existing_conversation_of_another_tenant_is_refused(cli: Cli, sqlite_url: str) -> None:
    with Memory(database_url=sqlite_url) as mem:
        mem.import_(SWE_SIMPLE, conversation_id="owned-by-default")
        before = mem.export("owned-by-default").appended
    result = cli.run("import", SWE_SECOND, "--conversation", "owned-by-default", "--tenant", "t9")
    assert result.returncode != 0, result.describe()
    assert "tenant_id 'default'" in result.stderr
    with Memory(database_url=sqlite_url) as mem:
        assert mem.stats("owned-by-default").tenant_id == "default"
        assert mem.export("owned-by-default").appended == before


# -- context ------------------------------------------------------------------------------------------


def test_context_json_anthropic_and_openai(cli: Cli, sqlite_url: str) -> None:
    cid = _seed(sqlite_url)

    view = cli.ok("context", cid, "--json").json()
    for key in ("system", "messages", "tokens", "usable", "soft", "hard"):
        assert key in view, key
    assert isinstance(view["system"], str) and view["system"]
    assert view["messages"]
    assert anthropic_problems(view["messages"]) == []
    assert view["tokens"] > 0 and view["soft"] < view["hard"] <= view["usable"]

    openai = cli.ok("context", cid, "--format", "openai", "--json").json()
    msgs = openai["messages"]
    assert isinstance(msgs, list) and msgs[0]["role"] == "system"
    tool_msgs = [m for m in msgs if m["role"] == "tool"]
    assert tool_msgs, "the trajectory has tool results"
    assert all(m.get("tool_call_id") for m in tool_msgs)


# -- append -------------------------------------------------------------------------------------------


def test_append_grows_the_conversation(cli: Cli, sqlite_url: str) -> None:
    cid = _seed(sqlite_url)
    with Memory(database_url=sqlite_url) as mem:
        before = mem.stats(cid)

    cli.ok("append", cid, "--role", "user", "--content", "hello")

    after = cli.ok("stats", cid, "--json").json()
    assert after["live_messages"] == before.live_messages + 1
    assert after["live_tokens"] > before.live_tokens


# -- errors -------------------------------------------------------------------------------------------


def test_append_to_unknown_conversation_fails_cleanly(cli: Cli) -> None:
    result = cli.run("append", "conv_doesnotexist", "--role", "user", "--content", "hi")
    assert result.returncode != 0
    assert "unknown conversation" in result.stderr
    assert result.stdout == ""
    assert "Traceback" not in result.stderr


def test_append_unknown_role_fails_cleanly(cli: Cli, sqlite_url: str) -> None:
    with Memory(database_url=sqlite_url) as mem:
        cid = mem.create_conversation()
    result = cli.run("append", cid, "--role", "robot", "--content", "hi")
    # A role is one of the option's choices (listed in --help): a wrong one is a usage error (exit 2).
    assert result.returncode == 2
    assert "'robot' is not one of" in result.stderr and "--role" in result.stderr
    assert result.stdout == ""
    with Memory(database_url=sqlite_url) as mem:
        assert mem.stats(cid).live_messages == 0


def test_import_malformed_jsonl_names_the_line_and_writes_nothing(
    cli: Cli, sqlite_url: str, tmp_path: Path
) -> None:
    _seed(sqlite_url)
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(b'{"role": "user", "content": "fine"}\n{"role": "assistant", "content": \n')
    with Memory(database_url=sqlite_url) as mem:
        before = snapshot(mem)

    result = cli.run("import", bad)

    assert result.returncode != 0
    assert "line 2" in result.stderr
    assert result.stdout == ""
    assert "Traceback" not in result.stderr
    with Memory(database_url=sqlite_url) as mem:
        assert snapshot(mem) == before


def test_import_missing_file_is_a_readable_error(cli: Cli) -> None:
    result = cli.run("import", "no-such-file.traj")
    assert result.returncode != 0
    assert "no-such-file.traj" in result.stderr
    assert "cannot read" in result.stderr or "No such file" in result.stderr
    assert "Traceback" not in result.stderr
    assert result.stdout == ""


def test_context_unknown_format_is_rejected(cli: Cli, sqlite_url: str) -> None:
    with Memory(database_url=sqlite_url) as mem:
        cid = mem.create_conversation()
    result = cli.run("context", cid, "--format", "xml", "--json")
    assert result.returncode != 0
    assert "--format" in result.stderr
    assert result.stdout == ""


# -- clear --------------------------------------------------------------------------------------------


def test_clear_empties_live_context_but_deletes_nothing(cli: Cli, sqlite_url: str) -> None:
    cid = _seed(sqlite_url)
    original = _parsed(SWE_SIMPLE)

    cleared = cli.ok("clear", cid)
    assert cid in cleared.stdout

    stats = cli.ok("stats", cid, "--json").json()
    assert stats["live_messages"] == 0
    assert stats["live_tokens"] == 0

    exported = cli.ok("export", cid).json()
    assert exported["appended"] == original
    assert exported["messages"] and all(row["state"] != "live" for row in exported["messages"])


# -- demo ---------------------------------------------------------------------------------------------


@pytest.fixture
def demo_cli(tmp_path: Path) -> Cli:
    """No SLEEPCOMPACT_DATABASE_URL: the default ./sleepcompact.db inside tmp_path."""
    return Cli(None, tmp_path, (("COLUMNS", "80"),))


def test_demo_runs_two_nights_on_the_real_worker_and_scheduler(demo_cli: Cli, tmp_path: Path) -> None:
    report = demo_cli.ok("demo", "--json").json()
    # The embedded default: data and broker in SQLite files in the working directory, no server.
    assert (tmp_path / "sleepcompact.db").is_file() and (tmp_path / "sleepcompact-broker.db").is_file()
    rows = {r["label"]: r for r in report["conversations"]}
    assert len(rows) == 4 and all(CONV_ID.match(r["conversation_id"]) for r in rows.values())
    free, pro, model, assistant = (
        rows["coder, free 16k"],
        rows["coder, pro 32k"],
        rows["coder, model 200k"],
        rows["assistant, free 16k"],
    )
    # Night 1 compacted the coders over soft on the worker; each ends inside its budget's target. The
    # 200k coder is far under soft, and nothing summarizes it (the entry-count trigger is off).
    for row in (free, pro):
        assert row["events"][0].startswith("night 1"), row
        assert row["tokens_after"] <= row["usable"] * 0.65 < row["tokens_before"], row
    assert model["events"] == ["under soft: nothing to do"]
    assert model["tokens_after"] == model["tokens_before"]
    # Day 2: the worker answered the guard's sleep request; the guard compacted over hard before the call.
    assert any("guard: sleep_requested -> tick" in e for e in pro["events"]), pro["events"]
    assert any("over hard, guard: emergency_compacted" in e for e in free["events"]), free["events"]
    # The assistant's journal became memories, and the move superseded the old home.
    assert assistant["memories_created"] >= 5 and assistant["memories_superseded"] == 1
    # The free coder's recall tool finds, in the archive, the assertion its context no longer shows.
    recall = report["recall"]
    assert recall["conversation_id"] == free["conversation_id"] and recall["call"]["name"] == "search_history"
    assert any("AssertionError: expected" in line for line in recall["results"]), recall
    assert (tmp_path / "sleepcompact-demo.log").is_file()
    memories = demo_cli.ok("memories", "list", assistant["conversation_id"], "--all", "--json").json()
    assert sum(1 for m in memories if m["invalidated_at"]) == 1
    assert demo_cli.ok("stats", "--json").json()["conversations"] == 4


def _no_secret_and_json_logs(result: Result, what: object) -> None:
    assert CANARY not in result.stdout + result.stderr, what
    # SLEEPCOMPACT_LOG_FORMAT=json: whatever a successful command logs is one JSON object a line
    for line in filter(str.strip, result.stderr.splitlines()):
        assert isinstance(json.loads(line), dict), line


def test_demo_table_shows_ids_and_next_commands_and_no_secret(demo_cli: Cli) -> None:
    # With a key in the environment, the demo's worker, scheduler and table never show it.
    result = demo_cli.with_env(ANTHROPIC_API_KEY=f"sk-ant-api03-{CANARY}").ok("demo")
    _no_secret_and_json_logs(result, "demo")
    assert "coder, model 200k" in result.stdout and "memories" in result.stdout
    assert "sleepcompact restore cmp_" in result.stdout
    assert "sleepcompact memories list conv_" in result.stdout
    # at 80 columns (any pipe) every conversation id is still printed in full
    assert len(set(re.findall(r"conv_[0-9a-f]{16}", result.stdout))) == 4, result.stdout


# -- hygiene ------------------------------------------------------------------------------------------


def test_no_secret_in_output_and_logs_are_json(cli: Cli, sqlite_url: str) -> None:
    _seed(sqlite_url)
    secret = cli.with_env(ANTHROPIC_API_KEY=f"sk-ant-api03-{CANARY}")
    _no_secret_and_json_logs(secret.ok("stats", "--json"), "stats")
