"""Context windows, plans, output reserves, thresholds, and the settings that feed them."""

from __future__ import annotations

import pytest

from sleepcompact.config import DEFAULT_MODEL, Settings
from sleepcompact.domain.budget import (
    DEFAULT_MODEL as DEFAULT_SPEC,
)
from sleepcompact.domain.budget import (
    Budget,
    Thresholds,
    make_budget,
    model_spec,
    output_reserve_for,
    resolve_window,
)
from sleepcompact.domain.errors import InvalidSetting

SONNET = "claude-sonnet-4-5-20250929"

# -- model_spec --------------------------------------------------------------------------------------


def test_dated_claude_sonnet_matches_its_family() -> None:
    spec = model_spec(SONNET)
    assert spec.prefix == "claude-sonnet-4-5"
    assert spec.context_window == 200_000
    assert spec.max_output == 64_000
    assert spec.safety_factor == 1.15


def test_longest_prefix_wins() -> None:
    # "claude-opus-4-1" must beat both "claude-opus-4" and "claude".
    assert model_spec("claude-opus-4-1-20250805").max_output == 32_000
    assert model_spec("claude-opus-4-1-20250805").prefix == "claude-opus-4-1"
    assert model_spec("claude-opus-4-5-20251101").max_output == 64_000
    # Only the generic "claude" entry matches an unknown Claude model.
    assert model_spec("claude-2.1").prefix == "claude"
    assert model_spec("claude-2.1").max_output == 8_192


def test_gpt_4o_mini_has_a_128k_window() -> None:
    spec = model_spec("gpt-4o-mini")
    assert spec.context_window == 128_000
    assert spec.safety_factor == 1.0


def test_model_matching_ignores_case() -> None:
    assert model_spec("Claude-Sonnet-4-5").context_window == 200_000


def test_unknown_model_gets_the_128k_default() -> None:
    spec = model_spec("llama-3-70b")
    assert spec is DEFAULT_SPEC
    assert spec.context_window == 128_000
    assert spec.safety_factor > 1.0


# -- resolve_window ----------------------------------------------------------------------------------


def test_no_plan_uses_the_model_window() -> None:
    assert resolve_window(SONNET, None, None) == 200_000
    assert resolve_window("gpt-4o-mini", None, None) == 128_000


@pytest.mark.parametrize(("plan", "window"), [("free", 16_000), ("pro", 32_000), ("ultra", 200_000)])
def test_plan_caps_the_window(plan: str, window: int) -> None:
    assert resolve_window(SONNET, plan, None) == window


def test_ultra_plan_keeps_a_larger_model_window() -> None:
    assert resolve_window("gpt-4.1", "ultra", None) == 1_047_576


def test_unknown_plan_is_an_invalid_setting() -> None:
    with pytest.raises(InvalidSetting) as caught:
        resolve_window(SONNET, "enterprise", None)
    assert str(caught.value) == "unknown plan 'enterprise'; expected one of free, pro, ultra"


def test_explicit_context_window_overrides_the_model() -> None:
    assert resolve_window(SONNET, None, 50_000) == 50_000
    # A caller may ask for more than the table says (e.g. a 1M beta window).
    assert resolve_window(SONNET, None, 1_000_000) == 1_000_000


def test_explicit_context_window_is_still_capped_by_the_plan() -> None:
    assert resolve_window(SONNET, "pro", 50_000) == 32_000
    assert resolve_window(SONNET, "free", 8_000) == 8_000
    assert resolve_window(SONNET, "ultra", 50_000) == 50_000


def test_tiny_explicit_context_window_is_rejected() -> None:
    with pytest.raises(InvalidSetting, match="1024"):
        resolve_window(SONNET, None, 500)


def test_an_explicit_context_window_of_exactly_1024_tokens_is_the_smallest_accepted() -> None:
    assert resolve_window(SONNET, None, 1024) == 1024
    with pytest.raises(InvalidSetting) as caught:
        resolve_window(SONNET, None, 1023)
    assert str(caught.value) == "context_window must be at least 1024 tokens, got 1023"


# -- output reserve ------------------------------------------------------------------------------------


def test_output_reserve_for_claude_sonnet_is_32k_leaving_168k() -> None:
    reserve = output_reserve_for(SONNET, 200_000)
    assert reserve == 32_000
    assert 200_000 - reserve == 168_000  # BaseAgent's usable figure


def test_output_reserve_on_free_plan_is_a_quarter_of_the_window() -> None:
    window = resolve_window(SONNET, "free", None)
    assert output_reserve_for(SONNET, window) == 4_000


def test_output_reserve_of_a_window_not_divisible_by_four_is_whole_tokens() -> None:
    reserve = output_reserve_for(SONNET, 1026)
    assert reserve == 256 and isinstance(reserve, int)


def test_output_reserve_is_limited_by_the_models_max_output() -> None:
    assert output_reserve_for("claude-3-5-haiku-20241022", 200_000) == 8_192


def test_output_reserve_never_exceeds_32k() -> None:
    assert output_reserve_for("gpt-5", 400_000) == 32_000


# -- make_budget -----------------------------------------------------------------------------------


def _sonnet_budget() -> Budget:
    return make_budget(
        context_window=200_000, output_reserve=32_000, thresholds=Thresholds(), safety_factor=1.15
    )


def test_default_thresholds() -> None:
    t = Thresholds()
    assert (t.soft, t.hard, t.target) == (0.70, 0.85, 0.65)


def test_make_budget_usable_hard_and_target() -> None:
    b = _sonnet_budget()
    assert b.context_window == 200_000
    assert b.output_reserve == 32_000
    assert b.usable == 168_000
    assert b.hard == 142_800
    assert b.target == 109_200
    assert b.safety_factor == 1.15


def test_make_budget_soft_is_70_percent_of_usable() -> None:
    # 168_000 * 0.70 is 117599.99999999999 in floating point; the threshold must still be 117,600.
    assert _sonnet_budget().soft == 117_600


def test_thresholds_are_ordered() -> None:
    b = _sonnet_budget()
    assert b.target < b.soft < b.hard < b.usable


def test_make_budget_with_custom_thresholds() -> None:
    b = make_budget(
        context_window=16_000,
        output_reserve=4_000,
        thresholds=Thresholds(soft=0.6, hard=0.9, target=0.25),
        safety_factor=1.0,
    )
    assert b.usable == 12_000
    assert (b.soft, b.hard, b.target) == (7_200, 10_800, 3_000)


def test_reserve_larger_than_window_leaves_nothing_usable() -> None:
    b = make_budget(context_window=1_000, output_reserve=2_000, thresholds=Thresholds(), safety_factor=1.0)
    assert b.usable == 0
    assert b.percent_of_usable(10) == 100.0


@pytest.mark.parametrize(
    ("soft", "hard", "target"),
    [
        (0.5, 0.85, 0.5),  # target == soft
        (0.5, 0.85, 0.6),  # target > soft
        (0.9, 0.85, 0.5),  # soft > hard
        (0.7, 1.2, 0.5),  # hard > 1
        (0.7, 0.85, 0.0),  # target must be positive
        (0.7, 0.85, -0.1),
    ],
)
def test_invalid_thresholds_raise_invalid_setting(soft: float, hard: float, target: float) -> None:
    with pytest.raises(InvalidSetting, match="thresholds"):
        Thresholds(soft=soft, hard=hard, target=target)


def test_soft_equal_to_hard_is_allowed() -> None:
    t = Thresholds(soft=0.8, hard=0.8, target=0.4)
    assert t.soft == t.hard


def test_effective_rounds_up_with_the_safety_factor() -> None:
    b = _sonnet_budget()
    assert b.effective(0) == 0
    assert b.effective(1) == 2  # 1.15 rounds up
    assert b.effective(100) == 115  # exact: no float overshoot to 116
    assert b.effective(1000) == 1150
    assert b.effective(1001) == 1152  # 1151.15 rounds up
    unit = make_budget(context_window=10_000, output_reserve=0, thresholds=Thresholds(), safety_factor=1.0)
    assert unit.effective(1234) == 1234


def test_percent_of_usable() -> None:
    b = _sonnet_budget()
    assert b.percent_of_usable(0) == 0.0
    # 100_000 counted tokens are 115_000 model tokens, 68.5% of 168_000.
    assert b.percent_of_usable(100_000) == 68.5


# -- Settings.from_env ---------------------------------------------------------------------------------


def test_from_env_with_nothing_set_gives_defaults() -> None:
    s = Settings.from_env({})
    assert s == Settings()
    assert s.summarizer == "offline"
    assert s.anthropic_api_key is None
    assert s.default_model == DEFAULT_MODEL
    assert s.thresholds == Thresholds()


def test_from_env_reads_thresholds() -> None:
    s = Settings.from_env(
        {
            "SLEEPCOMPACT_SOFT_THRESHOLD": "0.6",
            "SLEEPCOMPACT_HARD_THRESHOLD": "0.9",
            "SLEEPCOMPACT_TARGET_RATIO": "0.3",
        }
    )
    assert s.thresholds == Thresholds(soft=0.6, hard=0.9, target=0.3)


def test_from_env_empty_threshold_keeps_the_default() -> None:
    assert Settings.from_env({"SLEEPCOMPACT_SOFT_THRESHOLD": ""}).thresholds.soft == 0.70


def test_from_env_reads_other_settings() -> None:
    s = Settings.from_env(
        {
            "SLEEPCOMPACT_DATABASE_URL": "postgresql+psycopg://u@h/db",
            "SLEEPCOMPACT_DEFAULT_MODEL": "gpt-4o",
            "SLEEPCOMPACT_MAX_MESSAGE_BYTES": "1000",
            "SLEEPCOMPACT_LOG_LEVEL": "debug",
            "SLEEPCOMPACT_LOG_FORMAT": "json",
            "ANTHROPIC_BASE_URL": "http://localhost:9999",
        }
    )
    assert s.database_url == "postgresql+psycopg://u@h/db"
    assert s.default_model == "gpt-4o"
    assert s.max_message_bytes == 1000
    assert s.log_level == "DEBUG"
    assert s.log_format == "json"
    assert s.anthropic_base_url == "http://localhost:9999"


def test_summarizer_defaults_to_anthropic_iff_a_key_is_set() -> None:
    with_key = Settings.from_env({"ANTHROPIC_API_KEY": "sk-ant-xyz"})
    assert with_key.summarizer == "anthropic"
    assert with_key.anthropic_api_key == "sk-ant-xyz"
    assert Settings.from_env({}).summarizer == "offline"
    # An empty key is no key.
    empty = Settings.from_env({"ANTHROPIC_API_KEY": ""})
    assert empty.summarizer == "offline"
    assert empty.anthropic_api_key is None


def test_explicit_summarizer_wins_over_the_key() -> None:
    s = Settings.from_env({"ANTHROPIC_API_KEY": "sk-ant-xyz", "SLEEPCOMPACT_SUMMARIZER": "offline"})
    assert s.summarizer == "offline"


@pytest.mark.parametrize(
    ("env", "names"),
    [
        ({"SLEEPCOMPACT_SUMMARIZER": "gemini"}, "SLEEPCOMPACT_SUMMARIZER"),
        ({"SLEEPCOMPACT_LOG_FORMAT": "xml"}, "SLEEPCOMPACT_LOG_FORMAT"),
        ({"SLEEPCOMPACT_SOFT_THRESHOLD": "seventy"}, "SLEEPCOMPACT_SOFT_THRESHOLD"),
        ({"SLEEPCOMPACT_HARD_THRESHOLD": "high"}, "SLEEPCOMPACT_HARD_THRESHOLD"),
        ({"SLEEPCOMPACT_TARGET_RATIO": "x"}, "SLEEPCOMPACT_TARGET_RATIO"),
        ({"SLEEPCOMPACT_MAX_MESSAGE_BYTES": "lots"}, "SLEEPCOMPACT_MAX_MESSAGE_BYTES"),
        ({"SLEEPCOMPACT_MAX_MESSAGE_BYTES": "0"}, "SLEEPCOMPACT_MAX_MESSAGE_BYTES"),
        ({"SLEEPCOMPACT_MAX_MESSAGE_BYTES": "-5"}, "SLEEPCOMPACT_MAX_MESSAGE_BYTES"),
        ({"SLEEPCOMPACT_TARGET_RATIO": "0.8"}, "thresholds"),  # target above soft
    ],
)
def test_invalid_env_values_raise_invalid_setting(env: dict[str, str], names: str) -> None:
    with pytest.raises(InvalidSetting, match=names):
        Settings.from_env(env)


def test_repr_does_not_leak_the_api_key() -> None:
    s = Settings(anthropic_api_key="sk-ant-secret")
    assert "sk-ant-secret" not in repr(s)
    assert "sk-ant-secret" not in str(s)
    assert "sk-ant-secret" not in repr(Settings.from_env({"ANTHROPIC_API_KEY": "sk-ant-secret"}))


def test_settings_are_frozen_and_overrides_make_a_copy() -> None:
    s = Settings()
    t = s.with_overrides(default_model="gpt-4o")
    assert t.default_model == "gpt-4o"
    assert s.default_model == DEFAULT_MODEL
    with pytest.raises(AttributeError):
        s.default_model = "x"  # type: ignore[misc]


def test_the_nightly_sweep_says_why_it_skips_a_conversation() -> None:
    from datetime import UTC, datetime, timedelta

    from sleepcompact.domain.schedule import not_due_tonight

    night = datetime(2026, 11, 24, 3, 0, tzinfo=UTC)
    day = timedelta(days=1)
    assert not_due_tonight(night - 2 * day, night - day, None, night) is None  # never slept, created before
    assert "created after" in str(not_due_tonight(night + day / 4, night + day / 4, None, night))
    assert "already slept tonight" in str(not_due_tonight(night - 2 * day, night, night, night))
    assert "no activity since" in str(not_due_tonight(night - 2 * day, night - day, night - day / 2, night))
    assert not_due_tonight(night - 2 * day, night - day / 4, night - day / 2, night) is None  # due
