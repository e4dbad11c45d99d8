"""Throwaway PostgreSQL and Redis servers for the test session.

Both servers listen on a free loopback TCP port, keep all their state in a
private directory and remove it again on ``stop()``.  ``stop()`` is idempotent
and is also registered with :mod:`atexit` as a safety net, so an aborted test
session does not leave daemons behind.

PostgreSQL refuses to run as root.  When the tests run as root, ``initdb``,
``pg_ctl`` and ``postgres`` are run as the ``postgres`` system user (or
``nobody`` when that user does not exist) through ``subprocess``'s ``user=`` /
``group=`` arguments; the cluster directory is chowned to that user.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import pwd
import shlex
import shutil
import socket
import stat
import subprocess
import tempfile
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

import psycopg
import redis
from psycopg import sql

__all__ = [
    "PostgresServer",
    "RedisServer",
    "free_port",
    "start_postgres",
    "start_redis",
]

_PG_SUPERUSER = "postgres"
_START_ATTEMPTS = 3
# Unix socket paths are limited to ~107 bytes; ".s.PGSQL.NNNNN" needs 15 of them.
_MAX_SOCKET_DIR_LEN = 90
# Only put the cluster on /dev/shm when at least this much of it is free.
_MIN_RAM_DIR_FREE = 1 << 30


def free_port() -> int:
    """Return a TCP port on 127.0.0.1 that was free a moment ago.

    The port is found by binding to port 0 and letting the kernel choose.  It
    is released before returning, so another process may grab it in between;
    callers retry the server start when that happens.
    """
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


# --------------------------------------------------------------------------- PostgreSQL


@dataclass(frozen=True)
class _RunAs:
    """The unprivileged account the PostgreSQL binaries run as (root only)."""

    name: str
    uid: int
    gid: int
    home: str


def _unprivileged_account() -> _RunAs | None:
    """Pick the account to drop to, or ``None`` when not running as root."""
    if os.geteuid() != 0:
        return None
    for name in ("postgres", "nobody"):
        try:
            entry = pwd.getpwnam(name)
        except KeyError:
            continue
        return _RunAs(name=name, uid=entry.pw_uid, gid=entry.pw_gid, home=entry.pw_dir)
    raise RuntimeError("running as root, but neither a 'postgres' nor a 'nobody' user exists")


def _pg_bindir() -> Path:
    """Find the directory holding ``initdb``, ``pg_ctl`` and ``postgres``.

    ``PATH`` wins; otherwise the newest Debian-style ``/usr/lib/postgresql/N/bin``.
    """
    found = shutil.which("initdb")
    if found is not None and shutil.which("pg_ctl") is not None:
        return Path(found).parent
    candidates = sorted(
        (p.parent for p in Path("/usr/lib/postgresql").glob("*/bin/initdb")),
        key=lambda p: int(p.parent.name) if p.parent.name.isdigit() else -1,
    )
    if candidates:
        return candidates[-1]
    raise RuntimeError(
        "PostgreSQL server binaries (initdb, pg_ctl, postgres) were not found on PATH "
        "or under /usr/lib/postgresql/*/bin; run scripts/test, which installs them"
    )


def _traversable_by(path: Path, account: _RunAs) -> bool:
    """Whether ``account`` can reach ``path`` (search permission on every ancestor)."""
    for directory in [path, *path.parents]:
        try:
            st = directory.stat()
        except OSError:
            return False
        if st.st_uid == account.uid:
            needed = stat.S_IXUSR
        elif st.st_gid == account.gid:
            needed = stat.S_IXGRP
        else:
            needed = stat.S_IXOTH
        if not st.st_mode & needed:
            return False
    return True


def _usable_parent(directory: Path, account: _RunAs | None) -> bool:
    """Whether the cluster may live under ``directory``.

    It must be writable by us, reachable by the unprivileged account (pytest's
    ``/tmp/pytest-of-root`` is 0700) and short enough for a Unix socket path.
    """
    return (
        directory.is_dir()
        and os.access(directory, os.W_OK | os.X_OK)
        and (account is None or _traversable_by(directory, account))
        and len(str(directory)) + 30 <= _MAX_SOCKET_DIR_LEN
    )


def _ram_dir() -> Path | None:
    """``/dev/shm`` when it is a usable tmpfs with room to spare, else ``None``.

    CREATE DATABASE copies the ~8 MB template; on tmpfs that takes ~20 ms instead
    of the ~100-400 ms measured on a VM disk, which matters with one database per test.
    """
    shm = Path("/dev/shm")
    try:
        st = os.statvfs(shm)
    except OSError:
        return None
    if st.f_bavail * st.f_frsize < _MIN_RAM_DIR_FREE:
        return None
    return shm


def _cluster_root(base_dir: Path, account: _RunAs | None) -> Path:
    """Create the directory that holds the cluster, its socket dir and its log.

    Preference order: ``/dev/shm`` (RAM-backed, much faster), ``base_dir``, the
    system temporary directory; the first one that is usable (see
    :func:`_usable_parent`) gets a fresh ``mkdtemp()`` directory, mode 0755.
    """
    base_dir = base_dir.resolve()
    base_dir.mkdir(parents=True, exist_ok=True)
    candidates = [_ram_dir(), base_dir, Path(tempfile.gettempdir()).resolve()]
    parent = next((c for c in candidates if c is not None and _usable_parent(c, account)), None)
    if parent is None:
        raise RuntimeError(
            f"no directory usable for the PostgreSQL cluster (tried {[str(c) for c in candidates if c]})"
        )
    root = Path(tempfile.mkdtemp(prefix="sleepcompact-pg-", dir=parent))
    root.chmod(0o755)
    (root / "sock").mkdir(mode=0o755)
    if account is not None:
        for path in (root, root / "sock"):
            os.chown(path, account.uid, account.gid)
    return root


@dataclass
class PostgresServer:
    """A running throwaway PostgreSQL cluster; use :func:`start_postgres` to get one."""

    port: int
    root: Path
    bindir: Path
    run_as: _RunAs | None = field(repr=False)
    _stopped: bool = field(default=False, repr=False)

    @property
    def host(self) -> str:
        """The loopback address the server listens on."""
        return "127.0.0.1"

    @property
    def data_dir(self) -> Path:
        """The cluster's data directory."""
        return self.root / "data"

    @property
    def socket_dir(self) -> Path:
        """The directory holding the server's Unix socket."""
        return self.root / "sock"

    @property
    def log_file(self) -> Path:
        """The server log written by ``pg_ctl -l``."""
        return self.root / "postgres.log"

    @property
    def admin_url(self) -> str:
        """SQLAlchemy URL of the ``postgres`` maintenance database, as superuser."""
        return self.url_for(_PG_SUPERUSER)

    def url_for(self, database: str) -> str:
        """SQLAlchemy (psycopg 3) URL of ``database`` on this server, as superuser."""
        return f"postgresql+psycopg://{_PG_SUPERUSER}@{self.host}:{self.port}/{database}"

    def connect(self, database: str = "postgres") -> psycopg.Connection[tuple[object, ...]]:
        """Open an autocommit psycopg connection to ``database`` as superuser."""
        return psycopg.connect(
            host=self.host,
            port=self.port,
            user=_PG_SUPERUSER,
            dbname=database,
            autocommit=True,
            connect_timeout=10,
        )

    def create_database(self, name: str | None = None) -> str:
        """Create a new, empty database and return its SQLAlchemy URL.

        ``name`` defaults to a unique ``sc_test_<hex>`` name.
        """
        if name is None:
            name = f"sc_test_{uuid.uuid4().hex[:16]}"
        with self.connect() as conn:
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
        return self.url_for(name)

    def drop_database(self, name: str) -> None:
        """Drop ``name`` (if it exists), terminating any connections still open to it."""
        with self.connect() as conn:
            if conn.info.server_version >= 130000:
                conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))
            else:  # pragma: no cover - only for servers older than PostgreSQL 13
                conn.execute(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                    "WHERE datname = %s AND pid <> pg_backend_pid()",
                    (name,),
                )
                conn.execute(sql.SQL("DROP DATABASE IF EXISTS {}").format(sql.Identifier(name)))

    def stop(self) -> None:
        """Stop the server (``pg_ctl stop -m immediate``) and delete its directory.

        Safe to call more than once.
        """
        if self._stopped:
            return
        self._stopped = True
        if (self.data_dir / "postmaster.pid").exists():
            _run_pg(
                [str(self.bindir / "pg_ctl"), "stop", "-D", str(self.data_dir), "-m", "immediate", "-w"],
                self.run_as,
                self.root,
                check=False,
            )
        shutil.rmtree(self.root, ignore_errors=True)


def _run_pg(
    args: Sequence[str], run_as: _RunAs | None, cwd: Path, *, check: bool = True
) -> subprocess.CompletedProcess[str]:
    """Run a PostgreSQL binary, as ``run_as`` when given; raise with its output on failure."""
    env = dict(os.environ)
    env.update({"LC_ALL": "C", "LANG": "C"})
    for var in ("PGDATA", "PGHOST", "PGPORT", "PGUSER", "PGDATABASE", "PGPASSWORD", "PGOPTIONS"):
        env.pop(var, None)
    if run_as is not None:
        env.update({"HOME": run_as.home, "USER": run_as.name, "LOGNAME": run_as.name})
        result = subprocess.run(
            list(args),
            cwd=cwd,
            env=env,
            user=run_as.uid,
            group=run_as.gid,
            extra_groups=[],
            capture_output=True,
            text=True,
            check=False,
        )
    else:
        result = subprocess.run(list(args), cwd=cwd, env=env, capture_output=True, text=True, check=False)
    if check and result.returncode != 0:
        raise RuntimeError(
            f"{shlex.join(args)} failed with exit code {result.returncode}\n"
            f"--- stdout ---\n{result.stdout}\n--- stderr ---\n{result.stderr}"
        )
    return result


def start_postgres(base_dir: Path) -> PostgresServer:
    """Initialise and start a throwaway PostgreSQL cluster on a free loopback port.

    The cluster uses trust authentication for the ``postgres`` superuser, UTF8
    with the C locale, and durability switched off (``fsync``,
    ``synchronous_commit``, ``full_page_writes``) for speed.  Call ``stop()`` on
    the result to shut it down and delete its files.
    """
    bindir = _pg_bindir()
    run_as = _unprivileged_account()
    root = _cluster_root(base_dir, run_as)
    server = PostgresServer(port=0, root=root, bindir=bindir, run_as=run_as)
    atexit.register(server.stop)
    try:
        _run_pg(
            [
                str(bindir / "initdb"),
                "-D",
                str(server.data_dir),
                "-A",
                "trust",
                "-U",
                _PG_SUPERUSER,
                "--no-sync",
                "-E",
                "UTF8",
                "--locale=C",
            ],
            run_as,
            root,
        )
        last_error: RuntimeError | None = None
        for _ in range(_START_ATTEMPTS):
            server.port = free_port()
            options = (
                f"-p {server.port} -k {shlex.quote(str(server.socket_dir))} "
                "-c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off "
                "-c full_page_writes=off"
            )
            result = _run_pg(
                [
                    str(bindir / "pg_ctl"),
                    "start",
                    "-w",
                    "-t",
                    "60",
                    "-D",
                    str(server.data_dir),
                    "-l",
                    str(server.log_file),
                    "-o",
                    options,
                ],
                run_as,
                root,
                check=False,
            )
            if result.returncode == 0:
                return server
            log = server.log_file.read_text(errors="replace") if server.log_file.exists() else ""
            last_error = RuntimeError(
                f"pg_ctl start failed (exit {result.returncode}) on port {server.port}\n"
                f"--- stdout ---\n{result.stdout}\n--- stderr ---\n{result.stderr}\n--- log ---\n{log}"
            )
            if "already in use" not in log:
                break
        assert last_error is not None
        raise last_error
    except BaseException:
        server.stop()
        raise


# --------------------------------------------------------------------------- Redis


@dataclass
class RedisServer:
    """A running throwaway ``redis-server``; use :func:`start_redis` to get one."""

    port: int
    directory: Path
    process: subprocess.Popen[bytes] = field(repr=False)
    _log: IO[bytes] = field(repr=False)
    _stopped: bool = field(default=False, repr=False)

    @property
    def url(self) -> str:
        """URL of database 0, e.g. ``redis://127.0.0.1:6380/0``."""
        return f"redis://127.0.0.1:{self.port}/0"

    @property
    def log_file(self) -> Path:
        """Where the server's stdout/stderr go."""
        return self.directory / "redis.log"

    def stop(self) -> None:
        """Terminate the server and delete its directory.  Safe to call more than once."""
        if self._stopped:
            return
        self._stopped = True
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self._log.close()
        shutil.rmtree(self.directory, ignore_errors=True)


def _wait_for_ping(server: RedisServer, timeout: float) -> bool:
    """Poll until the server answers PING; ``False`` if the process died first."""
    deadline = time.monotonic() + timeout
    client = redis.Redis(host="127.0.0.1", port=server.port, socket_connect_timeout=1, socket_timeout=1)
    try:
        while time.monotonic() < deadline:
            if server.process.poll() is not None:
                return False
            with contextlib.suppress(redis.exceptions.ConnectionError, redis.exceptions.TimeoutError):
                if client.ping():
                    return True
            time.sleep(0.05)
    finally:
        client.close()
    raise RuntimeError(
        f"redis-server on port {server.port} did not answer PING within {timeout:.0f}s\n"
        f"--- log ---\n{server.log_file.read_text(errors='replace')}"
    )


def start_redis(base_dir: Path) -> RedisServer:
    """Start ``redis-server`` on a free loopback port, without persistence.

    Raises :class:`RuntimeError` when ``redis-server`` is not installed; the
    README's test command (``scripts/test``) installs it.
    """
    executable = shutil.which("redis-server")
    if executable is None:
        raise RuntimeError(
            "redis-server is not installed; run the README's test command (scripts/test), "
            "which installs it (apt-get install redis-server)"
        )
    base_dir.mkdir(parents=True, exist_ok=True)
    last_log = ""
    for _ in range(_START_ATTEMPTS):
        directory = Path(tempfile.mkdtemp(prefix="redis-", dir=base_dir))
        port = free_port()
        log = (directory / "redis.log").open("wb")
        process = subprocess.Popen(
            [
                executable,
                "--port",
                str(port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                str(directory),
                "--daemonize",
                "no",
            ],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            cwd=directory,
        )
        server = RedisServer(port=port, directory=directory, process=process, _log=log)
        atexit.register(server.stop)
        try:
            if _wait_for_ping(server, timeout=15):
                return server
            last_log = server.log_file.read_text(errors="replace")
        except BaseException:
            server.stop()
            raise
        server.stop()
        if "in use" not in last_log:
            break
    raise RuntimeError(f"redis-server failed to start\n--- log ---\n{last_log}")
