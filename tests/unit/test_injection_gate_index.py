"""The detector asks only the rules a chunk may pass (``GateIndex``): the answer must be exactly what
asking every rule's gate gives, or a rule would be skipped on text it matches (an attack let through)
or run where it cannot match (time lost). Checked on any set of tokens, and on the red-team texts."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from sleepcompact.domain.injection import RULES, flag_imperatives
from sleepcompact.domain.injection_gates import _PARSED, OTHER_LANGUAGE, GateIndex, _parse, passes, tokens_of
from sleepcompact.domain.injection_rules_i18n import RULES_I18N

NAMES = [r.name for r in (*RULES, *RULES_I18N)]
GATE_TOKENS = sorted({t for gate in _PARSED.values() for groups in gate for group in groups for t in group})
TOKENS = st.frozensets(
    st.one_of(st.sampled_from([*GATE_TOKENS, OTHER_LANGUAGE]), st.text("abcxyz", min_size=1, max_size=4)),
    max_size=40,
)
CORPUS = Path(__file__).parents[1] / "redteam" / "tune" / "injections.jsonl"


def _asked_one_by_one(names: list[str], tokens: frozenset[str]) -> list[int]:
    return [i for i, name in enumerate(names) if passes(name, tokens)]


@settings(max_examples=400, deadline=None)
@given(TOKENS)
def test_the_index_names_exactly_the_rules_whose_gate_passes(tokens: frozenset[str]) -> None:
    for names in (NAMES, [r.name for r in RULES]):
        assert GateIndex(names).passing(tokens) == _asked_one_by_one(names, tokens)


def test_on_the_red_team_texts_the_index_and_the_gates_agree_and_attacks_stay_flagged() -> None:
    index = GateIndex(NAMES)
    samples = [json.loads(line) for line in CORPUS.read_text(encoding="utf-8").splitlines()]
    for sample in samples:
        tokens = tokens_of(sample["text"].lower())
        assert index.passing(tokens) == _asked_one_by_one(NAMES, tokens)
    # The same verdicts as before the index: the tune half's attacks are all flagged.
    attacks = [s["text"] for s in samples if s["label"] == "attack"]
    assert sum(bool(flag_imperatives(text)) for text in attacks) == len(attacks)


def test_a_gate_spec_reads_as_alternatives_of_groups() -> None:
    # Parsed once, while the gate table is built: read here on a spec of its own.
    assert _parse("ignore disregard & instructions rules | jailbreak") == (
        (frozenset({"ignore", "disregard"}), frozenset({"instructions", "rules"})),
        (frozenset({"jailbreak"}),),
    )
    assert _parse("curl") == ((frozenset({"curl"}),),)
