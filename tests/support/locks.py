"""Another process holding a SQLite database's write lock, for as long as a test needs it.

The holder is a separate Python process (``BEGIN IMMEDIATE`` on its own connection), as another
writer on the same machine would be: the code under test meets a real lock, not a stand-in.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

__all__ = ["sqlite_write_lock"]

_HOLD = """
import sqlite3, sys
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("BEGIN IMMEDIATE")
print("locked", flush=True)
sys.stdin.read()  # hold the lock until the test closes our stdin
conn.execute("ROLLBACK")
"""


def sqlite_file(url: str) -> Path:
    """The file behind a ``sqlite:///PATH`` URL."""
    return Path(url.removeprefix("sqlite:///"))


@contextmanager
def sqlite_write_lock(url: str) -> Iterator[None]:
    """Hold the write lock of the SQLite database at ``url`` in another process during the block."""
    holder = subprocess.Popen(
        [sys.executable, "-c", _HOLD, str(sqlite_file(url))],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        yield
    finally:
        if holder.stdin is not None:
            holder.stdin.close()
        holder.wait(timeout=60)
