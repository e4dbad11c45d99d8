"""The bounds of ``TextMemo``, the memo of what the identifier scanner and the injection detector found
in a text: a long-lived worker holds at most so many results and so many characters of text, drops the
least recently used first, and never keeps a text larger than its whole budget. A memo that overran
its bounds would grow a worker's memory with every conversation; one that dropped the wrong entry would
only be slower, so the order is pinned too.
"""

from __future__ import annotations

from sleepcompact.domain.memo import TextMemo


def kept(memo: TextMemo[int], *texts: str) -> list[str]:
    return [t for t in texts if memo.get(t) is not None]


def test_a_result_is_given_back_for_its_text_and_nothing_for_another() -> None:
    memo: TextMemo[int] = TextMemo(entries=3, chars=100)
    memo.put("alpha", 7)
    assert memo.get("alpha") == 7
    assert memo.get("beta") is None


def test_a_text_exactly_the_budget_is_kept_one_character_more_is_not() -> None:
    memo: TextMemo[int] = TextMemo(entries=3, chars=10)
    memo.put("a" * 10, 1)
    assert memo.get("a" * 10) == 1
    memo.put("b" * 11, 2)
    assert memo.get("b" * 11) is None
    assert memo.get("a" * 10) == 1


def test_the_entry_bound_keeps_exactly_that_many_and_drops_the_oldest() -> None:
    memo: TextMemo[int] = TextMemo(entries=3, chars=100)
    for n, text in enumerate(("a", "b", "c")):
        memo.put(text, n)
    assert kept(memo, "a", "b", "c") == ["a", "b", "c"]
    memo.put("d", 3)
    assert kept(memo, "a", "b", "c", "d") == ["b", "c", "d"]


def test_reading_a_result_makes_it_the_last_to_go() -> None:
    memo: TextMemo[int] = TextMemo(entries=3, chars=100)
    for n, text in enumerate(("a", "b", "c")):
        memo.put(text, n)
    assert memo.get("a") == 0
    memo.put("d", 3)
    assert kept(memo, "a", "b", "c", "d") == ["a", "c", "d"]


def test_the_character_bound_counts_every_text_held_and_what_dropping_one_frees() -> None:
    memo: TextMemo[int] = TextMemo(entries=10, chars=10)
    for n, text in enumerate(("aaaa", "bbbb", "cc")):
        memo.put(text, n)
    assert kept(memo, "aaaa", "bbbb", "cc") == ["aaaa", "bbbb", "cc"]  # 10 characters: at the bound
    memo.put("d", 3)  # 11: the oldest goes, 7 are held
    assert kept(memo, "aaaa", "bbbb", "cc", "d") == ["bbbb", "cc", "d"]
    memo.put("eee", 4)  # 10 again: nothing goes
    assert kept(memo, "bbbb", "cc", "d", "eee") == ["bbbb", "cc", "d", "eee"]
    memo.put("f", 5)  # 11: only the oldest goes
    assert kept(memo, "bbbb", "cc", "d", "eee", "f") == ["cc", "d", "eee", "f"]


def test_putting_a_text_twice_keeps_the_first_result_and_counts_it_once() -> None:
    memo: TextMemo[int] = TextMemo(entries=10, chars=10)
    memo.put("aaaa", 1)
    memo.put("aaaa", 2)
    memo.put("bbbbbb", 3)  # 10 characters held if "aaaa" counted once
    assert memo.get("aaaa") == 1
    assert kept(memo, "aaaa", "bbbbbb") == ["aaaa", "bbbbbb"]


def test_clearing_forgets_every_result_and_frees_the_budget() -> None:
    memo: TextMemo[int] = TextMemo(entries=10, chars=10)
    memo.put("a" * 10, 1)
    memo.clear()
    assert memo.get("a" * 10) is None
    memo.put("b" * 5, 2)
    memo.put("c" * 5, 3)
    assert kept(memo, "b" * 5, "c" * 5) == ["b" * 5, "c" * 5]
