"""Provenance: where a journal entry's text came from, and flagged memories.

``journal_entry.provenance`` records the source of an entry's text (user, assistant, tool, fetched,
environment, agent; ``domain.provenance``); NULL for entries written before this revision.
``memory.flags`` lists why a ``flagged`` memory's text looks like instructions aimed at the model
(that kind is kept for audit and never recalled).

Data written before: the extractor journaled tool output's error lines and identifiers as
``observation`` (0.8), above the recall floor, so text planted in a tool's output came back in the
agent's other conversations. Those entries (``pre_compaction`` and ``observation``: the extractor
used that source for tool output alone) become ``environmental`` (0.3) with provenance ``tool``, and
every memory they fed has its trust derived again from its sources (``domain.memory_trust``). Valid
memories whose text carries instructions to the model (``injection.flag_imperatives``) become
``flagged``. Downgrading drops the columns and turns flagged memories back into facts; trust stays
as derived.

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-26
"""

from __future__ import annotations

import json
from typing import Any

import sqlalchemy as sa
from alembic import op

from sleepcompact.domain.injection import flag_imperatives
from sleepcompact.domain.journal import SOURCE_TRUST
from sleepcompact.domain.memory_trust import corroborate

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None

_BATCH = 500
_RECALLED_KINDS = ("fact", "preference", "insight", "knowledge_gap")


def upgrade() -> None:
    with op.batch_alter_table("journal_entry", schema=None) as batch_op:
        batch_op.add_column(sa.Column("provenance", sa.String(length=16), nullable=True))
    with op.batch_alter_table("memory", schema=None) as batch_op:
        batch_op.add_column(sa.Column("flags", sa.JSON(), nullable=True))
    conn = op.get_bind()
    changed = _tool_entries_to_environmental(conn)
    _rederive_trust(conn, changed)
    _flag_imperative_memories(conn)


def _tool_entries_to_environmental(conn: sa.Connection) -> set[int]:
    """Tool output the extractor journaled as ``observation``: environmental now; their ids."""
    ids = {
        int(r[0])
        for r in conn.execute(
            sa.text(
                "SELECT id FROM journal_entry WHERE origin = 'pre_compaction' AND source_type = 'observation'"
            )
        )
    }
    conn.execute(
        sa.text(
            "UPDATE journal_entry SET source_type = 'environmental', source_trust = :trust, "
            "provenance = 'tool' WHERE origin = 'pre_compaction' AND source_type = 'observation'"
        ),
        {"trust": SOURCE_TRUST["environmental"]},
    )
    return ids


def _sources(value: Any) -> list[int]:
    loaded = json.loads(value) if isinstance(value, str) else value
    return sorted(int(i) for i in loaded or [])


def _rederive_trust(conn: sa.Connection, changed: set[int]) -> None:
    """Each memory fed by a changed entry gets its trust from its sources again, in journal order."""
    if not changed:
        return
    last = 0
    while True:
        rows = conn.execute(
            sa.text("SELECT id, kind, source_journal_ids FROM memory WHERE id > :last ORDER BY id LIMIT :n"),
            {"last": last, "n": _BATCH},
        ).all()
        if not rows:
            return
        for mid, kind, raw in rows:
            sources = _sources(raw)
            if not changed.intersection(sources):
                continue
            trust_of: dict[int, float] = dict(
                conn.execute(
                    sa.text("SELECT id, source_trust FROM journal_entry WHERE id IN :ids").bindparams(
                        sa.bindparam("ids", expanding=True)
                    ),
                    {"ids": sources},
                ).all()
            )
            if len(trust_of) != len(sources):
                continue  # a source is gone: leave the memory as it was
            if kind == "contradiction":
                trust = float(trust_of[sources[-1]])
            else:
                trust = float(trust_of[sources[0]])
                for entry_id in sources[1:]:
                    trust = corroborate(trust, float(trust_of[entry_id]))
            conn.execute(
                sa.text("UPDATE memory SET source_trust = :t WHERE id = :id"), {"t": trust, "id": mid}
            )
        last = int(rows[-1][0])


def _flag_imperative_memories(conn: sa.Connection) -> None:
    """Valid memories of a recalled kind whose text carries instructions to the model: ``flagged``."""
    last = 0
    while True:
        rows = conn.execute(
            sa.text(
                "SELECT id, kind, content FROM memory WHERE id > :last AND invalidated_at IS NULL "
                "ORDER BY id LIMIT :n"
            ),
            {"last": last, "n": _BATCH},
        ).all()
        if not rows:
            return
        for mid, kind, content in rows:
            flags = flag_imperatives(content or "") if kind in _RECALLED_KINDS else []
            if flags:
                conn.execute(
                    sa.text("UPDATE memory SET kind = 'flagged', flags = :flags WHERE id = :id").bindparams(
                        sa.bindparam("flags", type_=sa.JSON())
                    ),
                    {"flags": flags, "id": mid},
                )
        last = int(rows[-1][0])


def downgrade() -> None:
    op.execute("UPDATE memory SET kind = 'fact' WHERE kind = 'flagged'")
    with op.batch_alter_table("memory", schema=None) as batch_op:
        batch_op.drop_column("flags")
    with op.batch_alter_table("journal_entry", schema=None) as batch_op:
        batch_op.drop_column("provenance")
