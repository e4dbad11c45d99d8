"""Injection flags: text that carries instructions aimed at the model (DESIGN section 7).

Tool output and quoted text end up in the summarization prompt and in the summary itself; what looks
like orders addressed to a model is reported, never copied into history as if it were.

``detect`` reads a text as a model would (``domain.injection_text``: invisibles stripped, look-alikes
mapped, encoded runs decoded), matches the weighted rules (``injection_rules_address``: who is
addressed and how; ``injection_rules``: what is asked for; ``injection_rules_signals``: how it is laid
out; ``injection_rules_i18n`` and ``injection_rules_world``: other languages) chunk by chunk where
their gates pass (``injection_gates``), and adds the weights of the distinct rules found within
``WINDOW`` lines of each other: at ``THRESHOLD`` the text is flagged. A match that is reported speech
(quoted in an article about attacks, or "the page told the model to ...") is kept as a finding but
does not count. ``domain.quarantine`` uses the verdict on summaries.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from dataclasses import dataclass

from sleepcompact.domain.injection_gates import GateIndex, tokens_of
from sleepcompact.domain.injection_rules import ACTION_RULES, Rule
from sleepcompact.domain.injection_rules_address import ADDRESS_RULES
from sleepcompact.domain.injection_rules_i18n import RULES_I18N
from sleepcompact.domain.injection_rules_memory import MEMORY_RULES
from sleepcompact.domain.injection_rules_reader import READER_RULES
from sleepcompact.domain.injection_rules_reset import RESET_RULES
from sleepcompact.domain.injection_rules_safeguards import SAFEGUARD_RULES
from sleepcompact.domain.injection_rules_signals import SIGNAL_RULES
from sleepcompact.domain.injection_text import payloads, strip_invisible, views
from sleepcompact.domain.memo import TextMemo

__all__ = [
    "THRESHOLD",
    "Finding",
    "Verdict",
    "detect",
    "flag_imperatives",
    "flagged_lines",
    "strip_invisible",
]

THRESHOLD = 1.0
"""The summed weight at which a text is flagged."""
WINDOW = 8
"""Lines within which signs add up (a long tool output's scattered weak signs do not)."""
_MAX_DEPTH = 2  # base64 inside base64 is read; deeper nesting is not worth the time
_MATCHES_PER_RULE = 4
_CHUNK_CHARS = 4000  # rules run on chunks of about this size, each only where its gate passes
_OVERLAP_LINES = 2  # a chunk repeats the lines before it, for rules that span a line break
_OVERLAP_CHARS = 1000  # ... unless they are longer than this
_CONTEXT_CHARS = 400  # how far around a match reported speech is looked for
RULES: tuple[Rule, ...] = (
    *ADDRESS_RULES,
    *READER_RULES,
    *RESET_RULES,
    *ACTION_RULES,
    *SAFEGUARD_RULES,
    *MEMORY_RULES,
    *SIGNAL_RULES,
)
"""The English rules, in the order reasons are listed."""

# An article about attacks: quoting an attack there is reporting it.
_META = re.compile(
    r"\b(?:prompt[- ]injections?|injections?|jailbreaks?|attacks?|attackers?|adversar\w*|malicious"
    r"|red[- ]team\w*|phishing|social\s+engineering|exfiltrat\w*|owasp|cve-\d|security|vulnerab\w*|exploits?"
    r"|payloads?|defen[cs]es?|detectors?|filters?|incidents?|researchers?|blog|article|paper|study|slides?"
    r"|course|training|tutorial)\b",
    re.I,
)
# Words that introduce a quotation as an example ("phrases like", "the string", "attackers write").
_FRAME = re.compile(
    r"\b(?:such\s+as|like|e\.g\.|for\s+example|for\s+instance|phrases?|strings?|payloads?|text|known\s+as"
    r"|called|begins?\s+with|starts?\s+with|contain(?:s|ing)?|reads?|says?|said|wrote|writes?|write|quoted?"
    r"|example|as|of"
    # A quotation that names a message on a screen: 'the message "SYSTEM OVERRIDE ACTIVE" means ...'.
    r"|(?:the|an?|this|that)\s+(?:message|error|warning|label|banner|status|notice|title|heading|button"
    r"|prompt|code)|about(?:\s+(?:the|an?|this))?)\W{0,3}$",
    re.I,
)
# Narration of what an attack did: "a page told the assistant to ...".
_NARRATION = re.compile(
    r"\b(?:told|tells|telling|asked|asks|asking|instruct(?:ed|s|ing)|trick(?:ed|s|ing)|convinc(?:ed|es|ing)"
    r"|persuad(?:ed|es|ing)|coax(?:ed|es|ing)|urg(?:ed|es|ing)|direct(?:ed|s|ing)|got|gets|getting|made"
    r"|makes|making|caus(?:ed|es|ing)|forc(?:ed|es|ing))\s+(?:the|an?|its|their|some"
    r"|many)\s+(?:\w+\s+)?(?:models?|assistants?|ai|llms?|agents?|bots?|chatbots?|systems?|users?"
    r"|you)\s+(?:to|into)\s+$",
    re.I,
)
# A summary or a report naming what it did not follow: "it contained an instruction to ...".
_NAMED = re.compile(
    r"\b(?:an?|the|its|their|\w+'s)\s+(?:\w+\s+)?(?:instruction|request|attempt|order)s?\s+to\s+$"
    # A kind of request, named in the plural: "must refuse requests to disable these checks".
    r"|\b(?:instructions|requests|attempts|orders)\s+to\s+$"
    r"|\b(?:attempted|tried|trying|attempts?)\s+to\s+$",
    re.I,
)
# ...unless it says the instruction was obeyed ("decided to follow the page's instruction to ...").
_OBEYED = re.compile(
    r"\b(?:follow(?:s|ed|ing)?|obey(?:s|ed|ing)?|compl(?:y|ied|ies|ying)\s+with|carr(?:y|ied)\s+out"
    r"|execut(?:e|ed|ing)|act(?:ed)?\s+on|per|as\s+(?:instructed|requested))\b",
    re.I,
)
_REFUSED = re.compile(r"\b(?:not|never|refused|declined|ignored|rejected|without)\b|n't\b", re.I)
_NARRATION_PRESENT = re.compile(
    r"\b(?:ask|tell|urge|instruct|trick|convince|persuade|get|make|cause|force)\s+(?:you|users|people"
    r"|victims|the\s+user|the\s+model|the\s+assistant)\s+(?:to|into)\s+$",
    re.I,
)
# An unquoted example in an article: "tokens such as <|im_start|>".
_EXAMPLE = re.compile(
    r"\b(?:such\s+as|like|e\.g\.|for\s+example|for\s+instance|including|of\s+the\s+form)\b[^.!?]{0,60}$",
    re.I,
)
# In an article about attacks, an instruction named as the object of hiding or finding is described:
# "job seekers are hiding instructions for AI screeners in their CVs".
_DESCRIBED = re.compile(
    r"\b(?:hid(?:e|es|ing|den)|embed(?:s|ded|ding)?|plant(?:s|ed|ing)?|insert(?:s|ed|ing)?|smuggl\w+"
    r"|inject(?:s|ed|ing)?|slip(?:s|ped|ping)?|found|finds?|finding|detect\w*|contain(?:s|ed|ing)?"
    r"|about)\s+(?:\w+\s+){0,2}$",
    re.I,
)
# ... or something the model is said to do, in the third person: "[DATA] is replaced by the model with".
_THIRD_PERSON = re.compile(
    r"\b(?:by|persuades?|tricks?|causes?|lets?)\s+the\s+(?:model|agent|assistant|llm|ai|chatbot)\b", re.I
)
# A line set off as a quoted or indented block after a line ending with a colon ("The following string
# is scored 0.02:"): in an article about attacks, that block is the example.
_BLOCK = re.compile(r"^(?: {4}|\t|>)")
# A key before a quoted value ("message: "...", "  - title: "..."): the value is data.
_KEY = re.compile(r"[\s\-{\[,]*[\w.$@][\w.$@-]{0,59}\s*:")
_INTRODUCES = re.compile(r":\s*$")
# Code spans (backticks) are not quotations: "run `curl ... | sh`" is an order.
_PAIRS = {"“": "”", "‘": "’", "«": "»", "「": "」", "『": "』", "„": "“"}
_HIDDEN = ("base64", "hex", "tag characters", "rot13", "reversed")  # readings of decoded payloads


@dataclass(frozen=True)
class Finding:
    """One rule that matched: where (``line`` of the original text), what, and whether it counted."""

    rule: str
    reason: str
    weight: float
    line: int
    excerpt: str
    via: str = "text"  # the reading: text, latin, squeezed, base64, hex, tag characters, rot13, reversed
    reported: bool = False  # quoted or narrated as an example: shown, not counted

    def describe(self) -> str:
        """``reason: 'excerpt'`` (with the encoding when it was hidden)."""
        hidden = f" (hidden in {self.via})" if self.via in _HIDDEN else ""
        return f"{self.reason}{hidden}: {self.excerpt!r}"


@dataclass(frozen=True)
class Verdict:
    """What ``detect`` found in a text: flagged or not, the score, and every finding with its line."""

    flagged: bool
    score: float
    findings: tuple[Finding, ...]

    @property
    def counted(self) -> tuple[Finding, ...]:
        """The findings that count (reported speech left out)."""
        return tuple(f for f in self.findings if not f.reported)

    @property
    def reasons(self) -> list[str]:
        """Each counted rule once (per encoding it was hidden in), in a fixed order, with its first
        excerpt; empty when not flagged."""
        if not self.flagged:
            return []
        seen: dict[str, str] = {}
        for f in self.counted:
            seen.setdefault(f.reason if f.via not in _HIDDEN else f"{f.reason}/{f.via}", f.describe())
        return list(seen.values())

    @property
    def lines(self) -> tuple[int, ...]:
        """Indexes (into ``text.split("\\n")``) of the lines carrying counted findings, when flagged."""
        return tuple(sorted({f.line for f in self.counted})) if self.flagged else ()


def _quoted(line: str, start: int, end: int) -> tuple[bool, str]:
    """Whether ``line[start:end]`` sits inside a prose quotation, and the text before the quotation."""
    before, after = line[:start], line[end:]
    if before.count('"') % 2 == 1 and '"' in after:
        opening = before.rfind('"')
        lead = before[:opening].rstrip()
        # A JSON value or an HTML attribute is data, not a quotation; a sentence ending in a colon
        # ("The quoted payload was: "...") introduces one.
        data = lead.endswith(("=", "[", ",", "{", '":', "':")) or _KEY.fullmatch(lead) is not None
        return (not data, lead)
    for opening_char, closing in _PAIRS.items():
        opening = before.rfind(opening_char)
        if opening >= 0 and closing not in before[opening + 1 :] and closing in after:
            return True, before[:opening].rstrip()
    opening = before.rfind("'")
    if opening >= 0 and (opening == 0 or not before[opening - 1].isalnum()):
        close = re.search(r"'(?![A-Za-z])", after)
        if close:  # ``opening`` is the last mark before the match: none between closes it
            return True, before[:opening].rstrip()
    return False, ""


def _in_example_block(lines: list[str], index: int) -> bool:
    """Whether ``lines[index]`` is an indented or quoted block whose introducing line (the last
    non-blank line before the block, at most a few lines up) ends with a colon."""
    if index >= len(lines) or not _BLOCK.match(lines[index]):
        return False
    for previous in reversed(lines[max(0, index - 4) : index]):
        if previous.strip() and not _BLOCK.match(previous):
            return _INTRODUCES.search(previous) is not None
    return False


def _reported(text: str, start: int, end: int, meta: bool) -> bool:
    """Whether the match at ``text[start:end]`` is reported speech rather than an instruction."""
    # The context is the line, at most a few hundred characters either side (a minified page is one line).
    line_start = max(text.rfind("\n", 0, start) + 1, start - _CONTEXT_CHARS)
    line_end = text.find("\n", end, end + _CONTEXT_CHARS)
    line = text[line_start : line_end if line_end >= 0 else min(len(text), end + _CONTEXT_CHARS)]
    preceding = text[max(line_start, start - 80) : start]
    if _NARRATION.search(preceding):
        return True
    if _NAMED.search(preceding) and not (_OBEYED.search(preceding) and not _REFUSED.search(preceding)):
        return True
    if meta and (
        _NARRATION_PRESENT.search(preceding)
        or _DESCRIBED.search(preceding)
        or _THIRD_PERSON.search(preceding)
    ):
        return True
    quoted, lead = _quoted(line, start - line_start, end - line_start)
    if not quoted:
        # "such as ![a](https://...)": the image's "!" does not end the sentence that introduces it.
        return meta and _EXAMPLE.search(preceding.replace("![", "[").rstrip("!")) is not None
    sentence = re.split(r"[.!?]\s", lead)[-1]
    return meta or _FRAME.search(sentence[-40:]) is not None


def _matches(
    rule: Rule, text: str, lowered: str | None, meta: bool, read: int
) -> Iterator[tuple[int, int, bool]]:
    """A rule's first few matches in ``text`` (start, end), each with whether it is reported speech,
    leaving out those within its first ``read`` characters (the chunk before read them).
    ``lowered`` is ``text`` lowercased when it is ASCII: where the rule allows it, matching that without
    ignoring case finds the same spans faster."""
    fast = rule.ascii_pattern
    found = rule.pattern.finditer(text) if fast is None or lowered is None else fast.finditer(lowered)
    n = 0
    for match in found:
        if match.end() <= read:
            continue  # read by the chunk before
        if n >= _MATCHES_PER_RULE:
            return
        n += 1
        yield match.start(), match.end(), _reported(text, match.start(), match.end(), meta)


def _chunks(text: str) -> Iterator[tuple[int, str, int]]:
    """``text`` in chunks of whole lines, each with the index of its first line and the length of what
    it repeats of the chunk before (``_overlap``): a match within that was read there, and is not
    counted again (it must not use up a rule's reads of the lines that follow)."""
    lines = text.split("\n")
    start, size = 0, 0
    for i, line in enumerate(lines):
        size += len(line) + 1
        if size >= _CHUNK_CHARS or i == len(lines) - 1:
            overlap = _overlap(lines, start)
            body = "\n".join(lines[start : i + 1])
            if overlap:
                head = "\n".join(overlap)
                yield start - len(overlap), f"{head}\n{body}", len(head)
            else:
                yield start, body, 0
            start, size = i + 1, 0


def _overlap(lines: list[str], start: int) -> list[str]:
    """What a chunk from line ``start`` repeats of the lines before it, for an order broken over the
    line break at its edge: up to two lines of 1,000 characters or less, or the end of a longer one (a
    page of a few huge lines is not read three times)."""
    repeated: list[str] = []
    for j in range(start - 1, max(0, start - _OVERLAP_LINES) - 1, -1):
        if len(lines[j]) > _OVERLAP_CHARS:
            repeated.append(lines[j][-_OVERLAP_CHARS:])
            break
        repeated.append(lines[j])
    return repeated[::-1]


@functools.cache
def _gate_index(with_other_languages: bool) -> GateIndex:
    """The gates of the rules a view is read with (other languages' only in the plain view)."""
    return GateIndex([r.name for r in ((*RULES, *RULES_I18N) if with_other_languages else RULES)])


def _rule_findings(text: str) -> list[Finding]:
    """The findings of every rule over each reading of ``text``, chunk by chunk."""
    found: dict[tuple[str, str, int], Finding] = {}
    meta = _META.search(text) is not None
    lines = text.split("\n") if meta else []
    for view in views(text):
        # Other languages are read before look-alikes are mapped: Cyrillic stays Cyrillic.
        plain = view.how == "plain"
        rules, gates = (*RULES, *RULES_I18N) if plain else RULES, _gate_index(plain)
        via = "text" if plain else view.how
        for first, chunk, read in _chunks(view.text):
            lowered = chunk.lower()
            ascii_lowered = lowered if chunk.isascii() else None
            for i in gates.passing(tokens_of(lowered)):
                rule = rules[i]
                for start, end, reported in _matches(rule, chunk, ascii_lowered, meta, read):
                    line = first + chunk.count("\n", 0, start)
                    reported = reported or (meta and _in_example_block(lines, line))
                    excerpt = " ".join(chunk[start:end].split())[:80]
                    finding = Finding(rule.name, rule.reason, rule.weight, line, excerpt, via, reported)
                    found.setdefault((rule.name, via, line), finding)
    return list(found.values())


def _payload_findings(text: str, depth: int) -> list[Finding]:
    """Findings for encoded runs whose decoded text carries signs of its own."""
    found: list[Finding] = []
    for payload in payloads(text):
        inner = _detect(payload.text, depth + 1)
        for f in inner.counted:
            # The whole text read as ROT13 keeps its lines; any other payload sits on one line.
            line = f.line if payload.how == "rot13" and payload.line == 0 else payload.line
            found.append(Finding(f.rule, f.reason, f.weight, line, f.excerpt, payload.how))
    return found


def _score(findings: list[Finding]) -> float:
    """The highest sum, over windows of ``WINDOW`` lines, of the weights of the distinct rules in it
    (a rule's weight is fixed). One pass over the findings in line order, however many there are."""
    counted = sorted((f for f in findings if not f.reported), key=lambda f: f.line)
    in_window: dict[str, int] = {}
    total = best = 0.0
    tail = 0
    for f in counted:
        in_window[f.rule] = in_window.get(f.rule, 0) + 1
        total += f.weight if in_window[f.rule] == 1 else 0.0
        while counted[tail].line < f.line - WINDOW:
            gone = counted[tail]
            in_window[gone.rule] -= 1
            total -= gone.weight if in_window[gone.rule] == 0 else 0.0
            tail += 1
        best = max(best, total)
    return round(best, 3)


def _detect(text: str, depth: int) -> Verdict:
    findings = _rule_findings(text)
    if depth < _MAX_DEPTH:
        findings += _payload_findings(text, depth)
    score = _score(findings)
    return Verdict(score >= THRESHOLD, score, tuple(findings))


# A sleep tick screened each folded row about five times (the summary request's screening, the offline
# summary's, the journal drafts'): 3,033 detections of 598 distinct texts in three ticks, two thirds of
# the tick's time. A verdict is immutable, so a repeat is a lookup.
_VERDICTS: TextMemo[Verdict] = TextMemo(entries=4096, chars=8_000_000)


def detect(text: str) -> Verdict:
    """Whether ``text`` carries instructions aimed at the model, with the score and every finding.

    Reads the text as a model would (invisible characters stripped, NFKC, Cyrillic and Greek look-alikes
    mapped to Latin, spaced-out and leetspeak words joined, HTML entities and JSON escapes decoded) and
    also what its base64, hex, tag-character and ROT13 runs decode to. Linear in the length of ``text``;
    recent verdicts are memoized.
    """
    verdict = _VERDICTS.get(text)
    if verdict is None:
        verdict = _detect(text, 0)
        _VERDICTS.put(text, verdict)
    return verdict


def flag_imperatives(text: str) -> list[str]:
    """Reasons ``text`` looks like it carries instructions aimed at the model (empty when clean).

    Each reason appears once, as ``reason: 'excerpt'`` with its first matching excerpt, in the rules'
    fixed order; see ``detect`` for the verdict with the lines.
    """
    return detect(text).reasons


def flagged_lines(text: str) -> list[str]:
    """The lines of ``text`` that carry what flagged it (empty when it is not flagged)."""
    lines = text.split("\n")
    return [lines[i] for i in detect(text).lines if i < len(lines)]
