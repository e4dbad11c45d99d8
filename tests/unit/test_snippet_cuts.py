"""Where a snippet's ends land when the window sits inside one long token or a word straddles its end.

``test_snippet_windows.py`` pins the window a snippet shows; these pin the two word-break searches at
their limits: a window that starts inside an identifier and ends exactly where the identifier does is
shown (not replaced by an empty cut), and the end snaps back to a space at most 20 characters before
it (a space 21 characters back is too far: the word is cut inside instead).
"""

from __future__ import annotations

from sleepcompact.domain.search_query import parse_query, snippet


def test_a_window_inside_an_identifier_that_ends_where_the_identifier_does_is_shown() -> None:
    text = "intro aaaaa_zebra_bb outro words more words here"
    assert snippet(text, parse_query("zebra"), width=10) == "…a_zebra_bb…"


def test_the_end_snaps_back_to_a_space_20_characters_before_it_and_no_farther() -> None:
    twenty = "abcdefghijklmnopqrst"  # the space before it is 21 characters before the cut: too far
    assert snippet("abc " + twenty + "uvwxyz tail", (), width=24) == f"abc {twenty}…"
    # One character more before it, the space is 20 characters back and the cut moves to it.
    assert snippet("abcd " + twenty + "uvwxyz tail", (), width=24) == "abcd…"
