"""A sentence of numbers and symbols alone ("42.", "10:30?") is chat, whoever says it.

Its detail tags would make it look concrete (``numeric``, ``dated``), but with no word of content
there is nothing a memory could say: kept out of the journal, it is never promoted. A number with
words around it is a concrete statement.
"""

from __future__ import annotations

import pytest

from sleepcompact.domain.salience import statement_tags


@pytest.mark.parametrize("sentence", ["42.", "5 pm!", "10:30?", "3 x 4 = 12", "2023"])
@pytest.mark.parametrize("assistant", [False, True])
def test_numbers_without_a_word_of_content_are_chat(sentence: str, assistant: bool) -> None:
    assert statement_tags(sentence, assistant=assistant) == ("chat",)


def test_a_number_with_words_around_it_is_a_concrete_statement() -> None:
    assert statement_tags("I have 42 cats.") == ("fact", "numeric")
