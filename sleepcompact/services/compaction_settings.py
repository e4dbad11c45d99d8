"""The settings a compaction ran with, kept in its record, and what changed since.

An admin re-run (``rerun``) keeps the steps of the compaction it replaces (a summary only where there
was one) unless one of these changed; either way it says which did, so "why does the re-run look
different" has an answer in its output.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from sleepcompact.domain.ladder import Policy
from sleepcompact.domain.records import ConversationRecord
from sleepcompact.ports import Dependencies
from sleepcompact.services.budgets import conversation_thresholds


def settings_used(
    deps: Dependencies, conv: ConversationRecord, policy: Policy, instructions: str | None
) -> dict[str, Any]:
    """What decides a compaction's steps and summary: the window, thresholds, ladder policy, summarizer
    and summary instructions (JSON-ready; stored in the compaction's metadata as ``settings``)."""
    thresholds = conversation_thresholds(conv, deps.settings.thresholds)
    return {
        "model": conv.model,
        "context_window": conv.context_window,
        "output_reserve": conv.output_reserve,
        "soft": thresholds.soft,
        "hard": thresholds.hard,
        "target": thresholds.target,
        "policy": {k: v for k, v in asdict(policy).items() if k != "summary_instructions"},
        "summarizer": deps.settings.summarizer,
        "summarizer_model": deps.settings.summarizer_model,
        "summary_instructions": instructions,
    }


def changed_settings(before: dict[str, Any] | None, now: dict[str, Any]) -> dict[str, list[Any]]:
    """Each setting that differs, as ``{name: [before, now]}`` (policy fields as ``policy.NAME``). A
    compaction recorded before settings were kept (``before`` None) reports none: nothing to compare."""
    if not before:
        return {}
    out: dict[str, list[Any]] = {}
    for key, value in now.items():
        old = before.get(key)
        if isinstance(value, dict) and isinstance(old, dict):
            out.update({f"{key}.{k}": [old.get(k), v] for k, v in value.items() if old.get(k) != v})
        elif old != value:
            out[key] = [old, value]
    return out
