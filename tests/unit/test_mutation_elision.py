"""An old screenshot's placeholder, where mutation testing found no selected test reaching it
(docs/mutation.md): once the layout does not fit, an image outside the protected turns is replaced by
one text block naming its kind, what it cost and the seq that brings the original back.

The seventh session's survivors (`_swap`, `_placeholder`): an icon that costs less than its placeholder
stays while the request is within the provider's limits (also one that costs exactly its
placeholder), and goes once the request carries one attachment too many; a text document's placeholder
names what its text counts; a history with no user turn is all current turn, its thinking kept.
"""

from __future__ import annotations

import json

from sleepcompact.domain.attachments import attachment_bytes, attachment_tokens, is_attachment
from sleepcompact.domain.elision import ATTACHMENT_PLACEHOLDER, RequestLimits
from sleepcompact.domain.ladder import Policy, Snapshot, plan
from sleepcompact.domain.records import MessageRecord
from tests.support.png import blank
from tests.unit.test_ladder import PartSpec, Rows, budget_for, count, filler


def test_an_old_screenshot_becomes_a_placeholder_naming_its_cost_and_seq() -> None:
    image = {
        "type": "image",
        "source": {"type": "base64", "media_type": "image/png", "data": blank(1000, 800)},
    }
    b = Rows().system("rules").user([image, {"type": "text", "text": "what does this screen show?"}])
    b.assistant("a login form")
    for t in range(10):
        b.user(f"question {t}: " + filler(250, word=f"q{t}")).assistant(
            f"answer {t}: " + filler(250, word=f"a{t}")
        )
    shot = b.rows[1]
    tokens = attachment_tokens(image, count)
    assert tokens > 1_000
    p = plan(Snapshot("conv-1", 0, b.rows[-1].seq, tuple(b.rows)), budget_for(16_000), Policy(), count)
    (change,) = [c for c in p.changes if c.seq == shot.seq]
    assert change.state == "masked" and change.step == "attachments"
    assert change.live_content == [
        {
            "type": "text",
            "text": f"[image archived ({tokens:,} tokens); the original: read_archived(seq={shot.seq})]",
        },
        {"type": "text", "text": "what does this screen show?"},
    ]
    assert p.fits and p.summary is None and [s.step for s in p.steps] == ["attachments"]
    # Outside the protected turns, so the first (whole-history) pass takes it, not the in-loop one.
    assert [(s.section, s.messages) for s in p.steps] == [("HISTORY", 1)]


def _image(width: int, height: int) -> dict[str, object]:
    return {
        "type": "image",
        "source": {"type": "base64", "media_type": "image/png", "data": blank(width, height)},
    }


def _old_attachments_then_talk(*blocks: dict[str, object], turns: int = 10) -> Rows:
    """One old user message per attachment, then ``turns`` exchanges: over the target in 16k."""
    b = Rows().system("rules")
    for i, block in enumerate(blocks):
        b.user([block, {"type": "text", "text": f"attachment {i}"}]).assistant(f"seen {i}")
    for t in range(turns):
        b.user(f"question {t}: " + filler(250, word=f"q{t}")).assistant(
            f"answer {t}: " + filler(250, f"a{t}")
        )
    return b


def test_an_icon_cheaper_than_its_placeholder_stays_while_the_request_is_within_limits() -> None:
    icon, shot = _image(16, 16), _image(1000, 800)
    assert attachment_tokens(icon, count) < count(
        "[image archived (1 tokens); the original: read_archived(seq=2)]"
    )
    b = _old_attachments_then_talk(icon, shot)
    p = plan(Snapshot("conv-1", 0, b.rows[-1].seq, tuple(b.rows)), budget_for(16_000), Policy(), count)
    changed = {c.seq: c for c in p.changes}
    assert b.rows[1].seq not in changed, "the icon costs less than what would replace it"
    assert changed[b.rows[3].seq].step == "attachments", "the screenshot is archived"


def test_over_the_providers_attachment_limit_even_icons_are_archived() -> None:
    icons = [_image(16, 16) for _ in range(101)]  # one more than a request may carry
    b = _old_attachments_then_talk(*icons, turns=2)
    p = plan(Snapshot("conv-1", 0, b.rows[-1].seq, tuple(b.rows)), budget_for(200_000), Policy(), count)
    archived = [c for c in p.changes if c.step == "attachments"]
    (first,) = archived  # within the tokens, one over the count: the oldest icon goes, the rest stay
    assert first.seq == b.rows[1].seq
    assert first.live_content == [
        {
            "type": "text",
            "text": f"[image archived (1 tokens); the original: read_archived(seq={b.rows[1].seq})]",
        },
        {"type": "text", "text": "attachment 0"},
    ]


def test_a_text_documents_placeholder_names_the_tokens_its_text_counts() -> None:
    text = filler(2_000, "clause")
    document = {"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": text}}
    b = _old_attachments_then_talk(document)
    p = plan(Snapshot("conv-1", 0, b.rows[-1].seq, tuple(b.rows)), budget_for(16_000), Policy(), count)
    (change,) = [c for c in p.changes if c.seq == b.rows[1].seq]
    assert isinstance(change.live_content, list)
    seq = b.rows[1].seq
    assert change.live_content[0] == {
        "type": "text",
        "text": f"[document archived ({count(text):,} tokens); the original: read_archived(seq={seq})]",
    }


def test_an_image_that_costs_exactly_its_placeholder_stays() -> None:
    strip = _image(750, 16)  # 16 tokens, as many as "[image archived (16 tokens); ... read_archived(seq=2)]"
    placeholder = "[image archived (16 tokens); the original: read_archived(seq=2)]"
    assert attachment_tokens(strip, count) == count(placeholder) == 16
    b = _old_attachments_then_talk(strip, _image(1000, 800))
    assert b.rows[1].seq == 2
    p = plan(Snapshot("conv-1", 0, b.rows[-1].seq, tuple(b.rows)), budget_for(16_000), Policy(), count)
    assert b.rows[1].seq not in {c.seq for c in p.changes}, "swapping it would save nothing"


def _assistant_only(first: list[dict[str, object]]) -> list[MessageRecord]:
    """A history with no user message and no system row (an agent log resumed mid-loop): one long
    current turn, its first row the assistant's."""
    b = Rows().message(PartSpec("assistant", "message", first))
    for t in range(8):
        b.assistant(f"step {t}: " + filler(400, f"s{t}"))
    return b.rows


def test_with_no_user_turn_everything_is_the_current_turn_and_its_thinking_stays() -> None:
    thinking = {"type": "thinking", "thinking": filler(2_000, "deep"), "signature": "sig"}
    rows = _assistant_only([thinking, {"type": "text", "text": "Starting."}])
    p = plan(Snapshot("conv-1", 0, rows[-1].seq, tuple(rows)), budget_for(8_000), Policy(), count)
    assert "thinking" not in [s.step for s in p.steps], "no turn before the current one to take it from"


def test_in_one_long_loop_the_oldest_screenshots_go_until_the_layout_fits() -> None:
    """One user turn, then an agent loop whose tool results are screenshots: nothing is outside the
    protected turns, so the in-loop pass archives attachments oldest first and stops once it fits,
    keeping the newest step's."""
    b = Rows().user([_image(640, 480), {"type": "text", "text": "make the login page match this"}])
    for k in range(10):  # 410 tokens a screenshot: under the tool-output cap, so nothing truncates them
        use = {"type": "tool_use", "id": f"c{k}", "name": "screenshot", "input": {"step": k}}
        b.message(PartSpec("assistant", "tool_call", [use], tool_call_id=f"c{k}", tool_name="screenshot"))
        shot = PartSpec(
            "tool", "tool_result", [_image(640, 480)], tool_call_id=f"c{k}", tool_name="screenshot"
        )
        b.message(shot)
    rows = b.rows
    p = plan(Snapshot("conv-1", 0, rows[-1].seq, tuple(rows)), budget_for(8_000), Policy(), count)
    archived = {c.seq for c in p.changes if c.step == "attachments"}
    shots = [r.seq for r in rows if r.kind == "tool_result"]
    assert [(s.step, s.section) for s in p.steps if s.step == "attachments"] == [("attachments", "IN_LOOP")]
    assert rows[0].seq in archived, "the oldest first: the user's own reference image"
    assert shots[-1] not in archived, "the newest step keeps its screenshot"
    assert not set(shots[:-1]) <= archived, "it stopped once the layout fit"
    assert p.fits


def test_a_tool_result_that_is_only_an_image_is_named_an_image_not_a_cut_output() -> None:
    """Over the tool-output cap, a screenshot result has no text to cut: the truncation rung leaves it
    to the attachment rung, whose placeholder says what it was (before, the model read "1,071 tokens
    truncated from the middle of this output" for a picture)."""
    b = Rows().user([{"type": "text", "text": "make the login page match the design"}])
    for k in range(6):
        use = {"type": "tool_use", "id": f"c{k}", "name": "screenshot", "input": {"step": k}}
        b.message(PartSpec("assistant", "tool_call", [use], tool_call_id=f"c{k}", tool_name="screenshot"))
        b.message(
            PartSpec("tool", "tool_result", [_image(1000, 800)], tool_call_id=f"c{k}", tool_name="screenshot")
        )
    rows = b.rows
    p = plan(Snapshot("conv-1", 0, rows[-1].seq, tuple(rows)), budget_for(8_000), Policy(), count)
    changed = [c for c in p.changes if c.seq in {r.seq for r in rows if r.kind == "tool_result"}]
    assert changed and all(c.step == "attachments" for c in changed), [(c.seq, c.step) for c in changed]
    for c in changed:
        assert c.live_content == [
            {
                "type": "text",
                "text": f"[image archived (1,067 tokens); the original: read_archived(seq={c.seq})]",
            }
        ]
    assert p.fits


def test_the_attachment_step_counts_every_row_it_changed_and_what_each_saved() -> None:
    b = _old_attachments_then_talk(_image(1000, 800), _image(1000, 800), _image(1000, 800))
    rows = b.rows
    p = plan(Snapshot("conv-1", 0, rows[-1].seq, tuple(rows)), budget_for(16_000), Policy(), count)
    changed = [c for c in p.changes if c.step == "attachments"]
    (step,) = [s for s in p.steps if s.step == "attachments"]
    by_id = {r.id: r for r in rows}
    assert step.messages == len(changed) == 3
    assert step.tokens_saved == sum(by_id[c.message_id].live_tokens - c.live_tokens for c in changed) > 0


def test_a_result_already_shown_as_its_tool_summary_is_not_swapped_back_to_an_image_placeholder() -> None:
    """The attachment rung reads each row as the ladder has it so far: a screenshot result the
    tool-summary rung already replaced by its summary has no image left to archive (the compaction
    then goes on to fold old turns; the attachment rung finds nothing)."""
    use = {"type": "tool_use", "id": "c1", "name": "screenshot", "input": {}}
    b = Rows().system("rules").user("show me the login page")
    b.message(PartSpec("assistant", "tool_call", [use], tool_call_id="c1", tool_name="screenshot"))
    shot = [_image(1000, 800), {"type": "text", "text": "captured"}]
    b.message(
        PartSpec(
            "tool",
            "tool_result",
            shot,
            tool_call_id="c1",
            tool_name="screenshot",
            tool_summary="a login form",
        )
    )
    for t in range(24):  # still over the target after the tool summary: the attachment rung runs
        b.user(f"question {t}: " + filler(250, word=f"q{t}")).assistant(
            f"answer {t}: " + filler(250, f"a{t}")
        )
    rows = b.rows
    p = plan(Snapshot("conv-1", 0, rows[-1].seq, tuple(rows)), budget_for(16_000), Policy(), count)
    steps = [s.step for s in p.steps]
    assert "tool_summary" in steps and "attachments" not in steps, steps


def _screenshot_loop(shots: int) -> list[MessageRecord]:
    """One short user turn, then an agent loop of ``shots`` screenshot results: a few thousand tokens,
    so only the request's bytes can be over a limit."""
    b = Rows().user("make the login page match the design")  # a plain string weighs its length
    for k in range(shots):
        use = {"type": "tool_use", "id": f"c{k}", "name": "screenshot", "input": {"step": k}}
        b.message(PartSpec("assistant", "tool_call", [use], tool_call_id=f"c{k}", tool_name="screenshot"))
        b.message(
            PartSpec(
                "tool", "tool_result", [_image(320, 240 + k)], tool_call_id=f"c{k}", tool_name="screenshot"
            )
        )
    return b.rows


def _bytes_after(rows: list[MessageRecord], archived: int) -> int:
    """The request bytes the ladder weighs once the oldest ``archived`` screenshots are placeholders."""
    shots = [r for r in rows if r.kind == "tool_result"][:archived]
    placeholders = {
        r.id: [
            {
                "type": "text",
                "text": ATTACHMENT_PLACEHOLDER.format(
                    kind="image", tokens=attachment_tokens(r.view[0], count), seq=r.seq
                ),
            }
        ]
        for r in shots
    }
    return sum(_weight(placeholders.get(r.id, r.view)) for r in rows)


def _weight(view: object) -> int:
    """What the ladder counts a live view as in the request body: a plain text by its length, an
    attachment by its base64 (or URL or file id), any other block by its JSON."""
    if isinstance(view, str):
        return len(view)
    assert isinstance(view, list)
    return sum(attachment_bytes(b) if is_attachment(b) else len(json.dumps(b)) for b in view)


def _archived_under(max_bytes: int, rows: list[MessageRecord]) -> list[int]:
    limits = RequestLimits(max_attachments=100, max_bytes=max_bytes)
    p = plan(
        Snapshot("conv-1", 0, rows[-1].seq, tuple(rows)), budget_for(200_000), Policy(), count, limits=limits
    )
    assert p.fits and not p.summary
    return sorted(c.seq for c in p.changes if c.step == "attachments")


def test_over_the_byte_limit_the_oldest_screenshots_go_until_the_bytes_fit_and_no_further() -> None:
    rows = _screenshot_loop(6)
    seqs = [r.seq for r in rows if r.kind == "tool_result"]
    # Exactly at the limit is within it: nothing to do.
    at_limit = RequestLimits(max_attachments=100, max_bytes=_bytes_after(rows, 0))
    p = plan(
        Snapshot("conv-1", 0, rows[-1].seq, tuple(rows)),
        budget_for(200_000),
        Policy(),
        count,
        limits=at_limit,
    )
    assert (p.reason, p.over_limits, p.changes) == ("already under the target", False, ())
    # Exactly at the limit after two: two go, not a third.
    assert _archived_under(_bytes_after(rows, 2), rows) == seqs[:2]
    # One byte under what one leaves: the placeholder's own bytes count, so a second goes.
    assert _archived_under(_bytes_after(rows, 1) - 1, rows) == seqs[:2]
    assert _archived_under(_bytes_after(rows, 1), rows) == seqs[:1]


def test_a_screenshot_before_the_first_user_turn_is_old_history_when_two_turns_follow() -> None:
    """A log that opens with the agent's own screenshot, then exactly the two protected user turns: the
    screenshot is outside them, so the whole-history pass archives it (the loop pass is for the
    current turn's own steps)."""
    use = {"type": "tool_use", "id": "c0", "name": "screenshot", "input": {}}
    b = Rows().message(PartSpec("assistant", "tool_call", [use], tool_call_id="c0", tool_name="screenshot"))
    b.message(PartSpec("tool", "tool_result", [_image(1000, 800)], tool_call_id="c0", tool_name="screenshot"))
    for t in range(2):
        b.user(f"question {t}: " + filler(250, word=f"q{t}")).assistant(
            f"answer {t}: " + filler(250, f"a{t}")
        )
    rows = b.rows
    p = plan(Snapshot("conv-1", 0, rows[-1].seq, tuple(rows)), budget_for(4_000), Policy(), count)
    (change,) = [c for c in p.changes if c.step == "attachments"]
    assert change.seq == rows[1].seq
    assert [(s.section, s.messages) for s in p.steps if s.step == "attachments"] == [("HISTORY", 1)]


def test_a_row_the_thinking_rung_archived_weighs_nothing_against_the_request_limits() -> None:
    """Past thinking archived (an assistant turn that only thought), then a current turn carrying one
    screenshot, with limits of exactly one attachment and exactly the bytes left: the request is within
    them, so the screenshot the user is asking about stays."""
    thinking = {"type": "thinking", "thinking": filler(3_000, "pondera"), "signature": "sig"}
    b = Rows().system("You are a careful agent.")
    b.user("OBSERVATION A\n" + filler(1_000, "obsa")).message(PartSpec("assistant", "message", [thinking]))
    b.user([_image(320, 240), {"type": "text", "text": "what is wrong on this screen?"}])
    b.assistant("Looking at it.")
    rows = b.rows
    snapshot = Snapshot("conv-1", 0, rows[-1].seq, tuple(rows))
    roomy = plan(snapshot, budget_for(4_000), Policy(), count)
    live = {c.seq: c.live_content for c in roomy.changes}
    assert [c.state for c in roomy.changes] == ["archived"]  # only the thinking went
    exact = RequestLimits(
        max_attachments=1, max_bytes=sum(_weight(live.get(r.seq, r.view) or []) for r in rows)
    )
    p = plan(snapshot, budget_for(4_000), Policy(), count, limits=exact)
    assert (p.changes, p.reason) == (roomy.changes, roomy.reason)
    assert p.reason == "fits after LLM-free steps"
