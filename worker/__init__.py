"""The Celery worker process: the app factory and its thin tasks (the sleep pipeline builds on this)."""
