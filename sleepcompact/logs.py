"""structlog, configured once per process: JSON when not on a terminal, pretty on one."""

from __future__ import annotations

import logging
import sys

import structlog

from sleepcompact.config import Settings

_configured = False


def is_json(settings: Settings) -> bool:
    """Whether log lines are JSON (off a terminal unless forced): then nothing else may print to stderr."""
    return settings.log_format == "json" or (settings.log_format == "auto" and not sys.stderr.isatty())


def configure_logging(settings: Settings, *, force: bool = False) -> None:
    """Configure structlog and the standard library's root logger (idempotent unless ``force``)."""
    global _configured
    if _configured and not force:
        return
    level = getattr(logging, settings.log_level, logging.INFO)
    pretty = not is_json(settings)
    renderer: structlog.typing.Processor = (
        structlog.dev.ConsoleRenderer() if pretty else structlog.processors.JSONRenderer()
    )
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.StackInfoRenderer(),
            structlog.processors.format_exc_info,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(level),
        logger_factory=structlog.PrintLoggerFactory(file=sys.stderr),
        cache_logger_on_first_use=False,
    )
    # Standard-library loggers (Celery, Kombu, SQLAlchemy) go through the same renderer, so off a
    # terminal every line on stderr is one JSON object, whoever wrote it.
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
            ],
        )
    )
    root = logging.getLogger()
    for old in [h for h in root.handlers if getattr(h, "_sleepcompact", False)]:
        root.removeHandler(old)
    handler._sleepcompact = True  # type: ignore[attr-defined]
    root.addHandler(handler)
    root.setLevel(level)
    logging.captureWarnings(True)  # library warnings become log lines too, not raw stderr text
    # Alembic narrates every migration check at INFO; only its warnings matter to an operator.
    logging.getLogger("alembic").setLevel(max(level, logging.WARNING))
    _configured = True
