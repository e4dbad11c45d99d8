"""The namespaces of the ``Memory`` facade: what is not the request path, grouped by what it acts on.

``mem.compactions`` (compact, restore, history, re-run, Message Batches), ``mem.journal``,
``mem.memories``, ``mem.sleep`` (ticks and sweeps) and ``mem.admin`` (evaluation, report, listing,
low-level access). Each is a thin object over the same ``bootstrap.Container``: it picks the service
and returns its typed result.
"""

from sleepcompact.facade.admin import Admin
from sleepcompact.facade.agent import Journal, Memories
from sleepcompact.facade.compactions import Compactions
from sleepcompact.facade.sleep import InlineQueue, Sleep

__all__ = ["Admin", "Compactions", "InlineQueue", "Journal", "Memories", "Sleep"]
