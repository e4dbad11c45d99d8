"""The two halves of a cut's name list, at their boundaries (``sleepcompact.domain.cut_names``).

``cut_names(full, shown)``: which identifiers of a call's full argument its cut rendering lost (errors,
names over 100 characters, names holding a backtick or an arrow, names the shown part has and common
words left out, order kept). ``listed(lines)``: which of them each ledger line, newest first, shows (each
name once, on the newest line that names it, within 400 characters at 4 more per name) and how.
test_cut_identifiers.py covers the feature end to end; these pin the rules one by one.
"""

from __future__ import annotations

from sleepcompact.domain.cut_names import CUT, cut_names, listed
from sleepcompact.domain.identifiers import find_identifiers
from sleepcompact.domain.summary_items import NOT_IDENTIFIERS

NAME_100 = "x_" + "a" * 98  # one snake_case identifier of exactly 100 characters
NAME_101 = "y_" + "b" * 99


# -- cut_names ---------------------------------------------------------------------------------------


def test_nothing_is_cut_when_the_full_text_is_not_longer_than_what_is_shown() -> None:
    assert cut_names("alpha_beta", "zzzzzzzzzz") == ()  # equal length: nothing was cut
    assert cut_names("alpha_beta", "zzzzzzzzzzz") == ()  # shorter
    assert cut_names("alpha_beta ", "zzzzzzzzzz") == ("alpha_beta",)  # one character longer: a cut


def test_the_lost_names_come_in_the_order_the_full_text_has_them() -> None:
    full = "gamma_delta then alpha_beta and epsilon_zeta"
    assert cut_names(full, "…") == ("gamma_delta", "alpha_beta", "epsilon_zeta")


def test_an_error_line_is_not_listed_but_the_names_in_it_are() -> None:
    full = "ValueError: bad input\nfoo_bar"
    assert find_identifiers(full)[0].kind == "error"  # the finder does see the line
    assert cut_names(full, "…") == ("ValueError", "foo_bar")


def test_a_name_of_100_characters_is_listed_and_one_of_101_is_not() -> None:
    assert (len(NAME_100), len(NAME_101)) == (100, 101)
    assert cut_names(f"{NAME_100} {NAME_101} keep_me", "…") == (NAME_100, "keep_me")


def test_a_name_holding_a_backtick_is_not_listed() -> None:
    full = "q = 'a`b'\nkeep_me"
    assert "a`b" in [i.value for i in find_identifiers(full)]
    assert cut_names(full, "…") == ("keep_me",)


def test_a_name_holding_an_arrow_is_not_listed() -> None:
    full = "q = 'a→b'\nkeep_me"
    assert "a→b" in [i.value for i in find_identifiers(full)]
    assert cut_names(full, "…") == ("keep_me",)


def test_a_name_the_shown_part_already_has_is_not_listed() -> None:
    full = "alpha_beta, then the long middle, then gamma_delta"
    assert cut_names(full, "alpha_beta, … gamma") == ("gamma_delta",)  # "gamma" alone does not show it
    assert cut_names(full, "alpha_beta … gamma_delta") == ()


def test_a_common_word_the_patterns_catch_is_not_listed_whatever_its_case() -> None:
    full = "x = 'None'\ny = 'Those'\nkeep_me"
    assert {"none", "those"} <= NOT_IDENTIFIERS
    assert [i.value for i in find_identifiers(full) if i.kind == "quoted"] == ["None", "Those"]
    assert cut_names(full, "…") == ("keep_me",)


# -- listed ------------------------------------------------------------------------------------------


def test_a_line_shows_its_names_backticked_after_cut_and_nothing_when_it_has_none() -> None:
    assert CUT == "; cut: "
    assert listed([(["alpha", "beta", "alpha"], "")]) == ["; cut: `alpha`, `beta`"]
    assert listed([([], "")]) == [""]
    assert listed([]) == []


def test_each_name_is_listed_on_the_newest_line_that_names_it() -> None:
    lines = [(["a_x", "b_y"], "newest"), (["a_x", "c_z"], "older"), (["b_y", "a_x"], "oldest")]
    assert listed(lines) == ["; cut: `a_x`, `b_y`", "; cut: `c_z`", ""]


def test_a_name_a_newer_lines_text_shows_is_not_listed_on_older_lines() -> None:
    lines = [([], "run alpha_one now"), (["alpha_one", "beta_two"], ""), (["alpha_one"], "")]
    assert listed(lines) == ["", "; cut: `beta_two`", ""]


def test_a_line_never_lists_what_its_own_shown_text_has_because_cut_names_left_it_out() -> None:
    full = "alpha_one, a long middle, beta_two"
    shown = "alpha_one, … beta"
    assert listed([(cut_names(full, shown), shown)]) == ["; cut: `beta_two`"]


def test_names_filling_exactly_400_characters_at_4_more_each_are_all_listed() -> None:
    one = "a" * 396  # 396 + 4 = 400
    assert listed([([one], "")]) == [f"; cut: `{one}`"]
    two = ["a" * 196, "b" * 196]  # 200 + 200 = 400
    assert listed([(two, "")]) == [f"; cut: `{two[0]}`, `{two[1]}`"]


def test_the_name_one_character_over_400_and_every_name_after_it_on_its_line_are_dropped() -> None:
    assert listed([(["a" * 397], "")]) == [""]  # 401
    first, over = "a" * 196, "b" * 197  # 200, then 401
    assert listed([([first, over, "c"], "")]) == [f"; cut: `{first}`"]  # the list stops at the overflow


def test_a_line_over_its_budget_does_not_stop_the_lists_of_older_lines() -> None:
    lines = [(["a" * 397], ""), (["beta_two"], ""), (["c" * 196, "d" * 197], ""), (["gamma"], "")]
    assert listed(lines) == ["", "; cut: `beta_two`", f"; cut: `{'c' * 196}`", "; cut: `gamma`"]
