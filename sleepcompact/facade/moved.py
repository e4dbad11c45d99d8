"""The names ``Memory`` had before its namespaces: they keep working for one release, with a warning.

Each old name is a ``Moved`` descriptor on ``Memory``: reading it warns (``DeprecationWarning``) and
hands back the new method, wrapped so it returns what the old one returned (plain dicts where the new
one returns typed records). The README's "What moved in 0.2" lists them.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

REMOVAL = "0.3"


def _dicts(value: Any) -> Any:
    """The old shape of a typed result: ``to_dict()`` of it, or of each item of a list."""
    if isinstance(value, list):
        return [_dicts(v) for v in value]
    to_dict = getattr(value, "to_dict", None)
    return to_dict() if callable(to_dict) else value


class Moved:
    """A deprecated attribute of ``Memory`` that now lives at ``path`` (``"compactions.compact"``)."""

    def __init__(
        self,
        path: str,
        *,
        legacy: Callable[[Any], Any] | None = None,
        build: Callable[[Any], Any] | None = None,
    ) -> None:
        self.path = path
        self.legacy = legacy  # turns the new result into the old one
        self.build = build  # builds the old callable from the facade, when the signature changed too
        self.name = path

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, obj: Any, owner: type | None = None) -> Any:
        if obj is None:
            return self
        warnings.warn(
            f"Memory.{self.name} is deprecated and goes in sleepcompact {REMOVAL}; use mem.{self.path}",
            DeprecationWarning,
            stacklevel=2,
        )
        if self.build is not None:
            return self.build(obj)
        target: Any = obj
        for part in self.path.split("."):
            target = getattr(target, part)
        if self.legacy is None:
            return target
        legacy, method = self.legacy, target

        def shim(*args: Any, **kwargs: Any) -> Any:
            return legacy(method(*args, **kwargs))

        return shim


def dicts(path: str) -> Moved:
    """A moved method whose old version returned dicts where the new one returns typed records."""
    return Moved(path, legacy=_dicts)


def old_rerun(mem: Any) -> Callable[..., dict[str, Any]]:
    """``Memory.rerun(cid, compaction_id=..., dry_run=...)`` as it was: one method, a dict either way."""

    def rerun(
        conversation_id: str | None = None, *, compaction_id: str | None = None, dry_run: bool = False
    ) -> dict[str, Any]:
        c = mem.compactions
        run = c.preview_rerun if dry_run else c.rerun
        result: dict[str, Any] = run(conversation_id, compaction_id=compaction_id).to_dict()
        return result

    return rerun
