"""The redaction tuning corpus (``tests/redteam/tune``): secrets to plant and identifiers to keep.

Each secret is stored in pieces, joined here, so the corpus files do not look like leaked credentials
to secret scanners. ``placements`` plants one secret the three ways an agent's conversation carries it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

TUNE = Path(__file__).resolve().parents[1] / "redteam" / "tune"


@dataclass(frozen=True)
class Planted:
    """One secret of the corpus and the line (or lines) it appears in."""

    kind: str
    context: str
    secret: str

    @property
    def text(self) -> str:
        """The context with the secret in place."""
        return self.context.replace("{s}", self.secret).replace("{{", "{").replace("}}", "}")


@dataclass(frozen=True)
class Kept:
    """A text whose identifiers a task needs verbatim."""

    kind: str
    text: str
    keep: tuple[str, ...]


def load_secrets(path: Path = TUNE / "secrets.jsonl") -> list[Planted]:
    """Every secret of the corpus, in file order."""
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [Planted(r["kind"], r["context"], "".join(r["secret"])) for r in rows]


def load_keep(path: Path = TUNE / "keep.jsonl") -> list[Kept]:
    """Every identifier text of the corpus, in file order."""
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [Kept(r["kind"], r["text"], tuple(r.get("keep", ()))) for r in rows]


def tool_arguments(p: Planted) -> dict[str, Any]:
    """The tool-call arguments an agent would send with the secret's line in them."""
    return {"command": p.text, "timeout": 30}


def placements(p: Planted) -> dict[str, Any]:
    """The three ways a secret is planted: a user message, a tool result, tool-call arguments."""
    return {
        "user message": f"Here is what I have:\n{p.text}\nCan you check it?",
        "tool result": f"$ cat config.txt\n{p.text}\n[exit 0]",
        "tool-call arguments": tool_arguments(p),
    }
