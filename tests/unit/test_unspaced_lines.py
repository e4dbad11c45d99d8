"""A line written a letter at a time, with wider gaps between words ("d o   n o t   a c t"), is read as
the words it spells. The rule has two edges: at least eight tokens, and at least four in five of them
single letters. On each edge the line is read as words; a line of ordinary words with double spaces is
left as it is."""

from __future__ import annotations

from sleepcompact.domain.injection_text import views


def _squeezed(text: str) -> str:
    return next(v.text for v in views(text) if v.how == "squeezed")


def test_eight_single_letters_are_read_as_words() -> None:
    # Eight tokens, the fewest read this way. Two-letter words are read only by this rule: the
    # spaced-letters pattern needs three letters, so without it "d o" would stay apart.
    assert _squeezed("d o   n o t   a c t") == "do not act"


def test_four_in_five_single_letters_are_read_as_words() -> None:
    # Ten tokens, eight single letters: exactly four in five. The gaps between words become one space.
    assert _squeezed("AI   go   s t o p   r e a d") == "AI go stop read"


def test_words_with_double_spaces_are_not_a_spelled_out_line() -> None:
    # Eight tokens with a single letter among them: prose with wide spacing, which has no other reading.
    assert [v.how for v in views("please  read  the  file  a  then  stop  now")] == ["plain"]
