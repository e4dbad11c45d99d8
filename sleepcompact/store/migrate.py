"""Create or migrate a database to the newest schema (what ``sleepcompact init`` runs)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy import Engine, inspect, text

from sleepcompact.store.engine import READONLY_OPTION

if TYPE_CHECKING:
    from alembic.config import Config

MIGRATIONS = Path(__file__).with_name("migrations")
# Alembic is imported where it is used, so `import sleepcompact` does not pay for it (about a tenth of
# a second), nor does a Memory on a database already at head (SQLite's embedded default migrates on start).


def alembic_config() -> Config:
    """An Alembic config pointing at the packaged migrations (no alembic.ini needed)."""
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    return cfg


def head_revision() -> str:
    """The newest revision the package ships: every migration file is named by its revision id
    (``0011_due_index.py`` holds revision ``0011``, a test checks that), so no Alembic import is needed to
    know it."""
    return max(p.name.split("_", 1)[0] for p in (MIGRATIONS / "versions").glob("[0-9]*_*.py"))


def current_revision(engine: Engine) -> str | None:
    """The revision a database is at, or None when it was never migrated (one plain read of Alembic's
    version table, so a process that only checks the schema never imports Alembic)."""
    # A read: on SQLite it must not queue for the write lock (a busy writer would stall every startup).
    with engine.execution_options(**{READONLY_OPTION: True}).connect() as conn:
        if not inspect(conn).has_table("alembic_version"):
            return None
        versions = conn.execute(text("SELECT version_num FROM alembic_version")).scalars().all()
    if len(versions) > 1:
        raise RuntimeError(f"the database has several schema heads: {sorted(versions)}")
    return versions[0] if versions else None


def upgrade(engine: Engine) -> tuple[str | None, str]:
    """Bring the database to head; idempotent. Returns (revision before, revision after)."""
    before = current_revision(engine)
    if before == head_revision():
        return before, before  # nothing to do, so no write lock to take (and no Alembic to import)
    from alembic import command

    cfg = alembic_config()
    with engine.begin() as conn:
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, "head")
    return before, head_revision()
