"""The main job's data: a synthetic agent imported under several budgets, compacted, and reported."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from sleepcompact.api import Memory
from sleepcompact.synthetic import coding_agent

# One conversation, three budgets: the plan caps show how the same history fares in each window.
DEMO_BUDGETS: tuple[tuple[str, str | None], ...] = (
    ("free plan, 16k", "free"),
    ("pro plan, 32k", "pro"),
    ("model, 200k", None),
)


@dataclass(frozen=True)
class BudgetRow:
    """One line of the report: the budget, the figures before, and what compaction made of them."""

    label: str
    conversation_id: str
    messages: int
    tokens: int
    usable: int
    soft: int
    hard: int
    percent: float
    action: str
    tokens_after: int
    percent_after: float
    steps: str
    summary_tokens: int
    compaction_id: str | None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return asdict(self)


def action_for(tokens: int, soft: int, hard: int) -> str:
    """What the guard does at these figures."""
    if tokens > hard:
        return "over hard: compact now"
    if tokens > soft:
        return "over soft: sleep tick"
    return "under soft: nothing"


def run_demo(memory: Memory, *, seed: int = 0, model: str = "claude-sonnet-4-5") -> list[BudgetRow]:
    """Generate the synthetic coding agent, import it under each budget, compact what is over soft, report."""
    conv = coding_agent(seed=seed)
    messages = [{"role": "system", "content": conv.system}, *conv.messages]
    rows: list[BudgetRow] = []
    for label, plan in DEMO_BUDGETS:
        cid = memory.create_conversation(
            model, tenant_id="demo", agent_id=conv.name, plan=plan, metadata={"demo": conv.name, "seed": seed}
        )
        memory.append_many(cid, messages)
        before = memory.stats(cid)
        tokens, soft, hard = int(before["tokens"]), int(before["soft"]), int(before["hard"])
        outcome = memory.compact(cid, trigger="manual") if tokens > soft else None
        after = memory.stats(cid)
        applied = outcome is not None and outcome.status == "applied"
        rows.append(
            BudgetRow(
                label=label,
                conversation_id=cid,
                messages=len(messages),
                tokens=tokens,
                usable=int(before["usable"]),
                soft=soft,
                hard=hard,
                percent=float(before["percent_of_usable"]),
                action=action_for(tokens, soft, hard),
                tokens_after=int(after["tokens"]),
                percent_after=float(after["percent_of_usable"]),
                steps=",".join(dict.fromkeys(s["step"] for s in outcome.steps))
                if applied and outcome
                else "-",
                summary_tokens=outcome.summary_tokens if applied and outcome else 0,
                compaction_id=outcome.compaction_id if applied and outcome else None,
            )
        )
    return rows
