"""Provenance: where a journal entry's text came from, and how far that source may be trusted.

Every journal entry records its provenance beside its source type:

- ``user``: what the user said in a user message;
- ``assistant``: what the assistant said in its own text (or the arguments of its tool calls);
- ``tool``: a tool's result, including tool output an agent framework hands back as a user turn, and
  an assistant sentence that quotes such output;
- ``fetched``: content fetched from outside: server tool results (web fetch, web search, MCP) and
  search-result blocks inside a message, and assistant sentences quoting them;
- ``environment``: anything else the environment put in front of the model: ``context`` rows, system
  rows, summaries;
- ``agent``: written through ``journal.add`` by the application, which declares the source type.

A provenance caps the source type (``CEILING``): tool, fetched and environment text is
``environmental`` whatever the extractor or the caller thinks of it, the assistant's own words are at
most ``inference``; only the user and the application may state ``direct``. Text an attacker can plant
(a web page, a tool's output) therefore never starts above the recall floor.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping, Sequence
from typing import Any

from sleepcompact.domain.attachments import is_attachment

PROVENANCES = ("user", "assistant", "tool", "fetched", "environment", "agent")
ENVIRONMENTAL = frozenset({"tool", "fetched", "environment"})
"""Provenances whose text anyone outside the conversation may have written."""

SOURCE_ORDER = ("environmental", "inference", "observation", "direct")
"""Source types, least trusted first."""

CEILING: dict[str, str] = {
    "user": "direct",
    "assistant": "inference",
    "tool": "environmental",
    "fetched": "environmental",
    "environment": "environmental",
    "agent": "direct",
}
"""The most trusted source type each provenance may carry."""

_OWN_BLOCKS = frozenset({"text", "thinking"})
_NOT_TEXT = frozenset({"tool_use", "server_tool_use", "mcp_tool_use", "redacted_thinking", "tool_result"})
_OPAQUE_KEYS = ("type", "id", "tool_use_id", "signature", "encrypted_content", "cache_control", "citations")


def capped_source_type(provenance: str, declared: str) -> str:
    """The source type an entry is stored with: the declared one, lowered to its provenance's ceiling.

    An unknown provenance is treated as environmental (the safe side); an unknown source type is
    returned as it is, for the caller's own validation to refuse.
    """
    if declared not in SOURCE_ORDER:
        return declared
    ceiling = CEILING.get(provenance, "environmental")
    return min(declared, ceiling, key=SOURCE_ORDER.index)


def split_content(content: str | Sequence[Mapping[str, Any]]) -> tuple[str, str]:
    """A message's own text and the fetched text it carries, apart.

    Own text: plain text and thinking blocks. Fetched text: every other block a model reads (server
    tool results, MCP results, search results...), as the string values inside it. Tool calls, tool
    results (their own rows) and attachments are neither.
    """
    if isinstance(content, str):
        return content, ""
    own: list[str] = []
    fetched: list[str] = []
    for block in content:
        btype = block.get("type")
        if btype in _OWN_BLOCKS:
            own.append(str(block.get("text" if btype == "text" else "thinking", "")))
        elif btype not in _NOT_TEXT and not is_attachment(block):
            fetched.extend(_strings({k: v for k, v in block.items() if k not in _OPAQUE_KEYS}, 0))
    return "\n".join(own), "\n".join(s for s in fetched if s.strip())


def _strings(value: Any, depth: int) -> list[str]:
    """The string values inside a JSON value (keys and opaque fields left out), depth-bounded."""
    if depth > 32:
        return []
    if isinstance(value, str):
        return [value]
    if isinstance(value, Mapping):
        return [s for k, v in value.items() if k not in _OPAQUE_KEYS for s in _strings(v, depth + 1)]
    if isinstance(value, list | tuple):
        return [s for v in value for s in _strings(v, depth + 1)]
    return []


SHINGLE = 5
"""Consecutive words an assistant sentence must share with environmental text to quote it."""

QUOTED_SHARE = 0.5
"""Share of a sentence's words inside shared shingles that makes it a quote rather than the assistant's
own analysis citing a few words (an error message it explains)."""

MAX_SHINGLES = 500_000
"""Bound on the shingles one extraction remembers (a few MB of tool output); later text is not indexed."""

MAX_HOSTS = 10_000
"""Bound on the web hosts one extraction remembers."""

_WORDS = re.compile(r"[^\W_]+")
_URL_HOST = re.compile(r"\bhttps?://(?:[^\s/@]*@)?([^\s/?#:'\"<>()\[\]]+)", re.I)
_MAIL_HOST = re.compile(r"[\w.+-]@([\w-]+(?:\.[\w-]+)+)")
_BARE_HOST = re.compile(r"\b((?:[\w-]+\.)+[a-z]{2,24})\b", re.I)


def _hosts(text: str, *, bare: bool = False) -> set[str]:
    """Web hosts a text names in URLs and e-mail addresses (and as bare names, with ``bare``)."""
    found = [*_URL_HOST.findall(text), *_MAIL_HOST.findall(text)]
    if bare:
        found += _BARE_HOST.findall(text)
    return {h.casefold().rstrip(".").removeprefix("www.") for h in found}


def _words(text: str) -> list[str]:
    return _WORDS.findall(unicodedata.normalize("NFKC", text).casefold())


class QuoteIndex:
    """Environmental text seen so far, as hashed word shingles, to tell when the assistant relays it.

    An assistant that repeats a web page's sentence says what the page said: the sentence keeps the
    page's provenance (and trust), not the assistant's. So does a sentence that names a web host only
    environmental text brought up (the address a planted "download and run" or "send it to" needs),
    however it is paraphrased; hosts the user or the assistant named first are vouched for.
    """

    def __init__(self) -> None:
        self._seen: dict[int, str] = {}
        self._hosts: dict[str, str] = {}
        self._vouched: set[str] = set()

    def vouch(self, text: str) -> None:
        """Hosts the user or the assistant named themselves: environmental text naming them later does
        not make them environmental."""
        self._vouched.update(_hosts(text))

    def add(self, text: str, provenance: str) -> None:
        """Index environmental text (the first provenance to say a shingle or a host keeps it)."""
        for host in _hosts(text) - self._vouched:
            if len(self._hosts) < MAX_HOSTS:
                self._hosts.setdefault(host, provenance)
        words = _words(text)
        for i in range(len(words) - SHINGLE + 1):
            if len(self._seen) >= MAX_SHINGLES:
                return
            self._seen.setdefault(hash(" ".join(words[i : i + SHINGLE])), provenance)

    def source_of(self, sentence: str) -> str | None:
        """The provenance of the environmental text a sentence relays: it names a host only that text
        brought up, or at least ``QUOTED_SHARE`` of its words lie in runs of ``SHINGLE`` or more words
        that text holds too. None when it relays none."""
        for host in sorted(_hosts(sentence, bare=True)):
            for known, provenance in self._hosts.items():
                if known == host or known.endswith("." + host):
                    return provenance
        if not self._seen:
            return None
        words = _words(sentence)
        covered = [False] * len(words)
        source = None
        for i in range(len(words) - SHINGLE + 1):
            found = self._seen.get(hash(" ".join(words[i : i + SHINGLE])))
            if found is not None:
                source = source or found
                covered[i : i + SHINGLE] = [True] * SHINGLE
        return source if words and sum(covered) >= QUOTED_SHARE * len(words) else None
