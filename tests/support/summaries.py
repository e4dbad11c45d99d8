"""Offline summaries of message dicts, and reading a summary's sections back, for the summary tests."""

from __future__ import annotations

import json
import re
from typing import Any

from sleepcompact.adapters.tokenizer import load_counter
from sleepcompact.domain.prompt import SummaryInput
from sleepcompact.domain.summary import offline_summary
from tests.support.rows import rows_of

COUNT = load_counter().count


def section(summary: str, name: str) -> list[str]:
    """The bullets of one ``## name`` section, without their ``- `` (none when it is absent)."""
    found = re.search(rf"^## {re.escape(name)}\n(.*?)(?=^## |\Z)", summary, re.M | re.S)
    return [line.removeprefix("- ") for line in found.group(1).strip().splitlines()] if found else []


def summarize(messages: list[dict[str, Any]], previous: str | None, cap: int = 2000) -> str:
    """The offline summary of ``messages`` folded over ``previous``, within ``cap`` tokens."""
    return offline_summary(SummaryInput(rows_of(messages, COUNT), previous, cap), COUNT)


def tool_call(call_id: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """An OpenAI chat tool call, as an assistant message's ``tool_calls`` entry."""
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}
