"""Attachments in the request path: screenshots are counted by their size, archived before anything is
summarized, and a request never carries more images or bytes than the provider accepts.

The scenario the issue reports: a computer-use agent takes a screenshot per step. After compaction
only the screenshots of the protected turns stay live, each old one is a placeholder naming where its
original is, and ``read_archived(seq=N)`` points at the original bytes. A conversation with
more than 100 images is brought under the limit by the guard before any token threshold is reached;
when the newest turn alone holds too many, the guard says so with ``RequestTooLarge``.
"""

from __future__ import annotations

import base64
import json
import re
import struct
import zlib
from collections.abc import Iterator
from typing import Any

import pytest

from sleepcompact import Memory, Settings
from sleepcompact.domain.attachments import MAX_IMAGES_PER_REQUEST, MAX_REQUEST_BYTES
from sleepcompact.domain.errors import RequestTooLarge
from sleepcompact.domain.validation import anthropic_problems, openai_problems
from tests.support.queues import RecordingQueue


def png(width: int, height: int, *, padding: int = 0, seed: int = 0) -> str:
    """A valid PNG of one colour, base64; ``padding`` bytes of a private ancillary chunk make it as
    heavy as a real screenshot (decoders skip the chunk)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    pixels = zlib.compress(b"".join(b"\x00" + bytes([seed % 256, 40, 90]) * width for _ in range(height)))
    filler = bytes((seed * 31 + i * 7) % 256 for i in range(padding))
    body = chunk(b"IHDR", header) + chunk(b"prIv", filler) + chunk(b"IDAT", pixels) + chunk(b"IEND", b"")
    return base64.b64encode(b"\x89PNG\r\n\x1a\n" + body).decode()


def image(data: str) -> dict[str, Any]:
    return {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": data}}


def screenshot_step(step: int, shot: str) -> list[dict[str, Any]]:
    """One computer-use step: the model clicks, the tool answers with a screenshot."""
    call_id = f"toolu_{step:02d}"
    click = {"type": "tool_use", "id": call_id, "name": "computer", "input": {"action": "click", "x": step}}
    result = {
        "type": "tool_result",
        "tool_use_id": call_id,
        "content": [{"type": "text", "text": f"clicked at {step}"}, image(shot)],
    }
    return [
        {"role": "assistant", "content": [{"type": "text", "text": f"Step {step}: clicking."}, click]},
        {"role": "user", "content": [result]},
    ]


def live_images(messages: list[dict[str, Any]]) -> int:
    return json.dumps(messages).count('"type": "image"')


@pytest.fixture
def mem(sqlite_url: str) -> Iterator[Memory]:
    memory = Memory(Settings(database_url=sqlite_url), auto_migrate=True, queue=RecordingQueue())
    try:
        yield memory
    finally:
        memory.close()


def test_a_screenshot_costs_what_the_provider_charges_for_its_size(mem: Memory) -> None:
    cid = mem.create_conversation("claude-haiku-4-5")
    mem.append(cid, {"role": "user", "content": "Open the settings page."})
    mem.append_many(cid, screenshot_step(1, png(1280, 800)))
    mem.append_many(cid, screenshot_step(2, png(200, 200)))
    results = [m for m in mem.export(cid).messages if m["kind"] == "tool_result"]
    # 1280x800 is within the 1.2 megapixel cap: 1280 * 800 / 750 = 1365 tokens; 200x200: 53. The few
    # tokens more are the result's text ("clicked at 1") and the per-message overhead.
    assert 1365 <= results[0]["token_count"] <= 1365 + 20, results[0]["token_count"]
    assert 53 <= results[1]["token_count"] <= 53 + 20, results[1]["token_count"]


def test_old_screenshots_are_archived_before_anything_is_summarized(mem: Memory) -> None:
    cid = mem.create_conversation("claude-haiku-4-5", context_window=28_000)
    for step in range(1, 13):  # 12 requests, a ~110 KB screenshot each: 1.3 MB of request
        mem.append(cid, {"role": "user", "content": f"Fill in field {step} of the signup form."})
        mem.append_many(cid, screenshot_step(step, png(1280, 800, padding=80_000, seed=step)))
    mem.append(cid, {"role": "user", "content": "Now submit it."})
    assert mem.check(cid).decision != "none"

    outcome = mem.compactions.compact(cid)

    assert outcome.status == "applied", outcome.reason
    assert [s["step"] for s in outcome.steps] == ["attachments"], "a summary was written before it was needed"
    view = mem.context(cid)
    assert anthropic_problems(view.messages) == []
    assert openai_problems(mem.context(cid, fmt="openai").messages) == []
    # Only the protected turns (the last two requests) keep their screenshot; the request shrank with it.
    assert live_images(view.messages) == 1
    assert len(json.dumps(view.messages)) < 300_000
    seq = int(
        re.search(r"\[image archived [^\]]*read_archived\(seq=(\d+)\)", json.dumps(view.messages)).group(1)
    )  # type: ignore[union-attr]
    (hit,) = mem.search_history(cid, f"seq:{seq}")
    assert png(1280, 800, padding=80_000, seed=1)[:5000] in json.dumps(hit.to_dict()), "the original is gone"


def test_a_long_agent_loop_archives_its_older_screenshots_first(mem: Memory) -> None:
    cid = mem.create_conversation("claude-haiku-4-5", context_window=28_000)
    mem.append(cid, {"role": "user", "content": "Fill in the signup form, one field per step."})
    for step in range(1, 13):  # one request, twelve steps: everything is the current turn
        mem.append_many(cid, screenshot_step(step, png(1280, 800, seed=step)))

    outcome = mem.compactions.compact(cid)

    assert outcome.status == "applied", outcome.reason
    assert outcome.steps[0]["step"] == "attachments", outcome.steps
    view = mem.context(cid)
    assert anthropic_problems(view.messages) == []
    text = json.dumps(view.messages)
    assert "clicked at 1" in text, "the text beside an archived screenshot was lost"
    assert text.count('"type": "image"') >= 1, "the newest screenshot must stay live"


def test_more_images_than_a_request_may_carry_are_archived_by_the_guard(mem: Memory) -> None:
    cid = mem.create_conversation("claude-haiku-4-5", context_window=1_000_000)
    mem.append(cid, {"role": "user", "content": "Label each photo."})
    tiny = png(16, 16)
    for step in range(1, MAX_IMAGES_PER_REQUEST + 11):  # 110 small images: far below any token threshold
        mem.append_many(cid, screenshot_step(step, tiny))
    mem.append(cid, {"role": "user", "content": "Which one was blue?"})
    assert mem.check(cid).decision == "none"

    prepared = mem.prepare_context(cid)

    assert prepared.action == "emergency_compacted", prepared.reason
    assert live_images(prepared.messages) <= MAX_IMAGES_PER_REQUEST
    assert anthropic_problems(prepared.messages) == []
    assert len(mem.export(cid).appended) == 2 + 2 * (MAX_IMAGES_PER_REQUEST + 10), "an original was lost"


def test_a_request_over_32_mb_is_brought_under_the_limit(mem: Memory) -> None:
    cid = mem.create_conversation("claude-haiku-4-5", context_window=1_000_000)
    mem.append(cid, {"role": "user", "content": "Compare the scans."})
    heavy = 1_400_000  # 18 images of ~1.9 MB base64 each: ~34 MB of request
    for step in range(1, 19):
        mem.append_many(cid, screenshot_step(step, png(64, 64, padding=heavy, seed=step)))
    mem.append(cid, {"role": "user", "content": "Which scan is darkest?"})

    prepared = mem.prepare_context(cid)

    size = len(json.dumps({"system": prepared.system, "messages": prepared.messages}, ensure_ascii=False))
    assert size <= MAX_REQUEST_BYTES, size
    assert prepared.action == "emergency_compacted"


def test_the_guard_refuses_a_newest_turn_with_too_many_images(mem: Memory, db_snapshot: Any) -> None:
    cid = mem.create_conversation("claude-haiku-4-5", context_window=1_000_000)
    tiny = png(16, 16)
    content = [{"type": "text", "text": "Label every one of these."}]
    content += [image(tiny) for _ in range(MAX_IMAGES_PER_REQUEST + 1)]
    mem.append(cid, {"role": "user", "content": content})
    before = db_snapshot(mem)

    with pytest.raises(RequestTooLarge) as raised:
        mem.prepare_context(cid)

    assert raised.value.attachments == MAX_IMAGES_PER_REQUEST + 1
    assert "101 images or documents" in str(raised.value)
    assert db_snapshot(mem) == before, "nothing could be archived, so nothing may be written"
