"""A worker child leaves its start-up heap out of garbage collection.

Everything a child holds for good (modules, the tokenizer, the engine, the migrations it ran) was walked
by every full collection, and those pauses were a sleep tick's slowest runs. The child freezes its heap
once its dependencies are built. Run in a process of its own: freezing is process-wide.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

SCRIPT = """
import gc, json, sys
from celery import Celery
from sleepcompact.config import Settings
from worker.tasks import Resources

res = Resources(Settings(database_url=sys.argv[1]), Celery("heap-test"))
before = gc.get_freeze_count()
deps = res.deps
frozen = gc.get_freeze_count()
again = res.deps  # built once: nothing frozen twice
print(json.dumps({"before": before, "frozen": frozen, "again": gc.get_freeze_count(), "same": again is deps}))
"""


def test_a_child_freezes_its_heap_once_its_dependencies_are_built(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'heap.db'}"
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, url], capture_output=True, text=True, check=True, cwd=Path.cwd()
    )
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["before"] == 0
    assert seen["frozen"] > 10_000  # the modules and dependencies, not a handful of objects
    assert seen["again"] == seen["frozen"] and seen["same"] is True
