"""The ladder's preserve window and its boundary, where mutation testing found the suite blind
(docs/mutation.md): how many of the newest messages a compaction keeps verbatim, that the last two
user turns are never folded, that a summary never splits an appended message, and the plan's figures
once the real summary's size is known.

Pure: rows built as the store hands them to the planner (``tests/unit/test_ladder.py``'s builder).
"""

from __future__ import annotations

from dataclasses import replace

from sleepcompact.domain.ladder import Policy, Snapshot, plan, with_summary_size
from sleepcompact.domain.records import MessageRecord
from sleepcompact.domain.steps import _placeholder
from tests.unit.test_ladder import Rows, budget_for, count, filler, result


def _snapshot(rows: list[MessageRecord]) -> Snapshot:
    return Snapshot("conv-1", 0, rows[-1].seq, tuple(rows))


def _folded(rows: list[MessageRecord], force: bool, window: int = 200_000) -> tuple[set[int], set[int]]:
    """(seqs the plan summarizes, seqs that stay live) of a plan over ``rows``."""
    p = plan(_snapshot(rows), budget_for(window), Policy(), count, force_summary=force)
    folded = {r.seq for r in p.summary.rows} if p.summary is not None else set()
    return folded, {r.seq for r in rows if r.seq not in folded and r.kind != "summary"}


def _turns(b: Rows, n: int) -> Rows:
    """``n`` user turns of four rows: the task, the assistant's text and tool call, the result."""
    for t in range(n):
        b.user(f"task {t}: check module {t}")
        b.assistant(f"reading module {t}", (f"c{t}", "read_file", {"path": f"m{t}.py"}))
        b.results(result(f"c{t}", "read_file", f"def f{t}(): return {t}"))
    return b


def test_an_entry_count_compaction_keeps_exactly_the_newest_twenty_messages() -> None:
    rows = _turns(Rows().system("You are a careful agent."), 10).rows
    folded, live = _folded(rows, force=True)
    newest = [r.seq for r in rows[-20:]]
    assert sorted(live - {rows[0].seq}) == newest  # 5 whole turns: the 20th newest row opens a turn
    assert folded == {r.seq for r in rows[1:-20]}


def test_the_kept_window_never_starts_inside_an_assistant_message_nor_on_a_tool_result() -> None:
    b = _turns(Rows().system("You are a careful agent."), 10)
    b.assistant("all done").assistant("anything else?")
    rows = b.rows
    # The 20th newest row is the tool call (part 1) of an assistant message, the 19th its result.
    assert (rows[-20].role, rows[-20].part, rows[-19].kind) == ("assistant", 1, "tool_result")
    folded, live = _folded(rows, force=True)
    assert sorted(live - {rows[0].seq}) == [r.seq for r in rows[-18:]]  # from the next user turn
    messages: list[list[int]] = []  # the seqs of each appended message (its parts 0..n-1)
    for r in rows[1:]:
        if r.part == 0:
            messages.append([])
        messages[-1].append(r.seq)
    for seqs in messages:
        assert set(seqs) <= folded or set(seqs) <= live, f"message {seqs} split"
    assert rows[-20].seq in folded and rows[-21].seq in folded, "a message is folded whole"


def test_a_forced_compaction_never_folds_the_last_two_user_turns() -> None:
    b = Rows().system("rules").user("first task")
    for i in range(15):
        b.assistant(f"step {i}", (f"a{i}", "bash", {"cmd": f"make {i}"}))
        b.results(result(f"a{i}", "bash", f"ok {i}"))
    b.user("second task")
    for i in range(15):
        b.assistant(f"step {i}", (f"b{i}", "bash", {"cmd": f"make {i}"}))
        b.results(result(f"b{i}", "bash", f"ok {i}"))
    p = plan(_snapshot(b.rows), budget_for(200_000), Policy(), count, force_summary=True)
    assert p.summary is None and p.is_noop, p.reason


def test_a_forced_compaction_after_a_summary_folds_all_but_the_newest_twenty() -> None:
    # The live rows after an earlier compaction inside one agent loop: its summary, the loop's later
    # steps (no user turn among them), then the user's new message.
    b = Rows().system("rules").user("placeholder for the summary")
    for i in range(15):
        b.assistant(f"step {i}", (f"a{i}", "bash", {"cmd": f"make {i}"}))
        b.results(result(f"a{i}", "bash", f"ok {i}"))
    b.user("and now the docs")
    summary = replace(b.rows[1], kind="summary", content="S " * 50)
    rows = [b.rows[0], summary, *b.rows[2:]]
    p = plan(_snapshot(rows), budget_for(200_000), Policy(), count, force_summary=True)
    assert p.summary is not None and p.summary.previous == summary
    live = [r for r in rows[2:] if r not in p.summary.rows]
    assert live == rows[-19:]  # the 20th newest row is a tool result: the window starts after it
    assert [r.seq for r in p.summary.rows] == [r.seq for r in rows[2:-19]]


def test_a_compaction_over_the_target_keeps_about_35_percent_of_the_usable_window_verbatim() -> None:
    b = Rows().system("You are a helpful assistant.")
    for t in range(60):
        b.user(f"question {t}: " + filler(150, word=f"q{t}"))
        b.assistant(f"answer {t}: " + filler(150, word=f"a{t}"))
    budget = budget_for(32_000)
    assert not budget.effective(sum(r.live_tokens for r in b.rows)) <= budget.target
    p = plan(_snapshot(b.rows), budget, Policy(), count)
    assert p.summary is not None and p.fits, p.reason
    kept = [r for r in b.rows[1:] if r not in p.summary.rows]
    kept_tokens = sum(r.live_tokens for r in kept)
    preserve = int(budget.usable * 0.35 / budget.safety_factor)  # 35% of usable, in counted tokens
    assert len(kept) >= 20
    assert preserve <= kept_tokens < preserve + max(r.live_tokens for r in kept), (kept_tokens, preserve)
    assert kept == b.rows[-len(kept) :]


def test_the_plans_figures_follow_the_real_summary_size() -> None:
    b = Rows().system("rules")
    for t in range(10):
        b.user(f"task {t}")
        b.assistant(f"reading {t}", (f"c{t}", "read_file", {"path": f"m{t}.py"}))
        b.results(result(f"c{t}", "read_file", filler(3_000, word=f"m{t}")))
    p = plan(_snapshot(b.rows), budget_for(16_000), Policy(), count, force_summary=True)
    assert p.summary is not None
    others = [s for s in p.steps if s.step != "summarize"]
    assert others, "some LLM-free step ran too"
    real = with_summary_size(p, 100)
    assert real.tokens_after == p.tokens_after - p.summary.max_tokens + 100
    assert [s for s in real.steps if s.step != "summarize"] == others
    (summarized,) = [s for s in real.steps if s.step == "summarize"]
    assert summarized.tokens_saved == p.summary.tokens_replaced - 100
    assert summarized.messages == len(p.summary.rows)
    assert real.summary == p.summary and real.changes == p.changes


def test_a_plan_without_a_summary_keeps_its_figures_whatever_the_size_given() -> None:
    rows = Rows().user("hi").assistant("hello").rows
    p = plan(_snapshot(rows), budget_for(16_000), Policy(), count)
    assert p.summary is None
    assert with_summary_size(p, 5_000) is p


def test_a_huge_last_observation_keeps_the_command_it_answers() -> None:
    # SWE-agent's text format: observations come back as user messages, which no tool-output step may
    # touch. The newest one alone is over the window: the compaction keeps it (truncated by the last
    # rung) and the assistant message it answers, and folds everything before.
    b = Rows().system("You are an autonomous programmer.").user("Fix the failing test in utils.py.")
    for i in range(6):
        b.assistant(f"DISCUSSION\nlook at part {i}\n```\ncat part{i}.py\n```")
        b.user(f"OBSERVATION:\n{filler(300, word=f'p{i}')}")
    b.assistant("DISCUSSION\nrun everything\n```\npytest -x\n```")
    b.user("OBSERVATION:\n" + filler(20_000, word="log"))
    command, observation = b.rows[-2], b.rows[-1]
    budget = budget_for(16_000)
    p = plan(_snapshot(b.rows), budget, Policy(), count)
    assert p.summary is not None, p.reason
    assert [r.seq for r in p.summary.rows] == [r.seq for r in b.rows[1:-2]]
    changed = {c.seq: c for c in p.changes}
    assert command.seq not in changed, "the command stays as it was"
    assert changed[observation.seq].state == "truncated"
    assert p.fits, p.reason


def test_a_planned_summary_is_30_percent_of_what_it_replaces_within_the_cap_and_never_under_64() -> None:
    policy = Policy()
    usable = 6_000  # cap 600
    assert policy.summary_cap(usable) == 600
    assert [policy.summary_size(usable, n) for n in (10, 100, 213, 214, 220, 1_000, 2_000, 50_000)] == [
        64,
        64,
        64,
        64,
        66,
        300,
        600,
        600,
    ]


def _tool_loop(outputs: int, tokens: int) -> list[MessageRecord]:
    b = Rows().system("You are a careful agent.")
    for t in range(outputs):
        b.user(f"task {t}: inspect module {t}")
        b.assistant(f"reading module {t}", (f"c{t}", "read_file", {"path": f"m{t}.py"}))
        b.results(result(f"c{t}", "read_file", filler(tokens, word=f"m{t}")))
        b.assistant(f"module {t} looks fine")
    return b.rows


def test_the_mask_step_reports_every_output_it_masked_and_what_each_saved() -> None:
    rows = _tool_loop(10, 900)
    p = plan(Snapshot("conv-1", 0, rows[-1].seq, tuple(rows)), budget_for(16_000), Policy(), count)
    masked = [c for c in p.changes if c.state == "masked"]
    assert len(masked) >= 3
    assert {c.step for c in masked} == {"mask"}
    before = {r.seq: r.live_tokens for r in rows}
    steps = [s for s in p.steps if s.step == "mask"]
    assert sum(s.messages for s in steps) == len(masked)
    assert sum(s.tokens_saved for s in steps) == sum(before[c.seq] - c.live_tokens for c in masked)
    assert p.tokens_before - p.tokens_after == sum(s.tokens_saved for s in p.steps)


def test_an_output_that_costs_exactly_its_placeholder_is_not_masked() -> None:
    rows = _tool_loop(10, 900)
    first = next(i for i, r in enumerate(rows) if r.kind == "tool_result")
    row = rows[first]
    for _ in range(5):  # the placeholder names the output's size: find the size that costs as much
        _view, cost = _placeholder(row, count)
        row = replace(row, token_count=cost, live_tokens=cost)
    assert _placeholder(row, count)[1] == row.live_tokens
    rows[first] = row
    p = plan(Snapshot("conv-1", 0, rows[-1].seq, tuple(rows)), budget_for(16_000), Policy(), count)
    masked = {c.seq for c in p.changes if c.state == "masked"}
    assert masked, "the other old outputs are masked"
    assert rows[first].seq not in masked, "masking it would save nothing"


def test_an_output_exactly_at_the_cap_is_not_cut() -> None:
    budget = budget_for(16_000)
    cap = Policy().cap(budget.usable)
    rows = _tool_loop(10, 900)
    first = next(i for i, r in enumerate(rows) if r.kind == "tool_result")
    rows[first] = replace(rows[first], content=filler(cap, word="big"), token_count=cap, live_tokens=cap)
    p = plan(Snapshot("conv-1", 0, rows[-1].seq, tuple(rows)), budget, Policy(), count)
    assert "truncate" not in {s.step for s in p.steps}, "at the cap, not over it: never cut"
    assert {c.state for c in p.changes} == {"masked"}


def test_the_truncate_step_reports_every_output_it_cut_and_what_each_saved() -> None:
    rows = _tool_loop(6, 3_000)
    p = plan(Snapshot("conv-1", 0, rows[-1].seq, tuple(rows)), budget_for(24_000), Policy(), count)
    cut = [c for c in p.changes if c.state == "truncated"]
    assert len(cut) == 6 and {c.step for c in cut} == {"truncate"}
    before = {r.seq: r.live_tokens for r in rows}
    steps = [s for s in p.steps if s.step == "truncate"]
    assert sum(s.messages for s in steps) == 6
    assert sum(s.tokens_saved for s in steps) == sum(before[c.seq] - c.live_tokens for c in cut)
    assert p.tokens_before - p.tokens_after == sum(s.tokens_saved for s in p.steps)
