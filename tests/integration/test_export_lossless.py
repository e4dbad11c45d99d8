"""The lossless export (``sleepcompact.export/2``): export, import into another database, export again.

One conversation carries everything an import could lose: a 16k free-plan window with its own
thresholds and summary instructions, stacked compactions (one of them restored, so a reverted record
names a summary row that no longer exists), masked, truncated and archived rows, summaries, and the
agent's journal and memories with their links (a user correction supersedes a memory). Imported on
SQLite and PostgreSQL, with ids kept and with new ones, it must export to the same document and read
the same to the user: context, budget, search, restore.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from sleepcompact import ImportFormatError, InvalidSetting, Memory
from sleepcompact.demo.synthetic import coding_agent
from sleepcompact.domain.budget import Thresholds
from sleepcompact.services import export_document as fields
from sleepcompact.store.export_rows import SqlExportRows
from sleepcompact.store.models import Base

Snap = Callable[[Memory], dict[str, list[tuple[Any, ...]]]]
Doc = dict[str, Any]
MODEL = "claude-sonnet-4-5"
QUERY = "checksum"  # words only in the archived build and dump outputs


@pytest.fixture
def fresh(database_url: str, request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Memory]:
    """A second, empty database on the same engine as ``memory``."""
    if database_url.startswith("sqlite"):
        mem = Memory(database_url=f"sqlite:///{tmp_path}/fresh.db", auto_migrate=True)
        try:
            yield mem
        finally:
            mem.close()
        return
    server = request.getfixturevalue("postgres_server")
    url = server.create_database()
    mem = Memory(database_url=url, auto_migrate=True)
    try:
        yield mem
    finally:
        mem.close()
        server.drop_database(url.rsplit("/", 1)[1])


def _tool_turn(n: int, *, summary: bool = True) -> list[dict[str, Any]]:
    lines = 300 if summary else 1500
    output = "\n".join(f"step {n}-{i}: module_{n}_{i}.o checksum {hex(i * 7919)}" for i in range(lines))
    result: dict[str, Any] = {"type": "tool_result", "tool_use_id": f"call_{n}", "content": output}
    if summary:
        result["tool_summary"] = f"build {n} succeeded"
    call = {"type": "tool_use", "id": f"call_{n}", "name": "bash", "input": {"cmd": f"make build-{n}"}}
    return [
        {"role": "user", "content": f"run build number {n}"},
        {"role": "assistant", "content": [call]},
        {"role": "user", "content": [result]},
        {"role": "assistant", "content": f"build {n} is done"},
    ]


def _build(mem: Memory, *, tenant_id: str = "acme", agent_id: str = "coder") -> str:
    """A conversation with every kind of state an import could lose."""
    cid = mem.create_conversation(
        MODEL,
        tenant_id=tenant_id,
        agent_id=agent_id,
        plan="free",
        thresholds=Thresholds(soft=0.6, hard=0.8, target=0.5),
        policy={"summary_instructions": "Keep every ticket id."},
    )
    conv = coding_agent(seed=0, turns=15)
    mem.append_many(cid, [{"role": "system", "content": conv.system}, *conv.messages])
    applied = []
    for k in range(3):
        mem.append_many(cid, [m for n in range(3) for m in _tool_turn(10 * k + n)])
        outcome = mem.compactions.compact(cid, force=True)
        assert outcome.status == "applied" and outcome.compaction_id, outcome.reason
        applied.append(outcome.compaction_id)
    mem.compactions.restore(applied[-1])
    mem.append_many(cid, [*_tool_turn(99, summary=False), {"role": "user", "content": "now summarize"}])
    assert mem.compactions.compact(cid, force=True).status == "applied"
    mem.journal.add(cid, "The user prefers tabs over spaces in every Python file", source_type="direct")
    mem.memories.consolidate(cid)
    first = mem.memories.list(cid)[0]
    mem.memories.correct(first.id, "The user prefers four spaces, never tabs", conversation_id=cid)
    return cid


def _document(mem: Memory, cid: str) -> Doc:
    """The export as a file would carry it (through JSON, as the CLI writes it)."""
    doc: Doc = json.loads(json.dumps(mem.export(cid, with_memory=True).to_dict()))
    return doc


def _check_source(doc: Doc) -> None:
    states = Counter(m["state"] for m in doc["messages"])
    assert {"live", "masked", "truncated", "archived"} <= set(states), states
    assert any(m["kind"] == "summary" for m in doc["messages"])
    statuses = Counter(c["status"] for c in doc["compactions"])
    assert statuses["applied"] >= 2 and statuses["reverted"] == 1, statuses
    assert any(c["previous_compaction_id"] for c in doc["compactions"])
    assert any(m["superseded_by"] for m in doc["memories"]) and any(m["corrects"] for m in doc["memories"])
    assert doc["journal"] and any(j["memory_id"] for j in doc["journal"])


def test_the_document_covers_every_column() -> None:
    """A column added to a table must be added to the document (or named as left out)."""
    for table, listed, implied in (
        ("conversation", fields.CONVERSATION_FIELDS, fields.NOT_EXPORTED),
        ("message", fields.MESSAGE_FIELDS, ("conversation_id", "raw")),
        ("compaction", fields.COMPACTION_FIELDS, ("conversation_id",)),
        ("journal_entry", fields.JOURNAL_FIELDS, ()),
        ("memory", fields.MEMORY_FIELDS, ()),
    ):
        columns = {c.name for c in Base.metadata.tables[table].columns}
        names = {name for name, _, _ in listed} - {"appended_index"}
        assert names | set(implied) == columns, table


def test_an_import_into_a_fresh_database_restores_everything(memory: Memory, fresh: Memory) -> None:
    cid = _build(memory)
    doc = _document(memory, cid)
    _check_source(doc)
    assert fresh.import_(doc) == [cid]
    assert _document(fresh, cid) == doc
    # What the user sees: the same context, budget and settings.
    assert fresh.context(cid).to_dict() == memory.context(cid).to_dict()
    stats = fresh.stats(cid)
    assert stats.to_dict() == memory.stats(cid).to_dict()
    assert stats.context_window == 16_000
    record = fresh.admin.conversation(cid)
    assert record.plan == "free" and (record.soft_threshold, record.hard_threshold) == (0.6, 0.8)
    assert record.metadata["policy"] == {"summary_instructions": "Keep every ticket id."}
    # The archive search finds the same archived originals, ranked the same.
    hits = fresh.search_history(cid, QUERY, include_live=False)
    assert hits and any(h.state == "archived" for h in hits)
    assert [(h.message_id, h.seq, h.state) for h in hits] == [
        (h.message_id, h.seq, h.state) for h in memory.search_history(cid, QUERY, include_live=False)
    ]
    # Restoring a compaction works on the copy exactly as on the original.
    last = [c["id"] for c in doc["compactions"] if c["status"] == "applied"][-1]
    assert fresh.compactions.restore(last) == memory.compactions.restore(last)
    assert _document(fresh, cid) == _document(memory, cid)
    # The database goes on numbering after the imported ids (PostgreSQL's sequences were moved).
    appended = fresh.append(cid, {"role": "user", "content": "one more"})
    assert appended.seqs == memory.append(cid, {"role": "user", "content": "one more"}).seqs
    other = fresh.create_conversation(MODEL, tenant_id="acme", agent_id="coder")
    fresh.append(other, {"role": "user", "content": "hello"})
    fresh.journal.add(other, "A new fact about the build server", source_type="direct")


def test_new_ids_make_a_copy_beside_the_original(memory: Memory) -> None:
    cid = _build(memory)
    doc = _document(memory, cid)
    (copy,) = memory.import_(doc, new_ids=True, tenant_id="acme-copy")
    assert copy != cid
    assert _document(memory, cid) == doc  # the original is untouched
    again = _document(memory, copy)
    assert again["conversation"]["tenant_id"] == again["memories"][0]["tenant_id"] == "acme-copy"
    assert _normalized(again, tenant="acme") == _normalized(doc, tenant="acme")
    assert _view(memory, copy) == _view(memory, cid)
    hits = memory.search_history(copy, QUERY, include_live=False)
    assert [(h.seq, h.state) for h in hits] == [
        (h.seq, h.state) for h in memory.search_history(cid, QUERY, include_live=False)
    ]
    restored = memory.compactions.restore(again["compactions"][-1]["id"])
    assert restored == (again["compactions"][-1]["id"],)
    memory.compactions.restore(doc["compactions"][-1]["id"])
    assert _normalized(_document(memory, copy), tenant="acme") == _normalized(
        _document(memory, cid), tenant="acme"
    )


def test_new_ids_into_a_fresh_database(memory: Memory, fresh: Memory) -> None:
    cid = _build(memory)
    doc = _document(memory, cid)
    fresh.create_conversation(MODEL)  # the fresh database already numbers a few rows
    fresh.append_many(fresh.admin.conversations()[0].id, [{"role": "user", "content": "x"}] * 3)
    (copy,) = fresh.import_(doc, new_ids=True)
    assert _normalized(_document(fresh, copy)) == _normalized(doc)
    assert _view(fresh, copy) == _view(memory, cid)


def test_a_conversation_id_names_the_copy(memory: Memory) -> None:
    cid = memory.create_conversation(MODEL, plan="pro")
    memory.append_many(cid, [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}])
    doc = memory.export(cid).to_dict()
    assert memory.import_(doc, conversation_id="named-copy") == ["named-copy"]
    copy = memory.export("named-copy").to_dict()
    assert copy["conversation"] == {**doc["conversation"], "id": "named-copy"}
    assert [m["content"] for m in copy["messages"]] == [m["content"] for m in doc["messages"]]
    with pytest.raises(InvalidSetting, match=r"'named-copy' already exists.*never into an existing one"):
        memory.import_(doc, conversation_id="named-copy")
    with pytest.raises(InvalidSetting, match="cannot be given for a lossless export"):
        memory.import_(doc, model="gpt-4o", new_ids=True)


def _view(mem: Memory, cid: str) -> Doc:
    """What the next call gets, without the ids a copy changes (the conversation's, the memories')."""
    view = mem.context(cid).to_dict()
    view.pop("conversation_id")
    view["memories"] = [{k: v for k, v in m.items() if k != "id"} for m in view["memories"]]
    return view


def _normalized(doc: Doc, tenant: str | None = None) -> Doc:
    """The document with every id replaced by its position, so two imports compare field by field;
    a message reference the document does not hold (a deleted summary row) becomes null."""
    convs = {doc["conversation"]["id"]: "C"}
    cmps = {c["id"]: f"K{i}" for i, c in enumerate(doc["compactions"])}
    msgs = {m["id"]: f"M{i}" for i, m in enumerate(doc["messages"])}
    journal = {j["id"]: f"J{i}" for i, j in enumerate(doc["journal"])}
    memories = {m["id"]: f"Y{i}" for i, m in enumerate(doc["memories"])}

    def cmp(value: str | None) -> str | None:
        return None if value is None else cmps[value]

    def owned(row: dict[str, Any]) -> dict[str, Any]:
        return {**row, "tenant_id": tenant} if tenant else row

    out = json.loads(json.dumps(doc))
    out["conversation"] = owned({**out["conversation"], "id": "C"})
    for m in out["messages"]:
        m.update(id=msgs[m["id"]], compaction_id=cmp(m["compaction_id"]))
        if m["kind"] == "summary":
            m["metadata"]["compaction_id"] = cmp(m["metadata"]["compaction_id"])
    for c in out["compactions"]:
        c.update(id=cmps[c["id"]], previous_compaction_id=cmp(c["previous_compaction_id"]))
        c["summary_message_id"] = msgs.get(c["summary_message_id"])
        for p in c["metadata"].get("prior", []):
            p.update(id=msgs.get(p["id"]), compaction_id=cmp(p["compaction_id"]))
    out["journal"] = [
        owned({**j, "id": journal[j["id"]], "conversation_id": convs.get(j["conversation_id"])})
        | {"memory_id": memories.get(j["memory_id"])}
        for j in out["journal"]
    ]
    out["memories"] = [
        owned(
            {
                **m,
                "id": memories[m["id"]],
                "source_journal_ids": [journal[s] for s in m["source_journal_ids"]],
            }
        )
        | {"superseded_by": memories.get(m["superseded_by"]), "corrects": memories.get(m["corrects"])}
        for m in out["memories"]
    ]
    return dict(out)


def test_a_version_1_document_is_still_replayed(memory: Memory) -> None:
    cid = memory.create_conversation("gpt-4o", context_window=32_000)
    memory.append_many(cid, [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}])
    v2 = memory.export(cid).to_dict()
    v1 = {k: v2[k] for k in ("conversation", "appended", "messages", "compactions")}
    (copy,) = memory.import_({"format": "sleepcompact.export/1", **v1})
    assert copy != cid
    assert memory.export(copy).appended == memory.export(cid).appended
    assert memory.admin.conversation(copy).model == "gpt-4o"


@pytest.mark.parametrize(
    ("change", "named"),
    [
        ({"format_version": 3}, "version 3"),
        ({"format": "sleepcompact.export/7", "format_version": 7}, "version 7"),
        ({"format": "sleepcompact.export/9"}, "version 9"),
        ({"format_version": "2"}, "'2'"),
        ({"format": "sleepcompact.export/2+shareable"}, "shareable"),
    ],
)
def test_an_unknown_version_is_refused_by_name(
    memory: Memory, db_snapshot: Snap, change: Doc, named: str
) -> None:
    cid = memory.create_conversation(MODEL)
    memory.append(cid, {"role": "user", "content": "hi"})
    doc = {**memory.export(cid).to_dict(), **change}
    before = db_snapshot(memory)
    with pytest.raises(ImportFormatError, match=named):
        memory.import_(doc, new_ids=True)
    assert db_snapshot(memory) == before


def test_a_shareable_export_is_refused(memory: Memory, db_snapshot: Snap) -> None:
    cid = memory.create_conversation(MODEL)
    memory.append(cid, {"role": "user", "content": "my key is sk-ant-api03-" + "x" * 90})
    shared = memory.export(cid, shareable=True).to_dict()
    assert shared["format"] == "sleepcompact.export/2+shareable"
    before = db_snapshot(memory)
    with pytest.raises(ImportFormatError, match=r"shareable export.*cannot restore"):
        memory.import_(shared, new_ids=True)
    assert db_snapshot(memory) == before


def test_an_id_collision_names_new_ids_and_writes_nothing(memory: Memory, db_snapshot: Snap) -> None:
    cid = _build(memory)
    doc = _document(memory, cid)
    before = db_snapshot(memory)
    with pytest.raises(InvalidSetting, match=f"conversation '{cid}' already exists.*new_ids"):
        memory.import_(doc)
    # Another conversation id, but the rows' ids are taken: refused before anything is written.
    with pytest.raises(InvalidSetting, match=r"message ids .* already used in this database.*new_ids"):
        memory.import_({**doc, "conversation": {**doc["conversation"], "id": "conv_other"}})
    assert db_snapshot(memory) == before


def _corrupt(doc: Doc, where: str) -> Doc:
    doc = json.loads(json.dumps(doc))
    if where == "compaction":
        doc["messages"][-1]["compaction_id"] = "cmp_missing"
    elif where == "lineage":
        doc["compactions"][-1]["previous_compaction_id"] = "cmp_gone"
    elif where == "memory":
        doc["memories"][0]["source_journal_ids"] = [10**9]
    elif where == "type":
        doc["messages"][3]["seq"] = "four"
    elif where == "unknown":
        doc["compactions"][0]["colour"] = "blue"
    elif where == "seq":
        doc["messages"][4]["seq"] = doc["messages"][3]["seq"]
    return doc


@pytest.mark.parametrize(
    ("where", "named"),
    [
        ("compaction", r"messages\[\d+\]\.compaction_id: names compaction 'cmp_missing'"),
        ("lineage", "previous_compaction_id: names compaction 'cmp_gone'"),
        ("memory", r"memories\[0\]\.source_journal_ids: names journal entry 1000000000"),
        ("type", r"messages\[3\]\.seq: must be an integer, got a JSON string"),
        ("unknown", r"compactions\[0\]: unknown field 'colour'"),
        ("seq", "seq .* appears more than once"),
    ],
)
def test_a_corrupted_document_is_refused_and_writes_nothing(
    memory: Memory, fresh: Memory, db_snapshot: Snap, where: str, named: str
) -> None:
    doc = _corrupt(_document(memory, _build(memory)), where)
    before = db_snapshot(fresh)
    with pytest.raises(ImportFormatError, match=named):
        fresh.import_(doc)
    assert db_snapshot(fresh) == before


def test_a_failure_in_the_middle_of_the_import_writes_nothing(
    memory: Memory, fresh: Memory, db_snapshot: Snap, monkeypatch: pytest.MonkeyPatch
) -> None:
    doc = _document(memory, _build(memory))
    before = db_snapshot(fresh)

    def broken(self: SqlExportRows, conversation_id: str, rows: Any) -> None:
        raise RuntimeError("the disk is on fire")  # after the conversation and its messages are in

    monkeypatch.setattr(SqlExportRows, "index_messages", broken)
    with pytest.raises(RuntimeError, match="on fire"):
        fresh.import_(doc, new_ids=True)
    assert db_snapshot(fresh) == before


@pytest.mark.postgres
def test_a_value_too_large_for_its_column_is_a_typed_error(postgres_server: Any, db_snapshot: Snap) -> None:
    url = postgres_server.create_database()
    try:
        with Memory(database_url=url, auto_migrate=True) as mem:
            cid = mem.create_conversation(MODEL)
            mem.append(cid, {"role": "user", "content": "hi"})
            doc = mem.export(cid).to_dict()
            doc["messages"][0]["token_count"] = 2**40  # an INTEGER column on PostgreSQL
            before = db_snapshot(mem)
            with pytest.raises(ImportFormatError, match="does not fit"):
                mem.import_(doc, new_ids=True)
            assert db_snapshot(mem) == before
    finally:
        postgres_server.drop_database(url.rsplit("/", 1)[1])


def test_an_agent_export_restores_all_its_conversations_under_another_tenant(
    memory: Memory, fresh: Memory
) -> None:
    first = _build(memory)
    second = memory.create_conversation("gpt-4o", tenant_id="acme", agent_id="coder", context_window=32_000)
    memory.append_many(
        second, [{"role": "user", "content": "deploy it"}, {"role": "assistant", "content": "ok"}]
    )
    elsewhere = memory.create_conversation(MODEL, tenant_id="acme", agent_id="reviewer")
    exported = memory.export_agent("coder", tenant_id="acme")
    doc = json.loads(json.dumps(exported.to_dict()))
    assert doc["scope"] == "agent" and [c["conversation"]["id"] for c in doc["conversations"]] == [
        first,
        second,
    ]
    assert elsewhere not in json.dumps(doc)

    assert fresh.import_(doc, tenant_map={"acme": "globex"}) == [first, second]
    moved = json.loads(json.dumps(fresh.export_agent("coder", tenant_id="globex").to_dict()))
    assert moved == json.loads(json.dumps(doc).replace('"tenant_id": "acme"', '"tenant_id": "globex"'))
    assert fresh.admin.conversation(second).context_window == 32_000
    recalled = fresh.memories.list(first)
    assert recalled and all((m.tenant_id, m.agent_id) == ("globex", "coder") for m in recalled)
    assert [m.content for m in recalled] == [m.content for m in memory.memories.list(first)]
    assert fresh.context(first).to_dict() == memory.context(first).to_dict()
    with pytest.raises(InvalidSetting, match="tenant map names"):
        fresh.import_(doc, new_ids=True, tenant_map={"initech": "x"})
    # Agent ids move too, with new ids beside the original.
    copies = memory.import_(doc, new_ids=True, agent_id="coder-2")
    assert len(copies) == 2
    assert len(memory.export_agent("coder-2", tenant_id="acme").conversations) == 2
