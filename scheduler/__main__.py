"""``python -m scheduler``: run Celery beat (exactly one per deployment)."""

from __future__ import annotations

import sys

from scheduler.beat import create_beat_app
from sleepcompact.config import Settings
from sleepcompact.logs import configure_logging, is_json


def main(argv: list[str] | None = None) -> None:
    """Start beat; extra arguments go to ``celery beat``."""
    settings = Settings.from_env()
    configure_logging(settings)
    app = create_beat_app(settings)
    args = [
        *(["--quiet"] if is_json(settings) else []),  # the banner is not a JSON line
        "beat",
        "--loglevel",
        settings.log_level,
        "--schedule",
        settings.beat_schedule_file,
        *(sys.argv[1:] if argv is None else argv),
    ]
    app.start(args)


if __name__ == "__main__":
    main()
