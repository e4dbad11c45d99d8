"""The ports: the protocols the services talk through, one per aggregate, and the ones for LLMs and queues.

``store`` and ``adapters`` implement them; ``services`` use them. They live beside the domain, not in
the services, so an adapter depends on the port it implements and never on the use cases above it
(import-linter holds both rules). Each repository port matches one store module.
"""

from sleepcompact.ports.agent_memory import AgentMemoryRepository
from sleepcompact.ports.calibration import CalibrationRepository
from sleepcompact.ports.compactions import CompactionRepository
from sleepcompact.ports.conversations import ConversationLookup, ConversationRepository
from sleepcompact.ports.deps import Dependencies
from sleepcompact.ports.llm import (
    BatchSummarizer,
    Rescorer,
    Summarizer,
    SummaryResult,
    TextRedactor,
    TokenCounter,
)
from sleepcompact.ports.queue import TaskQueue
from sleepcompact.ports.ticks import TickRepository
from sleepcompact.ports.uow import UnitOfWork

__all__ = [
    "AgentMemoryRepository",
    "BatchSummarizer",
    "CalibrationRepository",
    "CompactionRepository",
    "ConversationLookup",
    "ConversationRepository",
    "Dependencies",
    "Rescorer",
    "Summarizer",
    "SummaryResult",
    "TaskQueue",
    "TextRedactor",
    "TickRepository",
    "TokenCounter",
    "UnitOfWork",
]
