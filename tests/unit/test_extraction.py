"""Pre-compaction extraction: journal drafts from the messages about to be folded (DESIGN 4, step 4)."""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sleepcompact.demo.synthetic import coding_agent, personal_assistant
from sleepcompact.domain.extraction import (
    MAX_DRAFTS,
    PER_MESSAGE,
    TAGS,
    JournalDraft,
    extract_facts,
    user_name_of,
)
from sleepcompact.domain.records import MessageRecord
from tests.unit.test_summary import rows_of

SOURCES = ("direct", "inference", "environmental")  # tool output is environmental (provenance)


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
    assert errors and all(d.source_type == "environmental" and d.provenance == "tool" for d in errors)
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


def test_max_entries_keeps_the_most_important_in_seq_order() -> None:
    rows = rows_of(coding_agent(seed=0).messages)
    everything = extract_facts(rows)
    few = extract_facts(rows, max_entries=6)
    assert len(everything) > 6 and len(few) == 6
    assert min(d.importance for d in few) >= max(d.importance for d in everything if d not in few)
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


# -- dated third-person statements from every speaker, and how many ------------------------------------


def _dated_rows(turns: list[tuple[str, str, str]]) -> tuple[MessageRecord, ...]:
    """(day, role, text) as stored rows, each dated with its day (as an import keeps the source's time)."""
    rows = rows_of([{"role": role, "content": text} for _day, role, text in turns])
    days = [datetime.fromisoformat(day).replace(tzinfo=UTC) for day, _role, _text in turns]
    return tuple(replace(r, created_at=days[i]) for i, r in enumerate(rows))


CHAT = [
    ("2023-04-29", "user", "Hi! I started a pottery class on Thursdays. I totally agree with you!"),
    ("2023-04-29", "assistant", "That sounds great! Do you enjoy it?"),
    ("2023-05-02", "user", "Do you know any good painters?"),
    ("2023-05-02", "assistant", "I recommend the painter Claude Monet. His water lilies are famous."),
    ("2023-05-02", "user", "Thanks, sounds good."),
]


def test_every_speaker_becomes_a_dated_third_person_statement() -> None:
    drafts = extract_facts(_dated_rows(CHAT), user_name="Emily")
    contents = [d.content for d in drafts]
    assert "[2023-04-29] Emily started a pottery class on Thursdays." in contents
    assert "[2023-05-02] The assistant recommended the painter Claude Monet to Emily." in contents
    assert not any("The user said" in c or "The assistant said" in c for c in contents)
    assert all(re.match(r"^\[\d{4}-\d{2}-\d{2}\] ", c) for c in contents)
    by_content = {d.content: d for d in drafts}
    assert by_content["[2023-04-29] Emily started a pottery class on Thursdays."].source_type == "direct"
    monet = by_content["[2023-05-02] The assistant recommended the painter Claude Monet to Emily."]
    assert monet.source_type == "inference" and "recommendation" in monet.tags
    # The acknowledgement and the pleasantry are journaled too, but under the floor: never promoted.
    chat = [d for d in drafts if "chat" in d.tags]
    assert chat and all(d.importance < 5 for d in chat)
    assert monet.importance >= 7
    assert by_content["[2023-04-29] Emily started a pottery class on Thursdays."].importance >= 8


def test_without_a_name_the_statements_are_about_the_user() -> None:
    drafts = extract_facts(_dated_rows(CHAT))
    assert "[2023-04-29] The user started a pottery class on Thursdays." in [d.content for d in drafts]
    assert any("to the user." in d.content for d in drafts if "recommendation" in d.tags)


@pytest.mark.parametrize(
    ("metadata", "name"),
    [
        ({"source_format": "memorybank", "user": " Jason "}, "Jason"),
        ({"user_name": "Dana Lee"}, "Dana Lee"),
        ({"user": ""}, None),
        ({"user": 42}, None),
        ({"user": "two\nlines"}, None),
        ({}, None),
    ],
)
def test_the_users_name_comes_from_the_conversations_metadata(
    metadata: dict[str, Any], name: str | None
) -> None:
    assert user_name_of(metadata) == name


def test_an_unanswered_question_is_a_dated_gap_about_the_user() -> None:
    drafts = extract_facts(
        _dated_rows(
            [
                ("2024-03-02", "user", "What's the gate for my flight?"),
                ("2024-03-02", "assistant", "I don't know the gate yet."),
            ]
        ),
        user_name="Dana",
    )
    (gap,) = [d for d in drafts if "question" in d.tags]
    assert gap.content == "[2024-03-02] Dana asked, still unanswered: What's the gate for Dana's flight?"


def test_the_budget_is_proportional_to_what_is_folded() -> None:
    # Every message says four things worth remembering; two per folded message are kept, the best first.
    facts = "I live in Berlin {i}. I work as nurse {i} at Charité. I met Noor {i} on May 5. I ran {i} km."
    turns = [(f"2024-01-{1 + i:02d}", "user", facts.format(i=i)) for i in range(10)]
    rows = _dated_rows(turns)
    drafts = extract_facts(rows, user_name="Dana")
    assert len(drafts) == PER_MESSAGE * len(rows)
    assert len(extract_facts(rows[:3], user_name="Dana")) == PER_MESSAGE * 3
    # Far more than one compaction ever folds: the safety bound holds.
    many = _dated_rows(
        [
            ("2024-01-01", "user", " ".join(f"I met person{i}x{j} today." for j in range(3)))
            for i in range(MAX_DRAFTS)
        ]
    )
    assert len(extract_facts(many)) == MAX_DRAFTS


@settings(max_examples=40, deadline=None)
@given(
    turns=st.lists(
        st.tuples(
            st.sampled_from(["user", "assistant"]),
            st.lists(
                st.sampled_from(
                    [
                        "I started a pottery class on Thursdays.",
                        "Thanks!",
                        "What do you think?",
                        'I recommend "Dune".',
                        "Maybe I will move to Oslo.",
                        "My booking reference is XK42PL.",
                        "Hello there.",
                        "I went to the Louvre with my sister Noor.",
                    ]
                ),
                min_size=1,
                max_size=6,
            ).map(" ".join),
        ),
        min_size=1,
        max_size=12,
    )
)
def test_never_more_than_two_drafts_per_folded_message_and_always_in_seq_order(
    turns: list[tuple[str, str]],
) -> None:
    rows = _dated_rows([("2024-02-01", role, text) for role, text in turns])
    drafts = extract_facts(rows, user_name="Dana")
    assert len(drafts) <= PER_MESSAGE * len({r.seq for r in rows})
    assert [d.seq for d in drafts] == sorted(d.seq for d in drafts)
    assert all(d.content.startswith("[2024-02-01] ") for d in drafts)
    kept = {d.content for d in drafts}
    everything = extract_facts(rows, user_name="Dana", max_entries=10**6)
    dropped = [d for d in everything if d.content not in kept]
    assert not dropped or max(d.importance for d in dropped) <= min(d.importance for d in drafts)


def test_an_agent_harness_scolding_the_models_format_is_no_preference_of_the_user() -> None:
    """mini-swe-agent sends its format errors as user messages ("Please always provide EXACTLY ONE
    action ..."): 42 of them in the shared runs. They are the harness speaking, so nothing of them may
    become a direct statement or a preference the user would have stated."""
    harness = (
        "Please always provide EXACTLY ONE action in triple backticks, found 2 actions.\n\n"
        "Please format your action in triple backticks as shown in <response_example>.\n\n"
        "<response_example>\nHere are some thoughts about why you want to perform the action.\n\n"
        "```bash\n<action>\n```\n</response_example>"
    )
    rows = rows_of(
        [
            {"role": "user", "content": "Fix the rounding bug in src/ledger/totals.py, please."},
            {
                "role": "assistant",
                "content": "I will look at totals.py.\n```bash\nls\n```\n```bash\npwd\n```",
            },
            {"role": "user", "content": harness},
        ]
    )
    drafts = extract_facts(rows)
    from_harness = [d for d in drafts if d.seq == 3]
    assert not [d for d in from_harness if d.source_type == "direct" or "preference" in d.tags], from_harness
    assert any(d.source_type == "direct" and "rounding" in d.content for d in drafts)
