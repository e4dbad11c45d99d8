"""Secret redaction for everything that leaves the process or becomes memory (DESIGN section 7).

Summary, rescoring and batch requests, journal entries, memories, log lines and shareable exports pass
through a :class:`Redactor` first. It replaces provider tokens, private keys, auth headers, passwords
in URLs and labelled secrets (``secret_rules``, ``secret_labels``) by placeholders such as
``[REDACTED:password:482913]``, in prose and inside JSON at any depth: string values of a structure
(``redact_value``, which also reads each key as the value's label) and JSON escaped inside text, one
level or several (``escape_views``). Emails and card numbers are opt-in.

The number in a placeholder is a keyed HMAC of (scope, secret): the same secret gets the same
placeholder in every job of one scope (a conversation), and a different one in another scope, so
nothing links conversations. Without the key the number says nothing about the secret; no part of a
secret, nor an unkeyed hash of it, ever appears.

Every pattern is anchored on a literal or a bounded run, and the long runs are possessive, so
redacting megabytes of tool output takes linear time.
"""

from __future__ import annotations

import bisect
import functools
import hashlib
import hmac
import re
import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sleepcompact.adapters.escape_views import escape_views
from sleepcompact.adapters.secret_labels import LABEL_RULES, labelled_kind
from sleepcompact.adapters.secret_rules import CARD_RULE, CREDENTIAL_RULES, EMAIL_RULE, Hit, Rule, luhn_valid

PLACEHOLDER = re.compile(r"\[REDACTED:[a-z_]+:\d+\]")
"""What every placeholder looks like (a kind and a number, nothing else)."""

_NUMBERS = 900_000  # six digits: two secrets of one kind in one conversation rarely share a number
# Keys of content blocks whose values are opaque by contract (signatures, encrypted payloads).
_OPAQUE_KEYS = frozenset({"type", "signature", "encrypted_content", "media_type"})
_NAME_KEYS = ("name", "Name", "key", "Key")
_VALUE_KEYS = frozenset({"value", "Value"})
_Span = tuple[int, int, str, str]  # start, end, kind, the secret as detected (decoded when escaped)


@dataclass(frozen=True)
class RedactionPolicy:
    """What to redact beyond credentials, which are always redacted."""

    emails: bool = False  # names and emails are often the point of a conversation
    card_numbers: bool = False  # when on, only Luhn-valid 13-19 digit numbers (optional spaces or dashes)


class _Triggers:
    """The rules, and which of them a text may match: those whose triggers occur in it (the others cannot
    match anywhere in it). Rules share triggers, so each distinct trigger is looked for once; a generator
    per rule over its own triggers cost a sleep tick more than the rules' own matching."""

    def __init__(self, rules: Sequence[Rule]) -> None:
        self.rules = tuple(rules)
        self._by_trigger: dict[str, list[int]] = {}
        for i, rule in enumerate(self.rules):
            for trigger in rule.triggers:
                self._by_trigger.setdefault(trigger, []).append(i)

    def active(self, text: str) -> list[Rule]:
        """The rules whose triggers occur in ``text``, in priority order."""
        lowered = text.lower()
        hit: set[int] = set()
        for trigger, rules in self._by_trigger.items():
            if trigger in lowered:
                hit.update(rules)
        return [self.rules[i] for i in sorted(hit)]


@functools.cache
def _triggers(policy: RedactionPolicy) -> _Triggers:
    """The rules a policy redacts with, credentials first (they win an overlap), indexed once."""
    rules = [*CREDENTIAL_RULES, *LABEL_RULES]
    if policy.emails:
        rules.append(EMAIL_RULE)
    if policy.card_numbers:
        rules.append(CARD_RULE)
    return _Triggers(rules)


def _find(rules: Sequence[Rule], text: str) -> list[Hit]:
    """Non-overlapping secret spans of ``text``, by start; existing placeholders are never redacted again."""
    taken = [(m.start(), m.end()) for m in PLACEHOLDER.finditer(text)]  # sorted and disjoint
    hits: list[Hit] = []
    for rule in rules:
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
        if accepted:
            taken = sorted(taken + accepted)  # two sorted runs: linear
    return sorted(hits)


def _merged(spans: list[_Span], text: str) -> list[_Span]:
    """Overlapping spans (the same secret seen in the text and in a decoded view) become their union.

    The union keeps the kind and decoded secret of a span that covers it whole, else the raw text."""
    out: list[_Span] = []
    for start, end, kind, secret in sorted(spans, key=lambda s: (s[0], -s[1])):
        if out and start < out[-1][1]:
            s0, e0, k0, _ = out[-1]
            if end > e0:
                out[-1] = (s0, end, k0, text[s0:end]) if s0 < start else (s0, end, kind, secret)
            continue
        out.append((start, end, kind, secret))
    return out


class Redactor:
    """Replaces secrets with stable placeholders, in text and in JSON-like values.

    ``key`` keys the placeholder numbers (the deployment's key, so placeholders are stable across jobs
    and processes; without one, a random key makes them stable within this instance only) and
    ``scope`` separates them (a conversation id). Secrets are remembered only as keyed digests, for
    ``found``; nothing held here reveals them. Not thread-safe.
    """

    def __init__(
        self, policy: RedactionPolicy = RedactionPolicy(), *, key: bytes | None = None, scope: str = ""
    ) -> None:
        self.policy = policy
        self.scope = scope
        self._triggers = _triggers(policy)
        self._key = key if key else secrets.token_bytes(32)
        self._seen: set[bytes] = set()
        self._found: dict[str, int] = {}

    @property
    def found(self) -> dict[str, int]:
        """Kind -> number of distinct secrets redacted so far (counts only, for logging)."""
        return dict(self._found)

    def redact(self, text: str) -> str:
        """``text`` with every detected secret replaced by its placeholder; the rest is kept as-is."""
        if not text:
            return text
        spans = self._spans(text)
        if not spans:
            return text
        out: list[str] = []
        pos = 0
        for start, end, kind, secret in spans:
            out.append(text[pos:start])
            out.append(self._placeholder(secret, kind))
            pos = end
        out.append(text[pos:])
        return "".join(out)

    def redact_value(self, value: Any, label: str | None = None) -> Any:
        """A JSON-like value (dicts, lists, strings, scalars) with every string redacted, at any depth.

        A string under a key that names a secret (``{"password": "hunter2"}``) is replaced whole when
        it is a plausible secret for that label; keys are redacted like any text. A new value is
        returned; the argument is never changed."""
        if isinstance(value, str):
            if label is not None and not PLACEHOLDER.fullmatch(value):
                kind = labelled_kind(label, value)
                if kind is not None:
                    return self._placeholder(value, kind)
            return self.redact(value)
        if isinstance(value, Mapping):
            return self._redact_mapping(value)
        if isinstance(value, list | tuple):
            # An argument list labels a value by the flag before it: ["--password", "hunter2"].
            flags = [v if isinstance(v, str) and v.startswith("-") else None for v in value]
            return [self.redact_value(v, flags[i - 1] if i else None) for i, v in enumerate(value)]
        return value

    def _redact_mapping(self, value: Mapping[Any, Any]) -> dict[Any, Any]:
        """Each item labelled by its key; a ``{"name": "DB_PASSWORD", "value": ...}`` pair (environment
        lists) by its name. Keys are redacted like any text; opaque block fields are kept as they are."""
        named = next((value[k] for k in _NAME_KEYS if isinstance(value.get(k), str)), None)
        out: dict[Any, Any] = {}
        for k, v in value.items():
            label = named if named is not None and k in _VALUE_KEYS else k if isinstance(k, str) else None
            new_key = self.redact(k) if isinstance(k, str) else k
            out[new_key] = v if k in _OPAQUE_KEYS else self.redact_value(v, label)
        return out

    def _spans(self, text: str) -> list[_Span]:
        """Secret spans of the text and of each decoded view of the JSON escaped in it."""
        found = _find(self._triggers.active(text), text)
        spans: list[_Span] = [(s, e, kind, text[s:e]) for s, e, kind in found]
        for view in escape_views(text):
            rules = self._triggers.active(view.text)
            for ws, we in view.windows():
                window = view.text[ws:we]
                for s, e, kind in _find(rules, window):
                    start, end = view.to_original(ws + s, ws + e)
                    spans.append((start, end, kind, window[s:e]))
        return _merged(spans, text) if len(spans) > 1 else spans

    def _placeholder(self, secret: str, kind: str) -> str:
        message = (
            self.scope.encode("utf-8", "surrogatepass") + b"\0" + secret.encode("utf-8", "surrogatepass")
        )
        digest = hmac.new(self._key, message, hashlib.sha256).digest()
        if digest not in self._seen:
            self._seen.add(digest)
            self._found[kind] = self._found.get(kind, 0) + 1
        number = int.from_bytes(digest[:8], "big") % _NUMBERS + 100_000
        return f"[REDACTED:{kind}:{number}]"


_LOG_KEY = secrets.token_bytes(32)
_LOG_CACHE: dict[bytes, str] = {}
_LOG_CACHE_SIZE = 4096
_LOG_CACHED_CHARS = 512


def redact_for_log(value: Any) -> Any:
    """A logged value with its secrets replaced; placeholders keyed per process (they correlate the
    lines of one process and nothing else).

    Short strings repeat from line to line (ids, models, outcomes): their redacted form is cached by a
    keyed digest (never by the text itself, which may be a secret), so a line costs microseconds."""
    if not isinstance(value, str):
        return Redactor(key=_LOG_KEY, scope="logs").redact_value(value)
    if len(value) > _LOG_CACHED_CHARS:
        return Redactor(key=_LOG_KEY, scope="logs").redact(value)
    digest = hmac.new(_LOG_KEY, value.encode("utf-8", "surrogatepass"), hashlib.blake2b).digest()
    cached = _LOG_CACHE.get(digest)
    if cached is None:
        if len(_LOG_CACHE) >= _LOG_CACHE_SIZE:
            _LOG_CACHE.clear()
        cached = _LOG_CACHE[digest] = Redactor(key=_LOG_KEY, scope="logs").redact(value)
    return cached


__all__ = ["PLACEHOLDER", "RedactionPolicy", "Redactor", "luhn_valid", "redact_for_log"]
