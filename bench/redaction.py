"""Redaction on multi-megabyte tool output: is it linear?

Run with ``.venv/bin/python -m bench.redaction``. Builds 1, 4 and 16 MB of mixed tool output (shell
listings, test runs, git logs, Python source, JSON tool results with escaped strings and a JSON string
nested in one, base64 blobs, the identifiers of ``tests/redteam/tune/keep.jsonl``), with one secret of
``tests/redteam/tune/secrets.jsonl`` planted every 16 KB, and times ``Redactor().redact(text)`` on
each (3 runs after a warm-up; 16 MB: 2 runs). The table gives the median, the throughput and the time
per MB relative to the 1 MB case (1.0 is perfectly linear). It checks that every planted secret is
gone and that every kept identifier survives. Nothing here asserts on time.
"""

from __future__ import annotations

import base64
import json
import platform
import random
import statistics
import sys
import time
from datetime import UTC, datetime

from bench.ladder import cpu_model
from bench.results import publish
from sleepcompact.adapters.redaction import Redactor
from tests.support.redteam import load_keep, load_secrets

MB = 1024 * 1024
SIZES = (1, 4, 16)
SECRET_EVERY = 16 * 1024

_SOURCE = '''def rotate(client, key_id: str, *, dry_run: bool = False) -> dict[str, str]:
    """Rotate one key; the old one stays valid for an hour."""
    token = secrets.token_hex(16)
    if dry_run:
        return {"key_id": key_id, "status": "skipped"}
    resp = client.post(f"/v1/keys/{key_id}/rotate", json={"grace_s": 3600})
    resp.raise_for_status()
    return resp.json()
'''


def _blocks(rnd: random.Random) -> list[str]:
    """Pieces of ordinary tool output, each a few hundred bytes to a few KB."""
    sha = "".join(rnd.choice("0123456789abcdef") for _ in range(40))
    listing = "\n".join(
        f"-rw-r--r--  1 dev staff {rnd.randint(100, 99999):6d} Nov 26 10:{i:02d} module_{i}.py"
        for i in range(30)
    )
    tests = "\n".join(f"tests/unit/test_m{i}.py::test_case_{i} PASSED [{i * 3}%]" for i in range(30))
    log = "\n".join(f"commit {sha}\nAuthor: Dana <d@example.com>\n\n    Change {i}\n" for i in range(6))
    result = {"stdout": listing + "\n" + tests, "stderr": "", "exit_code": 0, "path": "C:\\Users\\dev\\x"}
    nested = {
        "tool": "http",
        "response": json.dumps({"status": 200, "body": _SOURCE, "headers": {"etag": sha}}),
    }
    blob = base64.b64encode(bytes(rnd.getrandbits(8) for _ in range(3000))).decode()
    keep = "\n".join(k.text for k in load_keep())
    return [listing, tests, log, _SOURCE, json.dumps(result), json.dumps(nested), blob, keep]


def mixed_output(size: int, seed: int = 0) -> tuple[str, list[str]]:
    """About ``size`` bytes of mixed tool output and the secrets planted in it."""
    rnd = random.Random(seed)
    blocks, secrets = _blocks(rnd), load_secrets()
    pieces: list[str] = []
    planted: list[str] = []
    total = next_secret = 0
    while total < size:
        piece = rnd.choice(blocks)
        if total >= next_secret:
            s = secrets[len(planted) % len(secrets)]
            piece = s.text if rnd.random() < 0.5 else json.dumps({"command": s.text, "cwd": "/srv/app"})
            planted.append(s.secret)
            next_secret += SECRET_EVERY
        pieces.append(piece)
        total += len(piece) + 1
    return "\n".join(pieces), planted


def _time(text: str, runs: int) -> tuple[float, str]:
    Redactor().redact(text[: 64 * 1024])  # warm-up: compiled patterns, caches
    samples, out = [], ""
    for _ in range(runs):
        started = time.perf_counter()
        out = Redactor().redact(text)
        samples.append(time.perf_counter() - started)
    return statistics.median(samples), out


def main() -> None:
    """Time each size, check the output, print and write the table."""
    rows: list[tuple[int, float, int]] = []
    for size in SIZES:
        text, planted = mixed_output(size * MB)
        median, out = _time(text, 2 if size >= 16 else 3)
        leaked = sum(1 for s in planted if s in out)
        lost = sum(1 for k in load_keep() for ident in k.keep if ident not in out)
        if leaked or lost:
            sys.exit(f"{size} MB: {leaked} planted secrets survived, {lost} kept identifiers were lost")
        rows.append((size, median, len(planted)))
        print(f"{size} MB: {median:.2f} s", flush=True)
    base = rows[0][1] / rows[0][0]
    now = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        f"{now}, {platform.system()} {platform.machine()}, {cpu_model()}, Python {sys.version.split()[0]}",
        "",
        "| input | secrets planted | median s | MB/s | time per MB vs 1 MB |",
        "|---|---:|---:|---:|---:|",
    ]
    for size, median, n in rows:
        lines.append(f"| {size} MB | {n} | {median:.2f} | {size / median:.2f} | {median / size / base:.2f} |")
    publish("\n".join(lines) + "\n", "redaction.md")


if __name__ == "__main__":
    main()
