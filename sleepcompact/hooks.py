"""Callbacks an application registers on ``Memory`` (``mem.hooks``) or the worker loads from
``SLEEPCOMPACT_HOOKS`` (``package.module:function``, called once with the registry).

Four events: ``before_compaction`` (sees the plan; may add instructions for the summary or veto the
compaction with a reason, which is recorded), ``after_compaction``, ``message_appended`` and
``conversation_cleared``. Each is also a ``hook`` log event. A hook runs after the state it reports is
committed (or, for ``before_compaction``, before anything is written), so a hook that raises, hangs or
returns nonsense is logged and ignored: it never corrupts history, and in the request path it gets the
guard's remaining deadline and no more.
"""

from __future__ import annotations

import importlib
import threading
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar

from sleepcompact.domain.errors import InvalidSetting
from sleepcompact.logs import get_logger
from sleepcompact.telemetry import emit

__all__ = [
    "BeforeCompaction",
    "CompactionVerdict",
    "ConversationCleared",
    "Hooks",
    "MessagesAppended",
    "load_hooks",
]

log = get_logger(__name__)
Event = Literal["before_compaction", "after_compaction", "message_appended", "conversation_cleared"]
F = TypeVar("F", bound=Callable[..., Any])


@dataclass(frozen=True)
class BeforeCompaction:
    """A compaction about to run: what it would do (nothing is written yet)."""

    conversation_id: str
    tenant_id: str
    trigger: str
    tokens_before: int
    tokens_after: int  # planned
    steps: tuple[str, ...]
    plan: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class CompactionVerdict:
    """What a ``before_compaction`` hook may answer: instructions for the summary, or a veto."""

    instructions: str | None = None
    veto: str | None = None  # the reason, recorded in the compaction's history


@dataclass(frozen=True)
class MessagesAppended:
    """Messages committed to a conversation (one event per append call)."""

    conversation_id: str
    seqs: tuple[int, ...]


@dataclass(frozen=True)
class ConversationCleared:
    """A conversation's live messages archived by ``clear``."""

    conversation_id: str


class Hooks:
    """The registry: ``hooks.before_compaction(fn)`` (also usable as a decorator), and so on."""

    def __init__(self) -> None:
        self._callbacks: dict[Event, list[Callable[[Any], Any]]] = {}
        self._lock = threading.Lock()
        self._pool: ThreadPoolExecutor | None = None

    def before_compaction(self, fn: F) -> F:
        """``fn(BeforeCompaction) -> CompactionVerdict | None``."""
        return self._add("before_compaction", fn)

    def after_compaction(self, fn: F) -> F:
        """``fn(CompactionOutcome)``: every compaction that ran (applied, failed, stalled, vetoed...)."""
        return self._add("after_compaction", fn)

    def message_appended(self, fn: F) -> F:
        """``fn(MessagesAppended)``."""
        return self._add("message_appended", fn)

    def conversation_cleared(self, fn: F) -> F:
        """``fn(ConversationCleared)``."""
        return self._add("conversation_cleared", fn)

    def _add(self, event: Event, fn: F) -> F:
        with self._lock:
            self._callbacks.setdefault(event, []).append(fn)
        return fn

    def __bool__(self) -> bool:
        return any(self._callbacks.values())

    def notify(self, event: Event, payload: object) -> None:
        """Call every hook of ``event``; one that raises is logged and the rest still run."""
        for fn in list(self._callbacks.get(event, ())):
            self._call(event, fn, payload, None)

    def verdict(self, event: BeforeCompaction, timeout_s: float | None = None) -> CompactionVerdict:
        """The ``before_compaction`` hooks' combined answer: the first veto wins; instructions add up.

        ``timeout_s`` (the guard's remaining deadline) bounds each hook: one that has not answered by
        then is logged and ignored."""
        added: list[str] = []
        for fn in list(self._callbacks.get("before_compaction", ())):
            answer = self._call("before_compaction", fn, event, timeout_s)
            if not isinstance(answer, CompactionVerdict):
                continue
            if answer.veto:
                return CompactionVerdict(instructions=None, veto=answer.veto)
            if answer.instructions:
                added.append(answer.instructions)
        return CompactionVerdict(instructions="\n\n".join(added) or None)

    def _call(self, event: Event, fn: Callable[[Any], Any], payload: object, timeout_s: float | None) -> Any:
        name = getattr(fn, "__qualname__", repr(fn))
        try:
            if timeout_s is None:
                result = fn(payload)
            else:
                result = self._executor().submit(fn, payload).result(timeout=max(0.0, timeout_s))
        except FutureTimeout:
            log.warning("hook_timeout", hook_event=event, hook=name, timeout_s=timeout_s)
            return None
        except Exception as exc:  # a hook's bug is the application's; history stays as it is
            log.warning("hook_failed", hook_event=event, hook=name, error=f"{type(exc).__name__}: {exc}")
            return None
        emit("hook", hook_event=event, hook=name)
        return result

    def _executor(self) -> ThreadPoolExecutor:
        with self._lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="sleepcompact-hook")
            return self._pool

    def close(self) -> None:
        """Stop waiting for abandoned hook threads (they finish on their own)."""
        with self._lock:
            if self._pool is not None:
                self._pool.shutdown(wait=False)
                self._pool = None


def load_hooks(hooks: Hooks, path: str | None) -> Hooks:
    """Call ``package.module:function`` (``SLEEPCOMPACT_HOOKS``) with ``hooks`` so it registers its own."""
    if not path:
        return hooks
    module_name, _, attr = path.partition(":")
    try:
        register = getattr(importlib.import_module(module_name), attr or "register")
    except (ImportError, AttributeError) as exc:
        raise InvalidSetting(f"SLEEPCOMPACT_HOOKS={path!r} cannot be loaded: {exc}") from None
    register(hooks)
    return hooks
