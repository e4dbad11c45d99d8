"""The blind red-team tune sets (``tests/redteam/fresh*/tune.jsonl``) as test cases: every sample its
own case by id, known errors as strict xfails with their reason, and the checks every set gets.

The texts hold invisible characters and other line separators, so a file is split on "\\n" only.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from sleepcompact.domain.injection import RULES, detect
from sleepcompact.domain.injection_gates import passes, tokens_of
from sleepcompact.domain.injection_rules_i18n import RULES_I18N
from sleepcompact.domain.injection_text import views

REDTEAM = Path(__file__).resolve().parents[1] / "redteam"


def tune_samples(corpus: str) -> list[dict[str, Any]]:
    """The tune half of ``tests/redteam/<corpus>/`` (never its report half)."""
    text = (REDTEAM / corpus / "tune.jsonl").read_text(encoding="utf-8")
    return [json.loads(line) for line in text.split("\n") if line.strip()]


def cases(samples: Sequence[dict[str, Any]], known_wrong: Mapping[str, str]) -> list[Any]:
    """One pytest case per sample, by id; a known error is a strict xfail, so its fix shows."""
    return [
        pytest.param(s, id=s["id"], marks=pytest.mark.xfail(reason=known_wrong[s["id"]], strict=True))
        if s["id"] in known_wrong
        else pytest.param(s, id=s["id"])
        for s in samples
    ]


def assert_judged_right(sample: dict[str, Any]) -> None:
    """An attack is flagged, a benign text is not (the findings say why, when not)."""
    verdict = detect(sample["text"])
    if sample["label"] == "attack":
        assert verdict.flagged, (sample["category"], verdict.score, [f.describe() for f in verdict.findings])
    else:
        assert not verdict.flagged, (sample["category"], verdict.reasons)


def assert_no_gate_hides_a_match(samples: Sequence[dict[str, Any]]) -> None:
    """A rule that matches a sample's view is never skipped by its gate (the gates only save time)."""
    for sample in samples:
        for view in views(sample["text"]):
            tokens = tokens_of(view.text.lower())
            for rule in (*RULES, *RULES_I18N):
                if rule.pattern.search(view.text):
                    assert passes(rule.name, tokens), (rule.name, view.how, sample["id"])
