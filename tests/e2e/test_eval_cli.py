"""``sleepcompact eval`` on real trajectories, as a user runs it."""

from __future__ import annotations

from pathlib import Path

from tests.e2e.conftest import Cli

FILES = ("ctf__forensics__flash.traj", "ctf__crypto__BabyEncryption.traj")


def test_eval_compares_the_policies_on_real_trajectories(cli: Cli, trajectory_data: Path) -> None:
    files = [trajectory_data / "swe-agent" / name for name in FILES]
    out = cli.ok("eval", *map(str, files), "--window", "8000", "--json").json()
    results = {r["policy"]: r for r in out["8000"]}
    assert set(results) == {"truncate", "mask-then-summarize-all", "summarize-only", "sleepcompact"}
    ours = results["sleepcompact"]
    # Every policy saw the same calls and the same forward references.
    assert len({(r["calls"], r["references"]) for r in results.values()}) == 1 and ours["references"] > 0
    # The guard never lets a call overflow (the flash trajectory has a 6k-token observation at 8k).
    assert ours["overflows"] == 0 and ours["peak_tokens"] <= 6000
    assert 0.0 <= ours["recall"] <= 1.0 and ours["compactions"].get("emergency", 0) > 0
    assert results["truncate"]["summarizer_input_tokens"] == 0
    for r in results.values():
        assert sum(r["references_by_distance"].values()) == r["references"]
    # The table names every policy.
    two = ("--policy", "truncate", "--policy", "sleepcompact")
    table = cli.ok("eval", str(files[0]), "--window", "8000", *two).stdout
    assert "truncate" in table and "sleepcompact" in table and "summarize-only" not in table
    bad = cli.run("eval", str(files[0]), "--window", "8000", "--policy", "magic")
    assert bad.returncode != 0 and "magic" in bad.stderr
