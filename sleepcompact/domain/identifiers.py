"""Identifiers, error lines and secrets in free text (DESIGN section 4 step 4).

The text scanning that the offline summary and the journal drafts share: which
paths, names, ids, hashes, numbers, commands, URLs and error lines a text holds,
and whether it holds something shaped like a credential. Everything is regex and
rule based, hence deterministic.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from sleepcompact.domain.memo import TextMemo

_EXT = (
    "py|pyi|ipynb|js|jsx|ts|tsx|mjs|cjs|json|jsonl|md|rst|txt|yml|yaml|toml|cfg|ini|conf|env|sh|bash|go|rs"
    "|java|kt|c|h|cc|cpp|hpp|cs|rb|php|html|css|scss|sql|lock|log|csv|tsv|xml|proto|tf|swift|lua|vue|mako"
    "|db|sqlite|parquet|pdf|png|jpg|jpeg|svg|gz|zip"
)
# The lookbehind anchors every match at a token start, which keeps the scan linear on huge outputs.
_PATH = re.compile(
    rf"(?<![\w/.:~-])((?:\.{{1,2}}/|~/|/)?(?:[\w.-]+/)*[\w-][\w.-]*\.(?i:{_EXT})(?:::[\w\[\].-]+)*"
    r"|(?:\.{1,2}/|~/|/)?[\w.-]+(?:/[\w.-]+)+/?)(?![\w/])"
)
_DIRS = {"src", "tests", "test", "lib", "app", "docs", "scripts", "bin", "pkg", "cmd", "internal", "config"}
_URL = re.compile(r"https?://[^\s<>\"'`]+")
# One character is allowed so that "`x` and `ab`" pairs its ticks right; add() drops the short span.
_BACKTICK = re.compile(r"`([^`\n]{1,200})`")
_PROMPT_LINE = re.compile(r"^[ \t]*(?:\$[ \t]+(\S[^\n]{0,199})|>[ \t]+([a-z./][^\n]{0,199}))", re.M)
_PROGRAM = re.compile(
    r"(?<![\w/.-])(python3? -m [\w.]+|python3?|pytest|git|pip3?|uv|npm|cargo|docker|mypy|ruff|curl)(?= )"
)


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


_SUBCOMMANDS: dict[str, frozenset[str]] = {
    "git": _words(
        "add bisect blame branch checkout cherry-pick clone commit diff fetch grep init log merge mv pull"
        " push rebase reset restore revert rm show stash status switch tag"
    ),
    "pip": _words("install uninstall freeze list show download"),
    "uv": _words("run pip sync add lock"),
    "npm": _words("install run test ci exec"),
    "cargo": _words("build test run check clippy fmt"),
    "docker": _words("run build compose exec ps logs pull push"),
    "ruff": _words("check format"),
}
# Words after a flag that end the command instead of being the flag's value ("pytest -q and then ...").
_CONNECTORS = _words("and or then to with in on for the a an which that but so it is was again once now")
# Fixed strings, not ``\w*Error``: a leading ``\w*`` rescans long words and turns quadratic on big outputs.
_ERROR_MARK = re.compile(r"Error:|\berror:|Exception|FAILED|Traceback")
_DEF = re.compile(r"\b(?:def|class)\s+([A-Za-z_]\w*)")
_CALL = re.compile(r"(?<![\w.])([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)\((?!s\))")
_DOTTED = re.compile(r"(?<![\w.])([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+)(?![\w(])")
_SNAKE = re.compile(r"(?<!\w)[a-z][a-z0-9]*(?:_[A-Za-z0-9]+)+(?!\w)")
_CAMEL = re.compile(r"(?<![\w.])(?:[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+|[a-z]+(?:[A-Z][a-z0-9]+)+)(?!\w)")
_TICKET = re.compile(
    r"(?<![\w-])(?:[A-Z]{2,6}-?\d{2,8}|[A-Z]{2} \d{3,4}|(?=[A-Z]*\d)(?=\d*[A-Z])[A-Z0-9]{6,12})(?![\w-])"
)
_REFERENCE = re.compile(  # "my booking reference at Harbour Inn is GSKVGE": a code named as one
    r"(?i:\b(?:reference|ref|code|booking|confirmation|pnr|order)\b)[^.\n?!]{0,40}?(?:\bis|:|#)\s*"
    r"([A-Z0-9]{5,10})\b"
)
_HASH = re.compile(
    r"(?<![\w-])(?:[0-9a-f]{8}(?:-[0-9a-f]{4}){3}-[0-9a-f]{12}|(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{7,64})"
    r"(?![\w-])"
)
_UNIT = (
    r"ms|µs|us|ns|s|secs?|seconds?|mins?|minutes?|h|hrs?|hours?|days?|weeks?|[kKMGT]i?B|bytes?|tokens?"
    r"|USD|EUR|GBP|CHF|JPY|km/h|km|m|cm|mm|kg|g|lbs?|°C|°F|rps|qps|req/s|fps|px|MHz|GHz"
)
_SOFTWARE = (
    "Python|Node|Go|Java|Ruby|Rust|PHP|Perl|Postgres|PostgreSQL|MySQL|SQLite|Redis|Django|Flask|FastAPI|Ubuntu"
    "|Debian|Alpine|Kotlin|Swift|Scala|Celery|SQLAlchemy|Pydantic|React|TypeScript|NumPy|pandas|CUDA|Kubernetes"
)
_NUMBER = re.compile(
    rf"(?<![\w.$€£])(?:[$€£]\d+(?:[.,]\d+)?|\d+(?:[.,]\d+)?(?: ?(?:{_UNIT})(?![\w/])|%(?!\])))"
    r"|\b\d{1,2}:\d{2}(?: ?(?:UTC|GMT|CET|CEST|PST|EST|am|pm|AM|PM)\b)?(?![:\d])"
    r"|\b(?:Jan(?:uary)?|Feb(?:ruary)?|March|April|May|June|July|Aug(?:ust)?|Sept?(?:ember)?|Oct(?:ober)?"
    r"|Nov(?:ember)?|Dec(?:ember)?) \d{1,2}\b(?:, \d{4})?|\b\d{4}-\d{2}-\d{2}\b"
    rf"|\b(?:{_SOFTWARE}) \d+(?:\.\d+)+\b|\bv?\d+\.\d+\.\d+\b"
    r"|(?<![\w.,:-])\d{5,}(?![\w,:-]|\.\d)"
)
_QUOTED = re.compile(
    r"(?<![\w\\])\"([^\"\n]{3,60})\"(?!\s*:)(?!\w)|(?<![\w\\])'([^'\n]{3,60})'(?!\w)"
    r"|“([^”\n]{3,60})”|‘([^’\n]{3,60})’"
)
_BUILTINS = _words(
    "print len sum str int float list dict set range isinstance open super type max min any all sorted zip"
    " map filter enumerate tuple repr format getattr hasattr round abs"
)


class Identifier(NamedTuple):
    """An identifier in text and its kind: path, url, code, id, hash, number, command, error or quoted."""

    value: str
    kind: str


def _mask(text: str, spans: list[tuple[int, int]]) -> str:
    """Blank out spans (keeping offsets) so token patterns do not find pieces of URLs and paths."""
    chars = list(text)
    for start, end in spans:
        chars[start:end] = " " * (end - start)
    return "".join(chars)


def _strip_url(url: str) -> str:
    url = url.rstrip(".,;:!?")
    while url.endswith(")") and url.count("(") < url.count(")"):
        url = url[:-1].rstrip(".,;:!?")
    return url


_LETTER = re.compile(r"[A-Za-z]")
_KNOWN_EXT = re.compile(rf"\.(?i:{_EXT})$")


def _valid_path(path: str) -> bool:
    core = path.split("::", 1)[0].rstrip("/")
    if _LETTER.search(core) is None:
        return False
    if core.startswith(("a/", "b/")):
        return False  # the a/ and b/ prefixes of a diff header, not real directories
    if _KNOWN_EXT.search(core):
        return True
    segments = [s for s in core.split("/") if s and s not in (".", "..", "~")]
    if core.startswith(("/", "./", "../", "~/")):
        return len(segments) >= 2
    return len(segments) >= 3 or (len(segments) >= 2 and segments[0] in _DIRS)


def _command_args(rest: str, program: str) -> str | None:
    """The arguments of an inline command, kept while they look like arguments (flags, paths, values)."""
    tokens = rest.split(" ")
    taken: list[str] = []
    subcommands = _SUBCOMMANDS.get(program.split(" ")[0].rstrip("3"))
    for i, raw in enumerate(tokens):
        token = raw.rstrip(".,;:)]}!?\"'")
        if not token:
            break
        flag_value = (
            bool(taken)
            and taken[-1].startswith("-")
            and re.fullmatch(r"[\w.-]+", token) is not None
            and token.casefold() not in _CONNECTORS
        )
        sub = i == 0 and subcommands is not None and token in subcommands
        if not (sub or flag_value or token.startswith("-") or re.search(r"[/._:=*@]", token)):
            break
        taken.append(token)
        if token != raw:  # trailing punctuation ends the command
            break
    if not taken or (subcommands is not None and taken[0] not in subcommands and program != "ruff"):
        return None
    return " ".join(taken)


def _scan(text: str) -> tuple[Identifier, ...]:
    """find_identifiers without the memo."""
    found: list[tuple[int, int, str, str]] = []  # (start, -length, value, kind)

    def add(start: int, value: str, kind: str) -> None:
        value = value.strip()
        if len(value) >= 2:
            found.append((start, -len(value), value, kind))

    urls = [(m.start(), m.start() + len(_strip_url(m.group()))) for m in _URL.finditer(text)]
    for start, end in urls:
        add(start, text[start:end], "url")
    masked = _mask(text, urls)
    paths = [m for m in _PATH.finditer(masked) if _valid_path(m.group(1))]
    for m in paths:
        add(m.start(1), m.group(1), "path")
    for m in _BACKTICK.finditer(text):
        add(m.start(1), m.group(1), "command")
    for m in _PROMPT_LINE.finditer(text):
        add(m.start(), m.group(1) or m.group(2), "command")
    for m in _PROGRAM.finditer(masked):
        # A command fits in a few hundred characters; a bounded look keeps long lines linear.
        rest = text[m.end() + 1 : m.end() + 300].split("\n", 1)[0].split("`", 1)[0]
        args = _command_args(rest, m.group(1))
        if args:
            add(m.start(), f"{m.group(1)} {args}", "command")
    offset = 0
    for raw in text.splitlines(keepends=True):
        if _ERROR_MARK.search(raw):
            line = re.sub(r"^E\s{2,}", "", raw.strip())
            add(offset, line if len(line) <= 200 else line[:199] + "…", "error")
        offset += len(raw)
    for m in _QUOTED.finditer(text):
        value = next(g for g in m.groups() if g is not None)
        if not re.fullmatch(r"[a-z]+", value.strip()):  # a quoted plain word is prose, not data
            add(m.start(), value, "quoted")
    tokens = _mask(masked, [m.span(1) for m in paths])
    for m in _DEF.finditer(tokens):
        if not m.group(1).startswith("__"):  # dunders say nothing about this code base
            add(m.start(1), m.group(1), "code")
    for m in _CALL.finditer(tokens):
        name = m.group(1)
        if len(name) >= 3 and name not in _BUILTINS and not name.startswith("__"):
            add(m.start(1), name, "code")
    for m in _DOTTED.finditer(tokens):
        parts = m.group(1).split(".")
        if any("_" in p for p in parts) or re.fullmatch(r"[A-Z][a-z0-9]+[A-Z]\w*", parts[0]):
            add(m.start(1), m.group(1), "code")
    for pattern, kind in ((_SNAKE, "code"), (_CAMEL, "code"), (_TICKET, "id"), (_HASH, "hash")):
        for m in pattern.finditer(tokens):
            add(m.start(), m.group(), kind)
    for m in _REFERENCE.finditer(tokens):
        add(m.start(1), m.group(1), "id")
    for m in _NUMBER.finditer(tokens):
        add(m.start(), m.group(), "number")
    out: list[Identifier] = []
    seen: set[str] = set()
    for _start, _neg, value, kind in sorted(found):
        if value not in seen:
            seen.add(value)
            out.append(Identifier(value, kind))
    return tuple(out)


# A compaction scans most rows twice (for the summary, then for the journal drafts). Kept as one flat
# tuple of strings per text (value, kind, value, kind, ...): the collector stops tracking a plain tuple of
# strings, while a worker's memo of named tuples (over 100,000 after 50 ticks) doubled every full
# collection, the pauses that make a tick's slowest runs.
_MEMO: TextMemo[tuple[str, ...]] = TextMemo(entries=8192, chars=16_000_000)


def find_identifiers(text: str) -> tuple[Identifier, ...]:
    """Every identifier in ``text`` with its kind, in order of first appearance, each value once.

    Repeated calls on the same text are cheap: recent results are memoized.
    """
    flat = _MEMO.get(text)
    if flat is None:
        found = _scan(text)
        _MEMO.put(text, tuple(part for ident in found for part in ident))
        return found
    return tuple(Identifier(flat[i], flat[i + 1]) for i in range(0, len(flat), 2))


def extract_identifiers(text: str) -> list[str]:
    """Identifiers worth keeping verbatim, ordered by first appearance, each once.

    File paths, function and class names, ticket and record ids, hashes, numbers
    with units, dates and times, commands, URLs, whole error lines (at most ~200
    characters) and quoted strings; plain words and small bare numbers are left out.
    """
    return [ident.value for ident in find_identifiers(text)]


_SERIES_ITEM = re.compile(r"[_-]\d{2,}(?:\.\w+)?$")


def output_noise(value: str) -> bool:
    """Whether an identifier from tool output is listing noise: a test node id or a numbered series item
    (``run_0001.log``, ``frame-12.png``; a ticket such as ``BLD-4411`` ends the same way and is not)."""
    if _TICKET.fullmatch(value):  # the scan's own ticket pattern
        return False
    return "::" in value or _SERIES_ITEM.search(value) is not None


# -- errors and secrets ------------------------------------------------------------------------------

_ERROR_CANDIDATE = re.compile(
    r"(?:Error|Exception)\b|\b(?:error|fatal|panic):|FAILED|\bfailed\b|Traceback"
    r"|returncode[=: ]+-?[1-9]|exit (?:code|status)[=: ]*[1-9]|exited with (?:code )?[1-9]",
    re.I,
)
_ERROR_CORE = re.compile(r"\b\w*(?:Error|Exception|Failure):\s.*")
_NO_ERRORS = re.compile(r"\b(?:0 failed|no errors?)\b", re.I)


# A word every match of ``_ERROR_CANDIDATE`` holds, in ASCII lower case: for ASCII text, where the
# pattern's IGNORECASE folds ASCII letters only, a line holding none of them cannot match. Most lines of
# tool output hold none, and a substring test is a tenth of the pattern's cost.
_ERROR_WORDS = ("error", "exception", "fatal", "panic", "fail", "traceback", "returncode", "exit")


def _may_match(lowered: str) -> bool:
    return any(word in lowered for word in _ERROR_WORDS)


def _candidate_lines(text: str) -> list[tuple[int, str]]:
    """(index, line) of the lines of ``text`` (``str.splitlines``) where ``_ERROR_CANDIDATE`` matches."""
    if text.isascii() and not _may_match(text.lower()):
        return []
    out = []
    for pos, raw in enumerate(text.splitlines()):
        if raw.isascii() and not _may_match(raw.lower()):
            continue
        if _ERROR_CANDIDATE.search(raw):
            out.append((pos, raw))
    return out


def error_lines(text: str, limit: int = 3) -> list[str]:
    """The most telling error lines of some tool output (exception messages first), in text order.

    Lines are stripped, cut to ~200 characters, and deduplicated on their
    ``SomeError: message`` core, so a pytest failure reported three times counts once.
    """
    candidates: list[tuple[int, int, str]] = []
    seen: set[str] = set()
    for pos, raw in _candidate_lines(text):
        if _NO_ERRORS.search(raw):
            continue
        line = re.sub(r"^E\s{2,}", "", raw.strip()).strip("= ")
        if not line or line.startswith("Traceback (most recent call last)"):
            continue
        core = _ERROR_CORE.search(line)
        key = (core.group() if core else line).casefold()
        if key in seen:
            continue
        seen.add(key)
        rank = 0 if core or re.match(r"(?:error|fatal|panic):", line, re.I) else 1
        rank = rank if rank == 0 or re.search(r"FAILED|failed|exit|returncode", line) else 2
        candidates.append((rank, pos, line if len(line) <= 200 else line[:199] + "…"))
    best = sorted(candidates)[:limit]
    return [line for _rank, _pos, line in sorted(best, key=lambda c: c[1])]


_SECRET = re.compile(
    r"sk-ant-[\w-]*|\bsk-(?:proj-)?[A-Za-z0-9_-]{16,}|\bAKIA[0-9A-Z]*|\bASIA[0-9A-Z]{16}"
    r"|\bgh[pousr]_[A-Za-z0-9]{20,}|github_pat_\w{20,}|\bxox[abposr]-[\w-]{10,}|\bAIza[\w-]{30,}"
    r"|-----BEGIN [A-Z ]*PRIVATE KEY-----|\beyJ[\w-]{8,}\.[\w-]{8,}\.[\w-]{8,}"
    r"|(?i:\b(?:password|passwd|pwd|secret|api[_-]?key|access[_-]?token|auth[_-]?token|client[_-]?secret)"
    r"\b\s*[=:]\s*\S+)|(?i:\bbearer\s+[\w.~+/=-]{16,})|://[^/\s:@]+:[^/\s@]+@"
)


def looks_secret(text: str) -> bool:
    """Whether text holds something shaped like a credential (API keys, tokens, ``password=``, keys)."""
    return _SECRET.search(text) is not None
