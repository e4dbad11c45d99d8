"""How a sweep hands its ticks to the queue: in one call when the queue takes a batch, one by one for a
queue written against 0.2's port (only ``enqueue_tick``), which must keep working after an upgrade."""

from __future__ import annotations

from collections.abc import Sequence

from sleepcompact.services.sweeps import send_ticks

TICKS = [("conv_a", "nightly-2026-11-24"), ("conv_b", "nightly-2026-11-24"), ("conv_c", "idle-1")]


class OldQueue:
    def __init__(self) -> None:
        self.sent: list[tuple[str, str, bool]] = []

    def enqueue_tick(self, conversation_id: str, tick_key: str, *, urgent: bool = False) -> None:
        self.sent.append((conversation_id, tick_key, urgent))


class BatchQueue(OldQueue):
    def __init__(self) -> None:
        super().__init__()
        self.batches: list[list[tuple[str, str]]] = []

    def enqueue_ticks(self, ticks: Sequence[tuple[str, str]]) -> None:
        self.batches.append(list(ticks))


def test_a_queue_that_takes_batches_gets_the_sweeps_ticks_in_one_call() -> None:
    queue = BatchQueue()
    send_ticks(queue, TICKS)  # type: ignore[arg-type]
    assert queue.batches == [TICKS] and queue.sent == []


def test_a_queue_with_only_enqueue_tick_still_gets_every_tick_in_order_and_not_urgent() -> None:
    queue = OldQueue()
    send_ticks(queue, TICKS)  # type: ignore[arg-type]
    assert queue.sent == [(c, k, False) for c, k in TICKS]


def test_no_ticks_send_nothing() -> None:
    queue = BatchQueue()
    send_ticks(queue, [])  # type: ignore[arg-type]
    assert queue.batches == [] and queue.sent == []
