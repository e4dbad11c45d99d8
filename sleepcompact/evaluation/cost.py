"""What a replayed run would cost: the agent's input with prompt-cache pricing, and the summarizer's.

Every call (one per assistant message) sends its whole request. With caching on, the part that is a
prefix of the previous request (``evaluation.cache``) is a cache read at ``read_multiplier`` times the
input price, if that request was sent within the cache's time to live; the rest is a cache write at
``write_multiplier`` (Anthropic: 0.1x and 1.25x for the 5-minute cache, 2x to write the 1-hour one), up
to the request's last breakpoint when it says where they are; what follows that breakpoint is plain
input. A request whose cacheable part is under ``min_cacheable`` tokens is not cached at all and costs
the plain price (Anthropic's minimum for Sonnet-class models). The no-cache figures price every input
token at 1x. The agent's own output is left out: every policy replays the same assistant messages, so
it costs them all the same.

The summarizer pays its input and output at full price when it compacts on the request path (an
emergency: the call waits for it), and at ``batch_discount`` of it when a sleep tick compacts (it runs
off the request path, where a batch API's half price applies).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from sleepcompact.evaluation.cache import CallRecord

MILLION = 1_000_000


@dataclass(frozen=True)
class Pricing:
    """Prices in USD per million tokens (defaults: claude-sonnet-4-5) and the cache's rules."""

    input_price: float = 3.00
    output_price: float = 15.00
    cache: bool = True
    ttl_seconds: float = 300.0
    call_gap: float = 30.0  # seconds between calls when the log has no clock
    read_multiplier: float = 0.1
    write_multiplier: float | None = None  # None: 1.25 up to a 5-minute TTL, 2.0 beyond (1 hour)
    batch_discount: float = 0.5
    min_cacheable: int = 1024

    def __post_init__(self) -> None:
        for name in ("input_price", "output_price", "ttl_seconds", "call_gap", "read_multiplier"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must not be negative")

    @property
    def write(self) -> float:
        """The cache-write multiplier in force."""
        if self.write_multiplier is not None:
            return self.write_multiplier
        return 1.25 if self.ttl_seconds <= 300 else 2.0

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return {
            "input_price_per_mtok": self.input_price,
            "output_price_per_mtok": self.output_price,
            "cache": self.cache,
            "ttl_seconds": self.ttl_seconds,
            "call_gap_seconds": self.call_gap,
            "read_multiplier": self.read_multiplier,
            "write_multiplier": self.write,
            "batch_discount": self.batch_discount,
            "min_cacheable_tokens": self.min_cacheable,
        }


@dataclass(frozen=True)
class SummarizerTokens:
    """The summarizer's tokens: on the request path (full price) and at sleep ticks (batch price)."""

    urgent_in: int = 0
    urgent_out: int = 0
    deferred_in: int = 0
    deferred_out: int = 0


@dataclass(frozen=True)
class PolicyCost:
    """One policy's run priced: input tokens by how the cache took them, and dollars."""

    calls: int
    billed_calls: int
    input_tokens: int
    read_tokens: int
    written_tokens: int
    between_calls: int  # calls with no compaction since the previous call (a conversation's first excluded)
    between_input_tokens: int
    between_read_tokens: int
    input_cost: float
    input_cost_no_cache: float
    summarizer_cost: float

    @property
    def total_cost(self) -> float:
        """The agent's input with cache pricing, plus the summarizer."""
        return self.input_cost + self.summarizer_cost

    @property
    def total_cost_no_cache(self) -> float:
        """The same with every input token at the plain price."""
        return self.input_cost_no_cache + self.summarizer_cost

    @property
    def per_100_calls(self) -> float:
        """Total cost per 100 calls (turns)."""
        return 100 * self.total_cost / self.calls if self.calls else 0.0

    @property
    def hit_ratio(self) -> float:
        """Cached input tokens over all input tokens."""
        return self.read_tokens / self.input_tokens if self.input_tokens else 0.0

    @property
    def hit_ratio_between(self) -> float:
        """The same over the calls with no compaction since the previous call."""
        return self.between_read_tokens / self.between_input_tokens if self.between_input_tokens else 0.0

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready (dollars rounded to a hundredth of a cent)."""
        return {
            "calls": self.calls,
            "billed_calls": self.billed_calls,
            "input_tokens": self.input_tokens,
            "cache_read_tokens": self.read_tokens,
            "cache_write_tokens": self.written_tokens,
            "hit_ratio": round(self.hit_ratio, 4),
            "calls_between_compactions": self.between_calls,
            "hit_ratio_between_compactions": round(self.hit_ratio_between, 4),
            "input_cost_usd": round(self.input_cost, 4),
            "input_cost_no_cache_usd": round(self.input_cost_no_cache, 4),
            "summarizer_cost_usd": round(self.summarizer_cost, 4),
            "total_cost_usd": round(self.total_cost, 4),
            "total_cost_no_cache_usd": round(self.total_cost_no_cache, 4),
            "cost_per_100_calls_usd": round(self.per_100_calls, 4),
        }


def price(calls: Iterable[CallRecord], summarizer: SummarizerTokens, pricing: Pricing) -> PolicyCost:
    """Price a run's calls (every conversation's, in any order) and its summarizer tokens."""
    n = billed = tokens = read = written = between = between_tokens = between_read = 0
    weighted = 0.0  # input tokens times their multiplier
    for call in calls:
        n += 1
        if call.refused:
            continue
        hit, write = _cached(call, pricing)
        billed += 1
        tokens += call.tokens
        read += hit
        written += write
        weighted += hit * pricing.read_multiplier + write * pricing.write + (call.tokens - hit - write)
        if not call.first and not call.compacted:
            between += 1
            between_tokens += call.tokens
            between_read += hit
    per_in, per_out = pricing.input_price / MILLION, pricing.output_price / MILLION
    urgent = summarizer.urgent_in * per_in + summarizer.urgent_out * per_out
    deferred = summarizer.deferred_in * per_in + summarizer.deferred_out * per_out
    return PolicyCost(
        calls=n,
        billed_calls=billed,
        input_tokens=tokens,
        read_tokens=read,
        written_tokens=written,
        between_calls=between,
        between_input_tokens=between_tokens,
        between_read_tokens=between_read,
        input_cost=weighted * per_in,
        input_cost_no_cache=tokens * per_in,
        summarizer_cost=urgent + deferred * pricing.batch_discount,
    )


def _cached(call: CallRecord, pricing: Pricing) -> tuple[int, int]:
    """The call's tokens read from the cache and written to it (the rest, and what follows its last
    breakpoint, is plain input)."""
    cacheable = call.tokens if call.cacheable is None else min(call.cacheable, call.tokens)
    if not pricing.cache or cacheable < pricing.min_cacheable:
        return 0, 0
    gap = call.seconds + call.untimed * pricing.call_gap
    alive = not call.first and gap <= pricing.ttl_seconds
    hit = min(call.shared, cacheable) if alive and call.shared >= pricing.min_cacheable else 0
    return hit, cacheable - hit
