"""Alembic migrations (run through ``sleepcompact.store.migrate``, not the alembic CLI)."""
