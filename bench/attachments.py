"""What attachments cost the request path: weighing a request against the provider's limits, and the
whole guard call on a conversation of screenshots, against the same turns without images.

Run with ``.venv/bin/python -m bench.attachments``. Requests of 10, 40 and 100 screenshots (1280x800,
~110 KB of base64 each, inside tool results as a computer-use agent sends them) are weighed two ways in
the same run: ``request_weight`` (a walk over the values, what the guard does) and ``json.dumps`` (what
it did before, and still does once the estimate nears half the 32 MB limit). Then ``prepare_context``
on a SQLite conversation of 40 such steps, against the same 40 steps whose results carry only their
text. The cases take turns so drift hits them alike. Nothing here asserts on time.
"""

from __future__ import annotations

import base64
import json
import platform
import statistics
import struct
import sys
import tempfile
import time
import zlib
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from bench.ladder import cpu_model
from bench.results import publish
from sleepcompact import Memory, Settings
from sleepcompact.domain.attachments import request_weight

RUNS = 60


def screenshot(seed: int, padding: int = 80_000) -> str:
    """A valid 1280x800 PNG, base64, made as heavy as a real screenshot by a private ancillary chunk."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", 1280, 800, 8, 2, 0, 0, 0)
    pixels = zlib.compress(b"".join(b"\x00" + bytes([seed % 256, 40, 90]) * 1280 for _ in range(800)))
    filler = bytes((seed * 31 + i * 7) % 256 for i in range(padding))
    body = chunk(b"IHDR", header) + chunk(b"prIv", filler) + chunk(b"IDAT", pixels) + chunk(b"IEND", b"")
    return base64.b64encode(b"\x89PNG\r\n\x1a\n" + body).decode()


def step(n: int, shot: str | None) -> list[dict[str, Any]]:
    """One computer-use step: a click, and its result with (or without) the screenshot."""
    call = {"type": "tool_use", "id": f"toolu_{n:03d}", "name": "computer", "input": {"action": "click"}}
    content: list[dict[str, Any]] = [{"type": "text", "text": f"clicked, step {n}"}]
    if shot is not None:
        content.append(
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": shot}}
        )
    result = {"type": "tool_result", "tool_use_id": f"toolu_{n:03d}", "content": content}
    return [
        {"role": "assistant", "content": [{"type": "text", "text": f"Step {n}."}, call]},
        {"role": "user", "content": [result]},
    ]


def timed(cases: dict[str, Callable[[], object]], runs: int) -> dict[str, list[float]]:
    """Each case ``runs`` times, taking turns, after one warm-up each; milliseconds."""
    for fn in cases.values():
        fn()
    out: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(runs):
        for name, fn in cases.items():
            start = time.perf_counter()
            fn()
            out[name].append((time.perf_counter() - start) * 1000)
    return out


def weighing_cases(shots: list[str]) -> dict[str, Callable[[], object]]:
    cases: dict[str, Callable[[], object]] = {}
    for n in (10, 40, 100):
        messages = [{"role": "user", "content": "Fill in the form."}]
        for i in range(n):
            messages += step(i, shots[i % len(shots)])
        body = {"system": "You operate a browser.", "messages": messages}
        size = len(json.dumps(body, ensure_ascii=False).encode())
        cases[f"`request_weight`, {n} screenshots ({size / 1e6:.1f} MB)"] = lambda b=body: request_weight(b)
        cases[f"`json.dumps` + encode, {n} screenshots ({size / 1e6:.1f} MB)"] = lambda b=body: len(
            json.dumps(b, ensure_ascii=False).encode()
        )
    return cases


def guard_cases(mem: Memory, shots: list[str]) -> dict[str, Callable[[], object]]:
    def conversation(with_images: bool) -> str:
        cid = mem.create_conversation("claude-haiku-4-5", context_window=1_000_000)
        mem.append(cid, {"role": "user", "content": "Fill in the form."})
        for i in range(40):
            mem.append_many(cid, step(i, shots[i % len(shots)] if with_images else None))
        return cid

    shots_cid, text_cid = conversation(True), conversation(False)
    return {
        "`prepare_context`, 40 steps with screenshots (4.5 MB request)": lambda: mem.prepare_context(
            shots_cid
        ),
        "`prepare_context`, the same 40 steps without images": lambda: mem.prepare_context(text_cid),
    }


def table(results: dict[str, list[float]]) -> str:
    now = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        f"{now}, {platform.system()} {platform.machine()}, {cpu_model()}, Python {sys.version.split()[0]}",
        "",
        "| case | median ms | p90 ms | runs |",
        "|---|---:|---:|---:|",
    ]
    for name, xs in results.items():
        xs = sorted(xs)
        lines.append(f"| {name} | {statistics.median(xs):.3f} | {xs[int(len(xs) * 0.9)]:.3f} | {len(xs)} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    shots = [screenshot(seed) for seed in range(8)]
    with tempfile.TemporaryDirectory(prefix="sc-bench-att-") as tmp:
        mem = Memory(Settings(database_url=f"sqlite:///{tmp}/bench.db"), auto_migrate=True)
        try:
            results = timed(weighing_cases(shots), RUNS)
            results.update(timed(guard_cases(mem, shots), RUNS // 2))
        finally:
            mem.close()
    publish(table(results), "attachments.md")


if __name__ == "__main__":
    main()
