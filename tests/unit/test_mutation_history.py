"""Restore's refusals, where mutation testing found the suite blind (docs/mutation.md). On a throwaway
SQLite file: no server.

A restore of an id that names no compaction says which id, and a second restore of the same compaction
says it is already reverted; neither moves a row.
"""

from __future__ import annotations

import pytest

from sleepcompact import CompactionNotFound, Memory, NotRestorable
from sleepcompact.demo.synthetic import coding_agent


def test_an_unknown_compaction_is_named_in_the_refusal(mem: Memory) -> None:
    with pytest.raises(CompactionNotFound) as raised:
        mem.compactions.restore("cmp_0000000000000000")
    assert str(raised.value) == "unknown compaction: 'cmp_0000000000000000'"


def test_a_reverted_compaction_is_not_restored_twice(mem: Memory) -> None:
    conv = coding_agent(seed=0)
    cid = mem.create_conversation("claude-sonnet-4-5", context_window=8_000)
    mem.append_many(cid, [{"role": "system", "content": conv.system}, *conv.messages])
    outcome = mem.compactions.compact(cid, trigger="manual")
    assert outcome.status == "applied" and outcome.compaction_id
    assert mem.compactions.restore(outcome.compaction_id) == (outcome.compaction_id,)
    before = mem.export(cid).messages
    with pytest.raises(NotRestorable) as raised:
        mem.compactions.restore(outcome.compaction_id)
    assert str(raised.value) == (
        f"compaction {outcome.compaction_id} is reverted; only applied compactions can be restored"
    )
    assert mem.export(cid).messages == before
