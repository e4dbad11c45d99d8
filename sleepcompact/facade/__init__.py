"""The namespaces of the ``Memory`` facade: what is not the request path, grouped by what it acts on.

``mem.compactions`` (compact, restore, history, re-run, Message Batches), ``mem.journal``,
``mem.memories``, ``mem.sleep`` (ticks and sweeps) and ``mem.admin`` (evaluation, report, listing,
low-level access). Each is a thin object over the same ``bootstrap.Container``: it picks the service
and returns its typed result.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sleepcompact._lazy import resolve

if TYPE_CHECKING:
    from sleepcompact.facade.admin import Admin
    from sleepcompact.facade.agent import Journal, Memories
    from sleepcompact.facade.compactions import Compactions
    from sleepcompact.facade.sleep import InlineQueue, Sleep

__all__ = ["Admin", "Compactions", "InlineQueue", "Journal", "Memories", "Sleep"]

# Each namespace's module loads when its name is first used (PEP 562), as ``Memory`` builds them: the
# request path never imports the admin's or the batches' code.
_LAZY = {
    "Admin": "sleepcompact.facade.admin",
    "Compactions": "sleepcompact.facade.compactions",
    "InlineQueue": "sleepcompact.facade.sleep",
    "Journal": "sleepcompact.facade.agent",
    "Memories": "sleepcompact.facade.agent",
    "Sleep": "sleepcompact.facade.sleep",
}


def __getattr__(name: str) -> Any:
    return resolve(globals(), __name__, _LAZY, name)
