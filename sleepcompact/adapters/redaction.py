"""Secret redaction for everything that leaves the process (DESIGN section 7).

Transcripts go to a remote summarizer; before they do, provider API keys,
private keys, bearer tokens, passwords in URLs and labelled secrets are
replaced by stable placeholders such as ``[REDACTED:anthropic_key:1]``. The
same secret always gets the same placeholder within one :class:`Redactor`, so
a summary stays coherent, and no part of a secret (prefix, suffix or hash)
ever appears in a placeholder. Emails and card numbers are opt-in.

Every pattern is anchored on a literal or a bounded run, and the long runs are
possessive, so redacting megabytes of tool output takes linear time.
"""

from __future__ import annotations

import bisect
import functools
import hashlib
import hmac
import re
import secrets
from collections.abc import Callable
from dataclasses import dataclass

# A match worth redacting: (start, end, kind) of the secret value alone.
_Hit = tuple[int, int, str]
_Extract = Callable[[re.Match[str]], _Hit | None]


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


_PLACEHOLDER = re.compile(r"\[REDACTED:[a-z_]+:\d+\]")
_SECRET_WORDS = frozenset({"password", "passwd", "secret", "key", "token", "apikey", "pass", "pwd"})
_NOT_VALUES = _words(
    "none null nil true false undefined str string bytes int bool optional secretstr required "
    "hidden redacted masked set unset empty yes no the a an is are was not and or to for of in on "
    "with this that field value type any option options flag flags argument arguments instead"
)
# Key suffixes that describe a secret (its length, file, name) rather than hold it.
_META_SUFFIXES = _words(
    "length len count min max ttl timeout expiry expires expiration policy field fields label "
    "prompt file path env var name ref source id ids type rotation age"
)
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")
_CODE_CHARS = re.compile(r"[()\[\]{}]")
_CASE_PARTS = re.compile(r"_|(?<=[a-z])(?=[A-Z])")
_RECEIVERS = _words(
    "self cls this os settings config cfg conf args opts options request req env params kwargs "
    "ctx context app parsed url auth creds credentials user data payload body form secrets result "
    "response"
)
_MASKED = re.compile(r"[*xX.•-]+")
_CARD_PREFIX = re.compile(r"4|5[1-5]|2[2-7]|3[045678]|6[0245]")


@dataclass(frozen=True)
class RedactionPolicy:
    """What to redact beyond credentials, which are always redacted."""

    emails: bool = False  # names and emails are often the point of a conversation
    card_numbers: bool = False  # when on, only Luhn-valid 13-19 digit numbers (optional spaces or dashes)


def _whole(kind: str) -> _Extract:
    """The whole match is the secret."""
    return lambda m: (m.start(), m.end(), kind)


def _group(kind: str, name: str = "v") -> _Extract:
    """Only group ``name`` is the secret; the label around it stays readable."""
    return lambda m: (m.start(name), m.end(name), kind)


def _assignment_kind(word: str) -> str:
    word = word.lower()
    if word.startswith("pass"):
        return "password"
    if "key" in word:
        return "api_key"
    return "token" if "token" in word else "secret"


def _names_a_secret(value: str) -> bool:
    """``DB_PASSWORD``, ``refresh_token``, ``cfg.getPassword``: the name of a secret, not one."""
    last = value.rsplit(".", 1)[-1]
    return bool(_IDENTIFIER.fullmatch(value)) and not _SECRET_WORDS.isdisjoint(
        p.lower() for p in _CASE_PARTS.split(last)
    )


def _looks_like_code(value: str, quoted_key: bool, following: str) -> bool:
    """A name or call standing in for the secret: ``self.auth``, ``getpass()``, ``proxy_auth``."""
    if _CODE_CHARS.search(value) or value[0] in "$<%*!|>&@:=-":
        return True
    if not _IDENTIFIER.fullmatch(value):
        return False
    if "." in value:  # attribute access, unless it could be a dotted passphrase
        return value.split(".", 1)[0] in _RECEIVERS
    # A bare name after a quoted key ({"password": pw}) or before a comma, or a multi-word name, no digits.
    multi_word = len(_CASE_PARTS.split(value)) > 1 and not any(c.isdigit() for c in value)
    return quoted_key or following in (",", ")") or multi_word


@functools.lru_cache(maxsize=4096)
def _plausible(value: str, bare: bool, suffix: str, following: str, quoted_key: bool, colon: bool) -> bool:
    """Whether an assigned value is a secret rather than a length, a placeholder, prose or a variable."""
    if not _META_SUFFIXES.isdisjoint(suffix.lower().split("_")) or len(value) < 3:
        return False
    if (
        value.lower() in _NOT_VALUES
        or value[0] in "$<%{"
        or _MASKED.fullmatch(value)
        or _names_a_secret(value)
    ):
        return False
    if not bare:
        return True
    if colon and following == " " and value.isalpha():  # prose: "api_key: return None so the client ..."
        return False
    return following not in ("'", '"', "`") and not _looks_like_code(value, quoted_key, following)


def _assignment(m: re.Match[str]) -> _Hit | None:
    """``password=...``, ``"api_key": "..."``, ``--secret ...``: the value, unless it is not a secret."""
    name = "dq" if m.group("dq") is not None else "sq" if m.group("sq") is not None else "bare"
    following = m.string[m.end() : m.end() + 1]
    suffix = (m.group("suffix") or "").replace("-", "_")
    quoted_key, colon = bool(m.group("q")), m.group("sep") == ":"
    if not _plausible(m.group(name), name == "bare", suffix, following, quoted_key, colon):
        return None
    return (m.start(name), m.end(name), _assignment_kind(m.group("word")))


def _bearer(m: re.Match[str]) -> _Hit | None:
    """A bearer token, unless it is an all-caps placeholder like ``YOUR_ACCESS_TOKEN_HERE``."""
    value = m.group("v")
    return None if re.fullmatch(r"[A-Z_]+", value) else (m.start("v"), m.end("v"), "bearer_token")


def luhn_valid(digits: str) -> bool:
    """Whether a string of digits passes the Luhn checksum card numbers carry."""
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = int(ch) * (2 if i % 2 else 1)
        total += d - 9 if d > 9 else d
    return total % 10 == 0


def _card(m: re.Match[str]) -> _Hit | None:
    """A card number: issuer prefix, 13-19 digits (the pattern allows one kind of separator), Luhn-valid."""
    digits = re.sub(r"[ -]", "", m.group("v"))
    valid = 13 <= len(digits) <= 19 and _CARD_PREFIX.match(digits) is not None and luhn_valid(digits)
    return (m.start("v"), m.end("v"), "card_number") if valid else None


_B64URL = r"[A-Za-z0-9_-]"
_ASSIGN_WORD = (
    r"(?P<word>passw(?:or)?d|secret|api[_-]?key|access[_-]?token|auth[_-]?token|refresh[_-]?token"
    r"|client[_-]?secret|private[_-]?token)"
)
# A quoted string (escapes allowed) or a bare run, which '&' ends only before another "name=".
_ASSIGN_VALUE = (
    r"""(?:"(?P<dq>(?:[^"\\\n]|\\.){1,256}+)"|'(?P<sq>(?:[^'\\\n]|\\.){1,256}+)'"""
    r"""|(?P<bare>(?:[^\s"'`,;&]|&(?![\w.-]+=)){1,256}+))"""
)


@dataclass(frozen=True)
class _Rule:
    """A detector: the pattern, what of each match is the secret, and substrings it cannot match without."""

    pattern: re.Pattern[str]
    extract: _Extract
    triggers: tuple[str, ...]  # lowercase; the rule is skipped when none occurs in the text


def _rule(pattern: str, extract: _Extract, triggers: str) -> _Rule:
    return _Rule(re.compile(pattern), extract, tuple(triggers.split()))


# In priority order: where two candidates overlap, the earlier rule wins. Patterns start with a literal
# where they can (the lookbehind comes after it), which lets the regex engine skip ahead quickly.
_CREDENTIAL_RULES: tuple[_Rule, ...] = (
    _rule(
        r"-----BEGIN[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----(?:(?:[^-]|-(?!----))*+"
        r"-----END[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----"
        r"|(?:(?:\r?\n|\\n)++(?:[A-Za-z0-9+/=]++|(?:Proc-Type|DEK-Info|Comment|Version):[^\n\\]*+))*+)",
        _whole("private_key"),
        "-----begin",
    ),
    _rule(rf"eyJ(?<![\w-]eyJ){_B64URL}{{8,}}+\.ey{_B64URL}{{8,}}+\.{_B64URL}*+", _whole("jwt"), "eyj"),
    _rule(r"sk-ant-(?<![\w-]sk-ant-)[A-Za-z0-9_-]{20,}+", _whole("anthropic_key"), "sk-ant-"),
    _rule(
        r"sk-(?<![\w-]sk-)(?:(?:proj|svcacct|admin|None)-[A-Za-z0-9_-]{20,}+|[A-Za-z0-9]{20,}+)",
        _whole("openai_key"),
        "sk-",
    ),
    _rule(
        r"g(?<![A-Za-z0-9]g)(?:h[pousr]_[A-Za-z0-9]{30,}+|ithub_pat_[A-Za-z0-9_]{30,}+)",
        _whole("github_token"),
        "gh github_pat_",
    ),
    _rule(
        r"https://hooks\.slack\.com/(?:services|workflows|triggers)/(?P<v>[A-Za-z0-9_/-]{10,}+)",
        _group("slack_webhook"),
        "hooks.slack.com",
    ),
    _rule(r"xox[abprs]-(?<![A-Za-z0-9]xox.-)[A-Za-z0-9-]{10,}+", _whole("slack_token"), "xox"),
    _rule(
        r"[rs]k_(?<![A-Za-z0-9].k_)(?:live|test)_[A-Za-z0-9]{16,}+", _whole("stripe_key"), "k_live_ k_test_"
    ),
    _rule(r"AIza(?<![A-Za-z0-9]AIza)[A-Za-z0-9_-]{35}(?![A-Za-z0-9_-])", _whole("google_api_key"), "aiza"),
    _rule(
        r"A(?:KIA|SIA)(?<![A-Za-z0-9]....)[A-Z0-9]{16}(?![A-Za-z0-9])", _whole("aws_access_key"), "akia asia"
    ),
    _rule(
        r"(?i)(?:aws_?secret_?(?:access_?)?key|secret_?access_?key)[\"']?[ \t]*(?:=>|[:=])[ \t]*[\"']?"
        r"(?P<v>[A-Za-z0-9/+=]{40})(?![A-Za-z0-9/+=])",
        _group("aws_secret_key"),
        "secret",
    ),
    # scheme://user:PASSWORD@host - matched from the "://", so the user and host stay.
    _rule(
        r"://[^\s:/?#@\[\]]{0,256}+:(?P<v>[^\s/?#@\[\]]{1,256}+)@(?=[\w\[])", _group("url_password"), "://"
    ),
    _rule(r"(?i)bearer(?<!\wbearer)[ \t]+(?P<v>[A-Za-z0-9._~+/-]{16,}+=*)", _bearer, "bearer"),
    _rule(
        r"(?i)authorization:[ \t]*basic[ \t]+(?P<v>[A-Za-z0-9+/]{8,}+={0,2})", _group("basic_auth"), "basic"
    ),
    _rule(
        rf"(?i)(?=[pasrc]){_ASSIGN_WORD}(?P<suffix>[_-][a-z0-9_-]{{0,30}}+)?(?P<q>[\"']?)"
        rf"[ \t]*(?P<sep>:=|=>|[:=])[ \t]*{_ASSIGN_VALUE}",
        _assignment,
        "pass secret key token",
    ),
    _rule(
        r"(?i)--(?<![\w-]--)(?:[a-z0-9]+-)*(?P<word>password|passwd|secret|api-key|token)(?P<suffix>)(?P<q>)(?P<sep>)"
        rf"[ \t]+{_ASSIGN_VALUE}",
        _assignment,
        "--",
    ),
)
_EMAIL_RULE = _rule(
    r"(?<![\w.%+-])[A-Za-z0-9._%+-]{1,64}@(?:[A-Za-z0-9-]{1,63}\.)+[A-Za-z]{2,24}(?![\w-])",
    _whole("email"),
    "@",
)
_CARD_RULE = _rule(
    r"(?P<v>[2-6](?<![\w.,/:-][2-6])(?:\d{12,18}|\d{3}(?P<s>[ -])\d{4,6}(?:(?P=s)\d{3,5}){1,3}))"
    r"(?![\w])(?!\.\d)",
    _card,
    "2 3 4 5 6",
)


class Redactor:
    """Replaces secrets with stable, numbered placeholders; one instance per transcript or summary job.

    Numbers follow first appearance across all calls on this instance. Secrets
    are remembered only as keyed digests (the key is random per instance), so
    nothing held here reveals them. Not thread-safe.
    """

    def __init__(self, policy: RedactionPolicy = RedactionPolicy()) -> None:
        rules = list(_CREDENTIAL_RULES)
        if policy.emails:
            rules.append(_EMAIL_RULE)
        if policy.card_numbers:
            rules.append(_CARD_RULE)
        self.policy = policy
        self._rules = tuple(rules)
        self._salt = secrets.token_bytes(32)
        self._placeholders: dict[bytes, str] = {}
        self._found: dict[str, int] = {}

    @property
    def found(self) -> dict[str, int]:
        """Kind -> number of distinct secrets redacted so far (counts only, for logging)."""
        return dict(self._found)

    def redact(self, text: str) -> str:
        """``text`` with every detected secret replaced by its placeholder; the rest is kept as-is."""
        if not text:
            return text
        hits = self._hits(text)
        if not hits:
            return text
        out: list[str] = []
        pos = 0
        for start, end, kind in hits:
            out.append(text[pos:start])
            out.append(self._placeholder(text[start:end], kind))
            pos = end
        out.append(text[pos:])
        return "".join(out)

    def _hits(self, text: str) -> list[_Hit]:
        """Non-overlapping secret spans, by start; existing placeholders are never redacted again."""
        lowered = text.lower()
        taken = [(m.start(), m.end()) for m in _PLACEHOLDER.finditer(text)]  # sorted and disjoint
        hits: list[_Hit] = []
        for rule in self._rules:
            if not any(t in lowered for t in rule.triggers):
                continue
            starts = [start for start, _ in taken]
            accepted: list[tuple[int, int]] = []
            for m in rule.pattern.finditer(text):  # one rule's hits are disjoint, so check only `taken`
                hit = rule.extract(m)
                if hit is None or hit[0] >= hit[1]:
                    continue
                start, end, _ = hit
                i = bisect.bisect_left(starts, start)
                if (i > 0 and taken[i - 1][1] > start) or (i < len(taken) and taken[i][0] < end):
                    continue  # overlaps a placeholder or a higher-priority secret
                accepted.append((start, end))
                hits.append(hit)
            taken = sorted(taken + accepted)  # two sorted runs: linear
        return sorted(hits)

    def _placeholder(self, secret: str, kind: str) -> str:
        digest = hmac.new(self._salt, secret.encode("utf-8", "surrogatepass"), hashlib.sha256).digest()
        placeholder = self._placeholders.get(digest)
        if placeholder is None:
            placeholder = f"[REDACTED:{kind}:{len(self._placeholders) + 1}]"
            self._placeholders[digest] = placeholder
            self._found[kind] = self._found.get(kind, 0) + 1
        return placeholder
