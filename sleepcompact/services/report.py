"""The conversation report: live tokens over the conversation's life, rebuilt from the store.

The store keeps every row ever appended (with its original token count and
when it was appended) and every compaction (with the live tokens it left), but
not the live total at each moment. ``build_series`` replays that history:

* x is the message seq (the order of appends, readable where timestamps of a
  bulk import would all coincide);
* y is what the next call would have carried right after that seq: the running
  sum of the original ``token_count`` of appended rows, which drops at each
  applied compaction to the compaction's recorded ``tokens_after`` (the recount
  made in the compaction's own transaction, so it includes rows appended while
  the summary was being written, and the summary itself);
* y is shown in model tokens, ``ceil(counted * safety_factor)`` with today's
  factor, the unit the thresholds are in; the counted figure is kept alongside.
"""

from __future__ import annotations

import bisect
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from typing import Any

from sleepcompact.domain.budget import Budget
from sleepcompact.domain.errors import ConversationNotFound
from sleepcompact.domain.records import CompactionRecord
from sleepcompact.ports import Dependencies
from sleepcompact.services.budgets import budget_for

TimelineRow = tuple[int, int, str, int, datetime]
"""(message id, seq, kind, original token_count, created_at), as ``ConversationRepository.timeline`` gives."""


@dataclass(frozen=True)
class Point:
    """One point of the series: after the rows of ``seq`` were appended, or at a compaction."""

    seq: int
    counted: int
    """Tokens as counted at append (cl100k_base)."""
    tokens: int
    """The same in the model's tokens: ``ceil(counted * safety_factor)``, the unit of the thresholds."""


@dataclass(frozen=True)
class CompactionMark:
    """A compaction as the report shows it: where it happened on the chart, and its figures."""

    number: int
    id: str
    seq: int
    """The x position: the highest seq that existed when it applied (see ``services.report``)."""
    placed_by: str
    """``summary_row`` (exact) or ``created_at`` (the rows' timestamps against the record's)."""
    trigger: str
    status: str
    created_at: str
    steps: tuple[str, ...]
    tokens_before: int
    tokens_after: int
    """Both in model tokens, from the record (the counted figures follow)."""
    counted_before: int
    counted_after: int
    summarizer: str | None
    llm_input_tokens: int
    llm_output_tokens: int
    cost_usd: float
    summary: str | None
    flags: tuple[str, ...]
    error: str | None


@dataclass(frozen=True)
class Report:
    """Everything the page shows; ``to_dict`` is what ``report --json`` prints."""

    conversation_id: str
    model: str
    context_window: int
    usable: int
    soft: int
    hard: int
    target: int
    safety_factor: float
    tokens: int
    """What the next call carries now (model tokens), as ``stats`` reports it."""
    generated_at: str
    points: tuple[Point, ...]
    compactions: tuple[CompactionMark, ...]

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready data."""
        return asdict(self)


def place(timeline: Sequence[TimelineRow], compactions: Sequence[CompactionRecord]) -> list[tuple[int, str]]:
    """Where each compaction happened: (the highest seq that existed when it applied, how we know).

    * A compaction that wrote a summary row is placed at that row's seq
      (``summary_row``): the seq was reserved inside the apply transaction, so it
      is the exact point, even when other rows were appended meanwhile.
    * Any other (LLM-free steps only, clears, failed, stalled, discarded and
      running ones, and restored ones, whose summary row the restore deleted) is
      placed at the highest seq whose row was appended at or before the
      record's ``created_at`` (``created_at``). The record is stamped just before
      its apply transaction opens, so only a row appended in those few
      milliseconds can land on the wrong side of it. Timestamps are compared, not
      seqs, because concurrent appends may commit slightly out of seq order; the
      prefix maximum keeps the answer exact then too. Before any row: seq 0.
    """
    seq_of = {mid: seq for mid, seq, _kind, _tokens, _at in timeline}
    by_time = sorted((at, seq) for _mid, seq, _kind, _tokens, at in timeline)
    times = [at for at, _seq in by_time]
    highest: list[int] = []
    for _at, seq in by_time:
        highest.append(max(seq, highest[-1]) if highest else seq)
    out: list[tuple[int, str]] = []
    for c in compactions:
        if c.summary_message_id is not None and c.summary_message_id in seq_of:
            out.append((seq_of[c.summary_message_id], "summary_row"))
            continue
        i = bisect.bisect_right(times, c.created_at)
        out.append((highest[i - 1] if i else 0, "created_at"))
    return out


def build_series(
    timeline: Sequence[TimelineRow],
    compactions: Sequence[CompactionRecord],
    placements: Sequence[tuple[int, str]],
    budget: Budget,
) -> list[Point]:
    """The live-token series (see the module docstring), starting from an empty conversation at seq 0.

    Summary rows add nothing on their own: their tokens are part of their
    compaction's ``tokens_after``. Only ``applied`` compactions drop the line.
    A compaction later undone by ``restore`` (status ``reverted``) is marked but
    does not drop it: the store records that a restore happened, not when, so
    the series shows the history as it stands now (as if the restored
    compaction had never applied) rather than guess a time for the rise. Every
    later compaction's ``tokens_after`` was recorded after the restore, so the
    line stays anchored to real figures, and it ends at the conversation's
    current live tokens.
    """
    appended: dict[int, int] = {}
    for _mid, seq, kind, tokens, _at in timeline:
        appended[seq] = appended.get(seq, 0) + (0 if kind == "summary" else tokens)
    at_seq: dict[int, list[CompactionRecord]] = {}
    for c, (seq, _how) in zip(compactions, placements, strict=True):
        at_seq.setdefault(seq, []).append(c)

    def point(seq: int, counted: int) -> Point:
        return Point(seq=seq, counted=counted, tokens=budget.effective(counted))

    points = [point(0, 0)]
    counted = 0
    for seq in sorted(appended.keys() | at_seq.keys()):
        if appended.get(seq):
            counted += appended[seq]
            points.append(point(seq, counted))
        for c in at_seq.get(seq, ()):
            if c.status != "applied":
                continue
            if (points[-1].seq, points[-1].counted) != (seq, counted):
                points.append(point(seq, counted))  # the top of the drop, at the same x
            counted = c.tokens_after
            points.append(point(seq, counted))
    return points


def _marks(
    compactions: Sequence[tuple[CompactionRecord, Mapping[str, Any]]],
    placements: Sequence[tuple[int, str]],
    budget: Budget,
) -> list[CompactionMark]:
    marks = []
    for number, ((c, meta), (seq, how)) in enumerate(zip(compactions, placements, strict=True), start=1):
        summary = meta.get("summary")
        summarizer = "/".join(x for x in (c.summarizer_provider, c.summarizer_model) if x) or None
        marks.append(
            CompactionMark(
                number=number,
                id=c.id,
                seq=seq,
                placed_by=how,
                trigger=c.trigger,
                status=c.status,
                created_at=c.created_at.astimezone(UTC).isoformat(),
                steps=tuple(str(s.get("step", "?")) for s in c.steps),
                tokens_before=budget.effective(c.tokens_before),
                tokens_after=budget.effective(c.tokens_after),
                counted_before=c.tokens_before,
                counted_after=c.tokens_after,
                summarizer=summarizer,
                llm_input_tokens=c.llm_input_tokens,
                llm_output_tokens=c.llm_output_tokens,
                cost_usd=c.llm_cost_usd,
                summary=summary if isinstance(summary, str) else None,
                flags=tuple(str(f) for f in meta.get("flags") or ()),
                error=c.error,
            )
        )
    return marks


def build_report(deps: Dependencies, conversation_id: str, *, now: datetime | None = None) -> Report:
    """The report of one conversation, read in one transaction (nothing is written).

    Raises ``ConversationNotFound`` for an unknown id. The thresholds are the
    conversation's own budget with the calibrated tokenizer factor, exactly as
    ``Memory.stats`` computes them.
    """
    with deps.read_uow() as uow:
        conv = uow.conversations.get(conversation_id)
        if conv is None:
            raise ConversationNotFound(conversation_id)
        timeline = uow.conversations.timeline(conversation_id)
        compactions = uow.compactions.of(conversation_id)
        factors = uow.calibration.factors()
    budget = budget_for(conv, deps.settings.thresholds, factors)
    records = [c for c, _meta in compactions]
    placements = place(timeline, records)
    return Report(
        conversation_id=conv.id,
        model=conv.model,
        context_window=budget.context_window,
        usable=budget.usable,
        soft=budget.soft,
        hard=budget.hard,
        target=budget.target,
        safety_factor=budget.safety_factor,
        tokens=budget.effective(conv.live_tokens),
        generated_at=(now or datetime.now(UTC)).isoformat(timespec="seconds"),
        points=tuple(build_series(timeline, records, placements, budget)),
        compactions=tuple(_marks(compactions, placements, budget)),
    )
