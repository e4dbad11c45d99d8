"""An admin re-run that explains itself (issue 20, item 3): it keeps the steps of the compaction it
replaces, says which settings changed since, and its dry run shows the live context before and after."""

from __future__ import annotations

from sleepcompact import Memory, Settings
from sleepcompact.demo.synthetic import coding_agent
from sleepcompact.domain.budget import Thresholds


def _llm_free(mem: Memory) -> tuple[str, str]:
    """A 16k conversation whose compaction truncates and masks, with no summary."""
    cid = mem.create_conversation("claude-sonnet-4-5", context_window=16_000)
    mem.append_many(cid, coding_agent(seed=0, big_output_tokens=770).messages)
    outcome = mem.compactions.compact(cid)
    assert outcome.status == "applied" and outcome.compaction_id
    assert "summarize" not in [s["step"] for s in outcome.steps]
    return cid, outcome.compaction_id


def test_rerunning_an_llm_free_compaction_adds_no_summary(memory: Memory) -> None:
    cid, _ = _llm_free(memory)
    preview = memory.compactions.preview_rerun(cid)
    assert preview.new_summary is None and "summarize" not in preview.steps
    result = memory.compactions.rerun(cid)
    assert result.outcome.status == "applied"
    assert "summarize" not in [s["step"] for s in result.outcome.steps]
    assert not any(m["kind"] == "summary" and m["state"] != "archived" for m in memory.export(cid).messages)
    assert result.settings_changed == {}


def test_a_rerun_says_which_settings_changed_since(database_url: str) -> None:
    with Memory(database_url=database_url, auto_migrate=True) as before:
        cid, _ = _llm_free(before)
    changed = Settings(database_url=database_url, summary_instructions="Keep every file path.")
    with Memory(changed) as after:
        preview = after.compactions.preview_rerun(cid)
        result = after.compactions.rerun(cid)
    assert preview.settings_changed == {"summary_instructions": [None, "Keep every file path."]}
    assert result.settings_changed == preview.settings_changed


def test_the_dry_run_diffs_the_live_context_when_a_lower_target_summarizes(database_url: str) -> None:
    with Memory(database_url=database_url, auto_migrate=True) as before:
        cid = before.create_conversation("claude-sonnet-4-5", context_window=12_000)
        before.append_many(cid, coding_agent(seed=0).messages)
        first = before.compactions.compact(cid)
        # At the default target masking and truncating are enough; the last two user turns (whole tool
        # loops here) stay live whatever the target, so what a lower target changes is the older rows.
        assert "mask" in {s["step"] for s in first.steps} and "summarize" not in {
            s["step"] for s in first.steps
        }
        unchanged = before.compactions.preview_rerun(cid)
    # Same settings, same summarizer: the re-run would give the same context, and says so.
    assert unchanged.context_diff == "" and unchanged.settings_changed == {}
    lower = Settings(database_url=database_url, thresholds=Thresholds(target=0.3))
    with Memory(lower) as after:
        preview = after.compactions.preview_rerun(cid)
    assert preview.settings_changed == {"target": [Thresholds().target, 0.3]}
    diff = preview.context_diff.splitlines()
    assert diff[:2] == ["--- live context now", "+++ after the re-run"]
    # A lower target folds more: rows live now leave the context into a summary, whose ledger rolls
    # them up (the summary is new, with its token figure).
    assert any(line.startswith("-@ seq") for line in diff)
    assert any(line.startswith("+@ summary (") for line in diff)
    assert any(line.startswith("+- seq ") and "rolled up" in line for line in diff)


def test_with_changed_settings_the_ladder_decides_the_steps_again(database_url: str) -> None:
    """A summary was forced at first; under looser thresholds the re-run needs none and writes none."""
    with Memory(database_url=database_url, auto_migrate=True) as before:
        cid = before.create_conversation("claude-sonnet-4-5", context_window=16_000)
        before.append_many(cid, coding_agent(seed=0, big_output_tokens=770).messages)
        first = before.compactions.compact(cid, force=True)
        assert "summarize" in [s["step"] for s in first.steps]
        assert "summarize" in before.compactions.preview_rerun(cid).steps  # unchanged: the same steps
    looser = Settings(database_url=database_url, thresholds=Thresholds(soft=0.9, hard=0.95))
    with Memory(looser) as after:
        result = after.compactions.rerun(cid)
    assert set(result.settings_changed) == {"soft", "hard"}
    assert "summarize" not in [s["step"] for s in result.outcome.steps]
