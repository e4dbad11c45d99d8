"""The admin re-run on real SQLite and PostgreSQL: from the archive, one compaction, dry run, refusals."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from sleepcompact import Memory
from sleepcompact.demo.synthetic import coding_agent
from sleepcompact.domain.errors import CompactionNotFound, NothingToRerun, NotRestorable

Snap = Callable[[Memory], dict[str, list[tuple[Any, ...]]]]


def _twice_compacted(mem: Memory) -> tuple[str, str, str]:
    conv = coding_agent(seed=0)
    cid = mem.create_conversation("claude-sonnet-4-5", context_window=8_000)
    half = len(conv.messages) // 2
    mem.append_many(cid, conv.messages[:half])
    first = mem.compactions.compact(cid, force=True)
    mem.append_many(cid, conv.messages[half:])
    second = mem.compactions.compact(cid, force=True)
    assert first.status == second.status == "applied"
    assert first.compaction_id and second.compaction_id
    return cid, first.compaction_id, second.compaction_id


def test_a_dry_run_shows_old_and_new_summaries_and_writes_nothing(memory: Memory, db_snapshot: Snap) -> None:
    cid, first, second = _twice_compacted(memory)
    before = db_snapshot(memory)
    preview = memory.compactions.preview_rerun(cid)
    assert db_snapshot(memory) == before
    assert list(preview.undone) == [second, first]  # newest first, like restore
    assert preview.tokens_restored > preview.tokens_now > 0
    assert preview.tokens_after < preview.tokens_restored
    assert len(preview.old_summaries) == 2 and preview.new_summary
    # The dry run predicts the real run: same undo, same layout.
    result = memory.compactions.rerun(cid)
    assert list(result.undone) == [second, first]
    assert result.outcome.status == "applied" and result.outcome.trigger == "admin_rerun"
    assert abs(result.outcome.tokens_after - preview.tokens_after) <= preview.tokens_after * 0.2


def test_a_rerun_recompacts_from_the_archive_and_loses_nothing(memory: Memory) -> None:
    cid, first, second = _twice_compacted(memory)
    appended_before = memory.export(cid).appended
    result = memory.compactions.rerun(cid)
    history = {h.id: h for h in memory.compactions.history(cid)}
    assert history[first].status == history[second].status == "reverted"
    new = history[result.outcome.compaction_id]
    assert new.status == "applied" and new.trigger == "admin_rerun"
    assert memory.export(cid).appended == appended_before
    stats = memory.stats(cid)
    assert stats.tokens <= stats.target
    # Restoring the re-run brings back the state it started from (everything restored).
    memory.compactions.restore(new.id)
    assert memory.stats(cid).tokens > stats.tokens


def test_rerunning_one_compaction_undoes_it_and_later_ones_only(memory: Memory) -> None:
    cid, first, second = _twice_compacted(memory)
    result = memory.compactions.rerun(compaction_id=second)
    assert list(result.undone) == [second]
    statuses = {h.id: h.status for h in memory.compactions.history(cid)}
    assert statuses[first] == "applied" and statuses[second] == "reverted"


def test_a_clear_is_never_undone_by_a_rerun(memory: Memory) -> None:
    cid, first, _ = _twice_compacted(memory)
    memory.clear(cid)
    with pytest.raises(NothingToRerun):
        memory.compactions.rerun(cid)
    with pytest.raises(NotRestorable, match="clear"):
        memory.compactions.rerun(compaction_id=first)


def test_unknown_ids_are_refused(memory: Memory) -> None:
    with pytest.raises(CompactionNotFound):
        memory.compactions.rerun(compaction_id="cmp_missing")
    cid = memory.create_conversation("claude-sonnet-4-5")
    with pytest.raises(NothingToRerun):
        memory.compactions.preview_rerun(cid)
