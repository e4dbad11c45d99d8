"""A compaction's recorded duration covers its whole work up to the write: the summary and the
extraction of what it folds into the journal. Operators read it (``history``, the worker benchmark's
"overhead outside the compaction" is a tick's time minus it), so work the compaction does must not
show up as the tick's. Timed on a clock that moves only when the test says, so no wall-clock limit."""

from __future__ import annotations

from typing import Any

import pytest

from sleepcompact import Memory
from sleepcompact.demo.synthetic import coding_agent
from sleepcompact.services import compaction_writes
from tests.support.clock import stopped_compaction_clock


def test_the_record_counts_the_journal_extraction_as_part_of_the_compaction(
    mem: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    conv = coding_agent(seed=2)
    cid = mem.create_conversation("claude-sonnet-4-5", context_window=8_000)
    mem.append_many(cid, [{"role": "system", "content": conv.system}, *conv.messages])
    clock = stopped_compaction_clock(monkeypatch)
    extract = compaction_writes.journal_entries

    def slow_extraction(*args: Any, **kwargs: Any) -> Any:
        clock.now += 2.5  # the extraction of what is folded takes 2.5 s
        return extract(*args, **kwargs)

    monkeypatch.setattr(compaction_writes, "journal_entries", slow_extraction)
    out = mem.compactions.compact(cid, trigger="sleep")

    assert out.status == "applied"
    (record,) = [h for h in mem.compactions.history(cid) if h.status == "applied"]
    assert record.duration_ms == 2500
