"""What long-term memory keeps of real conversations: MemoryBank's users through extraction and sleep.

Run with ``.venv/bin/python -m bench.memories [--split tune|report] [--data DIR]``. Two measurements,
both on one split of ``conversations/memorybank`` (users 1-7 ``tune``, the rules were tuned on them;
users 8-15 ``report``, never looked at while tuning):

1. **Importance histogram.** Each user's whole history folded at once (``extract_facts`` over every
   message, dated with its day, the user named from the file): how many drafts score 1, 2, ... 10.
   Under 5 (the consolidation floor) a draft is never promoted.
2. **Answers in memory.** Each user's days imported one by one into an 8k-window conversation (the
   MemoryBank import keeps each day's date), with a sleep tick after each day ("night-<day>"), offline
   summarizer. A tick compacts when the conversation passes its soft threshold or holds more live
   messages than the entry trigger; the conversations are short (34-104 messages, under 5k tokens), so
   under the default trigger (100 messages) few ever compact, and the run is repeated with a trigger
   of 20, where every night folds all but the preserve window. For each probing question with a gold answer
   (``sleepcompact.evaluation.qa.memorybank``): is the answer in at least one valid memory, and was the
   message that says it folded at all (an answer still live needs no memory).

Nothing here asserts; the table goes to ``bench/results/memories-<split>.md``.
"""

from __future__ import annotations

import argparse
import json
import platform
import tempfile
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench.results import publish
from sleepcompact import Memory, Settings
from sleepcompact.domain.extraction import extract_facts
from sleepcompact.domain.records import MessageRecord
from sleepcompact.evaluation.qa.memorybank import GoldAnswer, answer_present, load_gold

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
SPLITS = {"tune": (0, 7), "report": (7, 15)}
WINDOW = 8192


def _users(data: Path, split: str) -> dict[str, dict[str, Any]]:
    doc = json.loads((data / "conversations" / "memorybank" / "memory_bank_en.json").read_text("utf-8"))
    lo, hi = SPLITS[split]
    return {name: doc[name] for name in list(doc)[lo:hi]}


def _turns(user: dict[str, Any]) -> list[tuple[str, str, str]]:
    """(day, role, text) of every message in order, as the importer reads them."""
    out = []
    for day, turns in sorted(user["history"].items()):
        for turn in turns:
            out.append((day, "user", str(turn["query"])))
            if turn.get("response") is not None:
                out.append((day, "assistant", str(turn["response"])))
    return out


def _rows(user: dict[str, Any]) -> list[MessageRecord]:
    rows = []
    for seq, (day, role, text) in enumerate(_turns(user), start=1):
        when = datetime.fromisoformat(day).replace(tzinfo=UTC)
        rows.append(
            MessageRecord(seq, "c", seq, 0, role, "message", text, None, None, None, 0, "live", None, 0, when)
        )
    return rows


def histogram(users: dict[str, dict[str, Any]]) -> tuple[int, list[int]]:
    """Drafts of each user's whole history folded at once, counted by importance 1..10."""
    counts: Counter[int] = Counter()
    for name, user in users.items():
        counts.update(d.importance for d in extract_facts(_rows(user), user_name=name.strip()))
    return sum(counts.values()), [counts.get(i, 0) for i in range(1, 11)]


@dataclass
class Replay:
    """One replay's figures over a split."""

    trigger: int
    compacted: int = 0
    entries: int = 0
    memories: int = 0
    questions: int = 0
    folded: int = 0  # answers whose every evidence message was folded
    in_memory: int = 0
    in_memory_folded: int = 0
    across_memories: int = 0  # every group of the answer in some memory, not necessarily the same one
    hist: Counter[int] | None = None


def _evidence_live(gold: GoldAnswer, user: dict[str, Any], messages: Sequence[dict[str, Any]]) -> bool:
    """Whether a message that says the answer is still live (found by its day and its text: seqs skip
    the summaries a compaction inserts)."""
    said = set()
    for e in gold.evidence:
        turns = user["history"].get(e.day) or []
        if e.turn < len(turns):
            said.add((e.day, str(turns[e.turn].get("query" if e.speaker == "user" else "response"))))
    return any(
        m["state"] != "archived" and (str(m["created_at"])[:10], m["content"]) in said
        for m in messages
        if m["kind"] == "message" and isinstance(m["content"], str)
    )


def replay(users: dict[str, dict[str, Any]], gold: Sequence[GoldAnswer], trigger: int) -> Replay:
    """Each user day by day at 8k with a nightly tick; what memory holds at the end."""
    out = Replay(trigger, hist=Counter())
    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings(database_url=f"sqlite:///{tmp}/m.db", summarizer="offline", entry_trigger=trigger)
        with Memory(settings, auto_migrate=True) as mem:
            for name, user in users.items():
                cid = "mb-" + "-".join(name.split())
                profile = {k: v for k, v in user.items() if k != "history"}
                for day, turns in sorted(user["history"].items()):
                    if not turns:
                        continue
                    one = {name: {**profile, "history": {day: turns}}}
                    mem.import_(
                        json.dumps(one).encode(),
                        conversation_id=cid,
                        context_window=WINDOW,
                        model="gpt-4o",
                        agent_id=cid,  # one agent per user: memories are per agent
                    )
                    mem.sleep.tick(cid, f"night-{day}")
                _score(mem, cid, name.strip(), user, gold, out)
    return out


def _score(
    mem: Memory, cid: str, name: str, user: dict[str, Any], gold: Sequence[GoldAnswer], out: Replay
) -> None:
    entries = [e for e in mem.journal.entries(cid) if e.origin == "pre_compaction"]
    memories = mem.memories.list(cid)
    messages = mem.export(cid).messages
    out.compacted += bool(mem.compactions.history(cid))
    out.entries += len(entries)
    out.memories += len(memories)
    assert out.hist is not None
    out.hist.update(e.importance for e in entries)
    for g in gold:
        if g.user != name or not g.answers:
            continue
        out.questions += 1
        folded = not _evidence_live(g, user, messages)
        found = any(answer_present(m.content, g.answers) for m in memories)
        out.across_memories += answer_present("\n".join(m.content for m in memories), g.answers)
        out.folded += folded
        out.in_memory += found
        out.in_memory_folded += found and folded


def table(
    split: str, users: dict[str, dict[str, Any]], runs: list[Replay], hist: tuple[int, list[int]]
) -> str:
    """The Markdown the run prints and writes."""
    when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        f"MemoryBank {split} split ({len(users)} users), {when}, {platform.platform()}, "
        f"Python {platform.python_version()}",
        "",
        "Importance of the drafts (each history folded at once): 1..10",
        "",
        "| drafts | " + " | ".join(str(i) for i in range(1, 11)) + " |",
        "|---:|" + "---:|" * 10,
        f"| {hist[0]} | " + " | ".join(str(n) for n in hist[1]) + " |",
        "",
        "Day by day at an 8k window, a sleep tick each night (offline summarizer)",
        "",
        "| entry trigger | compacted | journal drafts | memories | questions | answer folded "
        "| answer in a memory | of the folded | across memories |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in runs:
        lines.append(
            f"| {r.trigger} | {r.compacted}/{len(users)} | {r.entries} | {r.memories} | {r.questions} "
            f"| {r.folded} | {r.in_memory} | {r.in_memory_folded}/{r.folded} | {r.across_memories} |"
        )
    for r in runs:
        assert r.hist is not None
        lines.append("")
        lines.append(
            f"trigger {r.trigger}: importance of the journaled drafts 1..10: "
            + ", ".join(str(r.hist.get(i, 0)) for i in range(1, 11))
        )
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> None:
    """Run both measurements on one split and publish the table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--split", choices=sorted(SPLITS), default="report")
    parser.add_argument("--data", type=Path, default=DATA)
    args = parser.parse_args(argv)
    users = _users(args.data, args.split)
    gold = [g for g in load_gold() if g.answerable]
    runs = [replay(users, gold, trigger) for trigger in (100, 20)]
    publish(table(args.split, users, runs, histogram(users)), f"memories-{args.split}.md")


if __name__ == "__main__":
    main()
