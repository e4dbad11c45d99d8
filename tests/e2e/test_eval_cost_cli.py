"""``sleepcompact eval`` pricing each policy's run with the prompt cache, as a user runs it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.e2e.conftest import Cli

FILES = ("ctf__forensics__flash.traj", "ctf__crypto__BabyEncryption.traj")


def test_eval_prices_every_policy_with_the_prompt_cache(cli: Cli, trajectory_data: Path) -> None:
    files = [str(trajectory_data / "swe-agent" / name) for name in FILES]
    out = cli.ok("eval", *files, "--window", "8000", "--json").json()
    for r in out["8000"]:
        cost = r["cost"]
        assert cost["calls"] == r["calls"] and cost["billed_calls"] == r["calls"] - r["overflows"]
        assert cost["total_cost_usd"] == pytest.approx(
            cost["input_cost_usd"] + cost["summarizer_cost_usd"], abs=2e-4
        )
        assert cost["cost_per_100_calls_usd"] == pytest.approx(
            100 * cost["total_cost_usd"] / r["calls"], abs=1e-3
        )
        assert cost["cache_read_tokens"] + cost["cache_write_tokens"] <= cost["input_tokens"]
        assert 0.0 < cost["hit_ratio"] <= cost["hit_ratio_between_compactions"] <= 1.0, r["policy"]
        # Calls 30 s apart on a 5-minute cache: most of every call is read at a tenth of the price.
        assert cost["input_cost_usd"] < cost["input_cost_no_cache_usd"]
    by = {r["policy"]: r["cost"] for r in out["8000"]}
    assert by["truncate"]["summarizer_cost_usd"] == 0.0 < by["sleepcompact"]["summarizer_cost_usd"]


def test_the_pricing_options_change_the_price_and_the_cache(cli: Cli, trajectory_data: Path) -> None:
    file = str(trajectory_data / "swe-agent" / FILES[1])
    one = ("--window", "8000", "--policy", "sleepcompact", "--json")
    base = cli.ok("eval", file, *one).json()["8000"][0]["cost"]
    double = cli.ok("eval", file, *one, "--input-price", "6", "--output-price", "30").json()
    assert double["8000"][0]["cost"]["total_cost_usd"] == pytest.approx(2 * base["total_cost_usd"], abs=2e-4)
    # Calls further apart than the cache lives: nothing is read, every input token is written.
    slow = cli.ok("eval", file, *one, "--call-gap", "600").json()["8000"][0]["cost"]
    assert slow["hit_ratio"] == 0.0 and slow["cache_write_tokens"] > 0
    assert slow["input_cost_usd"] > base["input_cost_usd"]
    hour = cli.ok("eval", file, *one, "--call-gap", "600", "--cache-ttl", "3600").json()
    assert hour["8000"][0]["cost"]["hit_ratio"] == base["hit_ratio"]
    bad = cli.run("eval", file, "--window", "8000", "--input-price", "-1")
    assert bad.returncode != 0 and "input-price" in bad.stderr
    table = cli.ok("eval", file, "--window", "8000").stdout
    assert "per 100 calls" in table and "between compactions" in table


def test_the_gap_between_calls_comes_from_the_messages_times(cli: Cli, tmp_path: Path) -> None:
    long = "The build log says: " + "step ok; " * 700  # well over the 1,024-token cache minimum
    conv = [
        {"role": "user", "content": long, "sent_at": "2026-01-01T10:00:00+00:00"},
        {"role": "assistant", "content": "Reading it.", "sent_at": "2026-01-01T10:00:05+00:00"},
        {"role": "user", "content": "Go on.", "sent_at": "2026-01-01T10:00:10+00:00"},
        {"role": "assistant", "content": "Still ok.", "sent_at": "2026-01-01T10:00:20+00:00"},
        {"role": "user", "content": "And now?", "sent_at": "2026-01-01T11:00:00+00:00"},
        {"role": "assistant", "content": "Done.", "sent_at": "2026-01-01T11:00:05+00:00"},
    ]
    path = tmp_path / "timed.json"
    path.write_text(json.dumps(conv))
    out = cli.ok("eval", str(path), "--window", "32000", "--policy", "truncate", "--json").json()
    cost = out["32000"][0]["cost"]
    # Call 2 is 15 s after call 1 (read); call 3 an hour later (the cache has expired).
    assert cost["calls"] == 3 and 0 < cost["cache_read_tokens"] < cost["input_tokens"] / 2
