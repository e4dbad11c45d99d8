"""Canaries: every secret of the tuning corpus, planted three ways, never leaves and never becomes memory.

Each secret kind of ``tests/redteam/tune/secrets.jsonl`` is planted in one conversation as a user
message, as a tool result and inside tool-call arguments. The conversation is then compacted by the
Anthropic summarizer (the real SDK against the local fake server), a sleep tick rescores (LLM
rescoring on) and consolidates the journal, and another conversation goes through a Message Batch.
No secret may appear in any request body the server received, in the journal, in the memories, in a
log line, in the shareable export, or in the context rendered for another conversation of the same
agent (where the agent's memories are recalled). The exact export still has them all.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterator
from typing import Any

import pytest
from structlog.testing import capture_logs

from sleepcompact import Memory, Settings
from tests.support.fake_anthropic import FakeAnthropic
from tests.support.redteam import Planted, load_secrets, placements, tool_arguments

SECRETS = load_secrets()
_RANDOM_RUN = re.compile(r"[A-Za-z0-9]{16,}")


def fragments(secret: str) -> list[str]:
    """What must not appear: the secret, its JSON-escaped form, and a 12-character slice of its longest
    random run (so a partial leak, a secret cut at a comma, say, is caught too)."""
    out = [secret, json.dumps(secret)[1:-1]]
    runs = sorted(_RANDOM_RUN.findall(secret), key=len)
    if runs:
        run = runs[-1]
        out.append(run[len(run) // 2 - 6 : len(run) // 2 + 6])
    return out


def leaks(text: str) -> list[str]:
    """The kinds whose secret (or a fragment of it) occurs in ``text``."""
    return [p.kind for p in SECRETS if any(f in text for f in fragments(p.secret))]


def _messages(planted: list[Planted]) -> Iterator[dict[str, Any]]:
    """Each secret as a user message, then in a tool call's arguments and in the tool's result."""
    for i, p in enumerate(planted):
        where = placements(p)
        call_id = f"toolu_{i:04d}"
        yield {"role": "user", "content": where["user message"]}
        yield {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Running it."},
                {"type": "tool_use", "id": call_id, "name": "bash", "input": tool_arguments(p)},
            ],
        }
        yield {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": call_id, "content": where["tool result"]}],
        }
        yield {"role": "assistant", "content": f"Noted the {p.kind.replace('_', ' ')} settings."}


@pytest.fixture
def mem(sqlite_url: str, fake_anthropic: FakeAnthropic) -> Iterator[Memory]:
    """The Anthropic summarizer against the fake server, with LLM journal rescoring on."""
    settings = Settings(
        database_url=sqlite_url,
        anthropic_api_key="sk-ant-test-key-not-a-secret",
        anthropic_base_url=fake_anthropic.url,
        summarizer="anthropic",
        llm_rescoring=True,
        summarizer_attempts=1,
    )
    memory = Memory(settings, auto_migrate=True)
    try:
        yield memory
    finally:
        memory.close()


def _planted_conversation(mem: Memory, window: int = 200_000) -> str:
    cid = mem.create_conversation(
        "claude-sonnet-4-5", tenant_id="t1", agent_id="coder", context_window=window
    )
    mem.append_many(cid, [*_messages(SECRETS), {"role": "user", "content": "Thanks, that is all for now."}])
    return cid


def _everything_sent(fake: FakeAnthropic) -> str:
    return "\n".join(r["raw"] for r in fake.requests)


def test_no_planted_secret_leaves_or_becomes_memory(
    mem: Memory, fake_anthropic: FakeAnthropic, caplog: pytest.LogCaptureFixture
) -> None:
    fake_anthropic.polls_until_ended = 1
    caplog.set_level(logging.DEBUG)
    with capture_logs() as logs:
        cid = _planted_conversation(mem)
        exact = json.dumps(mem.export(cid).to_dict())
        assert not set(p.kind for p in SECRETS) - set(leaks(exact))  # the exact export keeps them all
        assert mem.compactions.compact(cid, force=True).status == "applied"
        tick = mem.sleep.tick(cid, "night-1")  # LLM rescoring, consolidation (and compaction if due)
        assert tick.rescoring is not None and tick.rescoring.entries > 0
        batched = _planted_conversation(mem, window=16_000)  # over soft: its summary goes to the batch
        report = mem.compactions.submit_batch([batched])
        assert report.batch_id
        mem.compactions.poll_batches()
        assert mem.compactions.poll_batches().applied  # the batch result, applied

        other = mem.create_conversation("claude-sonnet-4-5", tenant_id="t1", agent_id="coder")
        mem.append(other, {"role": "user", "content": "What was the wifi password and the staging password?"})
        rendered = mem.prepare_context(other, system="You are a careful coding agent.").request()
        shareable = mem.export(cid, shareable=True).to_dict()

    sent = _everything_sent(fake_anthropic)
    paths = {(r["method"], r["path"]) for r in fake_anthropic.requests}
    assert ("POST", "/v1/messages") in paths and ("POST", "/v1/messages/batches") in paths
    assert len(set(re.findall(r"\[REDACTED:[a-z_]+:\d+\]", sent))) >= len(SECRETS)  # they were there
    journal = mem.journal.entries(cid)
    memories = mem.memories.list(cid, include_invalid=True)
    assert journal and memories
    assert any("[REDACTED:" in e.content for e in journal)  # secret-bearing facts, kept without the secret
    where = {
        "LLM requests": sent,
        "journal": json.dumps([e.to_dict() for e in journal]),
        "memories": json.dumps([m.to_dict() for m in memories], default=str),
        "structlog events": json.dumps(logs, default=str),
        "log records": "\n".join(
            r.getMessage() + repr(getattr(r, "sleepcompact_fields", "")) for r in caplog.records
        ),
        "shareable export": json.dumps(shareable),
        "another conversation's context": json.dumps(rendered, default=str),
    }
    found = {name: leaks(text) for name, text in where.items()}
    assert found == {name: [] for name in where}
    assert shareable["format"].endswith("+shareable") and "[REDACTED:" in where["shareable export"]
    # The other conversation did get the agent's memories, secret-bearing ones included, redacted.
    assert "<memories>" in where["another conversation's context"]
    assert "[REDACTED:" in where["another conversation's context"]


def test_the_same_secret_keeps_its_placeholder_across_jobs_of_a_conversation(
    mem: Memory, fake_anthropic: FakeAnthropic
) -> None:
    """A fresh redactor per job used to number from 1; now the number is keyed by the deployment and
    the conversation, so a summary, the journal and a later request agree, and another conversation
    does not."""
    secret = next(p for p in SECRETS if p.kind == "dotenv_password")
    first = mem.create_conversation("claude-sonnet-4-5", tenant_id="t1", agent_id="coder")
    mem.journal.add(first, f"The deploy used {secret.text}", tags=["fact"])
    mem.journal.add(first, f"Again: {secret.text}", tags=["fact"])
    second = mem.create_conversation("claude-sonnet-4-5", tenant_id="t1", agent_id="coder")
    mem.journal.add(second, f"The deploy used {secret.text}", tags=["fact"])
    numbers = [
        re.findall(r"\[REDACTED:password:(\d+)\]", e.content)
        for cid in (first, second)
        for e in mem.journal.entries(cid)
        if e.conversation_id == cid
    ]
    assert numbers[0] == numbers[1] and numbers[0] != numbers[2]
