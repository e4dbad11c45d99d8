"""structlog, configured once per process: JSON when not on a terminal, pretty on one."""

from __future__ import annotations

import logging
import sys

import structlog

from sleepcompact.config import Settings

_configured = False


def configure_logging(settings: Settings, *, force: bool = False) -> None:
    """Configure structlog and the standard library's root logger (idempotent unless ``force``)."""
    global _configured
    if _configured and not force:
        return
    level = getattr(logging, settings.log_level, logging.INFO)
    pretty = settings.log_format == "console" or (settings.log_format == "auto" and sys.stderr.isatty())
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
    logging.basicConfig(level=level, stream=sys.stderr, format="%(levelname)s %(name)s: %(message)s")
    # Alembic narrates every migration check at INFO; only its warnings matter to an operator.
    logging.getLogger("alembic").setLevel(max(level, logging.WARNING))
    _configured = True
