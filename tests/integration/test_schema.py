"""The schema: migrations run on SQLite and PostgreSQL, are idempotent, and match the models."""

from __future__ import annotations

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import inspect

from sleepcompact import DatabaseNotInitialized, Memory
from sleepcompact.store import migrate
from sleepcompact.store.engine import make_engine
from sleepcompact.store.models import Base


def test_init_creates_every_table_and_is_idempotent(database_url: str) -> None:
    engine = make_engine(database_url)
    try:
        assert migrate.current_revision(engine) is None
        before, after = migrate.upgrade(engine)
        assert before is None and after == migrate.head_revision()
        # A second run changes nothing and does not fail.
        before2, after2 = migrate.upgrade(engine)
        assert before2 == after2 == migrate.head_revision()
        tables = set(inspect(engine).get_table_names())
        assert {"conversation", "message", "compaction", "journal_entry", "memory", "sleep_tick"} <= tables
    finally:
        engine.dispose()


def test_migrated_schema_matches_the_models(database_url: str) -> None:
    engine = make_engine(database_url)
    try:
        migrate.upgrade(engine)
        with engine.connect() as conn:
            ctx = MigrationContext.configure(
                conn,
                opts={
                    # The full-text index is dialect-specific DDL (FTS5 / GIN), outside the models on purpose.
                    "include_name": lambda name, type_, parent: not (name or "").startswith("message_search"),
                },
            )
            diff = compare_metadata(ctx, Base.metadata)
        assert diff == []
    finally:
        engine.dispose()


def test_the_indexes_the_hot_paths_need_exist(database_url: str) -> None:
    engine = make_engine(database_url)
    try:
        migrate.upgrade(engine)
        insp = inspect(engine)
        message = {ix["name"]: ix["column_names"] for ix in insp.get_indexes("message")}
        assert message["ix_message_live"] == ["conversation_id", "seq"]
        assert message["ix_message_tool_call"] == ["conversation_id", "tool_call_id"]
        uniques = {u["name"]: u["column_names"] for u in insp.get_unique_constraints("message")}
        assert uniques["uq_message_conversation_seq"] == ["conversation_id", "seq"]
        conversation = {ix["name"]: ix["column_names"] for ix in insp.get_indexes("conversation")}
        assert conversation["ix_conversation_due"] == ["live_tokens", "last_sleep_at", "last_activity_at"]
        journal = {ix["name"]: ix["column_names"] for ix in insp.get_indexes("journal_entry")}
        assert journal["ix_journal_status"] == ["status"]
        ticks = {u["name"]: u["column_names"] for u in insp.get_unique_constraints("sleep_tick")}
        assert ticks["uq_sleep_tick_key"] == ["conversation_id", "tick_key"]
    finally:
        engine.dispose()


def test_a_server_database_must_be_initialized_first(postgres_server: object) -> None:
    from tests.support.servers import PostgresServer

    assert isinstance(postgres_server, PostgresServer)
    url = postgres_server.create_database()
    try:
        with pytest.raises(DatabaseNotInitialized, match="sleepcompact init"):
            Memory(database_url=url)
        Memory(database_url=url, auto_migrate=True).close()
        Memory(database_url=url).close()  # now it is initialized
    finally:
        postgres_server.drop_database(url.rsplit("/", 1)[1])
