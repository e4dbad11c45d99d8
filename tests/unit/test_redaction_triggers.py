"""Which redaction rules run on a text: exactly those whose triggers occur in it (a rule left out would
let its secret through; ``redaction._Triggers`` looks each distinct trigger up once for all rules)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from sleepcompact.adapters.redaction import RedactionPolicy, _triggers

_POLICIES = [RedactionPolicy(), RedactionPolicy(emails=True, card_numbers=True)]
_TRIGGERS = sorted({t for p in _POLICIES for r in _triggers(p).rules for t in r.triggers})
_TEXT = st.lists(
    st.one_of(
        st.sampled_from(_TRIGGERS), st.sampled_from([t.upper() for t in _TRIGGERS]), st.text(max_size=8)
    ),
    max_size=12,
).map(" ".join)


@settings(max_examples=300, deadline=None)
@given(_TEXT, st.sampled_from(_POLICIES))
def test_the_rules_that_run_are_those_whose_triggers_occur(text: str, policy: RedactionPolicy) -> None:
    index = _triggers(policy)
    lowered = text.lower()
    expected = [rule for rule in index.rules if any(t in lowered for t in rule.triggers)]
    assert index.active(text) == expected


def test_the_policy_decides_which_rules_exist_credentials_first() -> None:
    plain, everything = (
        _triggers(RedactionPolicy()),
        _triggers(RedactionPolicy(emails=True, card_numbers=True)),
    )
    assert everything.rules[: len(plain.rules)] == plain.rules
    assert len(everything.rules) == len(plain.rules) + 2
    assert _triggers(RedactionPolicy()) is plain, "built once per policy"
