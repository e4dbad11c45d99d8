"""The ladder's rungs one by one, each plan whole: its reason, whether it fits, its figures, the
section every step ran on, and whether the rows were over the provider's request limits.

A plan's reason and steps are what ``sleepcompact inspect`` shows an operator and what the compaction
records; mutation testing (docs/mutation.md, twentieth session) found that none of the ladder's fast
tests reached the tool-summary rung, the attachment rung, the two reasons a plan gives when it cannot
summarize, or the exact threshold at which masking is worth doing.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from sleepcompact.domain.elision import RequestLimits
from sleepcompact.domain.ladder import Plan, Policy, Snapshot, plan
from sleepcompact.domain.records import MessageRecord
from sleepcompact.domain.steps import MASK_PLACEHOLDER
from tests.unit.test_ladder import PartSpec, Rows, budget_for, count, filler, result

BUDGET = budget_for(16_000)  # usable 12,000, target 7,800, hard 10,200
IMAGE: dict[str, Any] = {"type": "image", "source": {"type": "url", "url": "https://example.com/cat.png"}}


def snapshot(rows: list[MessageRecord]) -> Snapshot:
    return Snapshot("conv-1", 0, rows[-1].seq, tuple(rows))


def figures(p: Plan) -> tuple[str, bool, int, int, dict[str, int], bool]:
    return (p.reason, p.fits, p.tokens_before, p.tokens_after, p.sections, p.over_limits)


def steps(p: Plan) -> list[tuple[str, str, int, int]]:
    return [(s.step, s.section, s.messages, s.tokens_saved) for s in p.steps]


def reads(turns: int, size: int, *, newest: int = 300, summarized: bool = False) -> list[MessageRecord]:
    """Turns that each read a file of ``size`` filler tokens (the newest one ``newest``), optionally with the
    short description a tool may attach to its output (``tool_summary``)."""
    b = Rows().system("You are careful.")
    for t in range(turns):
        b.user(f"task {t}")
        b.assistant(f"reading {t}", (f"c{t}", "read_file", {"path": f"m{t}.py"}))
        output = filler(size if t < turns - 1 else newest, f"w{t}")
        b.results(
            result(f"c{t}", "read_file", output, tool_summary=f"m{t}.py: 40 lines" if summarized else None)
        )
    return b.rows


def looking(text: str, images: int) -> list[dict[str, Any]]:
    """A user message's content: a line of text and ``images`` images."""
    return [{"type": "text", "text": text}, *[IMAGE] * images]


def images_seen(turns: int) -> list[MessageRecord]:
    """``turns`` exchanges, each a user's image and the assistant's answer."""
    b = Rows().system("You are careful.")
    for t in range(turns):
        b.user(looking(f"look at {t}", 1)).assistant(f"seen {t}")
    return b.rows


def test_a_tools_own_summary_of_its_output_replaces_the_old_outputs_first() -> None:
    p = plan(snapshot(reads(6, 2_200, summarized=True)), BUDGET, Policy(), count)
    assert figures(p) == (
        "fits after LLM-free steps",
        True,
        14_355,
        700,
        {"HISTORY": 13_943, "IN_LOOP": 7, "CURRENT": 405},
        False,
    )
    assert steps(p) == [("tool_summary", "HISTORY", 5, 13_655)]
    assert {(c.state, c.step) for c in p.changes} == {("masked", "tool_summary")}


def test_old_images_over_the_attachment_limit_are_archived_though_the_tokens_fit() -> None:
    rows = images_seen(4)
    p = plan(snapshot(rows), BUDGET, Policy(), count, limits=RequestLimits(max_attachments=2))
    assert figures(p) == (
        "fits after LLM-free steps",
        True,
        6_468,
        3_306,
        {"HISTORY": 4_853, "IN_LOOP": 1_608, "CURRENT": 7},
        True,
    )
    assert steps(p) == [("attachments", "HISTORY", 2, 3_162)]
    # Without a limit to keep to, the same rows are already under the target and left alone.
    untouched = plan(snapshot(rows), BUDGET, Policy(), count)
    assert (untouched.reason, untouched.over_limits, untouched.changes) == (
        "already under the target",
        False,
        (),
    )


def test_old_images_go_all_at_once_not_one_by_one_until_the_request_fits() -> None:
    # Five screenshots, four allowed, over the target: the first one archived would be enough, but every
    # image outside the protected turns goes in one change, so the cached prefix changes once.
    rows = images_seen(5)
    p = plan(snapshot(rows), BUDGET, Policy(), count, limits=RequestLimits(max_attachments=4))
    assert figures(p)[:4] == ("fits after LLM-free steps", True, 8_083, 3_340)
    assert steps(p) == [("attachments", "HISTORY", 3, 4_743)]
    assert [c.seq for c in p.changes] == [2, 4, 6]


def test_a_newest_turn_alone_over_the_attachment_limit_is_said_so() -> None:
    b = Rows().system("You are careful.").user("hi").assistant("hello")
    b.user(looking("look", 3))
    p = plan(snapshot(b.rows), BUDGET, Policy(), count, limits=RequestLimits(max_attachments=2))
    assert figures(p) == (
        "the protected turns alone exceed the provider's request limits (attachments, bytes)",
        True,
        4_823,
        4_823,
        {"HISTORY": 18, "IN_LOOP": 4_805, "CURRENT": 0},
        True,
    )
    assert steps(p) == [] and p.changes == ()


def test_a_forced_summary_of_too_few_messages_still_runs_the_llm_free_rungs() -> None:
    rows = reads(2, 2_000)
    forced = plan(snapshot(rows), BUDGET, Policy(), count, force_summary=True)
    assert figures(forced) == (
        "fits after the LLM-free steps; nothing worth summarizing",
        True,
        2_957,
        1_429,
        {"HISTORY": 2_545, "IN_LOOP": 7, "CURRENT": 405},
        False,
    )
    assert steps(forced) == [("truncate", "HISTORY", 1, 1_528)]
    assert figures(plan(snapshot(rows), BUDGET, Policy(), count))[:4] == (
        "already under the target",
        True,
        2_957,
        2_957,
    )


def test_masking_runs_when_it_saves_exactly_the_minimum_and_not_one_token_less() -> None:
    # Eight reads of 900 tokens (under the cap: nothing to truncate). The four outputs outside the
    # protected turns and the newest 3,000 tokens would save 4,424 tokens masked.
    rows = reads(8, 900, newest=900)
    at_minimum = plan(snapshot(rows), BUDGET, Policy(minimum_saving=4_424), count)
    assert figures(at_minimum)[:4] == ("fits after LLM-free steps", True, 9_304, 4_880)
    assert steps(at_minimum) == [("mask", "HISTORY", 4, 4_424)]
    # One token short of the minimum, that mask is not worth it; still over the target, the loop's own
    # mask (which protects only the newest tool output) runs instead and masks six.
    under = plan(snapshot(rows), BUDGET, Policy(minimum_saving=4_425), count)
    assert figures(under)[:4] == ("fits after LLM-free steps", True, 9_304, 2_668)
    assert steps(under) == [("mask", "HISTORY", 6, 6_636)]


def agent_loop(calls: int, size: int, *, screenshots: bool = False) -> list[MessageRecord]:
    """One user message, then ``calls`` tool calls each answered by ``size`` filler tokens, or by a
    screenshot: one long turn, all of it protected by the protected-turns rule."""
    b = Rows().system("You are careful.").user("go")
    for t in range(calls):
        b.assistant(f"step {t}", (f"c{t}", "screenshot" if screenshots else "read_file", {"n": t}))
        content: Any = looking(f"shot {t}", 1) if screenshots else filler(size, f"w{t}")
        b.results(PartSpec("tool", "tool_result", content, tool_call_id=f"c{t}", tool_name="screenshot"))
    return b.rows


def test_inside_one_long_turn_the_oldest_screenshots_go_until_the_request_is_within_limits() -> None:
    p = plan(snapshot(agent_loop(4, 0, screenshots=True)), BUDGET, Policy(), count, limits=RequestLimits(2))
    assert figures(p) == (
        "fits after LLM-free steps",
        True,
        6_517,
        3_355,
        {"HISTORY": 8, "IN_LOOP": 4_883, "CURRENT": 1_626},
        True,
    )
    assert steps(p) == [("attachments", "IN_LOOP", 2, 3_162)]
    # The two oldest go; the third stays (two are allowed) and so does the newest, the current step's.
    assert [(c.seq, c.state, c.step) for c in p.changes] == [
        (5, "masked", "attachments"),
        (8, "masked", "attachments"),
    ]


def test_inside_one_long_turn_old_tool_output_is_masked_keeping_the_newest() -> None:
    p = plan(snapshot(agent_loop(10, 900)), BUDGET, Policy(), count)
    assert figures(p) == (
        "fits after LLM-free steps",
        True,
        11_543,
        2_687,
        {"HISTORY": 8, "IN_LOOP": 10_382, "CURRENT": 1_153},
        False,
    )
    assert steps(p) == [("mask", "IN_LOOP", 8, 8_856)]
    assert [c.seq for c in p.changes] == [5, 8, 11, 14, 17, 20, 23, 26]  # the two newest outputs stay


def test_images_in_the_protected_turns_go_before_the_newest_user_turn_when_over_the_limit() -> None:
    # Both user turns are protected; over the limit of three, the earlier turn's two images go and the
    # three the user just sent stay (nothing is current yet: no answer follows them).
    b = Rows().system("You are careful.")
    b.user(looking("look", 2)).assistant("seen")
    b.user(looking("and these", 3))
    p = plan(snapshot(b.rows), BUDGET, Policy(), count, limits=RequestLimits(max_attachments=3))
    assert figures(p) == (
        "fits after LLM-free steps",
        True,
        8_024,
        4_861,
        {"HISTORY": 3_218, "IN_LOOP": 4_806, "CURRENT": 0},
        True,
    )
    assert steps(p) == [("attachments", "IN_LOOP", 1, 3_163)]
    assert [c.seq for c in p.changes] == [2]


def test_images_in_the_protected_turns_go_when_the_tokens_are_over_though_the_count_is_within() -> None:
    b = Rows().system("You are careful.")
    b.user(looking("look", 5)).assistant("seen")
    b.user("and what about the second one?")
    p = plan(snapshot(b.rows), BUDGET, Policy(), count)
    assert figures(p) == (
        "fits after LLM-free steps",
        True,
        8_029,
        120,
        {"HISTORY": 8_018, "IN_LOOP": 11, "CURRENT": 0},
        False,
    )
    assert steps(p) == [("attachments", "IN_LOOP", 1, 7_909)]


def test_an_output_an_earlier_compaction_cut_keeps_its_view_and_is_not_summarized_again() -> None:
    rows = reads(6, 2_200, summarized=True)
    first = next(i for i, r in enumerate(rows) if r.kind == "tool_result")
    cut = "head " + filler(600, "kept") + " [... cut ...] tail"  # far longer than the tool's summary
    rows[first] = replace(rows[first], state="truncated", live_content=cut, live_tokens=count(cut) + 4)
    p = plan(snapshot(rows), BUDGET, Policy(), count)
    assert figures(p)[:4] == ("fits after LLM-free steps", True, 12_361, 1_437)
    assert steps(p) == [("tool_summary", "HISTORY", 4, 10_924)]
    assert [c.seq for c in p.changes] == [9, 13, 17, 21]  # not 5, the output already cut


def test_an_attachment_only_output_in_the_protected_turns_does_not_stop_the_cuts_after_it() -> None:
    b = Rows().system("You are careful.")
    for t in range(3):
        b.user(f"task {t}")
        b.assistant(f"reading {t}", (f"c{t}", "read_file", {"path": f"m{t}.py"}))
        b.results(result(f"c{t}", "read_file", filler(2_200, f"w{t}")))
    b.user("look at the screen and the log")
    b.assistant("both", ("s1", "screenshot", {}), ("l1", "read_file", {"path": "log"}))
    screen = PartSpec("tool", "tool_result", [IMAGE], tool_call_id="s1", tool_name="screenshot")
    b.results(screen, result("l1", "read_file", filler(2_200, "log")))
    b.user("thanks, now the summary").assistant("ok")
    p = plan(snapshot(b.rows), BUDGET, Policy(), count)
    assert figures(p)[:4] == ("fits after LLM-free steps", True, 12_781, 5_672)
    # The screenshot (seq 18, protected, nothing to cut in it) is passed over; the log after it is cut.
    assert steps(p) == [("truncate", "HISTORY", 4, 7_109)]
    assert [(c.seq, c.step) for c in p.changes] == [
        (5, "truncate"),
        (9, "truncate"),
        (13, "truncate"),
        (19, "truncate"),
    ]
    view = p.changes[0].live_content
    assert isinstance(view, str) and view.startswith("w00 value=0 w01 value=1")
    assert "tokens truncated from the middle of this output" in view and "read_archived(seq=5)" in view


def test_a_tools_summary_is_shown_with_where_the_full_output_is() -> None:
    p = plan(snapshot(reads(6, 2_200, summarized=True)), BUDGET, Policy(), count)
    assert (
        p.changes[0].live_content
        == "[tool-provided summary; the full output: read_archived(seq=5)] m0.py: 40 lines"
    )


def test_a_tools_summary_no_shorter_than_its_output_is_not_used() -> None:
    # The output is exactly as long as its summary's view would be: nothing to gain, nothing changed,
    # even with a summary forced (every rung runs).
    b = Rows().system("You are careful.").user("task").assistant("reading", ("c0", "read_file", {}))
    same = "[tool-provided summary; the full output: read_archived(seq=5)] m0.py: 40 lines"
    b.results(result("c0", "read_file", same, tool_summary="m0.py: 40 lines")).user("next").assistant("ok")
    assert b.rows[4].seq == 5
    p = plan(snapshot(b.rows), BUDGET, Policy(), count, force_summary=True)
    assert p.changes == () and steps(p) == []


def test_an_output_masked_before_neither_counts_toward_the_protected_tokens_nor_is_masked_again() -> None:
    # Eight reads of 900 tokens; the output of seq 25 was masked by an earlier compaction. The newest
    # 1,134 tokens of tool output are protected: exactly the output of seq 21, counted without 25's
    # placeholder. So 21 stays and the four before it are masked.
    rows = reads(8, 900, newest=900)
    outputs = [i for i, r in enumerate(rows) if r.kind == "tool_result"]
    masked = rows[outputs[5]]
    view = MASK_PLACEHOLDER.format(tool="read_file", tokens=1_300, seq=masked.seq)
    rows[outputs[5]] = replace(masked, state="masked", live_content=view, live_tokens=count(view) + 4)
    protect = rows[outputs[4]].live_tokens
    assert (masked.seq, rows[outputs[4]].seq, protect) == (25, 21, 1_134)
    p = plan(snapshot(rows), BUDGET, Policy(protect_tokens=protect, minimum_saving=0), count)
    assert figures(p)[:4] == ("fits after LLM-free steps", True, 8_198, 3_774)
    assert steps(p) == [("mask", "HISTORY", 4, 4_424)]
    assert [c.seq for c in p.changes] == [5, 9, 13, 17]


def long_loop_with_summaries() -> list[MessageRecord]:
    """One turn of twelve reads: every third output comes with a tool's summary (2,000 filler tokens),
    the others are 1,900 or 1,000."""
    b = Rows().system("You are careful.").user("go")
    for t in range(12):
        b.assistant(f"step {t}", (f"c{t}", "read_file", {"n": t}))
        summary = f"file {t}: 40 lines" if t % 3 == 0 else None
        size = (2_000, 1_900, 1_000)[t % 3]
        b.results(result(f"c{t}", "read_file", filler(size, f"w{t}"), tool_summary=summary))
    return b.rows


def test_in_one_long_turn_outputs_already_cut_count_and_summarized_ones_do_not() -> None:
    rows = long_loop_with_summaries()
    p = plan(snapshot(rows), BUDGET, Policy(), count)
    assert figures(p) == (
        "fits after LLM-free steps",
        True,
        25_496,
        2_700,
        {"HISTORY": 8, "IN_LOOP": 23_989, "CURRENT": 1_499},
        False,
    )
    assert steps(p) == [
        ("tool_summary", "IN_LOOP", 4, 9_924),
        ("truncate", "IN_LOOP", 7, 6_244),
        ("truncate", "CURRENT", 1, 286),
        ("mask", "IN_LOOP", 6, 6_342),
    ]
    # The outputs cut this run weigh their cut size in the newest tokens kept; the ones replaced by
    # their tool's summary weigh nothing: with 3,369 protected (3,000 by default), five are masked.
    near = plan(snapshot(rows), BUDGET, Policy(protect_tokens=3_369), count)
    assert (near.tokens_after, steps(near)[-1]) == (3_861, ("mask", "IN_LOOP", 5, 5_181))


def test_a_masked_output_says_which_tool_returned_how_much_and_where_it_is() -> None:
    p = plan(snapshot(reads(8, 900, newest=900)), BUDGET, Policy(minimum_saving=0), count)
    by_seq = {c.seq: c for c in p.changes}
    assert by_seq[5].live_content == (
        "[tool output archived: read_file returned 1,134 tokens; read it with read_archived(seq=5)]"
    )
    # An output whose call named no tool (a bare function result) is "tool".
    b = Rows().system("You are careful.")
    for t in range(8):
        b.user(f"task {t}").assistant(f"reading {t}", (f"c{t}", "read_file", {}))
        b.results(PartSpec("tool", "tool_result", filler(900, f"w{t}"), tool_call_id=f"c{t}"))
    anonymous = {c.seq: c for c in plan(snapshot(b.rows), BUDGET, Policy(minimum_saving=0), count).changes}
    assert anonymous[5].live_content == (
        "[tool output archived: tool returned 1,134 tokens; read it with read_archived(seq=5)]"
    )
    assert by_seq.keys() == anonymous.keys()


def test_a_run_of_bare_tool_calls_is_masked_from_its_very_first_output() -> None:
    # No system prompt, no user message: the first output is the second row, and it is masked too.
    b = Rows()
    for t in range(10):
        b.assistant(None, (f"c{t}", "read_file", {"n": t}))
        b.results(result(f"c{t}", "read_file", filler(900, f"w{t}")))
    p = plan(snapshot(b.rows), BUDGET, Policy(), count)
    assert figures(p) == (
        "fits after LLM-free steps",
        True,
        11_460,
        2_612,
        {"HISTORY": 0, "IN_LOOP": 10_314, "CURRENT": 1_146},
        False,
    )
    assert steps(p) == [("mask", "IN_LOOP", 8, 8_848)]
    assert [c.seq for c in p.changes] == [2, 4, 6, 8, 10, 12, 14, 16]
