"""The evaluation: replay real trajectories under several context policies and compare them.

``sleepcompact eval`` is the entry point; ``evaluate`` does the work (see ``replay``).
"""

from sleepcompact.evaluation.policies import POLICIES
from sleepcompact.evaluation.replay import PolicyResult, evaluate

__all__ = ["POLICIES", "PolicyResult", "evaluate"]
