"""Sentences of prose and what they state: preferences, deadlines, facts, decisions.

Shared by the offline summary and the journal drafts. Everything is regex and
rule based, hence deterministic.
"""

from __future__ import annotations

import re

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(\[`])")
# Present-tense verbs that end in -ed as a past form does ("I need", not "I needed").
_PRESENT_ED = frozenset(
    {
        "need",
        "feed",
        "bleed",
        "breed",
        "speed",
        "succeed",
        "proceed",
        "exceed",
        "heed",
        "weed",
        "seed",
        "shred",
        "embed",
    }
)


def is_past_ed(word: str) -> bool:
    """Whether a lower-case word ending in -ed reads as a past form ("finished", but not "need")."""
    return word.endswith("ed") and word not in _PRESENT_ED


def split_sentences(text: str) -> list[str]:
    """Sentences of prose: split at line breaks and at ``. `` / ``! `` / ``? `` before a capital."""
    out: list[str] = []
    for line in text.splitlines():
        line = re.sub(r"^\s*(?:[-*•]|\d+[.)])\s+", "", line).strip()
        out.extend(s.strip() for s in _SENTENCE_END.split(line) if s.strip())
    return out


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
