"""Hooks a deployment loads with ``SLEEPCOMPACT_HOOKS=tests.support.hook_sample:register``: each event is
written as one JSON line to the file ``HOOK_LOG`` names (read from the environment by the test's own
code, not by the library), so a test can see what a worker process called."""

from __future__ import annotations

import json
import os
from typing import Any

from sleepcompact.hooks import CompactionVerdict, Hooks

INSTRUCTION = "Hook rule: keep every invoice number verbatim."


def _write(event: str, **values: Any) -> None:
    path = os.environ.get("HOOK_LOG")
    if path:
        with open(path, "a", encoding="utf-8") as out:
            out.write(json.dumps({"event": event, **values}) + "\n")


def register(hooks: Hooks) -> None:
    """Record every event; ask every summary to keep invoice numbers."""

    @hooks.before_compaction
    def before(event: Any) -> CompactionVerdict:
        _write("before_compaction", conversation_id=event.conversation_id, trigger=event.trigger)
        return CompactionVerdict(instructions=INSTRUCTION)

    @hooks.after_compaction
    def after(outcome: Any) -> None:
        _write("after_compaction", conversation_id=outcome.conversation_id, status=outcome.status)
