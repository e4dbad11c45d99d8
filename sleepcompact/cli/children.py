"""Starting and stopping the worker and the scheduler as child processes.

The worker and the scheduler are their own packages that import the library, never the other way
round, so the library starts them as ``python -m worker`` / ``python -m scheduler``.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import FrameType, TracebackType
from typing import IO

from sleepcompact.config import Settings

WARM_SHUTDOWN_S = 60
"""How long a stopping worker may take to finish its running tasks before it is killed."""


def module_command(module: str, *args: str) -> list[str]:
    """``python -m module args`` with this interpreter."""
    return [sys.executable, "-m", module, *args]


def settings_env(settings: Settings, base: Mapping[str, str] | None = None) -> dict[str, str]:
    """An environment that makes a child process read the same settings (secrets only if configured)."""
    env = {k: v for k, v in (os.environ if base is None else base).items()}
    env.update(
        {
            "SLEEPCOMPACT_DATABASE_URL": settings.database_url,
            "SLEEPCOMPACT_BROKER_URL": settings.broker_url,
            "SLEEPCOMPACT_SUMMARIZER": settings.summarizer,
            "SLEEPCOMPACT_IDLE_SWEEP_SECONDS": str(settings.idle_sweep_seconds),
            "SLEEPCOMPACT_BEAT_SCHEDULE": settings.beat_schedule_file,
            "SLEEPCOMPACT_WORKER_CONCURRENCY": str(settings.worker_concurrency),
        }
    )
    if settings.summarizer == "offline":
        env.pop("ANTHROPIC_API_KEY", None)  # nothing in the child can send what it does not have
    return env


class Children:
    """Child processes started together and stopped together (SIGTERM first: Celery's warm shutdown)."""

    def __init__(
        self,
        commands: Sequence[Sequence[str]],
        env: Mapping[str, str] | None = None,
        log: Path | None = None,
    ) -> None:
        self._log: IO[bytes] | None = log.open("ab") if log else None
        out = self._log if self._log is not None else None
        self.popens = [
            subprocess.Popen(list(cmd), env=dict(env) if env is not None else None, stdout=out, stderr=out)
            for cmd in commands
        ]

    def running(self) -> bool:
        """Whether every child is still alive."""
        return all(p.poll() is None for p in self.popens)

    def stop(self) -> list[int]:
        """Stop every child (warm, then forced after ``WARM_SHUTDOWN_S``); returns their exit codes."""
        for p in self.popens:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + WARM_SHUTDOWN_S
        for p in self.popens:
            try:
                p.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        if self._log is not None:
            self._log.close()
        return [p.returncode for p in self.popens]

    def __enter__(self) -> Children:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    def supervise(self) -> int:
        """Block until a child exits or we get SIGINT/SIGTERM; stop the rest; the exit status to use."""
        stopping = False

        def _stop(signum: int, _frame: FrameType | None) -> None:
            nonlocal stopping
            stopping = True

        previous = {s: signal.signal(s, _stop) for s in (signal.SIGINT, signal.SIGTERM)}
        try:
            while not stopping and self.running():
                time.sleep(0.2)
        finally:
            codes = self.stop()
            for s, handler in previous.items():
                signal.signal(s, handler)
        return 0 if stopping else next((code for code in codes if code), 0)
