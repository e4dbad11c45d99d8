"""Settings: one frozen object, and the only place that reads the environment.

Every other module takes a ``Settings`` (or plain values) as an argument, so
tests build settings explicitly and nothing depends on the process's
environment by accident.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Literal

from sleepcompact.domain.budget import Thresholds
from sleepcompact.domain.errors import InvalidSetting

DEFAULT_DATABASE_URL = "sqlite:///./sleepcompact.db"
DEFAULT_BROKER_URL = "sqla+sqlite:///./sleepcompact-broker.db"
DEFAULT_MODEL = "claude-sonnet-4-5"
DEFAULT_SUMMARIZER_MODEL = "claude-haiku-4-5"

SummarizerName = Literal["anthropic", "offline"]
LogFormat = Literal["auto", "json", "console"]


@dataclass(frozen=True)
class Settings:
    """Everything configurable. Build it with ``Settings.from_env()`` or directly."""

    database_url: str = DEFAULT_DATABASE_URL
    broker_url: str = DEFAULT_BROKER_URL
    anthropic_api_key: str | None = field(default=None, repr=False)
    anthropic_base_url: str | None = None
    summarizer: SummarizerName = "offline"
    summarizer_model: str = DEFAULT_SUMMARIZER_MODEL
    default_model: str = DEFAULT_MODEL
    thresholds: Thresholds = field(default_factory=Thresholds)
    max_message_bytes: int = 2 * 1024 * 1024
    log_level: str = "INFO"
    log_format: LogFormat = "auto"
    summarizer_timeout_s: float = 60.0
    summarizer_attempts: int = 4
    redact_emails: bool = False
    redact_card_numbers: bool = False

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Settings:
        """Read ``SLEEPCOMPACT_*`` and ``ANTHROPIC_*`` variables; unset ones keep their defaults."""
        env = os.environ if environ is None else environ
        key = env.get("ANTHROPIC_API_KEY") or None
        summarizer = env.get("SLEEPCOMPACT_SUMMARIZER", "anthropic" if key else "offline")
        if summarizer not in ("anthropic", "offline"):
            raise InvalidSetting(f"SLEEPCOMPACT_SUMMARIZER must be anthropic or offline, got {summarizer!r}")
        log_format = env.get("SLEEPCOMPACT_LOG_FORMAT", "auto")
        if log_format not in ("auto", "json", "console"):
            raise InvalidSetting(f"SLEEPCOMPACT_LOG_FORMAT must be auto, json or console, got {log_format!r}")
        defaults = Thresholds()
        thresholds = Thresholds(
            soft=_float(env, "SLEEPCOMPACT_SOFT_THRESHOLD", defaults.soft),
            hard=_float(env, "SLEEPCOMPACT_HARD_THRESHOLD", defaults.hard),
            target=_float(env, "SLEEPCOMPACT_TARGET_RATIO", defaults.target),
        )
        return cls(
            database_url=env.get("SLEEPCOMPACT_DATABASE_URL", DEFAULT_DATABASE_URL),
            broker_url=env.get("SLEEPCOMPACT_BROKER_URL", DEFAULT_BROKER_URL),
            anthropic_api_key=key,
            anthropic_base_url=env.get("ANTHROPIC_BASE_URL") or None,
            summarizer=summarizer,  # type: ignore[arg-type]  # checked above
            summarizer_model=env.get("SLEEPCOMPACT_SUMMARIZER_MODEL", DEFAULT_SUMMARIZER_MODEL),
            default_model=env.get("SLEEPCOMPACT_DEFAULT_MODEL", DEFAULT_MODEL),
            thresholds=thresholds,
            max_message_bytes=_int(env, "SLEEPCOMPACT_MAX_MESSAGE_BYTES", 2 * 1024 * 1024),
            log_level=env.get("SLEEPCOMPACT_LOG_LEVEL", "INFO").upper(),
            log_format=log_format,  # type: ignore[arg-type]  # checked above
            summarizer_timeout_s=_float(env, "SLEEPCOMPACT_SUMMARIZER_TIMEOUT", 60.0),
            summarizer_attempts=_int(env, "SLEEPCOMPACT_SUMMARIZER_ATTEMPTS", 4),
            redact_emails=_bool(env, "SLEEPCOMPACT_REDACT_EMAILS"),
            redact_card_numbers=_bool(env, "SLEEPCOMPACT_REDACT_CARD_NUMBERS"),
        )

    def with_overrides(self, **changes: object) -> Settings:
        """A copy with some fields replaced (the object itself never changes)."""
        return replace(self, **changes)  # type: ignore[arg-type]


def _float(env: Mapping[str, str], name: str, default: float) -> float:
    raw = env.get(name)
    if raw is None or raw == "":
        return default
    try:
        return float(raw)
    except ValueError as exc:
        raise InvalidSetting(f"{name} must be a number, got {raw!r}") from exc


def _int(env: Mapping[str, str], name: str, default: int) -> int:
    raw = env.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = int(raw)
    except ValueError as exc:
        raise InvalidSetting(f"{name} must be an integer, got {raw!r}") from exc
    if value <= 0:
        raise InvalidSetting(f"{name} must be positive, got {value}")
    return value


def _bool(env: Mapping[str, str], name: str) -> bool:
    raw = env.get(name, "").strip().lower()
    if raw in ("", "0", "false", "no", "off"):
        return False
    if raw in ("1", "true", "yes", "on"):
        return True
    raise InvalidSetting(f"{name} must be true or false, got {raw!r}")
