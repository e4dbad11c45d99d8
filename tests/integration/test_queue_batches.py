"""A sweep's ticks reach Redis pipelined, complete and in order (issue 18, item 3: ticks enqueued in
batches, one round trip per batch where the broker allows it).

The end-to-end run of a sweep through a real worker, on both brokers, is in ``test_worker.py``; this
checks what a worker would find on the ``sleep`` list after one ``enqueue_ticks`` call larger than a
batch: every tick once, as the task and arguments it names, in the order the sweep chose them.
"""

from __future__ import annotations

import base64
import json

import pytest
import redis

from sleepcompact.adapters.queue import PUBLISH_BATCH, CeleryQueue
from sleepcompact.config import Settings

pytestmark = pytest.mark.redis


def _own_db(redis_url: str) -> str:
    """A database of the shared test Redis no worker of another test listens on."""
    return redis_url.rsplit("/", 1)[0] + "/7"


def test_a_sweeps_ticks_reach_the_sleep_queue_complete_and_in_order(redis_url: str) -> None:
    url = _own_db(redis_url)
    client = redis.Redis.from_url(url)
    client.flushdb()
    ticks = [(f"conv_{i:05d}", "nightly-2026-11-24") for i in range(2 * PUBLISH_BATCH + 37)]
    queue = CeleryQueue(Settings(broker_url=url))
    try:
        queue.enqueue_ticks(ticks)
        queue.enqueue_ticks([])
    finally:
        queue.close()
    # LPUSH puts each message at the head and a worker pops from the tail: oldest first.
    raw = list(reversed(client.lrange("sleep", 0, -1)))
    messages = [json.loads(m) for m in raw]
    assert [m["headers"]["task"] for m in messages] == ["sleepcompact.sleep_tick"] * len(ticks)
    args = [json.loads(base64.b64decode(m["body"]))[0] for m in messages]
    assert [tuple(a) for a in args] == ticks
    assert client.llen("emergency") == 0
