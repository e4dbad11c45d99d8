"""Every file of real data under ``../shared/data`` imports, compacts and renders back valid.

Real agent traffic nobody tuned on: 22 SWE-agent trajectories, 42 mini-swe-agent runs and 15
MemoryBank companion chats (79 conversations). Each is imported whole, compacted at an 8k and a 32k
window with the offline summarizer and at 8k with the LLM summarizer (the real SDK against the local
fake API, which refuses a request the real one would refuse; at 8k most conversations are folded, so
every kind of summary request is made), and rendered for both providers: every request is valid, fits
its window, and the export still returns every message exactly as imported.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sleepcompact import Memory, Settings
from sleepcompact.domain.formats import parse_import
from sleepcompact.domain.validation import anthropic_problems, openai_problems
from tests.support.fake_anthropic import FakeAnthropic
from tests.support.queues import RecordingQueue

SHARED = Path(__file__).resolve().parents[2].parent / "shared" / "data"
FILES = {
    "swe-agent": sorted((SHARED / "trajectories" / "swe-agent").glob("*.traj")),
    "mini-swe-agent": [SHARED / "trajectories" / "mini-swe-agent-dev.jsonl"],
    "memorybank": [SHARED / "conversations" / "memorybank" / "memory_bank_en.json"],
}
EXPECTED_CONVERSATIONS = {"swe-agent": 22, "mini-swe-agent": 42, "memorybank": 15}


@pytest.fixture
def summarizer(request: pytest.FixtureRequest) -> Iterator[dict[str, Any]]:
    """Settings for one summarizer: the offline one, or the SDK against a fake API server."""
    if request.param == "offline":
        yield {"summarizer": "offline"}
        return
    fake = FakeAnthropic()
    try:
        yield {
            "summarizer": "anthropic",
            "anthropic_api_key": "sk-ant-test-key-not-a-secret",
            "anthropic_base_url": fake.url,
            "_fake": fake,
        }
    finally:
        fake.stop()


def _memory(url: str, options: dict[str, Any]) -> Memory:
    settings = Settings(database_url=url, **{k: v for k, v in options.items() if not k.startswith("_")})
    return Memory(settings, auto_migrate=True, queue=RecordingQueue())


def _check_conversation(mem: Memory, cid: str, window: int, originals: list[dict[str, Any]]) -> str:
    before = mem.check(cid)
    outcome = mem.compactions.compact(cid, force=True)
    assert outcome.status in ("applied", "noop"), (cid, outcome.status, outcome.reason)
    if before.tokens > before.soft:  # over its soft threshold: really compacted, not left alone
        assert outcome.status == "applied", (cid, outcome.reason)
    prepared = mem.prepare_context(cid, system="You are a helpful assistant.")
    assert anthropic_problems(prepared.messages) == [], cid
    assert openai_problems(mem.context(cid, fmt="openai").messages) == [], cid
    assert prepared.tokens <= mem.check(cid).usable <= window, (cid, prepared.tokens)
    assert list(mem.export(cid).appended) == originals, f"{cid}: the export lost or changed a message"
    return outcome.status


@pytest.mark.parametrize(
    ("summarizer", "window"),
    [("offline", 8_000), ("offline", 32_000), ("anthropic", 8_000)],
    indirect=["summarizer"],
)
@pytest.mark.parametrize("dataset", sorted(FILES))
def test_every_shared_file_imports_compacts_and_renders_valid(
    sqlite_url: str, summarizer: dict[str, Any], dataset: str, window: int
) -> None:
    if not all(path.is_file() for path in FILES[dataset]) or not FILES[dataset]:
        pytest.fail(f"the shared data is missing: expected {dataset} under {SHARED}")
    mem = _memory(sqlite_url, summarizer)
    statuses: list[str] = []
    try:
        for path in FILES[dataset]:
            parsed = parse_import(path.read_bytes(), source=path.name, all_records=True)
            ids = mem.import_(path, all_records=True, context_window=window)
            assert len(ids) == len(parsed)
            for cid, conversation in zip(ids, parsed, strict=True):
                statuses.append(_check_conversation(mem, cid, window, conversation.messages))
    finally:
        mem.close()
    assert len(statuses) == EXPECTED_CONVERSATIONS[dataset]
    if window == 8_000:  # most of these conversations are several windows long
        assert statuses.count("applied") >= len(statuses) * 3 // 4, statuses
    fake: FakeAnthropic | None = summarizer.get("_fake")
    if fake is not None:
        # The fake refuses what the real API refuses, so every applied compaction's request was valid.
        asked = [r for r in fake.requests if r["path"] == "/v1/messages" and r["method"] == "POST"]
        assert len(asked) >= statuses.count("applied"), "a compaction did not ask the LLM summarizer"
