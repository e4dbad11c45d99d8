"""The main job's data: synthetic agents imported under several budgets, and their budget report."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sleepcompact.api import Memory
from sleepcompact.synthetic import coding_agent

# One conversation, three budgets: the plan caps show how the same history fares in each window.
DEMO_BUDGETS: tuple[tuple[str, str | None], ...] = (
    ("free plan (16k)", "free"),
    ("pro plan (32k)", "pro"),
    (
        "model window",
        None,
    ),
)


@dataclass(frozen=True)
class BudgetRow:
    """One line of the budget report."""

    label: str
    conversation_id: str
    messages: int
    tokens: int
    usable: int
    soft: int
    hard: int
    percent: float
    action: str

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return dict(self.__dict__)


def action_for(tokens: int, soft: int, hard: int) -> str:
    """What the guard will do at these figures (the guard itself lands with the compaction engine)."""
    if tokens > hard:
        return "compact now (over hard)"
    if tokens > soft:
        return "ask for sleep (over soft)"
    return "nothing (under soft)"


def run_demo(memory: Memory, *, seed: int = 0, model: str = "claude-sonnet-4-5") -> list[BudgetRow]:
    """Generate the synthetic coding agent, import it under each budget, and report."""
    conv = coding_agent(seed=seed)
    messages = [{"role": "system", "content": conv.system}, *conv.messages]
    rows: list[BudgetRow] = []
    for label, plan in DEMO_BUDGETS:
        cid = memory.create_conversation(
            model, tenant_id="demo", agent_id=conv.name, plan=plan, metadata={"demo": conv.name, "seed": seed}
        )
        memory.append_many(cid, messages)
        s = memory.stats(cid)
        rows.append(
            BudgetRow(
                label=label,
                conversation_id=cid,
                messages=len(messages),
                tokens=int(s["tokens"]),
                usable=int(s["usable"]),
                soft=int(s["soft"]),
                hard=int(s["hard"]),
                percent=float(s["percent_of_usable"]),
                action=action_for(int(s["tokens"]), int(s["soft"]), int(s["hard"])),
            )
        )
    return rows
