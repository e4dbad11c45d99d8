"""An old screenshot's placeholder, where mutation testing found no selected test reaching it
(docs/mutation.md): once the layout does not fit, an image outside the protected turns is replaced by
one text block naming its kind, what it cost and the seq that brings the original back.
"""

from __future__ import annotations

from sleepcompact.domain.attachments import attachment_tokens
from sleepcompact.domain.ladder import Policy, Snapshot, plan
from tests.support.png import blank
from tests.unit.test_ladder import Rows, budget_for, count, filler


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
