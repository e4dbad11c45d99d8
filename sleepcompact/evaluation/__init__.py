"""The evaluation: replay real trajectories under several context policies and compare them.

``sleepcompact eval`` is the entry point; ``evaluate`` does the work (see ``replay``);
``PolicyResult.cost(Pricing(...))`` prices a run with the prompt cache (see ``cost``).
"""

from sleepcompact.evaluation.cost import PolicyCost, Pricing
from sleepcompact.evaluation.policies import POLICIES
from sleepcompact.evaluation.replay import PolicyResult, evaluate

__all__ = ["POLICIES", "PolicyCost", "PolicyResult", "Pricing", "evaluate"]
