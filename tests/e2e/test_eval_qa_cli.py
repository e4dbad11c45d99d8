"""``sleepcompact eval`` measuring what matters: the system prompt counts, where each reference was, and
the QA mode on a QA file built from data read in place (``eval-set``)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.e2e.conftest import Cli

SHARED = Path(__file__).resolve().parents[3] / "shared" / "data"


def test_a_trajectory_no_policy_compacts_scores_the_same_for_every_policy(cli: Cli, tmp_path: Path) -> None:
    # Identifiers said only in the system prompt are in context for every policy (sleepcompact renders the
    # system prompt apart from the messages; it used to be left out of its recall).
    conv = [
        {"role": "system", "content": "You maintain src/payroll/ledger.py and the ticket PAY-4411."},
        {"role": "user", "content": "Start."},
        {"role": "assistant", "content": "Opening src/payroll/ledger.py for PAY-4411."},
        {"role": "user", "content": "Go on."},
        {"role": "assistant", "content": "PAY-4411 is fixed in src/payroll/ledger.py."},
    ]
    path = tmp_path / "short.json"
    path.write_text(json.dumps(conv))
    out = cli.ok("eval", str(path), "--window", "32000", "--json").json()
    recalls = {r["policy"]: r["recall"] for r in out["32000"]}
    assert recalls == dict.fromkeys(recalls, 1.0), recalls
    ours = next(r for r in out["32000"] if r["policy"] == "sleepcompact")
    assert ours["references_by_place"]["live"] == ours["references"] > 0


def test_every_reference_has_a_place(cli: Cli, trajectory_data: Path) -> None:
    path = trajectory_data / "swe-agent" / "ctf__crypto__katy.traj"
    out = cli.ok("eval", str(path), "--window", "6000", "--json").json()
    for r in out["6000"]:
        places = r["references_by_place"]
        assert sum(places.values()) == r["references"], (r["policy"], places)
        if r["policy"] == "truncate":  # no summary and no search: live or missed
            assert set(k for k, v in places.items() if v) <= {"live", "missed"}
    ours = next(r for r in out["6000"] if r["policy"] == "sleepcompact")
    assert ours["overflows"] == 0
    # What the context lacks, the recall tool finds: nothing sleepcompact archived is out of reach.
    assert ours["references_by_place"]["only via search"] > 0
    table = cli.ok("eval", str(path), "--window", "6000").stdout
    assert "where each reference was" in table and "only via search" in table


def test_the_qa_mode_asks_planted_facts_at_the_end_of_long_chats(cli: Cli, tmp_path: Path) -> None:
    qa_file = tmp_path / "synthetic.jsonl"
    made = cli.ok("eval-set", "synthetic", str(qa_file), "--seeds", "2", "--json").json()
    assert made == {"file": str(qa_file), "conversations": 2, "questions": 12}
    out = cli.ok("eval", "--qa", str(qa_file), "--window", "8000", "--json").json()
    results = {r["policy"]: r for r in out["8000"]}
    assert set(results) == {"truncate", "summarize-only", "sleepcompact"}
    ours, truncate = results["sleepcompact"], results["truncate"]
    assert ours["questions"] == {"tune": 6, "report": 6}
    # The facts were said once, weeks before: truncation dropped them, sleepcompact kept or recalled them.
    for split in ("tune", "report"):
        assert truncate["answer_in_context"][split] == 0.0
        assert ours["answer_in_context"][split] >= 0.8
        assert ours["answer_in_recall_tool"][split] >= 0.8
    assert truncate["answer_in_recall_tool"] == {"report": None, "tune": None}
    assert all(r["overflows"] == 0 for r in results.values())
    table = cli.ok("eval", "--qa", str(qa_file), "--window", "8000", "--policy", "truncate").stdout
    assert "answer in the context" in table and "truncate" in table


def test_the_memorybank_set_joins_our_labels_with_the_data_read_in_place(cli: Cli, tmp_path: Path) -> None:
    qa_file = tmp_path / "memorybank.jsonl"
    made = cli.ok("eval-set", "memorybank", str(qa_file), "--data", str(SHARED), "--json").json()
    assert made["conversations"] == 15 and made["questions"] == 99  # one of the 100 has no answer
    lines = [json.loads(line) for line in qa_file.read_text().splitlines()]
    assert all(m.get("sent_at") for line in lines for m in line["messages"]), "each message keeps its day"
    assert {q["split"] for line in lines for q in line["questions"]} == {"tune", "report"}


def test_eval_needs_files_or_a_qa_file_and_a_window(cli: Cli, tmp_path: Path) -> None:
    assert cli.run("eval", "--window", "8000").returncode == 2
    assert cli.run("eval", "--qa", str(tmp_path / "x.jsonl")).returncode == 2
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"name": "x"}\n')
    failed = cli.run("eval", "--qa", str(bad), "--window", "8000")
    assert failed.returncode == 1 and "line 1" in failed.stderr
