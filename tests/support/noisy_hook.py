"""A hook module that prints to stdout, as careless code does, loaded by ``sleepcompact mcp`` in a test
through ``SLEEPCOMPACT_HOOKS=tests.support.noisy_hook:register``.

It prints once when it registers (while the server is being built) and then from a background thread
for as long as the process lives (while the server serves). Every line must reach stderr: one byte of
it on stdout would corrupt the MCP protocol the client reads there.
"""

from __future__ import annotations

import threading
import time
from typing import Any

LINE = "noisy hook says hello"


def _chatter() -> None:
    n = 0
    while True:
        n += 1
        print(f"{LINE} {n}", flush=True)
        time.sleep(0.01)  # a pace, not a limit: the test passes however many lines get printed


def register(hooks: Any) -> None:
    """Register nothing; print, and keep printing."""
    print(f"{LINE} while registering", flush=True)
    threading.Thread(target=_chatter, name="noisy-hook", daemon=True).start()
