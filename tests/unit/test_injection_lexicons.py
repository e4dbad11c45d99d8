"""How the injection detector's rule builders read their word lists (``injection_rules_world._any``,
``injection_rules.rule``).

They run only while the rule tables are built, at import, so no test of the detector can tell a builder
that mis-reads a list from a table written differently: mutation testing found every mutant of them
alive (docs/mutation.md). Here they build rules of their own, and what is checked is what a detector
user sees: which text a lexicon word matches, and which words open the non-English gate.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest

from sleepcompact.domain import injection_rules_world as world
from sleepcompact.domain.injection_rules import Rule, rule


@pytest.fixture(autouse=True)
def _gate_words_restored() -> Iterator[None]:
    # _any adds to the module's gate vocabulary: leave it as the rule tables built it.
    before = set(world.ASCII_WORDS)
    yield
    world.ASCII_WORDS.clear()
    world.ASCII_WORDS.update(before)


def _found(words: str, text: str) -> list[str]:
    return [m.group() for m in re.finditer(world._any(words), text, re.I)]


@pytest.mark.parametrize(
    ("words", "text", "found"),
    [
        ("lee", "lee wrote", ["lee"]),
        ("lee", "sleep well", []),  # not inside a word
        ("lee", "leeway", []),  # and not the start of a longer one
        ("lee", "lee2 and _lee", ["lee", "lee"]),  # digits and underscores are no letters
        ("gpt", "gpt4, Gpt-4o", ["gpt", "Gpt"]),
        ("ki ia", "die KI und la IA", ["KI", "IA"]),
        ("asist\\w*", "la asistente, el asistent", ["asistente", "asistent"]),  # a stem takes any ending
        ("asist\\w*", "reasistente", []),  # but still starts a word
        ("bots?", "botsx", ["bots"]),  # a word ending in ? is a stem too
        ("regel*", "regeln", ["regel"]),  # and one ending in any repetition
        ("sin_(?:preguntar|verificar)", "sin verificarlo", ["sin verificar"]),  # and one ending in a group
        ("trợ_lý", "Gửi trợ  lý AI, trợ\nlý", ["trợ  lý", "trợ\nlý"]),  # _ is any run of spaces
        ("trợ_lý", "trợlý", []),
        ("助手", "请AI助手们注意", ["助手"]),  # Chinese attaches particles: matched anywhere
        ("مساعد", "للمساعد الذكي", ["مساعد"]),
        ("ai 助手 msaidizi", "msaidizi, ai 的助手", ["msaidizi", "ai", "助手"]),  # both kinds in one rule
        ("zeta alpha", "alpha then zeta", ["alpha", "zeta"]),  # every word, whatever its first letter
        ("a\\.i\\.", "an a.i. reader, a-i-", ["a.i."]),
    ],
)
def test_a_lexicon_word_matches_whole_words_in_spaced_scripts_and_anywhere_in_others(
    words: str, text: str, found: list[str]
) -> None:
    assert _found(words, text) == found


def test_a_lexicon_is_one_group_that_can_be_quantified_and_joined() -> None:
    reader = world._any("asist\\w* 助手")
    pattern = rf"{world._any('dear liebe')}\s+{reader}"
    assert re.search(pattern, "Liebe Asistente", re.I)
    assert re.search(pattern, "dear 助手", re.I)
    assert not re.search(pattern, "dear friend", re.I)
    assert re.fullmatch(rf"(?:{world._any('ai ki')})+", "aiki") is None  # ki after ai touches a letter


@pytest.mark.parametrize(
    ("words", "opened_by"),
    [
        ("kecerdasan_buatan", {"kecerdasan"}),  # a phrase: its longest word opens the gate
        ("to_the_moonbase", {"moonbase"}),  # never an English word, however long
        ("de_la_maquina maquina_de_la", {"maquina"}),
        ("msaidizi wasaidizi", {"msaidizi", "wasaidizi"}),
        ("msaidizi_wa_ai", {"msaidizi"}),  # the longest, not the last in the alphabet
        ("ai gpt the", set()),  # English words never open it
        ("asist\\w* bots?", set()),  # nor stems (the gate sees whole words)
        ("trợ_lý 助手", set()),  # nor words outside plain ASCII
    ],
)
def test_the_gate_opens_on_a_lexicon_s_plain_words_and_never_on_english(
    words: str, opened_by: set[str]
) -> None:
    world.ASCII_WORDS.clear()
    world._any(words)
    assert set(world.ASCII_WORDS) == opened_by


def test_a_rule_is_case_insensitive_and_multi_line_unless_told_otherwise() -> None:
    made = rule("note_for_ai", "a note for the AI", 0.6, r"^note for ai$")
    assert made == Rule("note_for_ai", "a note for the AI", 0.6, r"^note for ai$", re.I | re.M)
    assert made.pattern.search("intro\nNOTE FOR AI\nrest")
    exact = rule("exact", "case kept", 1.0, r"^Note$", flags=0)
    assert exact.flags == 0
    assert not exact.pattern.search("NOTE") and not exact.pattern.search("x\nNote")
    assert exact.pattern.search("Note")
