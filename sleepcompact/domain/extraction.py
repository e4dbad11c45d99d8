"""Pre-compaction extraction: journal drafts (DESIGN section 4 step 4).

Before any message leaves the live context as a summary, what it says becomes journal drafts, so a
sleep tick can consolidate them into memory even if the summary loses them. Every speaker counts: each
sentence of a user or assistant message becomes one dated third-person statement ("[2023-04-29] Emily
started a pottery class on Thursdays", "[2023-05-02] The assistant recommended the painter Claude Monet
to Emily"), tagged by what kind of statement it is (``domain.salience``), so its heuristic importance
keeps acknowledgements, questions and hedges out of memory. Tool output gives its error lines; every
message gives the identifiers it introduces. Everything is regex and rule based, hence deterministic.

Provenance (``domain.provenance``): every draft says where its text came from. The user's sentences are
``direct``, the assistant's ``inference``; tool output, fetched content carried inside a message (server
tool results, search results) and ``context`` rows are ``environmental`` (0.3, under the recall floor),
and so is an assistant sentence that relays them (``provenance.QuoteIndex``). A sentence or a line of
environmental text that carries instructions aimed at the model (``injection.flag_imperatives``) is
never a statement: it becomes one ``flagged`` draft quoting it verbatim, for audit.

How many: at most ``PER_MESSAGE`` drafts per folded message (a message is one seq, whatever its parts),
and never more than ``MAX_DRAFTS`` in one compaction. When a compaction finds more, the most important
are kept (ties: the earlier); the result is in seq order.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sleepcompact.domain.identifiers import (
    Identifier,
    error_lines,
    find_identifiers,
    looks_secret,
    output_noise,
)
from sleepcompact.domain.injection import flag_imperatives
from sleepcompact.domain.journal import heuristic_importance
from sleepcompact.domain.messages import content_text
from sleepcompact.domain.perspective import Speakers, third_person
from sleepcompact.domain.provenance import QuoteIndex, split_content
from sleepcompact.domain.records import MessageRecord, row_text, tool_names
from sleepcompact.domain.salience import opener_stripped, personal_question, statement_tags
from sleepcompact.domain.sentences import split_sentences

TAGS = (
    "preference",
    "decision",
    "error",
    "identifier",
    "deadline",
    "fact",
    "question",
    "event",
    "plan",
    "recommendation",
    "remark",
    "named",
    "dated",
    "numeric",
    "chat",
    "asked",
    "hedged",
    "hypothetical",
    "vague",
    "flagged",
)
PER_MESSAGE = 2
"""Drafts one folded message may add to a compaction's budget."""

MAX_DRAFTS = 2_000
"""Safety bound on the drafts of one compaction, however much it folds (a week of chat is far less)."""

ASSISTANT = "the assistant"
DEFAULT_USER = "the user"
_NAME_KEYS = ("user", "user_name")
_GAP = re.compile(
    r"\b(?:I (?:don't|do not|can't|cannot|couldn't)|not sure|no idea|unknown|unable to|no information)\b",
    re.I,
)
_NOTABLE = {"path": 0, "id": 0, "url": 1, "hash": 1, "code": 2, "command": 2, "number": 3}
_PROSE_KINDS = frozenset({"path", "id", "url", "hash", "code", "command"})  # numbers stay in the statements
_MAX_SENTENCE = 400


_Add = Callable[[str, str, tuple[str, ...], int, str], None]
FLAGGED_LINES = 2
"""Flagged lines one row of environmental text may add (each one draft)."""
_MAX_FLAGGED = 400


def user_name_of(metadata: Mapping[str, Any]) -> str | None:
    """The user's name from a conversation's metadata (``user``, as MemoryBank imports set it, or
    ``user_name``), when it is a short single-line string."""
    for key in _NAME_KEYS:
        value = metadata.get(key)
        if isinstance(value, str) and 0 < len(value.strip()) <= 64 and "\n" not in value:
            return " ".join(value.split())
    return None


@dataclass(frozen=True)
class JournalDraft:
    """A journal entry to be: one standalone dated statement and where it came from."""

    content: str
    source_type: str  # direct (the user said it), inference (the assistant), environmental (the rest)
    tags: tuple[str, ...]
    seq: int
    provenance: str  # user, assistant, tool, fetched, environment (domain.provenance)

    @property
    def importance(self) -> int:
        """The heuristic importance the entry will get."""
        return heuristic_importance(self.source_type, self.tags)


def _dated(row: MessageRecord, text: str) -> str:
    return f"[{row.created_at.date().isoformat()}] {text}"


def _sentence(text: str) -> str:
    text = " ".join(text.split())
    if len(text) > _MAX_SENTENCE:
        text = text[: _MAX_SENTENCE - 1].rstrip() + "…"
    # A memory is stated, not exclaimed: "!" becomes "." ("Wow!!" -> "Wow."), and "?!" a "?".
    text = text.rstrip("!").rstrip() or text
    return text if text[-1:] in ".?…" else text + "."


def _answered(rows: Sequence[MessageRecord], index: int) -> bool | None:
    """Whether the assistant's next message answered the user's question at ``index`` (None: no reply)."""
    for row in rows[index + 1 :]:
        if row.role == "user" and row.kind == "message":
            return None
        if row.role == "assistant" and row.kind == "message":
            return _GAP.search(content_text(row.content)) is None
    return None


def _notable(ident: Identifier, kind: str, role: str) -> bool:
    if ident.kind not in _NOTABLE or len(ident.value) > 120 or looks_secret(ident.value):
        return False
    if kind == "message" and role in ("user", "assistant") and ident.kind not in _PROSE_KINDS:
        return False
    return kind != "tool_result" or not output_noise(ident.value)


# A quoted title ends a statement whose question follows without a stop: '... "Looking Up" Has it ...?'
_QUESTION_AFTER_QUOTE = re.compile(
    r"(?<=[\"”])\s+(?=(?:Has|Have|Do|Does|Did|Are|Is|Can|Could|Would|Will|What|Which|Who|How|Why|When"
    r"|Where)\b)"
)


# Tool output an agent framework hands back as a user turn (mini-swe-agent, SWE-agent): an observation.
_OBSERVATION = re.compile(r"^\s*(?:<returncode>|<output|\[File:|OBSERVATION:|Observation:|Traceback \()")
# An agent harness's own feedback on the model's format, sent as a user message ("Please always provide
# EXACTLY ONE action in triple backticks"): the harness speaking, not the user, so never a preference.
_HARNESS = re.compile(r"EXACTLY ONE action|format your action")
_FENCE = re.compile(r"^\s*(?:```|~~~)")
_CODE_LINE = re.compile(r"^(?:\s{4}|\t|\s*(?:>>>|\.\.\.|\$ |#|//|\d+:|[-+@]{2}|[{}\[\]()<]))")
_SYMBOLS = frozenset("[]{}()<>=;_/\\|`#$@*%^~")
_WORD = re.compile(r"[A-Za-z]{2,}")


def _prose_lines(text: str) -> list[str]:
    """The lines of a message that are prose: code blocks, code-like lines (prompts, line numbers,
    indented code, assignments, markup) and lines mostly of symbols are not statements."""
    out, fenced = [], False
    for line in text.splitlines():
        if _FENCE.match(line):
            fenced = not fenced
            continue
        if fenced or _CODE_LINE.match(line) or not line.strip():
            continue
        stripped = line.strip()
        symbols = sum(c in _SYMBOLS for c in stripped)
        words = stripped.split()
        if symbols > 0.08 * len(stripped) or sum(bool(_WORD.match(w)) for w in words) < 0.5 * len(words):
            continue
        out.append(stripped)
    return out


def _sentences(text: str) -> list[str]:
    """Statements a message makes: its prose split into sentences (a lead-in to a list or a code block,
    ending in ':', says nothing by itself)."""
    return [
        part
        for s in split_sentences("\n".join(_prose_lines(text)))
        for part in _QUESTION_AFTER_QUOTE.split(s)
        if part.strip() and not part.rstrip().endswith(":")
    ]


def _statements(
    ordered: Sequence[MessageRecord], index: int, user: str, quotes: QuoteIndex
) -> list[tuple[str, str, tuple[str, ...], str]]:
    """(content, source type, tags, provenance) of each sentence of a user or assistant message's own
    text: a sentence carrying instructions to the model is a ``flagged`` quote, and an assistant
    sentence that quotes environmental text has that text's provenance."""
    row = ordered[index]
    is_user = row.role == "user"
    who = Speakers(user, ASSISTANT, True) if is_user else Speakers(ASSISTANT, user, False)
    out: list[tuple[str, str, tuple[str, ...], str]] = []
    for sentence in _sentences(split_content(row.content)[0]):
        quoted = None if is_user else quotes.source_of(sentence)
        provenance = quoted or ("user" if is_user else "assistant")
        source = "environmental" if quoted else "direct" if is_user else "inference"
        if flag_imperatives(sentence):
            text = f"Flagged text from {who.speaker} (seq {row.seq}): {_quoted(sentence)}"
            out.append((_dated(row, text), source, ("flagged",), provenance))
            continue
        tags = statement_tags(sentence, assistant=not is_user)
        body = opener_stripped(sentence) or sentence
        text = _sentence(third_person(body, who))
        if tags[0] == "asked":
            if is_user and not personal_question(sentence) and _answered(ordered, index) is False:
                text = f"{who.speaker} asked, still unanswered: {text}"
                tags = ("question", *tags[1:])
            else:
                text = f"{who.speaker} asked: {text}"
        out.append((_dated(row, text[:1].upper() + text[1:]), source, tags, provenance))
    return out


def extract_facts(
    rows: Sequence[MessageRecord], *, user_name: str | None = None, max_entries: int | None = None
) -> list[JournalDraft]:
    """Journal drafts for what the rows say: every speaker's statements, tool errors and identifiers.

    User sentences become ``direct`` drafts, assistant sentences ``inference``; error lines of tool
    output, fetched content and assistant sentences quoting them ``environmental`` (see the module on
    provenance and flagged text). Each message with identifiers not seen before gets one compact
    identifiers draft per provenance. Questions the assistant could not answer are tagged
    ``question``. ``user_name`` names the user in the statements (else "the user"). Nothing that
    looks like a secret is ever included. At most ``max_entries`` drafts (default: ``PER_MESSAGE``
    per folded message, ``MAX_DRAFTS`` at most), the most important first; the result is in seq order.
    """
    ordered = sorted(rows, key=lambda r: (r.seq, r.part))
    user = user_name or DEFAULT_USER
    drafts: list[JournalDraft] = []
    seen_content: set[str] = set()
    seen_idents: set[str] = set()
    quotes = QuoteIndex()

    def add(content: str, source: str, tags: tuple[str, ...], seq: int, provenance: str) -> None:
        key = " ".join(content.split(" ", 1)[-1].casefold().split())  # the same words on another day too
        if key not in seen_content and not looks_secret(content):
            seen_content.add(key)
            drafts.append(JournalDraft(content, source, tags, seq, provenance))

    names = tool_names(ordered)
    for index, row in enumerate(ordered):
        text = row_text(row)
        if row.kind == "tool_result" or (
            row.role == "user"
            and row.kind == "message"
            and (_OBSERVATION.match(text) or _HARNESS.search(text))
        ):
            _tool_output(row, text, names, add)
            quotes.add(text, "tool")
            _identifiers(row, text, "tool output", "tool", seen_idents, add)
        elif row.role in ("user", "assistant") and row.kind == "message":
            own, fetched = split_content(row.content)
            # Fetched blocks first: the message's own text may relay what they say.
            _environmental(row, fetched, "fetched content", "fetched", quotes, seen_idents, add)
            for content, source, tags, provenance in _statements(ordered, index, user, quotes):
                add(content, source, tags, row.seq, provenance)
            quotes.vouch(own)  # after its own sentences were judged: a relayed address stays relayed
            who, provenance = (user, "user") if row.role == "user" else (ASSISTANT, "assistant")
            _identifiers(row, own, who, provenance, seen_idents, add)
        elif row.kind == "context":
            _environmental(row, text, "context", "environment", quotes, seen_idents, add)
        elif row.kind == "tool_call":
            who = f"the assistant's {row.tool_name or 'tool'} call"
            _identifiers(row, text, who, "assistant", seen_idents, add)
    budget = _budget(ordered) if max_entries is None else max(0, max_entries)
    ranked = sorted(range(len(drafts)), key=lambda i: (-drafts[i].importance, i))[:budget]
    return [drafts[i] for i in sorted(ranked)]


def _tool_output(row: MessageRecord, text: str, names: Mapping[str, str], add: _Add) -> None:
    """A tool output's error lines (environmental) and its lines that carry instructions (flagged)."""
    if row.kind == "tool_result":
        name = row.tool_name or names.get(row.tool_call_id or "", "tool")
        lead = f"Tool {name} reported an error"
    else:  # tool output in a user turn: its errors, as for a tool result
        lead = "Tool output reported an error"
    lines = error_lines(text, 2)
    if not lines and row.kind == "tool_result" and row.metadata.get("is_error"):
        lines = [ln.strip()[:200] for ln in text.splitlines() if ln.strip()][:1]
    for line in lines:
        if not flag_imperatives(line):  # a flagged line is kept by _flagged, as what it is
            add(_dated(row, f"{lead}: {line}"), "environmental", ("error",), row.seq, "tool")
    _flagged(row, text, "tool output", "tool", add)


def _environmental(
    row: MessageRecord,
    text: str,
    label: str,
    provenance: str,
    quotes: QuoteIndex,
    seen: set[str],
    add: _Add,
) -> None:
    """Fetched or context text: never statements; its flagged lines and identifiers, environmental."""
    if not text.strip():
        return
    _flagged(row, text, label, provenance, add)
    quotes.add(text, provenance)
    _identifiers(row, text, label, provenance, seen, add)


def _quoted(text: str) -> str:
    """Flagged text as an entry quotes it: one line, cut at ``_MAX_FLAGGED`` characters."""
    text = " ".join(text.split())
    return text if len(text) <= _MAX_FLAGGED else text[: _MAX_FLAGGED - 1] + "…"


def _flagged(row: MessageRecord, text: str, label: str, provenance: str, add: _Add) -> None:
    """One ``flagged`` draft per line (``FLAGGED_LINES`` at most) of environmental text that carries
    instructions aimed at the model, quoted verbatim (cut at ``_MAX_FLAGGED`` characters)."""
    if not flag_imperatives(text):  # one pass over the whole text; lines only when it is flagged
        return
    found = 0
    for line in (ln.strip() for ln in text.splitlines()):
        if line and flag_imperatives(line):
            content = f"Flagged text in {label} (seq {row.seq}): {_quoted(line)}"
            add(_dated(row, content), "environmental", ("flagged",), row.seq, provenance)
            found += 1
            if found == FLAGGED_LINES:
                return


def _budget(rows: Sequence[MessageRecord]) -> int:
    """``PER_MESSAGE`` per folded message (system rows and earlier summaries are not folded messages)."""
    messages = {r.seq for r in rows if r.role != "system" and r.kind != "summary"}
    return min(MAX_DRAFTS, PER_MESSAGE * len(messages))


def _identifiers(row: MessageRecord, text: str, who: str, provenance: str, seen: set[str], add: _Add) -> None:
    """One draft listing the notable identifiers a row's text introduces (environmental text: its
    likeliest six), with the provenance of that text."""
    environmental = provenance in ("tool", "fetched", "environment")
    kind = "tool_result" if provenance in ("tool", "fetched") else row.kind
    idents = [i for i in find_identifiers(text) if i.value not in seen and _notable(i, kind, row.role)]
    if environmental:  # a listing names hundreds of files; keep the likeliest few
        idents = sorted(idents, key=lambda i: _NOTABLE[i.kind])[:6]
    if not idents[:12]:
        return
    seen.update(i.value for i in idents[:12])
    source = "environmental" if environmental else "direct" if provenance == "user" else "inference"
    listed = ", ".join(i.value for i in idents[:12])
    content = f"Identifiers mentioned by {who} (seq {row.seq}): {listed}."
    add(_dated(row, content), source, ("identifier",), row.seq, provenance)
