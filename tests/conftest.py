"""Session-wide server fixtures and the per-test empty database.

* ``postgres_server`` - one throwaway PostgreSQL cluster per session (started lazily).
* ``redis_url`` - URL of one throwaway ``redis-server`` per session.
* ``database_url`` - a fresh, empty database per test, parametrized over
  ``sqlite`` and ``postgresql``.  Set ``SLEEPCOMPACT_TEST_DB=sqlite`` to run the
  sqlite variant only (no PostgreSQL is started then).
* ``sqlite_url`` - the sqlite variant alone.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from sleepcompact import Memory
from sleepcompact.domain.memo import forget_all
from tests.support.servers import PostgresServer, start_postgres, start_redis


@pytest.fixture(autouse=True, scope="session")
def _nothing_memoized_before_the_session() -> None:
    """The process-wide memos (identifiers found, injection verdicts, statements analyzed, search words)
    start empty in every pytest session. mutmut runs each mutant's tests as a new session in a process
    forked from the one that collected its stats: without this, the mutated scanners were never run
    (their results were looked up). Once per session, not per test: per test cost the integration
    suite 10% (399 against 362 s) for no test that depends on it."""
    forget_all()


def _database_backends() -> list[object]:
    """The ``database_url`` parameters, honouring ``SLEEPCOMPACT_TEST_DB``."""
    selected = os.environ.get("SLEEPCOMPACT_TEST_DB", "").strip().lower()
    params: list[object] = [pytest.param("sqlite", id="sqlite")]
    if selected != "sqlite":
        params.append(pytest.param("postgresql", id="postgresql", marks=pytest.mark.postgres))
    return params


@pytest.fixture(scope="session")
def postgres_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PostgresServer]:
    """A throwaway PostgreSQL cluster shared by the whole session."""
    server = start_postgres(tmp_path_factory.mktemp("postgres"))
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """URL (``redis://127.0.0.1:PORT/0``) of a throwaway Redis shared by the whole session."""
    server = start_redis(tmp_path_factory.mktemp("redis"))
    try:
        yield server.url
    finally:
        server.stop()


def _sqlite_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path}/sc.db"


@pytest.fixture
def sqlite_url(tmp_path: Path) -> str:
    """SQLAlchemy URL of a fresh, empty SQLite database file for this test."""
    return _sqlite_url(tmp_path)


@pytest.fixture
def sqlite_memory(sqlite_url: str) -> Iterator[Memory]:
    """A Memory on a fresh, migrated SQLite database only."""
    mem = Memory(database_url=sqlite_url, auto_migrate=True)
    try:
        yield mem
    finally:
        mem.close()


@pytest.fixture(params=_database_backends())
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """SQLAlchemy URL of a fresh, empty database for this test (sqlite or postgresql)."""
    if request.param == "sqlite":
        yield _sqlite_url(tmp_path)
        return
    server: PostgresServer = request.getfixturevalue("postgres_server")
    url = server.create_database()
    try:
        yield url
    finally:
        server.drop_database(url.rsplit("/", 1)[1])


TRAJECTORIES = Path(__file__).resolve().parents[2] / "shared" / "data" / "trajectories"


@pytest.fixture(scope="session")
def trajectory_data() -> Path:
    """The shared trajectories (read in place from ../shared/data, never copied into the repository)."""
    if not (TRAJECTORIES / "mini-swe-agent-dev.jsonl").is_file() or not list(
        TRAJECTORIES.glob("swe-agent/*.traj")
    ):
        pytest.fail(f"the shared trajectory data is missing: expected it under {TRAJECTORIES}")
    return TRAJECTORIES


from tests.support.fake_anthropic import FakeAnthropic  # noqa: E402


@pytest.fixture
def fake_anthropic() -> Iterator[FakeAnthropic]:
    """A fresh fake Anthropic API server (``fake_anthropic.url`` is the SDK's base_url), stopped after."""
    server = FakeAnthropic()
    try:
        yield server
    finally:
        server.stop()
