"""Names a package re-exports but loads on first use (PEP 562), so importing it stays light: shared by
``sleepcompact`` and ``sleepcompact.facade``."""

from __future__ import annotations

import importlib
from collections.abc import Mapping, MutableMapping
from typing import Any


def resolve(namespace: MutableMapping[str, Any], package: str, table: Mapping[str, str], name: str) -> Any:
    """``name`` from the module ``table`` says holds it, kept in ``namespace`` (the package's globals)
    so the next lookup is a plain attribute; AttributeError for a name the package does not have."""
    module = table.get(name)
    if module is None:
        raise AttributeError(f"module {package!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    namespace[name] = value
    return value
