"""Logging: the library's loggers, and the configuration the processes (and only they) install.

The contract (docs/operations.md tells it to users):

* Every line is an event from a logger named after the module that writes it (``sleepcompact.services.
  guard``, ``sleepcompact.telemetry`` for the canonical lines...), with its fields as key/values.
* Imported as a library, sleepcompact writes nothing to stdout or stderr by itself. Where a line goes
  is decided per call, by what the host application set up:

  - the host configured structlog (``structlog.is_configured()``): the event goes through the host's
    structlog configuration, like the host's own events;
  - otherwise it becomes a standard-library record on that logger (level as logged, message
    ``"event key=value ..."``, the event and its fields as ``record.sleepcompact_event`` and
    ``record.sleepcompact_fields``). A ``NullHandler`` on ``sleepcompact`` keeps Python's last-resort
    handler from printing them, so they show only once the host adds a handler (``logging.basicConfig``).

* ``configure_logging`` is what the CLI, the worker and the scheduler install, and what ``bootstrap``
  installs when ``SLEEPCOMPACT_LOG_FORMAT`` is set: structlog and the root logger rendering one JSON
  object a line on stderr (off a terminal), or pretty lines on one.
* No secret is logged: once ``bootstrap`` has installed the redactor (``redact_with``), every field of
  the library's events is redacted before it is routed (so a host's own structlog configuration gets
  it redacted too), and the configuration installed here redacts every line it renders, other
  libraries' included (``redact_event``). Placeholders in logs are numbered with a key made per
  process: they correlate lines of one process, nothing more.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable, Iterator, MutableMapping
from contextlib import contextmanager
from types import ModuleType
from typing import TYPE_CHECKING, Any

from sleepcompact.config import Settings

if TYPE_CHECKING:
    from structlog.typing import Processor

ROOT_LOGGER = "sleepcompact"
_LEVELS = {"debug": logging.DEBUG, "info": logging.INFO, "warning": logging.WARNING, "error": logging.ERROR}
_configured = False
_pending: Settings | None = None  # ``configure_logging_when_used``: the settings of the first line

logging.getLogger(ROOT_LOGGER).addHandler(logging.NullHandler())


_redact: Callable[[Any], Any] | None = None


def _structlog() -> ModuleType | None:
    """structlog, when this process has imported it; else None.

    structlog is imported only by ``configure_logging`` and the services that bind context: importing
    it pulls in Rich (about 60 ms), which a process that only asks the guard never needs. A host that
    configured structlog or bound its context variables has imported it, so looking in
    ``sys.modules`` loses nothing.
    """
    return sys.modules.get("structlog")


@contextmanager
def bound_context(**fields: Any) -> Iterator[None]:
    """Bind ``fields`` to every event logged inside (structlog's context variables), by us or by the
    libraries we call. Imports structlog on first use, not when a module that binds is imported."""
    import structlog

    with structlog.contextvars.bound_contextvars(**fields):
        yield


def host_configured() -> bool:
    """Whether structlog is configured in this process (by the host application or by us)."""
    module = _structlog()
    return module is not None and bool(module.is_configured())


def redact_with(redact: Callable[[Any], Any]) -> None:
    """Redact every logged value with ``redact`` from now on (``bootstrap`` installs the redactor: this
    module sits below the adapters and cannot import one)."""
    global _redact
    _redact = redact


def _redacted(value: Any) -> Any:
    """A field's value with secrets replaced (strings, and strings inside containers, at any depth)."""
    if _redact is not None and isinstance(value, str | dict | list | tuple):
        return _redact(value)
    return value


def redact_event(
    _logger: Any, _method: str, event_dict: MutableMapping[str, Any]
) -> MutableMapping[str, Any]:
    """A structlog processor: every value of the event, the message included, redacted."""
    for key, value in event_dict.items():
        event_dict[key] = _redacted(value)
    return event_dict


class Logger:
    """A module's logger: ``log.info("event", key=value)``, routed per call (see the module docstring)."""

    __slots__ = ("_stdlib", "name")

    def __init__(self, name: str) -> None:
        self.name = name
        self._stdlib = logging.getLogger(name)

    def _log(self, level: str, event: str, fields: dict[str, Any]) -> None:
        if _pending is not None:
            configure_logging(_pending)
        module = _structlog()
        if module is not None and module.is_configured():
            redacted = {key: _redacted(value) for key, value in fields.items()}
            getattr(module.get_logger(self.name), level)(event, **redacted)
            return
        number = _LEVELS[level]
        if not self._stdlib.isEnabledFor(number):
            return  # before redacting: a silent library pays nothing for its events
        bound = module.contextvars.get_contextvars() if module is not None else {}
        merged = {k: _redacted(v) for k, v in {**bound, **fields}.items()}
        message = " ".join([event, *(f"{k}={v!r}" for k, v in merged.items())])
        extra = {"sleepcompact_event": event, "sleepcompact_fields": merged}
        self._stdlib.log(number, "%s", message, extra=extra, stacklevel=3)

    def debug(self, event: str, **fields: Any) -> None:
        """Log ``event`` at debug level."""
        self._log("debug", event, fields)

    def info(self, event: str, **fields: Any) -> None:
        """Log ``event`` at info level."""
        self._log("info", event, fields)

    def warning(self, event: str, **fields: Any) -> None:
        """Log ``event`` at warning level."""
        self._log("warning", event, fields)

    def error(self, event: str, **fields: Any) -> None:
        """Log ``event`` at error level."""
        self._log("error", event, fields)


def get_logger(name: str) -> Logger:
    """The logger for module ``name`` (every library module logs through one of these)."""
    return Logger(name)


def is_json(settings: Settings) -> bool:
    """Whether log lines are JSON (off a terminal unless forced): then nothing else may print to stderr."""
    fmt = settings.log_format or "auto"
    return fmt == "json" or (fmt == "auto" and not sys.stderr.isatty())


def configure_logging(settings: Settings, *, force: bool = False) -> None:
    """Configure structlog and the standard library's root logger (idempotent unless ``force``)."""
    global _configured, _pending
    if _configured and not force:
        return
    _pending = None
    import structlog  # here, not at the top: see ``_structlog``

    level = getattr(logging, settings.log_level, logging.INFO)
    renderer: Processor = (
        structlog.processors.JSONRenderer() if is_json(settings) else structlog.dev.ConsoleRenderer()
    )
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.StackInfoRenderer(),
            structlog.processors.format_exc_info,
            redact_event,  # last before rendering: a formatted traceback is redacted too
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(level),
        logger_factory=structlog.PrintLoggerFactory(file=sys.stderr),
        cache_logger_on_first_use=False,
    )
    _route_stdlib(renderer, level)
    _configured = True


def configure_logging_when_used(settings: Settings) -> None:
    """``configure_logging``, done when the first line is logged (by sleepcompact or any library).

    For a short-lived command that usually logs nothing (``sleepcompact check``): configuring imports
    structlog and, through it, Rich, about a sixth of that command's start-up.
    """
    global _pending
    if _configured:
        return
    _pending = settings
    root = logging.getLogger()
    if not any(isinstance(h, _FirstLine) for h in root.handlers):
        root.addHandler(_FirstLine())
    root.setLevel(getattr(logging, settings.log_level, logging.INFO))


class _FirstLine(logging.Handler):
    """Stands in on the root logger until the first record: then configures, and hands that record to
    the handler just installed."""

    _sleepcompact = True  # replaced, like our other root handler, when logging is configured

    def emit(self, record: logging.LogRecord) -> None:
        if _pending is None:
            return  # configured meanwhile (this handler is no longer on the root logger)
        configure_logging(_pending)
        for handler in logging.getLogger().handlers:
            if getattr(handler, "_sleepcompact", False) and record.levelno >= handler.level:
                handler.handle(record)


def _route_stdlib(renderer: Processor, level: int) -> None:
    """Standard-library loggers (Celery, Kombu, SQLAlchemy) through the same renderer, so off a terminal
    every line on stderr is one JSON object, whoever wrote it."""
    import structlog

    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(
        structlog.stdlib.ProcessorFormatter(
            processors=[structlog.stdlib.ProcessorFormatter.remove_processors_meta, renderer],
            foreign_pre_chain=[
                structlog.contextvars.merge_contextvars,
                structlog.stdlib.add_log_level,
                structlog.stdlib.add_logger_name,
                structlog.processors.TimeStamper(fmt="iso", utc=True),
                structlog.processors.format_exc_info,
                redact_event,
            ],
        )
    )
    root = logging.getLogger()
    handler._sleepcompact = True  # type: ignore[attr-defined]
    # A new list rather than removeHandler/addHandler: this may run while a record is being dispatched
    # (``_FirstLine``), and that dispatch iterates the old list.
    root.handlers = [*(h for h in root.handlers if not getattr(h, "_sleepcompact", False)), handler]
    root.setLevel(level)
    logging.captureWarnings(True)  # library warnings become log lines too, not raw stderr text
    # Alembic narrates every migration check at INFO; only its warnings matter to an operator.
    logging.getLogger("alembic").setLevel(max(level, logging.WARNING))


__all__ = [
    "ROOT_LOGGER",
    "Logger",
    "bound_context",
    "configure_logging",
    "configure_logging_when_used",
    "get_logger",
    "host_configured",
    "is_json",
    "redact_event",
    "redact_with",
]
