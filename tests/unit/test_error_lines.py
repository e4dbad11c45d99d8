"""``error_lines`` finds its candidate lines in one pass over the text; it must pick exactly the lines a
search of each line picks (the summary's outcome of a failed call, and the identifiers it keeps, come
from these lines)."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from sleepcompact.domain import identifiers as ids


def reference_error_lines(text: str, limit: int = 3) -> list[str]:
    """The line-by-line reading, as it was written."""
    candidates: list[tuple[int, int, str]] = []
    seen: set[str] = set()
    for pos, raw in enumerate(text.splitlines()):
        if not ids._ERROR_CANDIDATE.search(raw) or re.search(r"\b(?:0 failed|no errors?)\b", raw, re.I):
            continue
        line = re.sub(r"^E\s{2,}", "", raw.strip()).strip("= ")
        if not line or line.startswith("Traceback (most recent call last)"):
            continue
        core = ids._ERROR_CORE.search(line)
        key = (core.group() if core else line).casefold()
        if key in seen:
            continue
        seen.add(key)
        rank = 0 if core or re.match(r"(?:error|fatal|panic):", line, re.I) else 1
        rank = rank if rank == 0 or re.search(r"FAILED|failed|exit|returncode", line) else 2
        candidates.append((rank, pos, line if len(line) <= 200 else line[:199] + "…"))
    best = sorted(candidates)[:limit]
    return [line for _rank, _pos, line in sorted(best, key=lambda c: c[1])]


_PIECES = st.sampled_from(
    [
        "\n",
        "\r\n",
        "\r",
        "\x0b",
        "\x0c",
        "\x1c",
        "\x85",
        "\u2028",
        " ",
        "E   ",
        "=== ",
        "ValueError: bad x",
        "KeyError: 'k'",
        "Traceback (most recent call last):",
        "error: cannot open",
        "fatal:",
        "panic: nil",
        "FAILED tests/test_a.py::test_b",
        "1 failed",
        "0 failed",
        "no errors",
        "returncode=2",
        "exit code 1",
        "exit status: 3",
        "exited with code 4",
        "AssertionError",
        "ok",
        "passed",
        "Exception",
        "Tracebac\u212a",
        "pan\u0131c: x",
        "ERROR:",
        "Exit Code 2",
        "errorless",
        "failedly",
    ]
)
_TEXT = st.lists(st.one_of(_PIECES, st.text(max_size=5)), max_size=30).map("".join)


@settings(max_examples=500, deadline=None)
@given(_TEXT, st.integers(min_value=1, max_value=5))
def test_the_error_lines_are_those_a_search_of_each_line_finds(text: str, limit: int) -> None:
    assert ids.error_lines(text, limit) == reference_error_lines(text, limit)


def test_the_telling_lines_of_a_failed_run() -> None:
    output = (
        "collected 3 items\n"
        "tests/test_a.py ..F\n"
        "E       ValueError: expected 3, got 4\n"
        "FAILED tests/test_a.py::test_b - ValueError: expected 3, got 4\n"
        "1 failed, 2 passed in 0.12s\n"
    )
    # The FAILED line repeats the exception's core: it counts once.
    assert ids.error_lines(output) == ["ValueError: expected 3, got 4", "1 failed, 2 passed in 0.12s"]
    assert ids.error_lines("all good\n2 passed, 0 failed\n") == []


def _reference_valid_path(path: str) -> bool:
    core = path.split("::", 1)[0].rstrip("/")
    if not re.search(r"[A-Za-z]", core):
        return False
    if re.match(r"[ab]/", core):
        return False
    if re.search(rf"\.(?i:{ids._EXT})$", core):
        return True
    segments = [s for s in core.split("/") if s and s not in (".", "..", "~")]
    if core.startswith(("/", "./", "../", "~/")):
        return len(segments) >= 2
    return len(segments) >= 3 or (len(segments) >= 2 and segments[0] in ids._DIRS)


_PATH_PIECES = st.sampled_from(
    ["/", "a/", "b/", "src", "tests", ".", "..", "~", "::", "x.py", ".PY", "1", "_"]
)


@settings(max_examples=500, deadline=None)
@given(st.lists(st.one_of(_PATH_PIECES, st.text(max_size=3)), max_size=8).map("".join))
def test_what_counts_as_a_path_is_unchanged(path: str) -> None:
    assert ids._valid_path(path) == _reference_valid_path(path)
