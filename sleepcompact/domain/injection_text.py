"""What the injection detector reads: the text as a model would read it, and what it hides.

A model reads through disguises a keyword filter does not: fullwidth letters, Cyrillic and Greek
look-alikes, invisible characters between letters, HTML entities, JSON escapes, spaced-out or
leetspeak words, and payloads encoded in base64, hex, Unicode tag characters or ROT13. ``views``
gives the normalized readings of a text, line for line (a finding's line index is the original's);
``payloads`` gives what its encoded runs decode to. Everything here is linear in the input: each
regex is bounded and at most ``MAX_PAYLOADS`` runs of at most ``MAX_ENCODED`` characters are decoded.
"""

from __future__ import annotations

import base64
import binascii
import codecs
import html
import re
import unicodedata
from dataclasses import dataclass
from urllib.parse import unquote

MAX_ENCODED = 8192
"""Longest encoded run decoded (longer runs are certificates, images or archives, not prose)."""
MAX_PAYLOADS = 16
"""Most encoded runs decoded per text."""

# Zero-width, joiners, bidirectional controls, soft hyphen, word joiners, variation selectors, BOM and
# tag characters: none is visible, and each can split a keyword so a filter misses it.
_INVISIBLE = re.compile(
    "[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e"
    "\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\U000e0000-\U000e007f]"
)
_TAGS = re.compile("[\U000e0020-\U000e007e]+")

# Cyrillic and Greek letters that look Latin; NFKC leaves them alone, so "іgnore" would slip through.
_HOMOGLYPHS = str.maketrans(
    "аеорсухіјѕԁɡνοκτɑɩɪʏᴀАВЕНІЈКМОРСТХΑΒΕΗΙΚΜΝΟΡΤΧΥΖЅԌԛԝѡаӏ",
    "aeopcyxijsdgvoktaiiyaABEHIJKMOPCTXABEHIKMNOPTXYZSGqwwal",
)
_EMPHASIS = re.compile(r"\*+|~~")  # bold, italics, strikethrough (a single ~ is a home directory)
_JSON_ESCAPE = re.compile(r"\\u([0-9a-fA-F]{4})|\\x([0-9a-fA-F]{2})|\\([nrt])")
_PERCENT = re.compile(r"%[0-9a-fA-F]{2}")
_ENTITY = re.compile(r"&(?:#\d{1,7}|#x[0-9a-fA-F]{1,6}|[a-zA-Z]{2,8});")
# Letters spaced out ("i g n o r e", "I.G.N.O.R.E"): three or more single letters with one separator.
_SPACED = re.compile(r"(?<![^\W\d_])(?:[^\W\d_][ .\-_]){2,}[^\W\d_](?![^\W\d_])")
# Letters joined by hyphens or dots, words apart by spaces ("A-I a-s-s-i-s-t-a-n-t: d-o n-o-t"): read
# first, so the spaces between such words stay spaces.
_HYPHENED = re.compile(r"(?<![^\W\d_])(?:[^\W\d_][.\-]){1,60}[^\W\d_](?![^\W\d_])")
# A word that mixes letters and leetspeak digits ("1gn0r3", "pr3v10us"; not "utf8" or "v2").
_LEET_WORD = re.compile(r"\b(?=[a-z0-9]*[a-z])(?=[a-z0-9]*[013457])[a-z0-9]{3,40}\b", re.I)
_LEET = str.maketrans("013457", "oieast")
_LEET_L = str.maketrans("013457", "oleast")
_GAP = re.compile(r" {2,}")
_BASE64 = re.compile(r"[A-Za-z0-9+/_-]{20,}={0,2}")
_HEX = re.compile(r"\b(?:[0-9a-fA-F]{2}){12,}\b")
_ROT13_HINT = re.compile(r"\brot[\s-]?13\b|\bcaesar\b", re.I)


def strip_invisible(text: str) -> str:
    """Text without zero-width and other invisible characters, a common disguise."""
    return _INVISIBLE.sub("", text)


@dataclass(frozen=True)
class View:
    """One reading of a text: ``text`` has the original's lines, one for one (``how`` names the reading)."""

    how: str
    text: str


@dataclass(frozen=True)
class Payload:
    """What an encoded run decodes to, and the original line it sits on."""

    how: str
    line: int
    text: str


def _escaped(match: re.Match[str]) -> str:
    # An escaped line break inside a JSON string ends a sentence for whoever reads it.
    return "; " if match.group(3) else chr(int(match.group(1) or match.group(2), 16))


def _unescape(line: str) -> str:
    """HTML entities, JSON escapes and percent-encoding decoded, as a model reads them."""
    if "&" in line:
        line = _ENTITY.sub(lambda m: html.unescape(m.group()), line)
    if "\\" in line:
        line = _JSON_ESCAPE.sub(_escaped, line)
    if "%" in line and len(_PERCENT.findall(line)) >= 3:
        line = unquote(line)
    return line


def _plain(text: str) -> str:
    """Every line of ``text`` read plain, line for line. Escapes are decoded line by line (a line break
    they make stays inside its line, so findings keep their index); the rest runs over the whole text at
    once, since none of it reaches across a line break: a regex substitution per line cost a third of
    the detector's time on code and logs, which are many short lines."""
    lines = text.split("\n")
    for i, line in enumerate(lines):
        if "&" in line or "\\" in line or "%" in line:
            lines[i] = _unescape(line).replace("\n", " ")
    plain = unicodedata.normalize("NFKC", strip_invisible("\n".join(lines)))
    return _EMPHASIS.sub("", plain.replace("\r", " "))


def _joined(match: re.Match[str]) -> str:
    return re.sub(r"[ .\-_]", "", match.group())


def _unspaced(line: str) -> str:
    """A line written a letter at a time, words set apart by wider gaps ("A I   a s s i s t a n t :"),
    read as words; other lines unchanged."""
    if "  " not in line:
        return line
    tokens = line.split()
    if len(tokens) < 8 or sum(len(t) == 1 for t in tokens) < 0.8 * len(tokens):
        return line
    return " ".join(word.replace(" ", "") for word in _GAP.split(line.strip()))


def _letters_joined(text: str) -> str:
    """Hyphenated, dotted and spaced-out letters joined into words, line for line (the patterns' gaps
    are spaces, dots, hyphens and underscores, never a line break)."""
    text = "\n".join(_unspaced(line) for line in text.split("\n")) if "  " in text else text
    return _SPACED.sub(_joined, _HYPHENED.sub(_joined, text))


def views(text: str) -> list[View]:
    """The readings of ``text`` worth matching, each line for line with the original.

    ``plain``: invisibles stripped, entities and escapes decoded, NFKC (fullwidth letters become ASCII).
    ``latin``: the lines with Cyrillic or Greek look-alikes, mapped to Latin (the other lines empty).
    ``squeezed``: the lines with spaced-out letters or leetspeak, joined and read (the other lines empty);
    a second ``squeezed`` reading has the lines where a leetspeak 1 read as an l changes them.
    The extra readings keep only the lines they change, so a long text is read about once.
    """
    plain_text = _plain(text)
    out = [View("plain", plain_text)]
    latin_text = plain_text.translate(_HOMOGLYPHS)  # the look-alikes are all non-ASCII: ASCII lines stay
    joined = _letters_joined(latin_text)
    plain, latin = plain_text.split("\n"), latin_text.split("\n")
    squeezed = _LEET_WORD.sub(lambda m: m.group().translate(_LEET), joined).split("\n")
    # A leetspeak 1 is an i or an l; the lines where it makes a difference are read both ways.
    squeezed_l = latin
    if "1" in latin_text:
        read_l = _LEET_WORD.sub(lambda m: m.group().translate(_LEET_L), joined).split("\n")
        squeezed_l = [new if "1" in line else line for new, line in zip(read_l, latin, strict=True)]
    readings = (("latin", latin, plain), ("squeezed", squeezed, latin), ("squeezed", squeezed_l, squeezed))
    for how, lines, before in readings:
        changed = [new if new != old else "" for new, old in zip(lines, before, strict=True)]
        if any(changed):
            out.append(View(how, "\n".join(changed)))
    return out


def _readable(data: bytes) -> str | None:
    """``data`` as text when it is mostly printable prose, else None."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    printable = sum(1 for c in text if c.isprintable() or c in "\n\t\r")
    letters = sum(1 for c in text if c.isalpha())
    # Too short is measured in bytes: seven Chinese characters (21 bytes) are a whole order, "忽略之前的指令".
    if len(data) < 8 or printable < 0.95 * len(text) or letters < 0.5 * len(text):
        return None
    return text


def _from_base64(run: str) -> str | None:
    core = run.rstrip("=")[:MAX_ENCODED]
    core = core[: len(core) - len(core) % 4] if len(core) % 4 == 1 else core
    padded = core + "=" * (-len(core) % 4)
    alphabet = b"-_" if ("-" in core or "_" in core) else b"+/"
    try:
        return _readable(base64.b64decode(padded, altchars=alphabet, validate=True))
    except (binascii.Error, ValueError):
        return None


def _line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset)


def payloads(text: str) -> list[Payload]:
    """What the encoded runs of ``text`` decode to: base64 (standard or URL-safe), hex, Unicode tag
    characters, and ROT13 when the text mentions it (else the lines that read as English only in ROT13
    or backwards). Only runs that decode to readable text count."""
    found: list[Payload] = []
    for match in _TAGS.finditer(text):
        hidden = "".join(chr(ord(c) - 0xE0000) for c in match.group()[:MAX_ENCODED])
        found.append(Payload("tag characters", _line_of(text, match.start()), hidden))
    for pattern, how in ((_BASE64, "base64"), (_HEX, "hex")):
        for match in pattern.finditer(text):
            if len(found) >= MAX_PAYLOADS:
                break
            run = match.group()
            if how == "base64" and (run.isalpha() or _HEX.fullmatch(run)):
                continue  # one long word, or hex (decoded as such below)
            decoded = _from_base64(run) if how == "base64" else _from_hex(run)
            if decoded:
                found.append(Payload(how, _line_of(text, match.start()), decoded))
    if _ROT13_HINT.search(text):
        found.append(Payload("rot13", 0, codecs.decode(text, "rot13")))
    else:
        found += _scrambled_lines(text, MAX_PAYLOADS - len(found))
    return found[:MAX_PAYLOADS]


# Common English words: a line written in ROT13 or backwards has almost none of them, and gains many
# when it is read the right way. Counting them tells prose from code, hashes and other languages.
_COMMON_WORDS = (
    "the to of and a in is it you your that this for on with as be are all any every from or not do if"
    " will can please before after then when by at an must should was were have has their them they"
    " user users reader"
)
_COMMON = frozenset(_COMMON_WORDS.split())
_WORDS = re.compile(r"[a-z']+")
_SCRAMBLE_LINE = 2000  # longer lines are data, not a sentence someone scrambled


# The common words as a line holds them when its ROT13 or backwards reading holds the words: a line's
# three readings are counted from one pass over its words (the reading is made only for a line kept).
_COMMON_IN = (
    (
        "rot13",
        frozenset(codecs.decode(w, "rot13") for w in _COMMON),
        lambda line: codecs.decode(line, "rot13"),
    ),
    ("reversed", frozenset(w[::-1] for w in _COMMON), lambda line: line[::-1]),
)


def _common(line: str) -> int:
    return sum(1 for w in _WORDS.findall(line.lower()) if w in _COMMON)


def _scrambled_lines(text: str, room: int) -> list[Payload]:
    """Lines that read as English only in ROT13 or backwards ("Abgr gb gur NV ernqre", "tnatsissa IA"),
    unscrambled: each line is read three ways and kept when the scrambled reading has at least three
    more common English words than the line as written."""
    found: list[Payload] = []
    for index, line in enumerate(text.split("\n")):
        if len(found) >= room:
            break
        if len(line) > _SCRAMBLE_LINE or line.count(" ") < 4:
            continue
        kept = _scrambled(line) if line.isascii() else _scrambled_read(line)
        if kept is not None:
            found.append(Payload(kept[0], index, kept[1]))
    return found


def _scrambled(line: str) -> tuple[str, str] | None:
    """``_scrambled_read`` for an ASCII line, from its words alone: ROT13 and reversing map an ASCII
    line's words one to one (lowercasing changes no length), so the readings need not be made."""
    words = _WORDS.findall(line.lower())
    as_written = sum(1 for w in words if w in _COMMON)
    for how, common, read in _COMMON_IN:
        if sum(1 for w in words if w in common) >= as_written + 3:
            return how, read(line)
    return None


def _scrambled_read(line: str) -> tuple[str, str] | None:
    """(how, reading) of the first scrambled reading of ``line`` with three more common words than it."""
    as_written = _common(line)
    for how, _common_in, read in _COMMON_IN:
        reading = read(line)
        if _common(reading) >= as_written + 3:
            return how, reading
    return None


def _from_hex(run: str) -> str | None:
    try:
        return _readable(bytes.fromhex(run[:MAX_ENCODED]))
    except ValueError:
        return None
