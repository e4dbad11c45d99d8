"""The context policies the evaluation compares, each behind the same small interface.

Every policy sees the same messages in the same order and uses the same offline summarizer, so the
comparison is about the policy. The three baselines keep their context in memory as rows (the same
row model and token counts as sleepcompact's store); ``sleepcompact`` is the real thing: a ``Memory``
on a scratch SQLite database, the guard before every assistant message and sleep ticks every K messages.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any, Protocol

from sleepcompact.domain.budget import Budget
from sleepcompact.domain.errors import ContextOverflow
from sleepcompact.domain.ladder import Policy as LadderPolicy
from sleepcompact.domain.ledger import with_ledger
from sleepcompact.domain.messages import content_text, normalize, part_tokens
from sleepcompact.domain.prompt import SUMMARY_PREFIX, SummaryInput, SummaryPrompt, prepared_prompt
from sleepcompact.domain.records import MessageRecord, live_record, new_rows
from sleepcompact.domain.summary import offline_summary
from sleepcompact.evaluation.cache import Request, RequestBlocks, rows_request
from sleepcompact.ports import SummaryResult

POLICIES = ("truncate", "mask-then-summarize-all", "summarize-only", "sleepcompact")
CLEARED = "[Old tool result content cleared]"  # BaseAgent's marker


PLACES = ("live", "ledger", "labelled in summary", "summary text", "recalled snippet")
"""Where an identifier the model was shown sat in its context, most direct first."""


@dataclass
class Seen:
    """What the model got for one call: its tokens (counted), its text (for recall), that text by
    place (``PLACES``), and the request as blocks for the prompt-cache model (None: not measured)."""

    tokens: int
    text: str
    overflow: bool = False
    places: dict[str, str] = field(default_factory=dict)
    request: Request | None = None

    def place_of(self, identifier: str) -> str | None:
        """The most direct place the identifier is in (None when it is not in the context)."""
        return next((p for p in PLACES if identifier in self.places.get(p, "")), None)


_LEDGER = re.compile(r"^## Action ledger\n.*?(?=^## |\Z)", re.M | re.S)
_LABELLED = re.compile(r"^- [\w.-]+=`[^`\n]+`.*$", re.M)
_RECALLED = re.compile(r"<recalled_history>.*?</recalled_history>", re.S)


def split_places(live: str, summaries: str) -> dict[str, str]:
    """A context's text by place: the summaries' ledger, their labelled identifiers, the rest of them,
    the recalled-history block, and the live messages."""
    ledger = "\n".join(m.group() for m in _LEDGER.finditer(summaries))
    rest = _LEDGER.sub("", summaries)
    labelled = "\n".join(m.group() for m in _LABELLED.finditer(rest))
    recalled = "\n".join(m.group() for m in _RECALLED.finditer(live))
    return {
        "live": _RECALLED.sub("", live),
        "ledger": ledger,
        "labelled in summary": labelled,
        "summary text": _LABELLED.sub("", rest),
        "recalled snippet": recalled,
    }


@dataclass
class Costs:
    """Compactions by trigger, tokens saved by step, and the summarizer's input and output tokens (of
    which ``deferred_in`` and ``deferred_out`` were spent at sleep ticks, off the request path)."""

    compactions: dict[str, int] = field(default_factory=dict)
    saved_by_step: dict[str, int] = field(default_factory=dict)
    summarizer_in: int = 0
    summarizer_out: int = 0
    deferred_in: int = 0
    deferred_out: int = 0

    def add(self, trigger: str, step: str, saved: int) -> None:
        """Count one compaction step."""
        self.compactions[trigger] = self.compactions.get(trigger, 0) + 1
        self.saved_by_step[step] = self.saved_by_step.get(step, 0) + max(0, saved)


def prompt_tokens(prompt: SummaryPrompt, count: Callable[[str], int]) -> int:
    """What an LLM summarizer would be billed as input: the request's instructions and transcript."""
    return count(prompt.system) + count(prompt.user)


class MeteredSummarizer:
    """The offline summarizer, counting what each request would cost an LLM (the cost proxy).

    Input is the prompt the compaction built (instructions, the previous summary, the transcript of
    the original messages); output is the summary. The baselines count their requests the same way.
    """

    provider = "offline"
    model = "offline"

    def __init__(self, count: Callable[[str], int]) -> None:
        self._count = count
        self.input_tokens = 0
        self.output_tokens = 0

    def summarize(
        self, request: SummaryInput, prompt: SummaryPrompt, *, deadline: float | None = None
    ) -> SummaryResult:
        """The offline summary of ``request``; ``prompt`` is only counted."""
        text = offline_summary(request, self._count)
        self.input_tokens += prompt_tokens(prompt, self._count)
        self.output_tokens += self._count(text)
        return SummaryResult(text=text, provider=self.provider, model=self.model)


def all_text(value: Any) -> str:
    """Every string inside rendered messages (text, tool inputs, tool results), joined."""
    if isinstance(value, str):
        return value
    if isinstance(value, Mapping):
        skip = ("type", "id", "tool_use_id", "role")
        return "\n".join(all_text(v) for k, v in value.items() if k not in skip)
    if isinstance(value, list):
        return "\n".join(all_text(v) for v in value)
    return ""


class Policy(Protocol):
    """Append messages; before each assistant message, say what the model would see."""

    name: str
    costs: Costs

    def append(self, message: Mapping[str, Any]) -> None: ...

    def before_call(self) -> Seen: ...

    def tick(self) -> None: ...

    def applied(self) -> int:
        """Compactions applied so far (what changed between two calls tells the cache model)."""
        ...


class _Rows:
    """A baseline's context: rows with sleepcompact's row model and token counts."""

    def __init__(self, budget: Budget, count: Callable[[str], int]) -> None:
        self.budget = budget
        self.count = count
        self.rows: list[MessageRecord] = []
        self._seq = 0
        self._tools: dict[str, str | None] = {}  # tool call id -> tool name
        self.costs = Costs()

    def append(self, message: Mapping[str, Any]) -> None:
        # The rows an append would store (a seq per part, tool results named), live as themselves.
        normalized = normalize(message)
        tokens = [part_tokens(p.content, self.count) for p in normalized.parts]
        rows = new_rows(normalized, tokens, first_seq=self._seq + 1, tool_names=self._tools, count=self.count)
        now = datetime.now(UTC)
        for row in rows:
            if row.kind == "tool_call" and row.tool_call_id:
                self._tools[row.tool_call_id] = row.tool_name
            self.rows.append(live_record(row, id=row.seq, conversation_id="eval", created_at=now))
        self._seq += len(rows)

    def tokens(self) -> int:
        return sum(r.live_tokens for r in self.rows)

    def seen(self) -> Seen:
        tokens = self.tokens()
        live = "\n".join(content_text(r.view) for r in self.rows if r.kind != "summary")
        summaries = "\n".join(content_text(r.view) for r in self.rows if r.kind == "summary")
        text = "\n".join(content_text(r.view) for r in self.rows)
        places = split_places(live, summaries)
        return Seen(tokens, text, tokens > self.budget.usable, places, rows_request(self.rows))

    def applied(self) -> int:
        """Compactions applied so far (a mask and a summary in one call are two)."""
        return sum(self.costs.compactions.values())

    def tick(self) -> None:
        """The baselines have no sleep: they act only when a call would not fit."""

    def summarize(self, rows: list[MessageRecord], trigger: str) -> MessageRecord:
        """Fold ``rows`` (a previous summary among them rolls in) into one summary row."""
        previous = next((r for r in rows if r.kind == "summary"), None)
        body = content_text(previous.content).removeprefix(SUMMARY_PREFIX).strip() if previous else None
        originals = tuple(r for r in rows if r.kind != "summary")
        replaced = sum(r.live_tokens for r in rows)
        # The same size rule as sleepcompact's ladder: 30% of what it replaces, within the window's cap.
        ladder = LadderPolicy()
        cap = max(48, min(ladder.summary_cap(self.budget.usable), int(replaced * ladder.summary_ratio)))
        # The request sleepcompact's compaction would send for the same rows (``MeteredSummarizer``): the
        # model writes the narrative, the ledger is set in by rules and costs no output.
        narrative, prompt, ledger = prepared_prompt(SummaryInput(originals, body, cap), self.count)
        written = offline_summary(narrative, self.count)
        text = SUMMARY_PREFIX + with_ledger(written, ledger)
        tokens = part_tokens(text, self.count)
        self.costs.summarizer_in += prompt_tokens(prompt, self.count)
        self.costs.summarizer_out += self.count(written)
        self.costs.add(trigger, "summarize", replaced - tokens)
        return replace(
            rows[0], kind="summary", role="user", content=text, live_content=None, live_tokens=tokens
        )


def _turn_starts(rows: list[MessageRecord]) -> list[int]:
    return [i for i, r in enumerate(rows) if r.role == "user" and r.kind == "message"]


class Truncate(_Rows):
    """Drop the oldest whole turns until the call is back under the hard threshold."""

    name = "truncate"

    def before_call(self) -> Seen:
        if self.tokens() > self.budget.hard:
            before = self.tokens()
            while self.tokens() > self.budget.hard:
                starts = [i for i in _turn_starts(self.rows) if i > 0]
                if not starts:
                    break  # one turn left: it is sent as it is (and may overflow)
                self.rows = self.rows[starts[0] :]
            self.costs.add("emergency", "truncate", before - self.tokens())
        return self.seen()


class SummarizeOnly(_Rows):
    """Over hard: fold everything before the last two user turns into one rolling summary."""

    name = "summarize-only"

    def before_call(self) -> Seen:
        if self.tokens() > self.budget.hard:
            starts = _turn_starts(self.rows)
            cut = starts[-2] if len(starts) >= 2 else 0
            if cut > 0:
                self.rows = [self.summarize(self.rows[:cut], "emergency"), *self.rows[cut:]]
        return self.seen()


class MaskThenSummarizeAll(_Rows):
    """BaseAgent's two passes: clear old tool output (protect the recent, prune only if it saves enough),
    then, if still over, replace the whole history by one summary."""

    name = "mask-then-summarize-all"

    def before_call(self) -> Seen:
        if self.tokens() <= self.budget.hard:
            return self.seen()
        protect = min(40_000, self.budget.usable // 4)
        minimum = min(20_000, self.budget.usable // 10)
        starts = _turn_starts(self.rows)
        protected_from = starts[-2] if len(starts) >= 2 else 0
        seen_tool, prune, saving = 0, [], 0
        for i in range(protected_from - 1, -1, -1):
            row = self.rows[i]
            if row.kind != "tool_result" or row.live_content is not None:
                continue
            seen_tool += row.live_tokens
            if seen_tool > protect:
                prune.append(i)
                saving += row.live_tokens
        if saving > minimum:
            cleared = part_tokens(CLEARED, self.count)
            for i in prune:
                self.rows[i] = replace(self.rows[i], live_content=CLEARED, live_tokens=cleared)
            self.costs.add("emergency", "mask", saving - cleared * len(prune))
        if self.tokens() > self.budget.hard:
            self.rows = [self.summarize(self.rows, "emergency")]
        return self.seen()


def context_seen(memory: Any, conversation_id: str, blocks: RequestBlocks | None = None) -> Seen:
    """What the guard gives the next call: the rendered system prompt and messages (the system prompt is
    rendered apart from the messages, and an identifier it holds is in context like any other); with
    ``blocks``, the request as blocks too, as ``ctx.request()`` sends it: in Anthropic format with its
    cache breakpoints, which say what the provider caches (none when prompt caching is off)."""
    request: Request | None = None
    try:
        prepared = memory.prepare_context(conversation_id)
        view, overflow = prepared.view, False
        if blocks is not None:
            sent = prepared.request()
            marked = view.format == "anthropic"  # OpenAI caches on its own: any block boundary
            request = blocks.rendered(sent.get("system"), sent["messages"], marked=marked)
    except ContextOverflow:
        view, overflow = memory.context(conversation_id), True
    if request is None and blocks is not None:  # a refused call: its request as rendered (not billed)
        request = blocks.rendered(view.system, view.messages)
    text = "\n".join([view.system or "", all_text(view.messages)])
    summaries = [t for t in _texts(view.messages) if t.startswith(SUMMARY_PREFIX)]
    live = "\n".join(
        [view.system or "", *(t for t in _texts(view.messages) if not t.startswith(SUMMARY_PREFIX))]
    )
    places = split_places(live, "\n".join(summaries))
    return Seen(
        view.counted_tokens,
        text,
        overflow=overflow or view.counted_tokens > view.budget.usable,
        places=places,
        request=request,
    )


def _texts(messages: Any) -> list[str]:
    """Each text of rendered messages apart (a summary is one text block of its own)."""
    if isinstance(messages, str):
        return [messages]
    if isinstance(messages, Mapping):
        skip = ("type", "id", "tool_use_id", "role")
        return [t for k, v in messages.items() if k not in skip for t in _texts(v)]
    if isinstance(messages, list):
        return [t for v in messages for t in _texts(v)]
    return []


class Sleepcompact:
    """The full pipeline: a real ``Memory`` (scratch SQLite), the guard before every call, sleep ticks."""

    name = "sleepcompact"

    def __init__(self, memory: Any, conversation_id: str, summarizer: MeteredSummarizer) -> None:
        self.memory = memory
        self.cid = conversation_id
        self.summarizer = summarizer
        self.costs = Costs()
        self._ticks = 0
        self._blocks = RequestBlocks(memory.admin.counter.count)

    def append(self, message: Mapping[str, Any]) -> None:
        self.memory.append(self.cid, dict(message))

    def before_call(self) -> Seen:
        return context_seen(self.memory, self.cid, self._blocks)

    def applied(self) -> int:
        """Compactions applied so far: the conversation's compaction epoch (one indexed read)."""
        return int(self.memory.admin.conversation(self.cid).compaction_epoch)

    def find(self, identifier: str) -> bool:
        """Whether the recall tool's search would bring the identifier back (its first page)."""
        call = {"type": "tool_use", "id": "eval", "name": "search_history", "input": {"query": identifier}}
        return identifier in str(self.memory.handle_tool_call(self.cid, call).get("content", ""))

    def tick(self) -> None:
        self._ticks += 1
        before = self.summarizer.input_tokens, self.summarizer.output_tokens
        self.memory.sleep.tick(self.cid, f"eval-{self._ticks}")
        # What a tick's compaction asks of the summarizer is off the request path (batch-priced).
        self.costs.deferred_in += self.summarizer.input_tokens - before[0]
        self.costs.deferred_out += self.summarizer.output_tokens - before[1]

    def finish(self) -> None:
        """Read the costs back from the compaction records."""
        for h in self.memory.compactions.history(self.cid):
            if h.status != "applied":
                continue
            self.costs.compactions[h.trigger] = self.costs.compactions.get(h.trigger, 0) + 1
            for step in h.steps:
                name = step["step"]
                self.costs.saved_by_step[name] = self.costs.saved_by_step.get(name, 0) + step["tokens_saved"]
        # Every request the summarizer got, applied or not: that is what it would have cost.
        self.costs.summarizer_in += self.summarizer.input_tokens
        self.costs.summarizer_out += self.summarizer.output_tokens
