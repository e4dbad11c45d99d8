"""Which models share a calibration, where mutation testing found the suite blind (docs/mutation.md,
fourth session): the usage of one Claude, Gemini or OpenAI model calibrates its whole family (they share
a tokenizer), whatever the case of the name; any other model is a family of its own.
"""

from __future__ import annotations

import pytest

from sleepcompact.domain.budget import model_family


@pytest.mark.parametrize(
    ("model", "family"),
    [
        ("claude-sonnet-4-5", "claude"),
        ("Claude-Opus-4", "claude"),
        ("gemini-2.5-pro", "gemini"),
        ("Gemini-2.5-Flash", "gemini"),
        ("gpt-4.1-mini", "gpt"),
        ("GPT-4o", "gpt"),
        ("o1-preview", "gpt"),
        ("o3-mini", "gpt"),
        ("o4-mini", "gpt"),
        ("mistral-large", "mistral-large"),
        ("Llama-3.1-70B", "llama-3.1-70b"),
    ],
)
def test_models_that_share_a_tokenizer_share_a_calibration(model: str, family: str) -> None:
    assert model_family(model) == family
