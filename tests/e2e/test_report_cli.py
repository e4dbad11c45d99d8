"""End-to-end: ``sleepcompact report CONV --html FILE``, opened in a real headless Chromium.

A synthetic coding agent (with a script tag in its first user message) lives in
an 8k window, compacted three times through the command line and the last
compaction restored. The page the command writes is loaded by Debian's
``chromium`` (``--headless --no-sandbox --disable-gpu``, a throwaway HOME and
profile, so it runs as root): ``--dump-dom`` must show the chart's series,
thresholds and markers and the compaction table, with the script tag as text;
``--screenshot`` must show a chart (decoded with ``tests.support.png``, standard
library only). A missing Chromium fails the test: the test setup installs it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections import Counter
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from sleepcompact import Memory
from sleepcompact.demo.synthetic import coding_agent
from tests.e2e.conftest import Cli
from tests.support.png import decode

INJECTION = "<script>document.title='pwned'</script>"
CHROMIUM_TIMEOUT_S = 120
Colour = tuple[int, int, int]


class _Dom(HTMLParser):
    """Start tags with their attributes, and the text of every element, from Chromium's --dump-dom."""

    def __init__(self, markup: str) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str]]] = []
        self.text = ""
        self._in_title = False
        self.titles: list[str] = []
        self.feed(markup)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, {k: v or "" for k, v in attrs}))
        self._in_title = tag == "title"

    def handle_endtag(self, tag: str) -> None:
        self._in_title = False

    def handle_data(self, data: str) -> None:
        self.text += data
        if self._in_title:
            self.titles.append(data)

    def having(self, tag: str, cls: str | None = None) -> list[dict[str, str]]:
        """Attributes of every ``tag`` element (with ``cls`` among its classes, if given)."""
        return [a for t, a in self.tags if t == tag and (cls is None or cls in a.get("class", "").split())]


def _chromium() -> str:
    path = shutil.which("chromium") or (
        "/usr/bin/chromium" if os.access("/usr/bin/chromium", os.X_OK) else None
    )
    if path is None:
        pytest.fail(
            "chromium is not installed: this test opens the report in headless Chromium. "
            "Install Debian's `chromium` package (scripts/test installs it) and run again."
        )
    return path


def _browse(page: Path, scratch: Path, *args: str) -> str:
    """Run headless Chromium on ``page`` with a fresh HOME and profile; returns stdout."""
    scratch.mkdir(parents=True)
    env = {**os.environ, "HOME": str(scratch)}
    argv = [
        _chromium(),
        "--headless",
        "--no-sandbox",  # root in a container has no user namespace for the sandbox
        "--disable-gpu",
        f"--user-data-dir={scratch / 'profile'}",
        "--no-first-run",
        "--hide-scrollbars",
        "--window-size=1200,900",
        *args,
        page.as_uri(),
    ]
    proc = subprocess.run(
        argv, env=env, capture_output=True, text=True, timeout=CHROMIUM_TIMEOUT_S, check=False, cwd=scratch
    )
    assert proc.returncode == 0, f"{' '.join(argv)} -> {proc.returncode}\n{proc.stderr[-3000:]}"
    return proc.stdout


def _seed(cli: Cli, url: str) -> tuple[str, list[str], dict[str, Any]]:
    """Three chunks, each compacted by the CLI; the last compaction restored by the CLI."""
    conv = coding_agent(seed=0)
    msgs = conv.messages
    users = [i for i, m in enumerate(msgs) if m["role"] == "user" and isinstance(m["content"], str)]
    a, b = users[len(users) // 3], users[2 * len(users) // 3]
    opening = [
        {"role": "system", "content": conv.system},
        {"role": "user", "content": f"{INJECTION} Fix the rounding bug, please."},
        {"role": "assistant", "content": "Looking into it."},
    ]
    with Memory(database_url=url) as mem:
        cid = mem.create_conversation("claude-sonnet-4-5", context_window=8_000)
    ids = []
    for chunk in ([*opening, *msgs[:a]], msgs[a:b], msgs[b:]):
        with Memory(database_url=url) as mem:
            mem.append_many(cid, chunk)
        out = cli.ok("compact", cid, "--json").json()
        assert out["status"] == "applied", out
        ids.append(out["compaction_id"])
    cli.ok("restore", ids[-1])
    stats = cli.ok("stats", cid, "--json").json()
    return cid, ids, stats


def _near(colours: Counter[Colour], rgb: Colour, tolerance: int = 30) -> int:
    """Pixels within ``tolerance`` of ``rgb`` on every channel (antialiasing blends the edges)."""
    return sum(
        n for c, n in colours.items() if max(abs(x - y) for x, y in zip(c, rgb, strict=True)) <= tolerance
    )


def test_report_html_renders_in_headless_chromium(cli: Cli, sqlite_url: str, tmp_path: Path) -> None:
    cid, ids, stats = _seed(cli, sqlite_url)
    page = tmp_path / "out" / "report.html"
    page.parent.mkdir()

    written = cli.ok("report", cid, "--html", page)
    assert f"wrote {page}" in written.stdout
    data = cli.ok("report", cid, "--json").json()
    assert [c["id"] for c in data["compactions"]] == ids
    assert (data["usable"], data["soft"], data["hard"]) == (stats["usable"], stats["soft"], stats["hard"])
    assert sorted(p.name for p in page.parent.iterdir()) == ["report.html"]  # no temporary file left

    # the DOM as Chromium built it
    dom = _Dom(_browse(page, tmp_path / "chromium-dom", "--dump-dom"))
    assert dom.titles[0] == f"sleepcompact report: {cid}"  # the script did not rename the page
    assert not dom.having("script")
    assert INJECTION in dom.text  # shown as text, inside a summary
    (svg,) = [a for a in dom.having("svg") if a.get("id") == "chart"]
    assert svg["role"] == "img"
    (series,) = dom.having("polyline", "series")
    assert len(series["points"].split()) == len(data["points"])
    thresholds = {
        next(c for c in a["class"].split() if c != "threshold"): int(a["data-tokens"])
        for a in dom.having("line", "threshold")
    }
    assert thresholds == {k: stats[k] for k in ("usable", "soft", "hard", "target")}
    markers = dom.having("g", "marker")
    assert [m["data-compaction"] for m in markers] == ids
    assert [m["data-status"] for m in markers] == ["applied", "applied", "reverted"]
    assert [r["data-id"] for r in dom.having("tr", "compaction")] == ids
    summaries = [c for c in data["compactions"] if c["summary"]]
    assert len(dom.having("details", "summary")) == len(summaries) >= 1
    assert dom.having("g", "legend") and "message seq" in dom.text

    # the pixels: a chart was drawn, not a blank or an error page
    shot = tmp_path / "shot.png"
    _browse(page, tmp_path / "chromium-shot", f"--screenshot={shot}")
    image = decode(shot.read_bytes())
    assert (image.width, image.height) == (1200, 900)
    colours = image.colours()
    background, count = colours.most_common(1)[0]
    total = image.width * image.height
    assert (total - count) / total > 0.15, f"only {(total - count) / total:.1%} differs from {background}"
    assert len(colours) >= 50, f"{len(colours)} distinct colours"
    for name, rgb, least in (
        ("series", (37, 99, 235), 500),
        ("hard threshold", (220, 38, 38), 200),
        ("applied compaction markers", (124, 58, 237), 300),
    ):
        assert _near(colours, rgb) >= least, f"too few {name} pixels: {_near(colours, rgb)}"


def test_report_unknown_conversation_fails_and_writes_nothing(cli: Cli, tmp_path: Path) -> None:
    page = tmp_path / "missing.html"
    result = cli.run("report", "conv_does_not_exist", "--html", page)
    assert result.returncode == 1, result.describe()
    assert "conv_does_not_exist" in result.stderr and result.stdout == ""
    assert not page.exists()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".missing.html")]


def test_report_into_a_missing_directory_fails_clearly(cli: Cli, tmp_path: Path) -> None:
    with Memory(database_url=cli.database_url) as mem:
        cid = mem.create_conversation("claude-sonnet-4-5", context_window=8_000)
        mem.append(cid, {"role": "user", "content": "hello"})
    target = tmp_path / "no" / "such" / "dir" / "r.html"
    result = cli.run("report", cid, "--html", target)
    assert result.returncode == 1, result.describe()
    assert f"cannot write {target}" in result.stderr
    summary = cli.ok("report", cid).stdout
    assert summary.startswith(f"{cid}: 2 points") and "0 compactions" in summary
