"""The Celery worker process: the app factory and its thin tasks.

``python -m worker`` (or ``sleepcompact worker``) starts it. Nothing here builds an app, an engine or a
client at import time: ``create_app`` does, once per process.
"""

from worker.app import create_app

__all__ = ["create_app"]
