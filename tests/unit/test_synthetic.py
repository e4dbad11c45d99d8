"""Synthetic conversations: deterministic, well-formed and carrying their ground truth."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from typing import Any

import pytest

from sleepcompact.demo.synthetic import (
    MIN_ASSISTANT_TURNS,
    MIN_CODING_TURNS,
    SyntheticConversation,
    coding_agent,
    personal_assistant,
    scaled,
)
from sleepcompact.domain.messages import normalize


def dump(messages: list[dict[str, Any]]) -> str:
    return json.dumps(messages, ensure_ascii=False, sort_keys=True)


def strings(value: Any) -> list[str]:
    """Every string inside a message (texts, tool inputs, tool outputs), keys excluded."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in strings(v)]
    return []


def message_text(msg: dict[str, Any]) -> str:
    return "\n".join(strings(msg["content"]))


def blocks(msg: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    content = msg["content"]
    return [b for b in content if b["type"] == kind] if isinstance(content, list) else []


def check_well_formed(messages: list[dict[str, Any]]) -> None:
    """Roles alternate from the user, normalize() accepts all, each call is answered once, next turn."""
    assert messages, "no messages"
    seen_calls: set[str] = set()
    answered: set[str] = set()
    for i, msg in enumerate(messages):
        assert msg["role"] == ("user" if i % 2 == 0 else "assistant"), f"message {i} breaks alternation"
        normalized = normalize(msg)
        assert normalized.parts
        content = msg["content"]
        if isinstance(content, str):
            assert content.strip(), f"message {i} is empty"
        for block in content if isinstance(content, list) else []:
            if block["type"] == "text":
                assert block["text"].strip(), f"message {i} has an empty text block"
        calls = [b["id"] for b in blocks(msg, "tool_use")]
        assert list(normalized.tool_call_ids) == calls
        assert not set(calls) & seen_calls, f"message {i} reuses a tool_use id"
        assert len(set(calls)) == len(calls)
        seen_calls.update(calls)
        results = [b["tool_use_id"] for b in blocks(msg, "tool_result")]
        assert list(normalized.tool_result_ids) == results
        if results:
            previous = [b["id"] for b in blocks(messages[i - 1], "tool_use")]
            assert sorted(results) == sorted(previous), f"message {i} does not answer the calls before it"
            assert not set(results) & answered
            answered.update(results)
        if calls:
            assert i + 1 < len(messages), "the last message makes calls nobody answers"
            following = [b["tool_use_id"] for b in blocks(messages[i + 1], "tool_result")]
            assert sorted(following) == sorted(calls)
    assert answered == seen_calls


CONVERSATIONS = {
    "coding-default": lambda: coding_agent(),
    "coding-small": lambda: coding_agent(seed=7, turns=MIN_CODING_TURNS, big_output_tokens=300),
    "coding-long": lambda: coding_agent(seed=3, turns=90, big_output_tokens=1000),
    "assistant-default": lambda: personal_assistant(),
    "assistant-small": lambda: personal_assistant(seed=11, turns=MIN_ASSISTANT_TURNS),
    "assistant-long": lambda: personal_assistant(seed=2, turns=60),
}


@pytest.fixture(params=sorted(CONVERSATIONS))
def conv(request: pytest.FixtureRequest) -> SyntheticConversation:
    result: SyntheticConversation = CONVERSATIONS[request.param]()
    return result


def test_conversation_is_well_formed(conv: SyntheticConversation) -> None:
    check_well_formed(conv.messages)
    assert conv.system.strip()
    assert conv.messages[-1]["role"] == "assistant"


def test_ground_truth_is_present_and_stated(conv: SyntheticConversation) -> None:
    assert conv.facts and conv.identifiers and conv.contradicted
    user_texts = [message_text(m) for m in conv.messages if m["role"] == "user"]
    for fact in conv.facts:
        assert any(fact in text for text in user_texts), f"fact never stated: {fact!r}"
    for old, new in conv.contradicted:
        assert old != new
        assert conv.facts.index(old) < conv.facts.index(new)


def test_identifiers_are_introduced_then_referred_back_to(conv: SyntheticConversation) -> None:
    texts = [message_text(m) for m in conv.messages]
    for ident in conv.identifiers:
        hits = [i for i, text in enumerate(texts) if ident in text]
        assert len(hits) >= 2, f"{ident!r} appears in {len(hits)} message(s)"


_BUILD_BOTH = """
import dataclasses, json
from sleepcompact.demo.synthetic import coding_agent, personal_assistant
for make in (coding_agent, personal_assistant):
    print(json.dumps(dataclasses.asdict(make(seed=5)), ensure_ascii=False, sort_keys=True))
"""


@pytest.fixture(scope="module")
def built_elsewhere() -> dict[str, set[str]]:
    """Both generators' seed-5 conversations, each built in two fresh interpreters whose string hashes
    differ (``PYTHONHASHSEED``): whatever depends on set or dict-of-hash order shows up here, never in
    two builds within one process."""
    out: dict[str, set[str]] = {"coding_agent": set(), "personal_assistant": set()}
    for hash_seed in ("1", "2"):
        proc = subprocess.run(
            [sys.executable, "-c", _BUILD_BOTH],
            env={**os.environ, "PYTHONHASHSEED": hash_seed},
            capture_output=True,
            text=True,
            check=True,
        )
        coding, assistant = proc.stdout.splitlines()
        out["coding_agent"].add(coding)
        out["personal_assistant"].add(assistant)
    return out


@pytest.mark.parametrize("make", [coding_agent, personal_assistant])
def test_same_seed_same_bytes_in_any_interpreter_and_different_seeds_differ(
    make: Any, built_elsewhere: dict[str, set[str]]
) -> None:
    here = json.dumps(dataclasses.asdict(make(seed=5)), ensure_ascii=False, sort_keys=True)
    assert built_elsewhere[make.__name__] == {here}  # the same bytes, every fact and identifier included
    dumps = {dump(make(seed=s).messages) for s in range(6)}
    assert len(dumps) == 6
    assert make(seed=0).identifiers != make(seed=1).identifiers


@pytest.mark.parametrize("turns", [MIN_CODING_TURNS, 40, 57])
def test_coding_agent_turns_give_twice_as_many_messages(turns: int) -> None:
    assert len(coding_agent(seed=1, turns=turns, big_output_tokens=200).messages) == 2 * turns


@pytest.mark.parametrize("turns", [MIN_ASSISTANT_TURNS, 30, 45])
def test_personal_assistant_turns_give_twice_as_many_messages(turns: int) -> None:
    assert len(personal_assistant(seed=1, turns=turns).messages) == 2 * turns


def test_too_few_turns_is_rejected() -> None:
    with pytest.raises(ValueError, match="turns"):
        coding_agent(turns=MIN_CODING_TURNS - 1)
    with pytest.raises(ValueError, match="turns"):
        personal_assistant(turns=MIN_ASSISTANT_TURNS - 1)


@pytest.mark.parametrize("big", [6000, 1500])
def test_coding_agent_mixes_huge_and_small_tool_outputs(big: int) -> None:
    conv = coding_agent(seed=2, big_output_tokens=big)
    sizes = [len(b["content"]) for m in conv.messages for b in blocks(m, "tool_result")]
    huge = [s for s in sizes if s > 4 * big * 0.8]
    assert len(huge) >= 3
    assert any(s < 500 for s in sizes)
    assert max(sizes) < 4 * big * 1.5


def test_coding_agent_content() -> None:
    conv = coding_agent(seed=0)
    names = {b["name"] for m in conv.messages for b in blocks(m, "tool_use")}
    assert names == {"bash", "read_file", "grep", "edit_file", "run_tests"}
    assert any(len(blocks(m, "tool_use")) == 2 for m in conv.messages)
    assert any(b.get("is_error") for m in conv.messages for b in blocks(m, "tool_result"))
    assert all(b["id"].startswith("toolu_0_") for m in conv.messages for b in blocks(m, "tool_use"))
    everything = dump(conv.messages)
    needles = (
        "src/",
        "https://internal.example.com/",
        "pytest tests/",
        "AssertionError: expected",
        " ms",
        " MB",
    )
    for needle in needles:
        assert needle in everything
    final = message_text(conv.messages[-1])
    assert "--- a/" in final and "+++ b/" in final
    # a command and a file are reused by later turns
    commands = [b["input"].get("command") for m in conv.messages for b in blocks(m, "tool_use")]
    reads = [b for m in conv.messages for b in blocks(m, "tool_use") if b["name"] == "read_file"]
    paths = [b["input"]["path"] for b in reads]
    assert any(commands.count(c) >= 2 for c in commands if c)
    assert any(paths.count(p) >= 2 for p in paths)


def test_personal_assistant_content() -> None:
    conv = personal_assistant(seed=0)
    assert len(conv.messages) == 60
    assistant = [message_text(m) for m in conv.messages if m["role"] == "assistant"]
    assert sum("I don't" in text for text in assistant) >= 3  # knowledge gaps
    tool_uses = [b for m in conv.messages for b in blocks(m, "tool_use")]
    assert 1 <= len(tool_uses) <= 2
    assert any("moved from" in new for _, new in conv.contradicted)
    assert len(set(conv.facts)) == len(conv.facts)


@pytest.mark.parametrize("target", [2000, 10_000])
def test_scaled_reaches_target_and_stays_well_formed(target: int) -> None:
    conv = coding_agent(seed=4, big_output_tokens=200)
    before = dump(conv.messages)
    messages = scaled(conv, target)
    assert target <= len(messages) < target + len(conv.messages)
    check_well_formed(messages)
    ids = [b["id"] for m in messages for b in blocks(m, "tool_use")]
    assert len(ids) == len(set(ids))
    assert dump(conv.messages) == before, "scaled() must not mutate its input"
    assert dump(messages[: len(conv.messages)]) == before
    assert dump(scaled(conv, target)) == dump(messages)


def test_scaled_personal_assistant() -> None:
    messages = scaled(personal_assistant(seed=1), 2000)
    assert len(messages) >= 2000
    check_well_formed(messages)
