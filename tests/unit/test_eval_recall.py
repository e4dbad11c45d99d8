"""Forward-reference recall and the baseline policies, on hand-made conversations (no database)."""

from __future__ import annotations

from typing import Any

from sleepcompact.adapters.tokenizer import load_counter
from sleepcompact.domain.budget import Thresholds, make_budget
from sleepcompact.domain.ladder import Policy as LadderPolicy
from sleepcompact.domain.prompt import SummaryInput, prepared_prompt
from sleepcompact.evaluation.policies import (
    Costs,
    MaskThenSummarizeAll,
    MeteredSummarizer,
    Seen,
    SummarizeOnly,
    Truncate,
    prompt_tokens,
)
from sleepcompact.evaluation.replay import PolicyResult, replay

COUNT = load_counter().count


class Shows:
    """A policy that shows the model exactly the given text before every call."""

    name = "fixed"

    def __init__(self, text: str) -> None:
        self.text = text
        self.costs = Costs()

    def append(self, message: Any) -> None:
        pass

    def before_call(self) -> Seen:
        return Seen(tokens=10, text=self.text)

    def tick(self) -> None:
        pass


MESSAGES = [
    {"role": "user", "content": "Please fix src/billing/tax.py, ticket PAY597."},
    {"role": "assistant", "content": "Looking at src/billing/tax.py now."},
    {"role": "user", "content": "Also check compute_tax_total."},
    {"role": "assistant", "content": "compute_tax_total in src/billing/tax.py rounds wrongly (PAY597)."},
]


def test_recall_counts_identifiers_introduced_earlier_and_seen_before_the_call() -> None:
    everything = Shows(" ".join(m["content"] for m in MESSAGES))
    result = PolicyResult("fixed")
    replay(MESSAGES, everything, result, tick_every=0, usable=1000)
    # Call 1 reuses the path; call 2 reuses the path, the ticket and the function name.
    assert (result.calls, result.references, result.recalled) == (2, 4, 4)
    nothing = PolicyResult("blind")
    replay(MESSAGES, Shows(""), nothing, tick_every=0, usable=1000)
    assert nothing.references == 4 and nothing.recalled == 0 and nothing.recall == 0.0
    # Distances: the path reused 1 and 3 messages later, the ticket 3, the function 1.
    assert nothing.to_dict()["references_by_distance"]["1-5"] == 4


def test_an_overflow_is_counted_when_the_call_is_over_the_usable_budget() -> None:
    result = PolicyResult("fixed")
    replay(MESSAGES, Shows("x"), result, tick_every=0, usable=5)
    assert result.overflows == result.calls == 2


def _long(n_turns: int, output_lines: int) -> list[dict[str, Any]]:
    msgs: list[dict[str, Any]] = []
    for i in range(n_turns):
        tid = f"toolu_{i}"
        msgs += [
            {"role": "user", "content": f"Step {i}: look at module_{i}.py"},
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": tid, "name": "bash", "input": {"c": i}}],
            },
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": tid,
                        "content": "\n".join(f"line {j} of module_{i}.py" for j in range(output_lines)),
                    }
                ],
            },
            {"role": "assistant", "content": f"module_{i}.py looks fine."},
        ]
    return msgs


def test_the_baselines_keep_their_calls_under_hard_and_report_their_costs() -> None:
    budget = make_budget(context_window=4000, output_reserve=1000, thresholds=Thresholds(), safety_factor=1.0)
    for cls in (Truncate, SummarizeOnly, MaskThenSummarizeAll):
        policy = cls(budget, COUNT)
        result = PolicyResult(policy.name)
        replay(_long(12, 40), policy, result, tick_every=0, usable=budget.usable)
        assert result.overflows == 0, cls
        assert result.peak_tokens <= budget.hard, cls
        assert policy.costs.compactions.get("emergency", 0) > 0, cls
        if cls is Truncate:
            assert policy.costs.summarizer_in == 0 and policy.costs.saved_by_step.get("truncate", 0) > 0
        elif cls is SummarizeOnly:
            assert policy.costs.summarizer_in > policy.costs.summarizer_out > 0
        else:  # old tool output cleared first; here that is enough, so no summary was paid for
            assert policy.costs.saved_by_step.get("mask", 0) > 0 and policy.costs.summarizer_in == 0


def test_mask_then_summarize_all_replaces_the_whole_history_when_clearing_is_not_enough() -> None:
    budget = make_budget(context_window=4000, output_reserve=1000, thresholds=Thresholds(), safety_factor=1.0)
    chat = [
        {"role": r, "content": f"{r} message {i}: " + "words about billing and taxes " * 40}
        for i in range(20)
        for r in ("user", "assistant")
    ]
    policy = MaskThenSummarizeAll(budget, COUNT)
    result = PolicyResult(policy.name)
    replay(chat, policy, result, tick_every=0, usable=budget.usable)
    assert policy.costs.summarizer_in > 0 and "mask" not in policy.costs.saved_by_step
    assert policy.rows[0].kind == "summary"


def test_every_policy_pays_for_the_same_summary_request_the_same() -> None:
    """The cost proxy is the request an LLM would be sent: the baselines and sleepcompact's summarizer
    count it alike, and a rolling summary pays for reading the previous one too."""
    budget = make_budget(context_window=4000, output_reserve=1000, thresholds=Thresholds(), safety_factor=1.0)
    policy = SummarizeOnly(budget, COUNT)
    for message in _long(3, 40):
        policy.append(message)
    rows = list(policy.rows)
    first = policy.summarize(rows, "emergency")
    paid_first = policy.costs.summarizer_in

    # sleepcompact's compaction builds its prompt from the same input; the metered summarizer counts it.
    metered = MeteredSummarizer(COUNT)
    ladder = LadderPolicy()
    cap = max(
        48,
        min(ladder.summary_cap(budget.usable), int(sum(r.live_tokens for r in rows) * ladder.summary_ratio)),
    )
    narrative, prompt, _ledger = prepared_prompt(SummaryInput(tuple(rows), None, cap), COUNT)
    metered.summarize(narrative, prompt)
    assert metered.input_tokens == paid_first
    assert metered.output_tokens == policy.costs.summarizer_out > 0

    # Folding that summary with one more message reads the previous summary as well.
    policy.append({"role": "user", "content": "One more: keep Decimal in src/billing/tax.py."})
    extra = policy.rows[len(rows) :]
    policy.summarize([first, *extra], "emergency")
    alone = prompt_tokens(prepared_prompt(SummaryInput(tuple(extra), None, 64), COUNT)[1], COUNT)
    assert policy.costs.summarizer_in - paid_first > alone
