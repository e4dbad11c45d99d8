"""The OpenAI-compatible summarizer with the real ``openai`` SDK against a local Chat Completions server."""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from structlog.testing import capture_logs

from sleepcompact import Memory, Settings
from sleepcompact.adapters.openai_summarizer import OpenAISummarizer
from sleepcompact.adapters.summarizers import make_summarizer
from sleepcompact.demo.synthetic import coding_agent
from sleepcompact.domain.errors import InvalidSetting
from tests.support.fake_openai import FakeOpenAI, Reply

CHAT = "/v1/chat/completions"
CANARIES = {
    "openai": "sk-proj-CANARYa1b2c3d4e5f6g7h8i9j0k1l2m3n4o5p6q7r8s9t0",
    "aws": "AKIACANARY1234567890",
    "github": "ghp_CANARYabcdefghijklmnopqrstuvwxyz0123",
}


@pytest.fixture
def fake_openai() -> Iterator[FakeOpenAI]:
    server = FakeOpenAI()
    try:
        yield server
    finally:
        server.stop()


def _settings(database_url: str, fake: FakeOpenAI, **overrides: Any) -> Settings:
    values: dict[str, Any] = {
        "database_url": database_url,
        "openai_api_key": "sk-test-key-not-a-secret",
        "openai_base_url": fake.url,
        "summarizer": "openai",
        "summarizer_model": "gpt-4o-mini",
        **overrides,
    }
    return Settings(**values)


@pytest.fixture
def llm_memory(sqlite_url: str, fake_openai: FakeOpenAI) -> Iterator[Memory]:
    mem = Memory(_settings(sqlite_url, fake_openai), auto_migrate=True)
    try:
        yield mem
    finally:
        mem.close()


def _coding(mem: Memory, *, secrets: bool = False) -> str:
    """A conversation over hard at an 8k window, where the LLM-free steps are not enough."""
    conv = coding_agent(seed=0)
    messages: list[dict[str, Any]] = [{"role": "system", "content": conv.system}, *conv.messages]
    if secrets:
        leak = f"my key is {CANARIES['openai']} and aws {CANARIES['aws']}; token {CANARIES['github']}"
        messages.insert(2, {"role": "user", "content": leak})
        messages.insert(3, {"role": "assistant", "content": "Noted, I will not repeat those."})
    cid = mem.create_conversation("claude-sonnet-4-5", context_window=8_000)
    mem.append_many(cid, messages)
    return cid


def test_a_summary_from_the_endpoint_is_applied_with_usage_and_cost(
    llm_memory: Memory, fake_openai: FakeOpenAI
) -> None:
    fake_openai.script(Reply(text="## Task and goals\n- fix PAY rounding", usage=(9000, 120)))
    cid = _coding(llm_memory)
    outcome = llm_memory.compactions.compact(cid)
    assert outcome.status == "applied", outcome.reason
    (record,) = llm_memory.compactions.history(cid)
    assert (record.summarizer_provider, record.summarizer_model) == ("openai", "gpt-4o-mini")
    assert (record.llm_input_tokens, record.llm_output_tokens) == (9000, 120)
    assert record.llm_cost_usd == pytest.approx((9000 * 0.15 + 120 * 0.6) / 1e6)
    (body,) = fake_openai.bodies(CHAT)
    assert body["model"] == "gpt-4o-mini" and body["max_tokens"] >= 64
    system, user = body["messages"]
    # The shared prompt: instructions as the system message, the transcript only as delimited user data.
    assert system["role"] == "system" and "src/ledger/totals.py" not in system["content"]
    assert user["role"] == "user" and user["content"].count("</transcript>") == 1
    summary = next(r for r in llm_memory.export(cid).messages if r["kind"] == "summary")
    assert "fix PAY rounding" in summary["content"]


def test_planted_secrets_never_leave_the_process(llm_memory: Memory, fake_openai: FakeOpenAI) -> None:
    cid = _coding(llm_memory, secrets=True)
    assert llm_memory.compactions.compact(cid).status == "applied"
    sent = json.dumps(fake_openai.bodies(CHAT))
    for kind, secret in CANARIES.items():
        assert secret not in sent, kind
    assert "[REDACTED:" in sent


def test_a_transient_server_error_is_retried_then_succeeds(
    llm_memory: Memory, fake_openai: FakeOpenAI
) -> None:
    fake_openai.script(Reply(status=500), Reply(status=503), Reply(text="## Task and goals\n- third time"))
    cid = _coding(llm_memory)
    outcome = llm_memory.compactions.compact(cid)
    assert outcome.status == "applied", outcome.reason
    assert len(fake_openai.bodies(CHAT)) == 3
    assert "third time" in str(outcome.summary)


@pytest.mark.parametrize(
    ("reply", "reason"),
    [
        (Reply(text="## Task\n- half a sum", finish_reason="length"), "cut off"),
        (Reply(text="   "), "empty"),
        (Reply(text="I can't help with summarizing this conversation."), "refused"),
    ],
)
def test_an_invalid_answer_is_a_failure_and_nothing_is_applied(
    llm_memory: Memory, fake_openai: FakeOpenAI, reply: Reply, reason: str
) -> None:
    fake_openai.script(reply)
    cid = _coding(llm_memory)
    before = llm_memory.export(cid).messages
    outcome = llm_memory.compactions.compact(cid)
    assert outcome.status == "failed" and reason in outcome.reason
    assert len(fake_openai.bodies(CHAT)) == 1  # an invalid answer is not retried
    assert llm_memory.export(cid).messages == before
    assert reason in llm_memory.compactions.history(cid)[0].error


def test_an_unknown_model_costs_nothing_and_warns_once(sqlite_url: str, fake_openai: FakeOpenAI) -> None:
    model = f"llama3.1:8b-{uuid.uuid4().hex[:8]}"  # a local server's name, not in the price table
    fake_openai.script(
        Reply(text="## Task and goals\n- one", usage=(5000, 50)),
        Reply(text="## Task and goals\n- two", usage=(5000, 50)),
    )
    with Memory(_settings(sqlite_url, fake_openai, summarizer_model=model), auto_migrate=True) as mem:
        with capture_logs() as logs:
            ids = [_coding(mem), _coding(mem)]
            assert [mem.compactions.compact(cid).status for cid in ids] == ["applied", "applied"]
        for cid in ids:
            (record,) = mem.compactions.history(cid)
            assert record.summarizer_model == model and record.llm_cost_usd == 0
            assert record.llm_input_tokens == 5000
    warnings = [e for e in logs if e["event"] == "unknown_model_price"]
    assert len(warnings) == 1 and warnings[0]["model"] == model and warnings[0]["log_level"] == "warning"


def test_settings_from_the_environment_build_it(sqlite_url: str, fake_openai: FakeOpenAI) -> None:
    env = {
        "SLEEPCOMPACT_DATABASE_URL": sqlite_url,
        "SLEEPCOMPACT_SUMMARIZER": "openai",
        "OPENAI_BASE_URL": fake_openai.url,
    }
    settings = Settings.from_env(env)
    assert (settings.summarizer, settings.summarizer_model) == ("openai", "gpt-4o-mini")
    assert settings.openai_base_url == fake_openai.url and settings.openai_api_key is None
    assert "openai_api_key" not in repr(Settings.from_env({**env, "OPENAI_API_KEY": "sk-x"}))
    summarizer = make_summarizer(settings, len)
    assert isinstance(summarizer, OpenAISummarizer) and summarizer.model == "gpt-4o-mini"
    ollama = Settings.from_env({**env, "SLEEPCOMPACT_SUMMARIZER_MODEL": "qwen2.5:7b"})
    assert ollama.summarizer_model == "qwen2.5:7b"
    with Memory(settings, auto_migrate=True) as mem:  # no key: a dummy one is sent, as Ollama allows
        assert mem.compactions.compact(_coding(mem)).status == "applied"
    assert len(fake_openai.bodies(CHAT)) == 1
    with pytest.raises(InvalidSetting, match="OPENAI_API_KEY or OPENAI_BASE_URL"):
        make_summarizer(Settings.from_env({"SLEEPCOMPACT_SUMMARIZER": "openai"}), len)
    with pytest.raises(InvalidSetting, match="anthropic, openai or offline"):
        Settings.from_env({"SLEEPCOMPACT_SUMMARIZER": "gemini"})


def test_the_guards_emergency_compaction_uses_it(llm_memory: Memory, fake_openai: FakeOpenAI) -> None:
    fake_openai.script(Reply(text="## Task and goals\n- guarded summary"))
    cid = _coding(llm_memory)
    ctx = llm_memory.prepare_context(cid, system="You are a careful coding agent.")
    assert ctx.action == "emergency_compacted" and ctx.tokens <= ctx.usable
    (record,) = llm_memory.compactions.history(cid)
    assert record.summarizer_provider == "openai" and record.status == "applied"
    assert len(fake_openai.bodies(CHAT)) == 1


def test_importing_sleepcompact_does_not_import_the_sdk() -> None:
    code = (
        "import sys, sleepcompact\n"
        "from sleepcompact.adapters import openai_summarizer, summarizers\n"
        "assert 'openai' not in sys.modules"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)
