"""The throwaway PostgreSQL and Redis servers really work."""

from __future__ import annotations

import pytest
import redis
import sqlalchemy as sa

from tests.support.servers import PostgresServer


def _roundtrip(url: str) -> list[tuple[int, str]]:
    engine = sa.create_engine(url)
    try:
        with engine.begin() as conn:
            conn.execute(sa.text("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT NOT NULL)"))
            conn.execute(
                sa.text("INSERT INTO notes (id, body) VALUES (:id, :body)"),
                [{"id": 1, "body": "first"}, {"id": 2, "body": "second"}],
            )
        with engine.connect() as conn:
            rows = conn.execute(sa.text("SELECT id, body FROM notes ORDER BY id")).all()
        return [(row.id, row.body) for row in rows]
    finally:
        engine.dispose()


def test_database_url_is_empty_and_usable(database_url: str) -> None:
    engine = sa.create_engine(database_url)
    try:
        assert sa.inspect(engine).get_table_names() == []
    finally:
        engine.dispose()
    assert _roundtrip(database_url) == [(1, "first"), (2, "second")]


@pytest.mark.postgres
def test_postgres_server_admin_url_answers(postgres_server: PostgresServer) -> None:
    engine = sa.create_engine(postgres_server.admin_url)
    try:
        with engine.connect() as conn:
            assert conn.execute(sa.text("SELECT current_user")).scalar_one() == "postgres"
            assert conn.execute(sa.text("SHOW fsync")).scalar_one() == "off"
            assert conn.execute(sa.text("SHOW server_encoding")).scalar_one() == "UTF8"
    finally:
        engine.dispose()


@pytest.mark.postgres
def test_created_databases_are_isolated(postgres_server: PostgresServer) -> None:
    first = postgres_server.create_database("sc_test_isolation_a")
    second = postgres_server.create_database("sc_test_isolation_b")
    try:
        assert first != second
        assert _roundtrip(first) == [(1, "first"), (2, "second")]
        engine = sa.create_engine(second)
        try:
            assert sa.inspect(engine).get_table_names() == []
            with engine.connect() as conn:
                exists = conn.execute(sa.text("SELECT to_regclass('public.notes') IS NOT NULL")).scalar_one()
            assert exists is False
        finally:
            engine.dispose()
    finally:
        postgres_server.drop_database("sc_test_isolation_a")
        postgres_server.drop_database("sc_test_isolation_b")


@pytest.mark.postgres
def test_drop_database_terminates_open_connections(postgres_server: PostgresServer) -> None:
    url = postgres_server.create_database("sc_test_busy")
    engine = sa.create_engine(url)
    conn = engine.connect()
    try:
        assert conn.execute(sa.text("SELECT 1")).scalar_one() == 1
        postgres_server.drop_database("sc_test_busy")
        with postgres_server.connect() as admin:
            row = admin.execute("SELECT count(*) FROM pg_database WHERE datname = 'sc_test_busy'").fetchone()
        assert row == (0,)
    finally:
        conn.invalidate()
        conn.close()
        engine.dispose()


@pytest.mark.redis
def test_redis_url_answers_ping_and_set_get(redis_url: str) -> None:
    client = redis.Redis.from_url(redis_url)
    try:
        assert client.ping() is True
        client.set("sleepcompact:test", "value")
        assert client.get("sleepcompact:test") == b"value"
    finally:
        client.delete("sleepcompact:test")
        client.close()
