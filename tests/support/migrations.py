"""Schema revisions for migration tests: a database taken back to what older code left."""

from __future__ import annotations

from alembic import command
from sqlalchemy import Engine

from sleepcompact.store.migrate import alembic_config


def downgrade_to(engine: Engine, revision: str) -> None:
    """Take the database down to ``revision`` in one transaction (``upgrade(engine)`` brings it back)."""
    cfg = alembic_config()
    with engine.begin() as conn:
        cfg.attributes["connection"] = conn
        command.downgrade(cfg, revision)
