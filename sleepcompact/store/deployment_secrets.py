"""Secrets a deployment keeps in its own database: the redaction key.

Migration 0010 makes the key when it creates the table, so reading it is a plain read (no write lock
on SQLite). Should the row be gone (a restored dump without it), a new key is made, and the first
writer wins if two processes race.
"""

from __future__ import annotations

import secrets

from sqlalchemy import Engine, insert, select
from sqlalchemy.exc import IntegrityError

from sleepcompact.store.engine import READONLY_OPTION
from sleepcompact.store.models import DeploymentSecret

REDACTION_KEY = "redaction_key"


def redaction_key(engine: Engine) -> bytes:
    """The deployment's redaction key (32 random bytes, hex in the database)."""
    query = select(DeploymentSecret.value).where(DeploymentSecret.name == REDACTION_KEY)
    with engine.execution_options(**{READONLY_OPTION: True}).connect() as conn:
        value = conn.execute(query).scalar_one_or_none()
    if value is None:
        try:
            with engine.begin() as conn:
                conn.execute(insert(DeploymentSecret).values(name=REDACTION_KEY, value=secrets.token_hex(32)))
        except IntegrityError:
            pass  # another process made it first: use theirs
        with engine.connect() as conn:
            value = conn.execute(query).scalar_one()
    return bytes.fromhex(value)
