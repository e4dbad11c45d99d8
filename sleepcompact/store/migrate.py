"""Create or migrate a database to the newest schema (what ``sleepcompact init`` runs)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy import Engine

from sleepcompact.store.engine import READONLY_OPTION

if TYPE_CHECKING:
    from alembic.config import Config

MIGRATIONS = Path(__file__).with_name("migrations")
# Alembic is imported where it is used, so `import sleepcompact` does not pay for it (about a tenth of
# a second); building a Memory still does, to check the schema.


def alembic_config() -> Config:
    """An Alembic config pointing at the packaged migrations (no alembic.ini needed)."""
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    return cfg


def head_revision() -> str:
    """The newest revision the package ships."""
    from alembic.script import ScriptDirectory

    head = ScriptDirectory.from_config(alembic_config()).get_current_head()
    assert head is not None
    return head


def current_revision(engine: Engine) -> str | None:
    """The revision a database is at, or None when it was never migrated."""
    from alembic.runtime.migration import MigrationContext

    # A read: on SQLite it must not queue for the write lock (a busy writer would stall every startup).
    with engine.execution_options(**{READONLY_OPTION: True}).connect() as conn:
        return MigrationContext.configure(conn).get_current_revision()


def upgrade(engine: Engine) -> tuple[str | None, str]:
    """Bring the database to head; idempotent. Returns (revision before, revision after)."""
    from alembic import command

    before = current_revision(engine)
    if before == head_revision():
        return before, before  # nothing to do, so no write lock to take
    cfg = alembic_config()
    with engine.begin() as conn:
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, "head")
    return before, head_revision()
