"""The conversation report on real databases: the live-token series, its markers, thresholds, escaping.

One synthetic coding agent lives in an 8k window: a third of its messages, a
compaction, another third, a compaction (this one summarizes), the rest, a
third compaction that is then restored. The series must rise with every append,
fall at each applied compaction to exactly the live tokens it recorded, not
fall at the restored one, and end at what ``stats`` reports now.
"""

from __future__ import annotations

import itertools
import math
import re
import xml.etree.ElementTree as ET
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from html.parser import HTMLParser
from typing import Any

import pytest

from sleepcompact import Memory
from sleepcompact.demo.synthetic import coding_agent
from sleepcompact.domain.budget import Thresholds, make_budget
from sleepcompact.domain.errors import ConversationNotFound
from sleepcompact.domain.records import CompactionRecord
from sleepcompact.report import render_html, render_svg
from sleepcompact.services.report import CompactionMark, Point, Report, build_report, build_series, place

INJECTION = "<script>alert(1)</script>"
Snap = Callable[[Memory], dict[str, list[tuple[Any, ...]]]]


def _last_seq(memory: Memory, cid: str) -> int:
    return max(m["seq"] for m in memory.export(cid).messages)


def _life(memory: Memory) -> tuple[str, list[str], dict[str, int]]:
    """The conversation described in the module docstring: (id, compaction ids, last seq before each)."""
    conv = coding_agent(seed=0)
    msgs = conv.messages
    # Split at plain user turns, so no tool call is separated from its result.
    users = [i for i, m in enumerate(msgs) if m["role"] == "user" and isinstance(m["content"], str)]
    a, b = users[len(users) // 3], users[2 * len(users) // 3]
    cid = memory.create_conversation("claude-sonnet-4-5", context_window=8_000)
    opening = [
        {"role": "system", "content": conv.system},
        {"role": "user", "content": f"{INJECTION} Fix the rounding bug, please."},
        {"role": "assistant", "content": "Looking into it."},
    ]
    ids, before = [], {}
    for n, chunk in enumerate(([*opening, *msgs[:a]], msgs[a:b], msgs[b:])):
        memory.append_many(cid, chunk)
        last = _last_seq(memory, cid)
        outcome = memory.compactions.compact(cid, force=n == 1)  # the middle one summarizes
        assert outcome.status == "applied", outcome.reason
        assert outcome.compaction_id is not None
        ids.append(outcome.compaction_id)
        before[outcome.compaction_id] = last
    assert list(memory.compactions.restore(ids[-1])) == [ids[-1]]
    return cid, ids, before


def test_series_drops_at_each_applied_compaction_and_ends_at_live_tokens(memory: Memory) -> None:
    cid, ids, last_seq_before = _life(memory)
    report = build_report(memory._deps, cid)
    stats = memory.stats(cid)
    history = {h.id: h for h in memory.compactions.history(cid)}

    # the thresholds are the conversation's own, exactly as stats computes them
    figures = ("usable", "soft", "hard", "target", "safety_factor", "context_window")
    assert {k: getattr(report, k) for k in figures} == {k: getattr(stats, k) for k in figures}
    assert report.tokens == stats.tokens

    # one marker per compaction, oldest first, with its recorded figures
    assert [c.id for c in report.compactions] == ids
    assert [c.status for c in report.compactions] == ["applied", "applied", "reverted"]
    for mark in report.compactions:
        h = history[mark.id]
        assert (mark.counted_before, mark.counted_after) == (h.tokens_before, h.tokens_after)
        assert mark.tokens_after == math.ceil(h.tokens_after * stats.safety_factor)
        assert mark.summary == h.summary

    # placement: at the summary row when there is one, else after the last row appended before it
    summary_rows = {m["seq"] for m in memory.export(cid).messages if m["kind"] == "summary"}
    for mark in report.compactions:
        if mark.status == "applied" and history[mark.id].summary_message_id is not None:
            assert mark.placed_by == "summary_row" and mark.seq in summary_rows
        else:
            assert mark.placed_by == "created_at" and mark.seq == last_seq_before[mark.id]
    assert any(m.placed_by == "summary_row" for m in report.compactions), "no summarizing compaction"

    # x never goes back; y only falls at applied compactions, to exactly their recorded tokens_after,
    # from exactly their recorded tokens_before (nothing was appended while they ran)
    points = report.points
    assert points[0] == Point(0, 0, 0)
    assert all(p.seq <= q.seq for p, q in itertools.pairwise(points))
    falls = [(p, q) for p, q in itertools.pairwise(points) if q.counted < p.counted]
    applied = [m for m in report.compactions if m.status == "applied"]
    assert len(falls) == len(applied)
    for (top, bottom), mark in zip(falls, applied, strict=True):
        assert top.seq == bottom.seq == mark.seq
        assert (top.counted, bottom.counted) == (mark.counted_before, mark.counted_after)
        assert (top.tokens, bottom.tokens) == (mark.tokens_before, mark.tokens_after)
    reverted = report.compactions[-1]
    assert all(p.seq != reverted.seq or p.counted >= reverted.counted_before for p in points)

    # the line ends where the conversation is now
    assert (points[-1].counted, points[-1].tokens) == (stats.live_tokens, stats.tokens)

    # --json carries the same
    data = report.to_dict()
    assert len(data["points"]) == len(points) and len(data["compactions"]) == 3


def test_html_has_the_chart_the_table_and_escapes_what_the_agent_wrote(memory: Memory) -> None:
    cid, ids, _ = _life(memory)
    report = build_report(memory._deps, cid)
    # the injection reached a summary, so the page really has to escape it
    assert any(INJECTION in (c.summary or "") for c in report.compactions)

    page = render_html(report)

    assert "<script" not in page.lower()
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    # self-contained: nothing is fetched (the SVG namespace is a name, not a request)
    assert not re.search(r"\b(?:src|href)=\"(?!#)", page)
    assert "@import" not in page and "url(" not in page
    assert not re.search(r"<(?:link|img|iframe|object|embed|audio|video)\b", page, re.I)
    assert "content=\"default-src 'none'; style-src 'unsafe-inline'\"" in page  # scripts are off anyway
    assert f"<title>sleepcompact report: {cid}</title>" in page

    svg = ET.fromstring(render_svg(report))  # the chart is well-formed XML
    ns = {"s": "http://www.w3.org/2000/svg"}
    assert len(svg.findall(".//s:polyline[@id='series']", ns)) == 1
    markers = [g for g in svg.iter("{http://www.w3.org/2000/svg}g") if "marker" in g.get("class", "").split()]
    assert [g.get("data-compaction") for g in markers] == ids
    assert [g.get("class") for g in markers] == ["marker applied", "marker applied", "marker reverted"]
    lines = {
        el.get("class"): int(el.get("data-tokens", "0"))
        for el in svg.iter("{http://www.w3.org/2000/svg}line")
        if "threshold" in el.get("class", "")
    }
    assert lines == {
        "threshold usable": report.usable,
        "threshold hard": report.hard,
        "threshold soft": report.soft,
        "threshold target": report.target,
    }
    assert re.findall(r'<tr class="compaction \w+" data-id="([^"]+)"', page) == ids
    assert page.count('<details class="summary"') == sum(1 for c in report.compactions if c.summary)


def _mark(**overrides: Any) -> CompactionMark:
    values: dict[str, Any] = {
        "number": 1,
        "id": "cmp_1",
        "seq": 3,
        "placed_by": "created_at",
        "trigger": "manual",
        "status": "applied",
        "created_at": "2026-11-22T07:00:00+00:00",
        "steps": ("mask",),
        "tokens_before": 900,
        "tokens_after": 300,
        "counted_before": 800,
        "counted_after": 260,
        "summarizer": None,
        "llm_input_tokens": 0,
        "llm_output_tokens": 0,
        "cost_usd": 0.0,
        "summary": None,
        "flags": (),
        "error": None,
    }
    return CompactionMark(**{**values, **overrides})


def _report(marks: tuple[CompactionMark, ...], conversation_id: str = "conv_1") -> Report:
    return Report(
        conversation_id=conversation_id,
        model="claude-sonnet-4-5",
        context_window=8000,
        usable=6000,
        soft=4200,
        hard=5100,
        target=3000,
        safety_factor=1.15,
        tokens=300,
        generated_at="2026-11-22T07:00:00+00:00",
        points=(Point(0, 0, 0), Point(3, 800, 920), Point(3, 260, 299)),
        compactions=marks,
    )


class _Tags(HTMLParser):
    """Every start tag with its (unescaped) attributes, and the page's text."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[tuple[str, dict[str, str | None]]] = []
        self.text = ""

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.seen.append((tag, dict(attrs)))

    def handle_data(self, data: str) -> None:
        self.text += data


def test_every_untrusted_string_is_escaped() -> None:
    evil = '"><script>alert(1)</script><img src=x onerror=alert(2)>'
    mark = _mark(
        id=f"cmp_{evil}",
        trigger=evil,
        summary=f"summary {evil}",
        flags=(f"flag {evil}",),
        error=f"error {evil}",
        summarizer=evil,
    )
    page = render_html(_report((mark,), conversation_id=f"conv_{evil}"))

    assert "<script" not in page.lower() and "<img" not in page.lower()
    assert page.count("&lt;script&gt;alert(1)&lt;/script&gt;") >= 7
    # parsed as a browser would: no element came from the strings, and attributes hold them whole
    tags = _Tags()
    tags.feed(page)
    assert not {"script", "img"} & {tag for tag, _ in tags.seen}
    assert ("g", f"cmp_{evil}") in [(tag, attrs.get("data-compaction")) for tag, attrs in tags.seen]
    assert ("tr", f"cmp_{evil}") in [(tag, attrs.get("data-id")) for tag, attrs in tags.seen]
    assert f"conv_{evil}" in tags.text and f"summary {evil}" in tags.text
    ET.fromstring(render_svg(_report((mark,), conversation_id=f"conv_{evil}")))


def test_rows_appended_while_a_summary_was_written_stay_counted() -> None:
    """The summary row's seq places the compaction exactly; its tokens_after already counts row 4."""
    t0 = datetime(2026, 11, 22, tzinfo=UTC)
    timeline = [
        (1, 1, "message", 100, t0),
        (2, 2, "message", 500, t0),
        (3, 3, "tool_result", 400, t0),
        (4, 4, "message", 50, t0 + timedelta(seconds=5)),  # appended during the LLM call
        (5, 5, "summary", 90, t0 + timedelta(seconds=6)),
        (6, 6, "message", 10, t0 + timedelta(seconds=7)),
    ]
    record = CompactionRecord(
        id="cmp_1",
        conversation_id="conv_1",
        trigger="sleep",
        status="applied",
        steps=[{"step": "summarize"}],
        first_seq=1,
        last_seq=3,
        messages_affected=3,
        tokens_before=1000,
        tokens_after=240,  # row 1 kept, the summary, and row 4
        created_at=t0 + timedelta(seconds=4),  # stamped before row 4 existed
        summary_message_id=5,
    )
    budget = make_budget(context_window=8000, output_reserve=2000, thresholds=Thresholds(), safety_factor=1.0)
    placements = place(timeline, [record])
    assert placements == [(5, "summary_row")]
    points = build_series(timeline, [record], placements, budget)
    assert [(p.seq, p.counted) for p in points] == [
        (0, 0),
        (1, 100),
        (2, 600),
        (3, 1000),
        (4, 1050),
        (5, 1050),
        (5, 240),
        (6, 250),
    ]
    # without its summary row (restored), the same record is placed by time: after seq 3
    assert place(timeline[:4], [record]) == [(3, "created_at")]


def test_empty_conversation_and_unknown_conversation(memory: Memory, db_snapshot: Snap) -> None:
    cid = memory.create_conversation("claude-sonnet-4-5", context_window=8_000)
    report = build_report(memory._deps, cid)
    assert report.points == (Point(0, 0, 0),) and report.compactions == ()
    assert "No compactions yet." in render_html(report)
    ET.fromstring(render_svg(report))

    before = db_snapshot(memory)
    with pytest.raises(ConversationNotFound):
        build_report(memory._deps, "conv_missing")
    assert db_snapshot(memory) == before
