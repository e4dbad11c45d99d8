"""How much of an oversized output a middle-out cut keeps: close to its cap, never over it.

The cap is the room the ladder gave the output; a cut far under it throws away text the model could
have had for nothing. Mutation testing (docs/mutation.md, sixth session) found the size estimate's
constants unchecked: every test looked at the cap, the marker and the names, none at how much was kept.
On outputs of every kind below the cut lands between 0.80 and 1.00 of its cap; 0.75 leaves room for the
estimate's rounding.
"""

from __future__ import annotations

import pytest

from sleepcompact.domain.messages import MESSAGE_OVERHEAD
from sleepcompact.domain.steps import middle_out
from tests.unit.test_ladder import count

OUTPUTS = {
    "prose": " ".join(
        f"The quick brown fox number {i} jumps over the lazy dog near the bank." for i in range(800)
    ),
    "log with names": "\n".join(
        f"ERROR src/app/module_{i}/handler_{i}.py:{i * 7} in process_order_{i}: OrderNotFound ORD-{i:05d}"
        for i in range(600)
    ),
    "cjk": "这是一个很长的中文句子，用于测试截断的效果。" * 600,
    # Emoji (about 2.5 tokens a character) around plain ASCII (about 8 characters a token): the head
    # and tail are far denser than the text's average, which the first estimate goes by.
    "dense edges": "🙂" * 300 + "a" * 50_000 + "🚀" * 300,
    "one long word": "a1b2c3d4" * 4000,
    "json": "["
    + ",".join(f'{{"id": "res_{i:06d}", "status": "ok", "amount": {i * 3.5}}}' for i in range(900))
    + "]",
}


@pytest.mark.parametrize("cap", [200, 450, 1_000, 2_500])
@pytest.mark.parametrize("kind", sorted(OUTPUTS))
def test_a_cut_keeps_most_of_its_cap_and_never_more(kind: str, cap: int) -> None:
    text = OUTPUTS[kind]
    tokens = count(text)
    view, cost = middle_out(text, tokens, cap, 7, count)
    assert 0.75 * cap <= cost <= cap
    head, _, rest = view.partition("\n\n[... ")
    _marker, end, tail = rest.partition("read_archived(seq=7)]\n\n")
    assert head and end and tail, "head, marker, tail"
    assert text.startswith(head) and text.endswith(tail), "the output's own beginning and end"
    assert len(head) == len(tail), "as much of each end"


@pytest.mark.parametrize(
    ("kind", "cap", "length", "cost"),
    [
        ("cjk", 200, 261, 199),  # under one character per token: the estimate starts at one
        ("cjk", 450, 429, 374),
        ("emoji", 450, 266, 446),
        ("dense edges", 450, 240, 381),  # was 1,431 tokens, three times its cap, with a fixed fifth
        ("log with names", 450, 1_321, 439),  # the cut names fill at most a quarter of the room
        ("prose", 22, 117, 37),  # a cap under the marker's own size: some text is still kept
        ("prose", 48, 169, 48),  # a cap just over the marker: 16 tokens of text are aimed at, not fewer
        ("json", 40, 117, 40),  # shrinking goes down to 8 characters a side before it gives up
        ("prose", 38, 129, 38),  # a cut that lands exactly on its cap is kept, not shrunk again
        ("cjk", 22, 117, 47),  # shrinking stops at 8 characters a side, over the cap or not
    ],
)
def test_a_cut_of_dense_text_or_under_a_tiny_cap_is_exactly_this_size(
    kind: str, cap: int, length: int, cost: int
) -> None:
    text = {**OUTPUTS, "emoji": "🙂🚀" * 2_000}[kind]
    view, got = middle_out(text, count(text), cap, 7, count)
    assert (len(view), got) == (length, cost)
    assert got == count(view) + MESSAGE_OVERHEAD


@pytest.mark.parametrize(
    ("text", "cap"),
    [
        ("🙂" * 31 + "\n" * 1_074 + "🙂" * 97, 250),  # was 271 tokens after eight tries
        ("😀" * 144 + "=" * 1_099 + "😀" * 112, 450),  # was 461
        ("漢" * 59 + " " * 1_381 + "漢" * 69, 250),  # was 288
    ],
)
def test_dense_ends_around_a_long_cheap_middle_are_cut_within_the_cap(text: str, cap: int) -> None:
    """Each try shrinks the ends by what the count found, but the cheap middle goes first and the count
    hardly moves: such a cut takes more than eight tries, and it is shrunk until it fits."""
    view, cost = middle_out(text, count(text), cap, 7, count)
    assert 0.75 * cap <= cost <= cap
    assert cost == count(view) + MESSAGE_OVERHEAD
    head, _, rest = view.partition("\n\n[... ")
    assert text.startswith(head) and text.endswith(rest.partition("read_archived(seq=7)]\n\n")[2])
