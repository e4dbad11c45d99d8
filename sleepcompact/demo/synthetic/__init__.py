"""Deterministic synthetic agent conversations for the demo, tests and benchmarks.

Every generator draws from its own ``random.Random(seed)``: the same seed gives
byte-identical messages, a different seed gives different names, numbers and
identifiers. Messages are Anthropic-shaped dicts that ``normalize()`` accepts:
roles alternate starting with the user, tool_use blocks sit in assistant turns
and their tool_result blocks in the user turn right after.
"""

from sleepcompact.demo.synthetic.assistant import MIN_ASSISTANT_TURNS, personal_assistant
from sleepcompact.demo.synthetic.coding import MIN_CODING_TURNS, coding_agent
from sleepcompact.demo.synthetic.transcript import SyntheticConversation, scaled

__all__ = [
    "MIN_ASSISTANT_TURNS",
    "MIN_CODING_TURNS",
    "SyntheticConversation",
    "coding_agent",
    "personal_assistant",
    "scaled",
]
