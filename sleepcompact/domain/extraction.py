"""Pre-compaction extraction: identifiers, error lines and journal drafts (DESIGN section 4 step 4).

Before any message leaves the live context as a summary, the facts, decisions,
identifiers, errors and preferences in it become journal drafts, so a sleep
tick can consolidate them into memory even if the summary loses them. The
text analysis here (identifiers, sentences, error lines, secrets) is shared
with the offline summarizer, and ``summary`` re-exports ``extract_identifiers``.
Everything is regex and rule based, hence deterministic.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

from sleepcompact.domain.messages import content_text
from sleepcompact.domain.records import MessageRecord

# -- identifiers ---------------------------------------------------------------------------------------

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
_BACKTICK = re.compile(r"`([^`\n]{2,200})`")
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


def _valid_path(path: str) -> bool:
    core = path.split("::", 1)[0].rstrip("/")
    if not re.search(r"[A-Za-z]", core):
        return False
    if re.match(r"[ab]/", core):
        return False  # the a/ and b/ prefixes of a diff header, not real directories
    if re.search(rf"\.(?i:{_EXT})$", core):
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


def find_identifiers(text: str) -> list[Identifier]:
    """Every identifier in ``text`` with its kind, in order of first appearance, each value once."""
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
        if len(name) >= 3 and name not in _BUILTINS:
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
    return out


def extract_identifiers(text: str) -> list[str]:
    """Identifiers worth keeping verbatim, ordered by first appearance, each once.

    File paths, function and class names, ticket and record ids, hashes, numbers
    with units, dates and times, commands, URLs, whole error lines (at most ~200
    characters) and quoted strings; plain words and small bare numbers are left out.
    """
    return [ident.value for ident in find_identifiers(text)]


# -- sentences, errors, secrets ------------------------------------------------------------------------

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(\[`])")


def split_sentences(text: str) -> list[str]:
    """Sentences of prose: split at line breaks and at ``. `` / ``! `` / ``? `` before a capital."""
    out: list[str] = []
    for line in text.splitlines():
        line = re.sub(r"^\s*(?:[-*•]|\d+[.)])\s+", "", line).strip()
        out.extend(s.strip() for s in _SENTENCE_END.split(line) if s.strip())
    return out


_ERROR_CANDIDATE = re.compile(
    r"(?:Error|Exception)\b|\b(?:error|fatal|panic):|FAILED|\bfailed\b|Traceback"
    r"|returncode[=: ]+-?[1-9]|exit (?:code|status)[=: ]*[1-9]|exited with (?:code )?[1-9]",
    re.I,
)
_ERROR_CORE = re.compile(r"\b\w*(?:Error|Exception|Failure):\s.*")


def error_lines(text: str, limit: int = 3) -> list[str]:
    """The most telling error lines of some tool output (exception messages first), in text order.

    Lines are stripped, cut to ~200 characters, and deduplicated on their
    ``SomeError: message`` core, so a pytest failure reported three times counts once.
    """
    candidates: list[tuple[int, int, str]] = []
    seen: set[str] = set()
    for pos, raw in enumerate(text.splitlines()):
        if not _ERROR_CANDIDATE.search(raw) or re.search(r"\b(?:0 failed|no errors?)\b", raw, re.I):
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


# -- journal drafts ------------------------------------------------------------------------------------

TAGS = ("preference", "decision", "error", "identifier", "deadline", "fact", "question")

_LEAD_IN = re.compile(
    r"^(?:(?:one (?:more )?thing|actually|by the way|btw|also|just so you know|fyi|important|big news"
    r"|some background|background|please remember|remember|quick update|update|oh|ok|okay|and|so|plus)"
    r"\s*[:,!-]?\s+)+",
    re.I,
)
_PREFERENCE = re.compile(
    r"\b(?:prefer\w*|always|never|favou?rite|rather|allergic|allergy|avoid|must|mustn't|don't|do not"
    r"|keep|make sure|should|shouldn't|i (?:like|love|hate|dislike|want|need))\b",
    re.I,
)
_DEADLINE = re.compile(
    r"\b(?:deadline|due (?:on|by|date)|no later than|by (?:mon|tue|wed|thu|fri|sat|sun)\w*|by (?:tomorrow"
    r"|tonight|noon|eod|end of))\b",
    re.I,
)
_FACT = re.compile(
    r"\b(?:i|i'm|i am|i've|my|our|we|we're|we've|is|are|was|were|has|have|moved|changed|runs|uses|lives"
    r"|works|leaves|departs|arrives|costs|switched|migrated|upgraded)\b",
    re.I,
)
_REQUEST = re.compile(
    r"^(?:hi|hello|hey|thanks|thank you|please\s+(?!keep|use|avoid|make sure|remember|note)\w+|fix|add|make"
    r"|write|draft|suggest|convert|book|help|show|tell|find|give|create|send|check|run|look|explain"
    r"|summarize|list|remove|delete|implement|refactor|review|open|read|plan|translate|remind"
    r"|can you|could you|would you|will you)\b",
    re.I,
)
_DECISION = re.compile(
    r"\b(?:I'll|I will|I'm going to|let's|we'll|decided|decision|because|instead of|chose|going with|opted"
    r"|root cause|caused by|came from|the fix is)\b",
    re.I,
)
_GAP = re.compile(
    r"\b(?:I (?:don't|do not|can't|cannot|couldn't)|not sure|no idea|unknown|unable to|no information)\b",
    re.I,
)
_NOTABLE = {"path": 0, "id": 0, "url": 1, "hash": 1, "code": 2, "command": 2, "number": 3}


def output_noise(value: str) -> bool:
    """Whether an identifier from tool output is listing noise: a test node id or a numbered series item."""
    return "::" in value or re.search(r"[_-]\d{2,}(?:\.\w+)?$", value) is not None


def _notable(ident: Identifier, kind: str) -> bool:
    if ident.kind not in _NOTABLE or len(ident.value) > 120 or looks_secret(ident.value):
        return False
    return kind != "tool_result" or not output_noise(ident.value)


def user_sentence_tags(sentence: str) -> tuple[str, ...]:
    """Journal tags of a user sentence: preference/deadline/fact, question, or () for requests and chat."""
    if sentence.rstrip().endswith("?"):
        return ("question",)
    tags = tuple(t for t, rx in (("preference", _PREFERENCE), ("deadline", _DEADLINE)) if rx.search(sentence))
    if tags:
        return tags
    if _REQUEST.match(sentence) or not _FACT.search(sentence) or len(sentence.split()) < 2:
        return ()
    return ("fact",)


def strip_lead_in(sentence: str) -> str:
    """The sentence without a conversational lead-in ("Actually, ", "By the way, ", "Important: ")."""
    stripped = _LEAD_IN.sub("", sentence).strip()
    return stripped[:1].upper() + stripped[1:] if stripped else sentence


def is_decision(sentence: str) -> bool:
    """Whether an assistant sentence states a decision, plan or root cause."""
    return _DECISION.search(sentence) is not None


def call_input(row: MessageRecord) -> dict[str, object]:
    """The input of a tool_call row (empty for any other row)."""
    content = row.content
    if row.kind == "tool_call" and isinstance(content, list) and content:
        tool_input = content[0].get("input")
        if isinstance(tool_input, dict):
            return dict(tool_input)
    return {}


def input_strings(value: object, key: str = "") -> list[tuple[str, str]]:
    """(key, text) pairs of a tool input, nested values included, keys in sorted order."""
    if isinstance(value, str):
        return [(key, value)]
    if isinstance(value, dict):
        return [pair for k in sorted(value) for pair in input_strings(value[k], str(k))]
    if isinstance(value, list):
        return [pair for v in value for pair in input_strings(v, key)]
    return []


def row_text(row: MessageRecord) -> str:
    """A row's original text for analysis: a tool call as its input values (not JSON), else its text."""
    if row.kind == "tool_call":
        return "\n".join(text for _key, text in input_strings(call_input(row)))
    return content_text(row.content)


def tool_names(rows: Sequence[MessageRecord]) -> dict[str, str]:
    """Tool name by tool_call_id, from the tool_call rows (results do not always carry the name)."""
    return {
        r.tool_call_id: r.tool_name for r in rows if r.kind == "tool_call" and r.tool_call_id and r.tool_name
    }


@dataclass(frozen=True)
class JournalDraft:
    """A journal entry to be: one standalone statement and where it came from."""

    content: str
    source_type: str  # direct (the user said it), observation (tool output), inference (assistant)
    tags: tuple[str, ...]
    seq: int


def _sentence(text: str) -> str:
    text = " ".join(text.split())
    return text if text[-1:] in ".!?" else text + "."


def _answered(rows: Sequence[MessageRecord], index: int) -> bool | None:
    """Whether the assistant's next message answered the user's question at ``index`` (None: no reply)."""
    for row in rows[index + 1 :]:
        if row.role == "user" and row.kind == "message":
            return None
        if row.role == "assistant" and row.kind == "message":
            return _GAP.search(content_text(row.content)) is None
    return None


def extract_facts(rows: Sequence[MessageRecord], *, max_entries: int = 50) -> list[JournalDraft]:
    """Journal drafts for the facts, preferences, decisions, errors, identifiers and open questions in rows.

    User sentences become ``direct`` drafts, assistant decisions ``inference``,
    error lines of tool output ``observation``; each message with identifiers
    not seen before gets one compact identifiers draft. Questions the assistant
    could not answer are tagged ``question``. Nothing that looks like a secret
    is ever included. When more than ``max_entries`` are found, user statements
    are kept first and identifier lists last; the result is in seq order.
    """
    ordered = sorted(rows, key=lambda r: (r.seq, r.part))
    names = tool_names(ordered)
    drafts: list[tuple[int, int, JournalDraft]] = []  # (priority, order, draft)
    seen_content: set[str] = set()
    seen_idents: set[str] = set()

    def add(priority: int, content: str, source: str, tags: tuple[str, ...], seq: int) -> None:
        key = " ".join(content.casefold().split())
        if key not in seen_content and not looks_secret(content):
            seen_content.add(key)
            drafts.append((priority, len(drafts), JournalDraft(content, source, tags, seq)))

    for index, row in enumerate(ordered):
        text = row_text(row)
        if row.kind == "tool_result":
            name = row.tool_name or names.get(row.tool_call_id or "", "tool")
            lines = error_lines(text, 2)
            if not lines and row.metadata.get("is_error"):
                lines = [ln.strip()[:200] for ln in text.splitlines() if ln.strip()][:1]
            for line in lines:
                add(2, f"Tool {name} reported an error: {line}", "observation", ("error",), row.seq)
        elif row.role == "user" and row.kind == "message":
            for sentence in map(strip_lead_in, split_sentences(text)):
                tags = user_sentence_tags(sentence)
                if tags and tags != ("question",):
                    add(0, f"The user said: {_sentence(sentence)}", "direct", tags, row.seq)
                elif tags and _answered(ordered, index) is False:
                    add(1, f"The user asked, still unanswered: {sentence}", "direct", tags, row.seq)
        elif row.role == "assistant" and row.kind == "message":
            for sentence in split_sentences(text):
                if is_decision(sentence) and not sentence.endswith("?"):
                    add(3, f"The assistant said: {_sentence(sentence)}", "inference", ("decision",), row.seq)
        if row.role != "system" and row.kind != "summary":
            idents = [
                i for i in find_identifiers(text) if i.value not in seen_idents and _notable(i, row.kind)
            ]
            if row.kind == "tool_result":  # a listing names hundreds of files; keep the likeliest few
                idents = sorted(idents, key=lambda i: _NOTABLE[i.kind])[:6]
            if idents[:12]:
                seen_idents.update(i.value for i in idents[:12])
                who = {"user": "the user", "assistant": "the assistant"}.get(row.role, "tool output")
                who = f"the assistant's {row.tool_name or 'tool'} call" if row.kind == "tool_call" else who
                source = {"user": "direct", "tool": "observation"}.get(row.role, "inference")
                listed = ", ".join(i.value for i in idents[:12])
                content = f"Identifiers mentioned by {who} (seq {row.seq}): {listed}."
                add(2 if row.role == "user" else 4, content, source, ("identifier",), row.seq)
    kept = sorted(drafts, key=lambda d: (d[0], d[1]))[: max(0, max_entries)]
    return [d for _p, _o, d in sorted(kept, key=lambda d: d[1])]
