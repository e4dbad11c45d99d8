"""Settings: one frozen object, and the only place that reads the environment.

Every other module takes a ``Settings`` (or plain values) as an argument, so
tests build settings explicitly and nothing depends on the process's
environment by accident.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from sleepcompact.domain.budget import Thresholds
from sleepcompact.domain.errors import InvalidSetting

DEFAULT_DATABASE_URL = "sqlite:///./sleepcompact.db"
DEFAULT_BROKER_URL = "sqla+sqlite:///./sleepcompact-broker.db"
DEFAULT_MODEL = "claude-sonnet-4-5"
DEFAULT_SUMMARIZER_MODEL = "claude-haiku-4-5"
DEFAULT_OPENAI_SUMMARIZER_MODEL = "gpt-4o-mini"  # from_env, with SLEEPCOMPACT_SUMMARIZER=openai

SummarizerName = Literal["anthropic", "openai", "offline"]
LogFormat = Literal["auto", "json", "console"]
PromptCache = Literal["5m", "1h", "off"]


@dataclass(frozen=True)
class Settings:
    """Everything configurable. Build it with ``Settings.from_env()`` or directly."""

    database_url: str = DEFAULT_DATABASE_URL
    broker_url: str = DEFAULT_BROKER_URL
    broker_polling_interval: float = 0.1  # seconds; the embedded (SQLAlchemy) broker polls
    anthropic_api_key: str | None = field(default=None, repr=False)
    anthropic_base_url: str | None = None
    openai_api_key: str | None = field(default=None, repr=False)  # may be a dummy for vLLM/Ollama
    openai_base_url: str | None = None  # any OpenAI-compatible endpoint; None: api.openai.com
    summarizer: SummarizerName = "offline"
    summarizer_model: str = DEFAULT_SUMMARIZER_MODEL
    default_model: str = DEFAULT_MODEL
    thresholds: Thresholds = field(default_factory=Thresholds)
    max_message_bytes: int = 2 * 1024 * 1024
    sqlite_busy_timeout_s: float = 30.0  # how long a SQLite writer waits for the lock, then StoreBusy
    log_level: str = "INFO"
    log_format: LogFormat | None = None  # None: the library logs nowhere by itself (sleepcompact.logs)
    summarizer_timeout_s: float = 60.0
    summarizer_attempts: int = 4  # in the caller's process only; the worker makes one (Celery retries)
    task_max_retries: int = 6
    task_retry_backoff_s: int = 5
    task_retry_backoff_max_s: int = 600
    redact_emails: bool = False
    redact_card_numbers: bool = False
    redaction_key: str | None = field(default=None, repr=False)  # None: the key migration 0010 stored
    memory_budget_tokens: int = 512
    recall_budget_tokens: int = 600
    prompt_cache: PromptCache = "5m"  # Anthropic cache breakpoints in ctx.request(): their TTL, or off
    entry_trigger: int = 0  # compact a conversation above this many live messages; 0: off
    entry_trigger_floor: float = 0.5  # ... but never below this fraction of the soft threshold
    summary_instructions: str | None = None  # added to every summary request (all tenants)
    tenant_summary_instructions: tuple[tuple[str, str], ...] = ()  # (tenant, instructions) pairs
    hooks: str | None = None  # package.module:function registering hooks (sleepcompact.hooks)
    timezone: str = "UTC"
    nightly_cron: str = "0 3 * * *"
    idle_minutes: int = 30
    idle_sweep_seconds: int = 300
    sweep_batch_size: int = 500
    task_soft_time_limit: int = 300
    task_time_limit: int = 360
    lease_grace_s: int = 60  # how far a lease outlasts the hard time limit (see lease_seconds)
    worker_concurrency: int = 2
    nightly_batches: bool = False
    batch_poll_seconds: int = 300
    beat_schedule_file: str = "./sleepcompact-beat"
    llm_rescoring: bool = False
    auto_compact: bool = True
    guard_deadline_s: float = 20.0
    guard_lease_wait_s: float = 10.0
    sleep_request_interval_s: int = 300
    calibration_cache_s: float = 60.0
    render_cache_conversations: int = 256  # renderings kept per process for the guard (0: none)
    metrics_port: int = 0
    async_workers: int = 8  # threads AsyncMemory runs the sync services in (sleepcompact.aio)

    def __post_init__(self) -> None:
        # Settings built directly (tests, the demo) get the same checks as those read from the environment.
        try:
            ZoneInfo(self.timezone)
        except (ZoneInfoNotFoundError, ValueError) as exc:
            raise InvalidSetting(f"SLEEPCOMPACT_TIMEZONE: unknown time zone {self.timezone!r}") from exc
        nightly_time(self.nightly_cron)
        if self.redaction_key is not None and len(self.redaction_key) < 16:
            raise InvalidSetting("SLEEPCOMPACT_REDACTION_KEY must be random, 16 characters or more")
        if self.task_soft_time_limit >= self.task_time_limit:
            raise InvalidSetting(
                "SLEEPCOMPACT_TASK_SOFT_TIME_LIMIT must be below SLEEPCOMPACT_TASK_TIME_LIMIT, got "
                f"{self.task_soft_time_limit} and {self.task_time_limit}"
            )

    @property
    def lease_seconds(self) -> int:
        """How long a conversation's lease lasts: longer than any task may run, so it never expires early.

        A tick still ``running`` this long after it started has lost its worker (the hard time limit
        would have ended it before), so the idle sweep re-sends it (``services.sweeps``)."""
        return self.task_time_limit + self.lease_grace_s

    @property
    def visibility_timeout(self) -> int:
        """Redis redelivers an unacknowledged task after this; above the hard limit so no task runs twice."""
        return self.task_time_limit * 2 + 60

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Settings:
        """Read ``SLEEPCOMPACT_*``, ``ANTHROPIC_*`` and ``OPENAI_*`` variables; unset ones keep defaults."""
        env = os.environ if environ is None else environ
        key = env.get("ANTHROPIC_API_KEY") or None
        summarizer = env.get("SLEEPCOMPACT_SUMMARIZER", "anthropic" if key else "offline")
        if summarizer not in ("anthropic", "openai", "offline"):
            raise InvalidSetting(
                f"SLEEPCOMPACT_SUMMARIZER must be anthropic, openai or offline, got {summarizer!r}"
            )
        log_format = _log_format(env)
        thresholds = _thresholds(env)
        base = cls(
            database_url=env.get("SLEEPCOMPACT_DATABASE_URL", DEFAULT_DATABASE_URL),
            broker_url=env.get("SLEEPCOMPACT_BROKER_URL", DEFAULT_BROKER_URL),
            broker_polling_interval=_float(env, "SLEEPCOMPACT_BROKER_POLLING_INTERVAL", 0.1),
            anthropic_api_key=key,
            anthropic_base_url=env.get("ANTHROPIC_BASE_URL") or None,
            openai_api_key=env.get("OPENAI_API_KEY") or None,
            openai_base_url=env.get("OPENAI_BASE_URL") or None,
            summarizer=summarizer,  # type: ignore[arg-type]  # checked above
            summarizer_model=env.get(
                "SLEEPCOMPACT_SUMMARIZER_MODEL",
                DEFAULT_OPENAI_SUMMARIZER_MODEL if summarizer == "openai" else DEFAULT_SUMMARIZER_MODEL,
            ),
            default_model=env.get("SLEEPCOMPACT_DEFAULT_MODEL", DEFAULT_MODEL),
            thresholds=thresholds,
            max_message_bytes=_int(env, "SLEEPCOMPACT_MAX_MESSAGE_BYTES", 2 * 1024 * 1024),
            sqlite_busy_timeout_s=_float(env, "SLEEPCOMPACT_SQLITE_BUSY_TIMEOUT", 30.0),
            log_level=env.get("SLEEPCOMPACT_LOG_LEVEL", "INFO").upper(),
            log_format=log_format,
            summarizer_timeout_s=_float(env, "SLEEPCOMPACT_SUMMARIZER_TIMEOUT", 60.0),
            summarizer_attempts=_int(env, "SLEEPCOMPACT_SUMMARIZER_ATTEMPTS", 4),
            task_max_retries=_int(env, "SLEEPCOMPACT_TASK_MAX_RETRIES", 6, minimum=0),
            task_retry_backoff_s=_int(env, "SLEEPCOMPACT_TASK_RETRY_BACKOFF", 5),
            task_retry_backoff_max_s=_int(env, "SLEEPCOMPACT_TASK_RETRY_BACKOFF_MAX", 600),
            redact_emails=_bool(env, "SLEEPCOMPACT_REDACT_EMAILS"),
            redact_card_numbers=_bool(env, "SLEEPCOMPACT_REDACT_CARD_NUMBERS"),
            redaction_key=env.get("SLEEPCOMPACT_REDACTION_KEY") or None,
            memory_budget_tokens=_int(env, "SLEEPCOMPACT_MEMORY_BUDGET", 512, minimum=0),
            recall_budget_tokens=_int(env, "SLEEPCOMPACT_RECALL_BUDGET", 600, minimum=0),
            prompt_cache=_prompt_cache(env),
            entry_trigger=_int(env, "SLEEPCOMPACT_ENTRY_TRIGGER", 0, minimum=0),
            entry_trigger_floor=_float(env, "SLEEPCOMPACT_ENTRY_TRIGGER_FLOOR", 0.5),
            summary_instructions=env.get("SLEEPCOMPACT_SUMMARY_INSTRUCTIONS") or None,
            tenant_summary_instructions=_tenant_instructions(env),
            hooks=env.get("SLEEPCOMPACT_HOOKS") or None,
        )
        return _processes(base, env)

    def with_overrides(self, **changes: object) -> Settings:
        """A copy with some fields replaced (the object itself never changes)."""
        return replace(self, **changes)  # type: ignore[arg-type]


def _processes(base: Settings, env: Mapping[str, str]) -> Settings:
    """``base`` with the settings of the processes around the library read from ``env``: the schedule
    and sweeps, the worker and its tasks, the guard's waits, the caches and the metrics port."""
    return replace(
        base,
        timezone=env.get("SLEEPCOMPACT_TIMEZONE", "UTC"),
        nightly_cron=env.get("SLEEPCOMPACT_NIGHTLY_CRON", "0 3 * * *"),
        idle_minutes=_int(env, "SLEEPCOMPACT_IDLE_MINUTES", 30),
        idle_sweep_seconds=_int(env, "SLEEPCOMPACT_IDLE_SWEEP_SECONDS", 300),
        sweep_batch_size=_int(env, "SLEEPCOMPACT_SWEEP_BATCH_SIZE", 500),
        task_soft_time_limit=_int(env, "SLEEPCOMPACT_TASK_SOFT_TIME_LIMIT", 300),
        task_time_limit=_int(env, "SLEEPCOMPACT_TASK_TIME_LIMIT", 360),
        lease_grace_s=_int(env, "SLEEPCOMPACT_LEASE_GRACE", 60),
        worker_concurrency=_int(env, "SLEEPCOMPACT_WORKER_CONCURRENCY", 2),
        nightly_batches=_bool(env, "SLEEPCOMPACT_NIGHTLY_BATCHES"),
        batch_poll_seconds=_int(env, "SLEEPCOMPACT_BATCH_POLL_SECONDS", 300),
        beat_schedule_file=env.get("SLEEPCOMPACT_BEAT_SCHEDULE", "./sleepcompact-beat"),
        llm_rescoring=_bool(env, "SLEEPCOMPACT_LLM_RESCORING"),
        auto_compact=_bool(env, "SLEEPCOMPACT_AUTO_COMPACT", default=True),
        guard_deadline_s=_float(env, "SLEEPCOMPACT_GUARD_DEADLINE", 20.0),
        guard_lease_wait_s=_float(env, "SLEEPCOMPACT_GUARD_LEASE_WAIT", 10.0),
        sleep_request_interval_s=_int(env, "SLEEPCOMPACT_SLEEP_REQUEST_INTERVAL", 300, minimum=0),
        calibration_cache_s=_float(env, "SLEEPCOMPACT_CALIBRATION_CACHE", 60.0),
        render_cache_conversations=_int(env, "SLEEPCOMPACT_RENDER_CACHE", 256, minimum=0),
        metrics_port=_int(env, "SLEEPCOMPACT_METRICS_PORT", 0, minimum=0),
        async_workers=_int(env, "SLEEPCOMPACT_ASYNC_WORKERS", 8),
    )


def _float(env: Mapping[str, str], name: str, default: float) -> float:
    raw = env.get(name)
    if raw is None or raw == "":
        return default
    try:
        return float(raw)
    except ValueError as exc:
        raise InvalidSetting(f"{name} must be a number, got {raw!r}") from exc


_CRON = re.compile(r"^\s*(\d{1,2})\s+(\d{1,2})\s+\*\s+\*\s+\*\s*$")


def nightly_time(cron: str) -> tuple[int, int]:
    """(hour, minute) of a daily cron line ``M H * * *``; the nightly sweep runs once a day by design."""
    match = _CRON.match(cron)
    if match is None:
        raise InvalidSetting(
            f"SLEEPCOMPACT_NIGHTLY_CRON must be a daily cron line 'MINUTE HOUR * * *', got {cron!r}"
        )
    minute, hour = int(match.group(1)), int(match.group(2))
    if minute > 59 or hour > 23:
        raise InvalidSetting(f"SLEEPCOMPACT_NIGHTLY_CRON: no such time of day in {cron!r}")
    return hour, minute


def _log_format(env: Mapping[str, str]) -> LogFormat | None:
    value = env.get("SLEEPCOMPACT_LOG_FORMAT") or None
    for choice in (None, "auto", "json", "console"):
        if value == choice:
            return choice
    raise InvalidSetting(f"SLEEPCOMPACT_LOG_FORMAT must be auto, json or console, got {value!r}")


def _thresholds(env: Mapping[str, str]) -> Thresholds:
    defaults = Thresholds()
    return Thresholds(
        soft=_float(env, "SLEEPCOMPACT_SOFT_THRESHOLD", defaults.soft),
        hard=_float(env, "SLEEPCOMPACT_HARD_THRESHOLD", defaults.hard),
        target=_float(env, "SLEEPCOMPACT_TARGET_RATIO", defaults.target),
    )


def _tenant_instructions(env: Mapping[str, str]) -> tuple[tuple[str, str], ...]:
    """``SLEEPCOMPACT_TENANT_SUMMARY_INSTRUCTIONS``: a JSON object, tenant id -> instructions."""
    raw = env.get("SLEEPCOMPACT_TENANT_SUMMARY_INSTRUCTIONS")
    if not raw:
        return ()
    try:
        value = json.loads(raw)
    except ValueError as exc:
        raise InvalidSetting(f"SLEEPCOMPACT_TENANT_SUMMARY_INSTRUCTIONS is not JSON: {exc}") from None
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise InvalidSetting("SLEEPCOMPACT_TENANT_SUMMARY_INSTRUCTIONS must map tenant ids to strings")
    return tuple(sorted(value.items()))


def _prompt_cache(env: Mapping[str, str]) -> PromptCache:
    value = env.get("SLEEPCOMPACT_PROMPT_CACHE", "5m")
    for choice in ("5m", "1h", "off"):
        if value == choice:
            return choice
    raise InvalidSetting(f"SLEEPCOMPACT_PROMPT_CACHE must be 5m, 1h or off, got {value!r}")


def _int(env: Mapping[str, str], name: str, default: int, *, minimum: int = 1) -> int:
    raw = env.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = int(raw)
    except ValueError as exc:
        raise InvalidSetting(f"{name} must be an integer, got {raw!r}") from exc
    if value < minimum:
        raise InvalidSetting(f"{name} must be at least {minimum}, got {value}")
    return value


def _bool(env: Mapping[str, str], name: str, *, default: bool = False) -> bool:
    raw = env.get(name, "").strip().lower()
    if raw == "":
        return default
    if raw in ("0", "false", "no", "off"):
        return False
    if raw in ("1", "true", "yes", "on"):
        return True
    raise InvalidSetting(f"{name} must be true or false, got {raw!r}")
