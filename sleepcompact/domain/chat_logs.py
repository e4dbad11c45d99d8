"""Companion-chat histories: MemoryBank's ``memory_bank_en.json`` (one object mapping each user's name
to ``{"history": {"YYYY-MM-DD": [{"query", "response"}, ...]}, ...}``).

Each user becomes one conversation: every query a user message and every response an assistant
message, day by day in date order, each stamped with its day so a summary and a memory can say when
something was said. The user's profile (``meta_information``, ``personality``, ``summary``,
``overall_history``) is provenance, kept in the conversation's metadata and never turned into a message:
it is the dataset's annotation, not something either speaker said.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sleepcompact.domain.agent_logs import Error, Located
from sleepcompact.domain.json_shapes import json_kind, source_time

_PROFILE_KEYS = ("meta_information", "personality", "summary", "overall_history")


def looks_like_memorybank(doc: Mapping[str, Any]) -> bool:
    """An object whose every value is a user record with a ``history`` object (its keys, the days, are
    checked by the reader, so a bad one is named rather than making the file unrecognisable)."""
    return bool(doc) and all(
        isinstance(user, Mapping) and isinstance(user.get("history"), Mapping) for user in doc.values()
    )


def memorybank_users(doc: Mapping[str, Any]) -> list[str]:
    """The users in file order (each is one record of the import)."""
    return [str(name) for name in doc]


def memorybank_user(doc: Mapping[str, Any], name: str, error: Error) -> tuple[list[Located], dict[str, Any]]:
    """One user's days as alternating user and assistant messages, and the conversation's metadata."""
    user = doc[name]
    out: list[Located] = []
    days = sorted(user["history"].items(), key=lambda item: str(item[0]))  # ISO dates sort as text
    for day, turns in days:
        if not isinstance(turns, list):
            raise error(f"{name.strip()}: the day {day} holds a JSON {json_kind(turns)}, expected a list")
        when = source_time(day)
        if when is None:
            raise error(f"{name.strip()}: the day {day!r} is not a date (expected YYYY-MM-DD)")
        for i, turn in enumerate(turns):
            where = f"{name.strip()}, {day}, turn {i + 1}"
            if not isinstance(turn, Mapping):
                raise error(f"{where} is a JSON {json_kind(turn)}, expected {{query, response}}")
            out.append(Located({"role": "user", "content": turn.get("query")}, where, None, when))
            if turn.get("response") is not None:
                out.append(Located({"role": "assistant", "content": turn.get("response")}, where, None, when))
    meta: dict[str, Any] = {"source_format": "memorybank", "user": name.strip()}
    meta["days"] = [day for day, _ in days]
    meta.update({k: user[k] for k in _PROFILE_KEYS if user.get(k)})
    return out, meta
