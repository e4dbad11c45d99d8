"""Run the real ``sleepcompact`` console script as a subprocess, the way a user does.

* ``Cli`` - runs the installed console script with a clean environment (no
  ``ANTHROPIC_*`` or ``SLEEPCOMPACT_*`` from the outer shell), a chosen
  database URL, JSON logs and ``cwd`` set to the test's temporary directory.
* ``cli`` - a ``Cli`` on a fresh, migrated SQLite database (most tests).
* ``db_cli`` - a ``Cli`` on a fresh, migrated database, SQLite and PostgreSQL.
* ``TRAJECTORIES`` - the shared real trajectory data (read in place, never copied).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from sleepcompact import Memory

SCRIPT = Path(sys.executable).with_name("sleepcompact")
TRAJECTORIES = Path(__file__).resolve().parents[3] / "shared" / "data" / "trajectories"
SWE_SIMPLE = TRAJECTORIES / "swe-agent" / "function_calling_simple.traj"
SWE_SECOND = TRAJECTORIES / "swe-agent" / "ctf__misc__networking_1.traj"
MINI_JSONL = TRAJECTORIES / "mini-swe-agent-dev.jsonl"
TIMEOUT_S = 120


@dataclass(frozen=True)
class Result:
    """What the user saw: exit status, stdout and stderr."""

    args: tuple[str, ...]
    returncode: int
    stdout: str
    stderr: str

    def json(self) -> Any:
        """stdout parsed as JSON (the command must have succeeded)."""
        assert self.returncode == 0, self.describe()
        return json.loads(self.stdout)

    def typed_error(self) -> str:
        """The line a typed error prints: exit status 1, nothing on stdout, exactly one line on stderr,
        ``error: ...``. A raw traceback (an exception the CLI did not turn into a typed error) fails."""
        assert self.returncode == 1, self.describe()
        assert self.stdout == "", self.describe()
        lines = self.stderr.splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: "), self.describe()
        return lines[0]

    def describe(self) -> str:
        command = " ".join(("sleepcompact", *self.args))
        return f"{command} -> {self.returncode}\nstdout:\n{self.stdout}\nstderr:\n{self.stderr}"


@dataclass(frozen=True)
class Cli:
    """The console script bound to one database URL (``None``: the default ./sleepcompact.db) and cwd."""

    database_url: str | None
    cwd: Path
    extra_env: tuple[tuple[str, str], ...] = ()

    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "SLEEPCOMPACT_"))}
        env["SLEEPCOMPACT_LOG_FORMAT"] = "json"
        if self.database_url is not None:
            env["SLEEPCOMPACT_DATABASE_URL"] = self.database_url
        env.update(self.extra_env)
        return env

    def with_env(self, **extra: str) -> Cli:
        return Cli(self.database_url, self.cwd, self.extra_env + tuple(extra.items()))

    def run(self, *args: str | Path) -> Result:
        argv = tuple(str(a) for a in args)
        proc = subprocess.run(
            [str(SCRIPT), *argv],
            env=self.env(),
            capture_output=True,
            text=True,
            cwd=self.cwd,
            timeout=TIMEOUT_S,
            check=False,
        )
        return Result(argv, proc.returncode, proc.stdout, proc.stderr)

    def ok(self, *args: str | Path) -> Result:
        """Run and insist on exit status 0."""
        result = self.run(*args)
        assert result.returncode == 0, result.describe()
        return result


def _migrated(url: str) -> None:
    mem = Memory(database_url=url, auto_migrate=True)
    mem.close()


@pytest.fixture(autouse=True)
def _data_present(trajectory_data: Path) -> None:
    """Every e2e test may read the trajectories; their absence fails the run (see tests/conftest.py)."""


@pytest.fixture
def cli(sqlite_url: str, tmp_path: Path) -> Cli:
    """The console script on a fresh, migrated SQLite database."""
    _migrated(sqlite_url)
    return Cli(sqlite_url, tmp_path)


@pytest.fixture
def db_cli(database_url: str, tmp_path: Path) -> Cli:
    """The console script on a fresh, migrated database (SQLite and PostgreSQL)."""
    _migrated(database_url)
    return Cli(database_url, tmp_path)
