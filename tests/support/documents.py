"""The stored shapes of inline files, as the content-block tests expect them."""

from __future__ import annotations

import base64
from typing import Any


def b64(data: bytes) -> str:
    """``data`` as standard base64 text."""
    return base64.b64encode(data).decode("ascii")


def pdf_document(payload: str) -> dict[str, Any]:
    """An inline PDF as an Anthropic base64 document block."""
    return {
        "type": "document",
        "source": {"type": "base64", "media_type": "application/pdf", "data": payload},
    }


def text_document(text: str) -> dict[str, Any]:
    """Inline text as an Anthropic text document block."""
    return {"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": text}}
