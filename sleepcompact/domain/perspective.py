"""Perspective: a sentence one speaker said, rewritten as a third-person statement about the speakers.

A memory outlives the conversation it came from, so "I started a pottery class" must become "Emily
started a pottery class" and the assistant's "I recommend Monet" must become "The assistant recommended
Monet to Emily". The rewrite is small and deterministic: the speaker's first-person pronouns (I, me, my,
mine, myself, and the contractions I'm, I've, I'd, I'll; we, us, our) become the speaker's name, the
second-person pronouns (you, your, yours, yourself) the other speaker's, and the verb that follows a
subject pronoun agrees with its new third-person subject ("I am" -> "Emily is", "you have" -> "the
assistant has", "I enjoy" -> "Emily enjoys"). Quoted titles, backticked code and identifier-like tokens
(paths, URLs, snake_case, dotted names) are kept verbatim. Standard library only.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from sleepcompact.domain.sentences import is_past_ed

_PROTECTED = re.compile(r"\"[^\"]*\"|“[^”]*”|`[^`]*`|\S*[/\\_=@#<>{}\[\]|]\S*|\S+\.[A-Za-z0-9]\S*")
_WORD = re.compile(r"([A-Za-z]+(?:['’][A-Za-z]+)*)")
# Text between two words that ends a sentence: its terminator, closing quotes or brackets, a space.
_SENTENCE_END = re.compile(r"[.!?][\"'”’)\]]*\s+$")


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


_ADVERBS = _words(
    "also just really still always usually often sometimes never ever already even only first then now "
    "recently currently actually finally totally absolutely definitely basically particularly truly "
    "personally generally mostly rarely seldom occasionally normally especially simply certainly "
    "gradually frequently once not all both each too soon later again hardly nearly almost"
)
_NOT_ADVERBS = _words("apply reply supply fly rely ally bully rally")
_KEEP = _words(
    "can could will would shall should may might must cannot can't won't wouldn't couldn't shouldn't "
    "mustn't didn't did had hadn't was wasn't ought"
)
_IRREGULAR_PAST = _words(
    "went saw took made got had did was were said came gave found thought told became left felt brought "
    "began kept held wrote stood heard meant met ran paid sat spoke lay led grew lost fell sent built "
    "understood drew broke spent rose drove bought wore chose sought threw caught dealt won forgot ate "
    "drank sang swam flew hid rode shook slept taught fought fed hung knew lent sold shot shone sank slid "
    "spun stole stuck stung tore wept wound bit blew dug froze overcame forgave woke swung struck swept "
    "read put cut set let hit hurt quit shut spread cost burst cast"
)
_THIRD = {"am": "is", "are": "is", "were": "was", "have": "has", "do": "does", "go": "goes", "be": "is"}
_THIRD_NEG = {
    "don't": "doesn't",
    "haven't": "hasn't",
    "aren't": "isn't",
    "weren't": "wasn't",
    "ain't": "isn't",
}
_INVERTED = {
    "am": "is",
    "are": "is",
    "were": "was",
    "have": "has",
    "do": "does",
    "don't": "doesn't",
    "aren't": "isn't",
    "haven't": "hasn't",
    "weren't": "wasn't",
    **{m: m for m in _words("can could will would shall should may might must did didn't can't won't")},
    **{m: m for m in _words("wouldn't couldn't shouldn't was wasn't")},
}
_PERFORMATIVE = {
    "recommend": "recommended",
    "suggest": "suggested",
    "advise": "advised",
    "propose": "proposed",
}
# After these (or at a clause start) "you" is a subject; anywhere else it is an object ("remind you").
_SUBJECT_BEFORE = _words(
    "and but or so that if when whenever because as since while unless though although whether where "
    "then hope think know guess bet believe recommend suggest expect trust feel"
)
_PLURAL_SUFFIXES = ("s", "sh", "ch", "x", "z", "o")


@dataclass(frozen=True)
class Speakers:
    """Who says the sentence and to whom, as third-person noun phrases ("Emily", "the assistant")."""

    speaker: str
    addressee: str
    speaker_is_user: bool = True


def _conjugate(verb: str) -> str:
    """The third-person singular present of a verb that follows a subject pronoun (past forms kept)."""
    low = verb.casefold().replace("’", "'")
    if low in _THIRD:
        return _match_case(verb, _THIRD[low])
    if low in _THIRD_NEG:
        return _match_case(verb, _THIRD_NEG[low])
    if low in _KEEP or low in _IRREGULAR_PAST or is_past_ed(low) or "'" in low:
        return verb
    if low.endswith("y") and len(low) > 2 and low[-2] not in "aeiou":
        return verb[:-1] + "ies"
    if low.endswith(_PLURAL_SUFFIXES):
        return verb + "es"
    return verb + "s"


def _match_case(original: str, replacement: str) -> str:
    return replacement[:1].upper() + replacement[1:] if original[:1].isupper() else replacement


def _possessive(name: str) -> str:
    # A name given already ending in an apostrophe ("the Harris'") is read as a possessive form: it
    # took a second one before ("the Harris''").
    return name if name.endswith("'") else f"{name}'s"


def _is_adverb(word: str) -> bool:
    low = word.casefold()
    # Four letters is the shortest -ly adverb ("idly"); the -ly verbs that short are listed ("rely").
    return low in _ADVERBS or (low.endswith("ly") and len(low) >= 4 and low not in _NOT_ADVERBS)


class _Rewriter:
    """One pass over the words of a sentence, left to right, outside its protected spans."""

    def __init__(self, who: Speakers, invert: Callable[[str], None]) -> None:
        self.who = who
        self.invert = invert  # rewrites the auxiliary just written ("Do" -> "Does")
        group = f"{who.speaker} and others" if who.speaker_is_user else f"{who.speaker} and {who.addressee}"
        mine, yours = _possessive(who.speaker), _possessive(who.addressee)
        # The assistant's "we" is the assistant and the user: "our" is "their", "ours" is "theirs".
        our, ours = (mine, mine) if who.speaker_is_user else ("their", "theirs")
        self.table: dict[str, str] = {
            "i'm": f"{who.speaker} is",
            "i've": f"{who.speaker} has",
            "i'll": f"{who.speaker} will",
            "i'd": f"{who.speaker} {{would}}",  # resolved once the next word is known (had been / would love)
            "me": who.speaker,
            "my": mine,
            "mine": mine,
            "myself": "themself",
            "we": group,
            "we're": f"{group} are",
            "we've": f"{group} have",
            "we'll": f"{group} will",
            "we'd": f"{group} {{would}}",
            "us": group,
            "our": our,
            "ours": ours,
            "ourselves": "themselves",
            "you're": f"{who.addressee} is",
            "you've": f"{who.addressee} has",
            "you'll": f"{who.addressee} will",
            "you'd": f"{who.addressee} {{would}}",
            "your": yours,
            "yours": yours,
            "yourself": "themself",
            "yourselves": "themselves",
        }
        self.words: list[str] = []  # words written so far (lower case), "" after a clause boundary
        self.agree = False  # the next verb agrees with a replaced subject
        self.object_you = False  # "you" looked like an object; a following "are" / "have" says otherwise
        self.performed = False  # a performative verb was put in the past ("recommended")
        self.opens_sentence = True  # the next word is the first of a sentence

    def boundary(self, separator: str) -> None:
        """Text between two words: punctuation ends a clause (and any pending agreement)."""
        if separator.strip(" "):
            self.words.append("")
            self.agree = self.object_you = False
        self.opens_sentence = bool(_SENTENCE_END.search(separator))

    def _previous(self) -> str | None:
        return self.words[-1] or None if self.words else None

    def word(self, word: str) -> str:
        """The replacement of one word (itself when it is no pronoun and needs no agreement)."""
        low = word.casefold().replace("’", "'")
        new = self._replace(word, low)
        self.words.append(low)
        if self.opens_sentence and new != word:
            # "Fine. I recommend it" -> "Fine. The assistant recommended it": a name phrase that stands
            # for a pronoun opening a sentence opens it too. A word written as it was keeps its case.
            new = new[:1].upper() + new[1:]
        self.opens_sentence = False
        return new

    def _replace(self, word: str, low: str) -> str:
        if self.object_you:  # "seems like you are": an object position, but a finite verb follows
            self.object_you = False
            if low in _THIRD or low in _THIRD_NEG:
                return _conjugate(word)
        if self.agree:
            if _is_adverb(word):
                return word
            self.agree = False
            if low in _PERFORMATIVE:
                self.performed = True
                return _match_case(word, _PERFORMATIVE[low])
            return _conjugate(word)
        if low == "i":
            return self._subject(self.who.speaker)
        if low == "you":
            prev = self._previous()
            if prev is None or prev in _SUBJECT_BEFORE or prev in _INVERTED:
                return self._subject(self.who.addressee)
            self.object_you = True
            return self.who.addressee
        return self.table.get(low, word)

    def _subject(self, name: str) -> str:
        """A subject pronoun: the next verb agrees, unless an auxiliary came first ("Do you" -> "Does
        Emily"), which then agrees instead."""
        prev = self._previous()
        if prev in _INVERTED:
            self.invert(_INVERTED[prev])
        else:
            self.agree = True
        return name


def _resolve_would(text: str) -> str:
    """``{would}`` before a past participle is ``had`` ("I'd been" -> "had been"), else ``would``."""

    def pick(m: re.Match[str]) -> str:
        nxt = m.group(1).casefold()
        had = nxt in ("been", "gone", "done", "seen", "had", "never", "already", "just") or is_past_ed(nxt)
        return ("had " if had else "would ") + m.group(1)

    return re.sub(r"\{would\} (\w+)", pick, text).replace("{would}", "would")


def third_person(sentence: str, who: Speakers) -> str:
    """The sentence as a third-person statement about ``who.speaker`` and ``who.addressee``.

    Protected spans (quotes, backticks, identifier-like tokens) are copied verbatim; the first letter
    is capitalized. When a performative verb ("I recommend X") is put in the past and the addressee is
    not named in the sentence, " to <addressee>" is added before the final punctuation.
    """
    out: list[str] = []

    def invert(aux: str) -> None:
        # The auxiliary is the last word written: out[-2] (out[-1] is the space before the pronoun).
        out[-2] = _match_case(out[-2], aux)

    rewriter = _Rewriter(who, invert)
    last = 0
    for m in _PROTECTED.finditer(sentence):
        _rewrite_free(sentence[last : m.start()], rewriter, out)
        out.append(m.group())
        rewriter.words.append(m.group().casefold())
        rewriter.agree = rewriter.opens_sentence = False
        last = m.end()
    _rewrite_free(sentence[last:], rewriter, out)
    text = _resolve_would("".join(out)).strip()
    if rewriter.performed and who.addressee.casefold() not in text.casefold():
        body, end = (text[:-1], text[-1]) if text[-1:] in ".!?" else (text, "")
        text = f"{body} to {who.addressee}{end}"
    return text[:1].upper() + text[1:]


def _rewrite_free(segment: str, rewriter: _Rewriter, out: list[str]) -> None:
    for i, part in enumerate(_WORD.split(segment)):
        if i % 2 == 0:
            if part:
                rewriter.boundary(part)
                out.append(part)
        else:
            out.append(rewriter.word(part))
