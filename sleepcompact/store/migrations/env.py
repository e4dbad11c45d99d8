"""Alembic environment: runs on the connection ``sleepcompact.store.migrate`` hands over."""

from __future__ import annotations

from alembic import context

from sleepcompact.store.engine import make_engine
from sleepcompact.store.models import Base

config = context.config
target_metadata = Base.metadata


def run() -> None:
    """Migrate online, on the given connection or on a fresh engine for the configured URL."""
    connection = config.attributes.get("connection")
    if connection is not None:
        context.configure(connection=connection, target_metadata=target_metadata, render_as_batch=True)
        with context.begin_transaction():
            context.run_migrations()
        return
    engine = make_engine(config.get_main_option("sqlalchemy.url") or "")
    try:
        with engine.connect() as conn:
            context.configure(connection=conn, target_metadata=target_metadata, render_as_batch=True)
            with context.begin_transaction():
                context.run_migrations()
    finally:
        engine.dispose()


run()
