"""Pre-compaction extraction: journal drafts from the messages about to be folded (DESIGN 4, step 4)."""

from __future__ import annotations

import re
from typing import Any

import pytest

from sleepcompact.demo.synthetic import coding_agent, personal_assistant
from sleepcompact.domain.extraction import TAGS, JournalDraft, extract_facts
from tests.unit.test_summary import rows_of

SOURCES = ("direct", "observation", "inference")


def key_words(fact: str) -> list[str]:
    return [w.casefold() for w in re.findall(r"[A-Za-z0-9]{4,}", fact)]


def matched(fact: str, drafts: list[JournalDraft]) -> bool:
    """A fact is found when one draft holds all its key words."""
    return any(all(k in d.content.casefold() for k in key_words(fact)) for d in drafts)


@pytest.mark.parametrize("seed", [0, 1, 2, 3, 4])
def test_finds_the_personal_assistant_facts(seed: int) -> None:
    conv = personal_assistant(seed=seed)
    drafts = extract_facts(rows_of(conv.messages))
    found = [f for f in conv.facts if matched(f, drafts)]
    assert len(found) >= 0.7 * len(conv.facts), [f for f in conv.facts if f not in found]
    preferences = [d for d in drafts if "preference" in d.tags]
    assert any("metric" in d.content for d in preferences)
    assert any("seat" in d.content for d in preferences)
    assert all(d.source_type == "direct" for d in preferences)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_finds_the_coding_agent_facts_errors_and_decisions(seed: int) -> None:
    conv = coding_agent(seed=seed)
    drafts = extract_facts(rows_of(conv.messages))
    assert sum(matched(f, drafts) for f in conv.facts) >= 0.7 * len(conv.facts)
    errors = [d for d in drafts if "error" in d.tags]
    assert errors and all(d.source_type == "observation" for d in errors)
    assert any("AssertionError: expected" in d.content for d in errors)
    assert any("deadline" in d.tags for d in drafts)
    assert any(d.source_type == "inference" and "decision" in d.tags for d in drafts)
    idents = " ".join(d.content for d in drafts if "identifier" in d.tags)
    for ident in conv.identifiers[:7]:  # paths, function, class, ticket, card
        assert ident in idents or any(ident in d.content for d in drafts), ident


def test_drafts_are_well_formed_deterministic_and_unique() -> None:
    rows = rows_of(coding_agent(seed=0).messages)
    drafts = extract_facts(rows)
    assert drafts == extract_facts(rows)
    assert len({d.content for d in drafts}) == len(drafts)
    seqs = {r.seq for r in rows}
    for d in drafts:
        assert d.content.strip() and "\n" not in d.content
        assert d.source_type in SOURCES
        assert d.tags and set(d.tags) <= set(TAGS)
        assert d.seq in seqs
    assert [d.seq for d in drafts] == sorted(d.seq for d in drafts)


def test_unanswered_questions_are_tagged() -> None:
    conv = personal_assistant(seed=0)
    questions = [d for d in extract_facts(rows_of(conv.messages)) if "question" in d.tags]
    assert any("gate" in d.content for d in questions)
    assert not any("How far" in d.content for d in questions)  # answered questions are not gaps


def test_max_entries_keeps_user_statements_first() -> None:
    rows = rows_of(coding_agent(seed=0).messages)
    everything = extract_facts(rows)
    few = extract_facts(rows, max_entries=6)
    assert len(everything) > 6 and len(few) == 6
    assert all(d.source_type == "direct" for d in few[:4])
    assert [d.seq for d in few] == sorted(d.seq for d in few)
    assert extract_facts(rows, max_entries=0) == []


SECRETS = [
    "sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789",
    "AKIAIOSFODNN7EXAMPLE",
    "ghp_16C7e42F292c6912E7710c838347Ae178B4a",
    "password=hunter2hunter2",
]


def test_never_returns_secrets() -> None:
    messages: list[dict[str, Any]] = [
        {
            "role": "user",
            "content": f"I prefer deploys on Fridays. My key is {SECRETS[0]} and I must keep it.",
        },
        {"role": "assistant", "content": f"I'll use {SECRETS[1]} because the deploy needs it."},
        {
            "role": "user",
            "content": f"Our token is {SECRETS[2]}. The deadline is Friday. Use {SECRETS[3]} please.",
        },
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Checking."},
                {
                    "type": "tool_use",
                    "id": "t1",
                    "name": "bash",
                    "input": {"command": f"aws s3 ls --key {SECRETS[1]}"},
                },
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "t1", "content": f"Error: bad key {SECRETS[1]}"}
            ],
        },
    ]
    drafts = extract_facts(rows_of(messages))
    text = "\n".join(d.content for d in drafts)
    assert "sk-ant-" not in text and "AKIA" not in text and "ghp_" not in text and "hunter2" not in text
    assert any("Fridays" in d.content and "preference" in d.tags for d in drafts)
    assert any("deadline" in d.tags for d in drafts)
