"""The schema check reads the head revision from the migration files' names, without importing Alembic:
that holds only while every file is named by the revision it holds, and the chain has one head."""

from __future__ import annotations

import re

from sleepcompact.store.migrate import MIGRATIONS, head_revision


def test_every_migration_file_is_named_by_its_revision_and_the_newest_is_the_head() -> None:
    revisions: dict[str, str | None] = {}
    for path in sorted((MIGRATIONS / "versions").glob("[0-9]*_*.py")):
        text = path.read_text(encoding="utf-8")
        revision = re.search(r'^revision = "([^"]+)"', text, re.M)
        down = re.search(r'^down_revision = "([^"]+)"', text, re.M)
        assert revision is not None, path.name
        assert path.name.split("_", 1)[0] == revision.group(1), path.name
        revisions[revision.group(1)] = down.group(1) if down else None
    pointed_at = set(revisions.values())
    heads = [r for r in revisions if r not in pointed_at]
    assert heads == [head_revision()]
