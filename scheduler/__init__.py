"""The beat process: exactly one per deployment, it sends the nightly and idle sweeps on schedule.

The sweeps themselves run on the worker (``sleepcompact.sweep_nightly`` / ``sweep_idle``); beat only
sends them, by name, so it needs no task code and no database. ``python -m scheduler`` (or
``sleepcompact scheduler``) starts it.
"""

from scheduler.beat import create_beat_app

__all__ = ["create_beat_app"]
