"""Real worker and beat processes for the pipeline tests: started, watched, killed, always stopped.

Output goes to a log file the failing test prints. Nothing is faked: the processes are
``python -m worker`` / ``python -m scheduler`` / ``sleepcompact run`` as an operator starts them.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TypeVar

__all__ = ["Process", "children_of", "wait_for"]

T = TypeVar("T")


def wait_for(check: Callable[[], T], *, timeout: float, what: str, log: Path | None = None) -> T:
    """Poll ``check`` until it returns something truthy; fail with ``what`` (and the log) on timeout.

    The timeout bounds a hang, it does not assert speed: it is far above the time the work takes.
    """
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            tail = log.read_text(errors="replace")[-6000:] if log and log.exists() else ""
            raise AssertionError(f"timed out waiting for {what}\n--- process log ---\n{tail}")
        time.sleep(0.2)


def children_of(pid: int) -> list[int]:
    """Pids whose parent is ``pid`` (from /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        # The command name may contain spaces; the fields after its closing parenthesis are fixed.
        fields = stat.rsplit(")", 1)[1].split()
        if int(fields[1]) == pid:
            found.append(int(entry.name))
    return sorted(found)


class Process:
    """One long-running child (a worker, a beat, ``sleepcompact run``) with its own log file."""

    def __init__(self, args: Sequence[str], env: dict[str, str], log: Path, cwd: Path) -> None:
        self.log = log
        self._out = log.open("ab")
        self.popen = subprocess.Popen(
            list(args), env=env, cwd=cwd, stdout=self._out, stderr=subprocess.STDOUT, start_new_session=True
        )

    @classmethod
    def module(cls, module: str, *args: str, env: dict[str, str], log: Path, cwd: Path) -> Process:
        """``python -m module args`` with this interpreter."""
        return cls([sys.executable, "-m", module, *args], env, log, cwd)

    @property
    def pid(self) -> int:
        """The main process's pid."""
        return self.popen.pid

    def output(self) -> str:
        """Everything logged so far."""
        return self.log.read_text(errors="replace")

    def stop(self, timeout: float = 30) -> int:
        """SIGTERM (Celery's warm shutdown), then SIGKILL the whole group if it does not exit."""
        if self.popen.poll() is None:
            self.popen.send_signal(signal.SIGTERM)
            try:
                self.popen.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                os.killpg(self.popen.pid, signal.SIGKILL)
                self.popen.wait()
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.popen.pid, signal.SIGKILL)  # stragglers (prefork children)
        self._out.close()
        return self.popen.returncode
