"""The conversation report as one self-contained HTML page (its data: ``services.report.Report``).

The page is a single file with no script, no external stylesheet, font or
image: the chart is inline SVG and the styles are inline, so it opens offline
and can be mailed or attached to a ticket. Every piece of text that comes from
the database (ids, summaries, errors, flags) is untrusted and HTML-escaped, and
the page's Content-Security-Policy forbids scripts outright as a second line of
defence.
"""

from __future__ import annotations

import math
from html import escape

from sleepcompact.services.report import Report

# Geometry of the chart (SVG user units; the SVG scales to the page width).
WIDTH, HEIGHT = 1000, 480
LEFT, RIGHT, TOP, BOTTOM = 80, 120, 64, 56
PLOT_W, PLOT_H = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM

# name -> (colour, dash pattern); the legend and the drawing share them.
STYLE = {
    "series": ("#2563eb", ""),
    "usable": ("#111827", ""),
    "hard": ("#dc2626", "8 4"),
    "soft": ("#d97706", "8 4"),
    "target": ("#16a34a", "2 4"),
    "applied": ("#7c3aed", ""),
    "reverted": ("#9ca3af", "6 4"),
    "other": ("#f97316", "2 3"),
}
LEGEND = (
    ("series", "live tokens (what the next call carries)"),
    ("usable", "usable"),
    ("hard", "hard threshold"),
    ("soft", "soft threshold"),
    ("target", "target"),
    ("applied", "compaction (applied)"),
    ("reverted", "compaction (reverted by restore)"),
    ("other", "compaction (not applied)"),
)


def nice_ticks(top: float, count: int = 6) -> list[int]:
    """Round tick values from 0 to at least ``top``: steps of 1, 2 or 5 times a power of ten."""
    if top <= 0:
        return [0, 1]
    raw = top / max(1, count - 1)
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw)
    step = max(1, int(step))
    last = math.ceil(top / step) * step
    return list(range(0, int(last) + 1, step))


def _e(value: object) -> str:
    return escape(str(value), quote=True)


def _n(value: int) -> str:
    return f"{value:,}"


def _dash(name: str) -> str:
    dash = STYLE[name][1]
    return f' stroke-dasharray="{dash}"' if dash else ""


def _status_style(status: str) -> str:
    return status if status in ("applied", "reverted") else "other"


class _Scale:
    """Data to SVG coordinates."""

    def __init__(self, report: Report) -> None:
        seqs = [p.seq for p in report.points] + [c.seq for c in report.compactions]
        self.x0 = min(seqs, default=0)
        self.x1 = max(max(seqs, default=1), self.x0 + 1)
        peak = max([p.tokens for p in report.points] + [report.usable, 1])
        self.yticks = nice_ticks(peak * 1.05)
        self.y1 = self.yticks[-1]
        xtop = self.x1 - self.x0
        self.xticks = [self.x0 + t for t in nice_ticks(xtop, 8) if t <= xtop]

    def x(self, seq: float) -> float:
        return round(LEFT + (seq - self.x0) / (self.x1 - self.x0) * PLOT_W, 1)

    def y(self, tokens: float) -> float:
        return round(TOP + PLOT_H - tokens / self.y1 * PLOT_H, 1)


def _axes(s: _Scale) -> list[str]:
    out = ['<g class="axes" font-size="12" fill="#374151">']
    for t in s.yticks:
        y = s.y(t)
        out.append(
            f'<line class="grid" x1="{LEFT}" y1="{y}" x2="{LEFT + PLOT_W}" y2="{y}" stroke="#e5e7eb"/>'
        )
        out.append(f'<text x="{LEFT - 8}" y="{y + 4}" text-anchor="end">{_n(t)}</text>')
    for t in s.xticks:
        x = s.x(t)
        out.append(f'<line x1="{x}" y1="{TOP + PLOT_H}" x2="{x}" y2="{TOP + PLOT_H + 5}" stroke="#374151"/>')
        out.append(f'<text x="{x}" y="{TOP + PLOT_H + 19}" text-anchor="middle">{_n(t)}</text>')
    base = TOP + PLOT_H
    out.append(f'<line x1="{LEFT}" y1="{base}" x2="{LEFT + PLOT_W}" y2="{base}" stroke="#374151"/>')
    out.append(f'<line x1="{LEFT}" y1="{TOP}" x2="{LEFT}" y2="{base}" stroke="#374151"/>')
    out.append(
        f'<text class="axis-label" x="{LEFT + PLOT_W / 2}" y="{HEIGHT - 12}" text-anchor="middle">'
        "message seq (order of appends)</text>"
    )
    out.append(
        f'<text class="axis-label" transform="rotate(-90 18 {TOP + PLOT_H / 2})" x="18" '
        f'y="{TOP + PLOT_H / 2}" text-anchor="middle">tokens the next call carries (model tokens)</text>'
    )
    out.append("</g>")
    return out


def _thresholds(report: Report, s: _Scale) -> list[str]:
    out = ['<g class="thresholds" font-size="12">']
    lines = (
        ("usable", report.usable),
        ("hard", report.hard),
        ("soft", report.soft),
        ("target", report.target),
    )
    for name, tokens in lines:
        y, colour = s.y(tokens), STYLE[name][0]
        out.append(
            f'<line class="threshold {name}" data-tokens="{tokens}" x1="{LEFT}" y1="{y}" '
            f'x2="{LEFT + PLOT_W}" y2="{y}" stroke="{colour}" stroke-width="1.5"{_dash(name)}>'
            f"<title>{name}: {_n(tokens)} model tokens</title></line>"
        )
    # Labels sit in the right margin; close thresholds (small windows) would overlap, so push apart.
    last = -1e9
    for name, tokens in sorted(lines, key=lambda item: -item[1]):
        y = max(s.y(tokens) + 4, last + 13)
        last = y
        colour = STYLE[name][0]
        out.append(f'<text x="{LEFT + PLOT_W + 6}" y="{y}" fill="{colour}">{name} {_n(tokens)}</text>')
    out.append("</g>")
    return out


def _series(report: Report, s: _Scale) -> list[str]:
    coords = " ".join(f"{s.x(p.seq)},{s.y(p.tokens)}" for p in report.points)
    colour = STYLE["series"][0]
    base = s.y(0)
    out = []
    if report.points:
        first, last = report.points[0], report.points[-1]
        area = f"M{s.x(first.seq)},{base} L{coords.replace(' ', ' L')} L{s.x(last.seq)},{base} Z"
        out.append(f'<path class="area" d="{area}" fill="{colour}" fill-opacity="0.12" stroke="none"/>')
    out.append(
        f'<polyline id="series" class="series" points="{coords}" fill="none" stroke="{colour}" '
        'stroke-width="2" stroke-linejoin="round"/>'
    )
    return out


def _markers(report: Report, s: _Scale) -> list[str]:
    out = ['<g class="markers" font-size="11">']
    for c in report.compactions:
        style = _status_style(c.status)
        colour, x = STYLE[style][0], s.x(c.seq)
        tip = (
            f"#{c.number} {c.id}: {c.trigger}, {c.status}, seq {c.seq}; "
            f"{_n(c.tokens_before)} -> {_n(c.tokens_after)} model tokens"
        )
        out.append(
            f'<g class="marker {style}" data-compaction="{_e(c.id)}" data-status="{_e(c.status)}" '
            f'data-seq="{c.seq}"><title>{_e(tip)}</title>'
            f'<line x1="{x}" y1="{TOP}" x2="{x}" y2="{TOP + PLOT_H}" stroke="{colour}" '
            f'stroke-width="1.5"{_dash(style)}/>'
        )
        if c.status == "applied":
            out.append(f'<circle cx="{x}" cy="{s.y(c.tokens_after)}" r="3.5" fill="{colour}"/>')
        # Vertical labels: many compactions close together stay readable where horizontal ones collide.
        out.append(
            f'<text x="{x - 4}" y="{TOP + 4}" transform="rotate(-90 {x - 4} {TOP + 4})" '
            f'text-anchor="end" fill="{colour}">#{c.number} {_e(c.trigger)}</text></g>'
        )
    out.append("</g>")
    return out


def _legend() -> list[str]:
    out = ['<g class="legend" font-size="12" fill="#374151">']
    x: float = LEFT
    y = 18
    for name, label in LEGEND:
        colour = STYLE[name][0]
        out.append(
            f'<line class="legend-{name}" x1="{x}" y1="{y}" x2="{x + 22}" y2="{y}" stroke="{colour}" '
            f'stroke-width="2.5"{_dash(name)}/>'
        )
        out.append(f'<text x="{x + 27}" y="{y + 4}">{_e(label)}</text>')
        # Rough text width (no fonts to measure with in a static page); wrap to a second row.
        x = round(x + 40 + 6.6 * len(label), 1)
        if x > WIDTH - 230:
            x, y = LEFT, y + 18
    out.append("</g>")
    return out


def render_svg(report: Report) -> str:
    """The chart: live tokens over the conversation's life, thresholds, compaction markers, legend."""
    s = _Scale(report)
    title = f"Live tokens of {report.conversation_id}"
    desc = (
        f"{len(report.points)} points, {len(report.compactions)} compactions; usable {_n(report.usable)}, "
        f"soft {_n(report.soft)}, hard {_n(report.hard)} model tokens"
    )
    parts = [
        f'<svg id="chart" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {HEIGHT}" '
        'role="img" aria-labelledby="chart-title chart-desc" font-family="system-ui, sans-serif">',
        f'<title id="chart-title">{_e(title)}</title><desc id="chart-desc">{_e(desc)}</desc>',
        f'<rect class="plot" x="{LEFT}" y="{TOP}" width="{PLOT_W}" height="{PLOT_H}" fill="#f9fafb"/>',
        *_axes(s),
        *_thresholds(report, s),
        *_series(report, s),
        *_markers(report, s),
        *_legend(),
        "</svg>",
    ]
    return "\n".join(parts)


def _table(report: Report) -> list[str]:
    if not report.compactions:
        return ['<p class="empty">No compactions yet.</p>']
    head = "#|compaction|created (UTC)|trigger|status|steps|tokens before → after|summarizer"
    head += "|LLM tokens in / out|cost (USD)"
    columns = head.split("|")
    out = [
        '<table id="compactions"><thead><tr>',
        *(f"<th>{_e(h)}</th>" for h in columns),
        "</tr></thead><tbody>",
    ]
    for c in report.compactions:
        tokens = f"{_n(c.tokens_before)} → {_n(c.tokens_after)}"
        counted = f"counted {_n(c.counted_before)} → {_n(c.counted_after)}"
        status = _e(c.status) + (' <span class="flag">FLAGGED</span>' if c.flags else "")
        cells = (
            f'<a href="#summary-{c.number}">{c.number}</a>' if c.summary else str(c.number),
            f"<code>{_e(c.id)}</code>",
            _e(c.created_at.replace("T", " ")[:19]),
            _e(c.trigger),
            status,
            _e(", ".join(c.steps) or "-"),
            f'<span title="{_e(counted)}">{tokens}</span>',
            _e(c.summarizer or "-"),
            f"{_n(c.llm_input_tokens)} / {_n(c.llm_output_tokens)}",
            f"{c.cost_usd:.4f}",
        )
        out.append(
            f'<tr class="compaction {_status_style(c.status)}" data-id="{_e(c.id)}">'
            + "".join(f"<td>{cell}</td>" for cell in cells)
            + "</tr>"
        )
        if c.error:
            out.append(f'<tr class="error"><td></td><td colspan="{len(columns) - 1}">{_e(c.error)}</td></tr>')
    out.append("</tbody></table>")
    return out


def _summaries(report: Report) -> list[str]:
    out = []
    for c in report.compactions:
        if not c.summary:
            continue
        note = f" ({c.status})" if c.status != "applied" else ""
        out.append(
            f'<details class="summary" id="summary-{c.number}"><summary>#{c.number} '
            f"<code>{_e(c.id)}</code>{_e(note)}: summary, {_n(len(c.summary))} characters</summary>"
        )
        if c.flags:
            items = "".join(f"<li>{_e(f)}</li>" for f in c.flags)
            out.append(
                f'<div class="flags">Flagged, reads as instructions to the model:<ul>{items}</ul></div>'
            )
        out.append(f"<pre>{_e(c.summary)}</pre></details>")
    return out


CSP = "default-src 'none'; style-src 'unsafe-inline'"
"""Nothing loads but the inline styles: no script, no remote font, image or frame."""

CSS = """
body { font-family: system-ui, sans-serif; margin: 24px auto; max-width: 1120px; padding: 0 16px; }
body { color: #111827; }
h1 { font-size: 22px; margin-bottom: 4px; } h2 { font-size: 18px; margin-top: 28px; }
.meta { color: #4b5563; margin-top: 0; }
svg#chart { width: 100%; height: auto; border: 1px solid #e5e7eb; background: #fff; }
table { border-collapse: collapse; width: 100%; font-size: 13px; }
th, td { border-bottom: 1px solid #e5e7eb; padding: 4px 8px; text-align: left; vertical-align: top; }
tr.reverted td { color: #6b7280; } tr.error td { color: #b91c1c; font-size: 12px; }
.flag, .flags { color: #b91c1c; font-weight: 600; }
details { margin: 8px 0; } summary { cursor: pointer; }
pre { white-space: pre-wrap; word-break: break-word; background: #f3f4f6; padding: 10px; font-size: 12px; }
"""


def render_html(report: Report) -> str:
    """One self-contained page: header, the chart, the compaction table, each summary in ``<details>``."""
    head_title = f"sleepcompact report: {report.conversation_id}"
    meta = (
        f"model {report.model}, window {_n(report.context_window)}, usable {_n(report.usable)} model tokens "
        f"(soft {_n(report.soft)}, hard {_n(report.hard)}, target {_n(report.target)}); "
        f"safety factor {report.safety_factor}; now {_n(report.tokens)} tokens live; "
        f"generated {report.generated_at}"
    )
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        # No script may run, whatever a summary holds; only the inline styles below load.
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{_e(head_title)}</title>",
        f"<style>{CSS}</style></head><body>",
        f"<h1>Conversation <code>{_e(report.conversation_id)}</code></h1>",
        f'<p class="meta">{_e(meta)}</p>',
        render_svg(report),
        "<h2>Compactions</h2>",
        *_table(report),
    ]
    summaries = _summaries(report)
    if summaries:
        parts += ["<h2>Summaries</h2>", *summaries]
    parts.append("</body></html>\n")
    return "\n".join(parts)
