"""Import real agent trajectories, export them, and get back exactly what went in."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from sleepcompact import ImportFormatError, Memory
from sleepcompact.domain.formats import parse_import
from sleepcompact.domain.validation import anthropic_problems

DATA = Path(__file__).resolve().parents[3] / "shared" / "data" / "trajectories"
TRAJS = sorted((DATA / "swe-agent").glob("*.traj"))
MINI = DATA / "mini-swe-agent-dev.jsonl"
Snap = Callable[[Memory], dict[str, list[tuple[Any, ...]]]]


def test_the_trajectory_data_is_there() -> None:
    assert len(TRAJS) == 22
    assert MINI.exists()


def test_every_swe_agent_trajectory_round_trips(memory: Memory) -> None:
    for path in TRAJS:
        expected = parse_import(path.read_bytes(), source=str(path))[0]
        (cid,) = memory.import_(path)
        exported = memory.export(cid)
        assert list(exported.appended) == expected.messages, path.name
        conv = memory.admin.conversation(cid)
        assert conv.live_tokens == sum(r["live_tokens"] for r in exported.messages)
        view = memory.context(cid)
        assert anthropic_problems(view.messages) == [], path.name


def test_every_mini_swe_agent_record_round_trips(memory: Memory) -> None:
    ids = memory.import_(MINI, all_records=True)
    assert len(ids) == 42
    lines = [json.loads(line) for line in MINI.read_text().splitlines() if line.strip()]
    for cid, record in zip(ids, lines, strict=True):
        exported = memory.export(cid)
        assert [(m["role"], m["content"]) for m in exported.appended] == [
            (m["role"], m["content"]) for m in record["messages"]
        ]
        conv = memory.admin.conversation(cid)
        assert conv.metadata["instance_id"] == record["instance_id"]
        assert conv.metadata["submission"] == record["submission"]
        assert conv.model == record["model"]


def test_an_export_imports_back_into_an_identical_history(memory: Memory) -> None:
    source = next(p for p in TRAJS if p.name.startswith("function_calling_simple"))
    (cid,) = memory.import_(source, model="claude-sonnet-4-5")
    exported = memory.export(cid)
    # A lossless export keeps its ids; beside the original it is imported as a copy under new ones.
    (copy,) = memory.import_(exported.to_dict(), new_ids=True)
    again = memory.export(copy)
    assert again.appended == exported.appended
    strip = ("id",)  # the rows' own ids; everything else, their times included, comes back as it was
    assert [{k: v for k, v in r.items() if k not in strip} for r in again.messages] == [
        {k: v for k, v in r.items() if k not in strip} for r in exported.messages
    ]


def test_import_options_set_the_budget(memory: Memory) -> None:
    (cid,) = memory.import_(MINI, record=2, model="claude-haiku-4-5", context_window=32_000, tenant_id="t9")
    stats = memory.stats(cid)
    assert stats.context_window == 32_000
    assert stats.usable == 32_000 - 8_000
    assert stats.tenant_id == "t9"
    assert stats.model == "claude-haiku-4-5"


def test_a_plan_caps_the_imported_window(memory: Memory) -> None:
    (cid,) = memory.import_(TRAJS[0], plan="free")
    assert memory.stats(cid).context_window == 16_000


def test_broken_jsonl_names_the_line_and_writes_nothing(memory: Memory, db_snapshot: Snap) -> None:
    memory.import_(TRAJS[0])
    before = db_snapshot(memory)
    bad = (
        b'{"role": "user", "content": "one"}\n{"role": "assistant", "content": "two"}\n'
        b'{"role": "user", "content": \n'
    )
    with pytest.raises(ImportFormatError, match="line 3"):
        memory.import_(bad)
    assert db_snapshot(memory) == before


def test_invalid_utf8_in_an_import_names_the_line_and_writes_nothing(
    memory: Memory, db_snapshot: Snap
) -> None:
    before = db_snapshot(memory)
    bad = b'{"role": "user", "content": "ok"}\n{"role": "assistant", "content": "caf\xe9"}\n'
    with pytest.raises(ImportFormatError, match="line 2"):
        memory.import_(bad)
    assert db_snapshot(memory) == before


def test_a_bad_message_late_in_an_import_stores_none_of_it(memory: Memory, db_snapshot: Snap) -> None:
    before = db_snapshot(memory)
    messages = [{"role": "user", "content": f"message {i}"} for i in range(50)]
    messages.append({"role": "wizard", "content": "nope"})
    with pytest.raises(ImportFormatError, match="wizard"):
        memory.import_(messages)
    assert db_snapshot(memory) == before


def test_importing_into_an_existing_conversation_appends(memory: Memory) -> None:
    cid = memory.create_conversation("gpt-4o", conversation_id="shared-1")
    memory.append(cid, {"role": "user", "content": "first"})
    (same,) = memory.import_([{"role": "assistant", "content": "second"}], conversation_id="shared-1")
    assert same == cid
    assert [m["content"] for m in memory.export(cid).appended] == ["first", "second"]
