"""Placeholders and overlapping secrets, where mutation testing found the suite blind (docs/mutation.md).

A placeholder's number is keyed by the deployment's key and the scope, so it is the same in every process
and release (stored summaries and later calls keep correlating); secrets and scopes carrying a lone
surrogate (valid JSON text) are redacted, not a crash; overlapping findings of one secret become one
placeholder while adjacent secrets keep one each.
"""

from __future__ import annotations

import re

from sleepcompact.adapters.redaction import Redactor, _find, _merged, redact_for_log
from sleepcompact.adapters.secret_rules import group, rule, whole

KEY = b"k" * 32
TOKEN = "ghp_" + "a" * 36


def test_placeholder_numbers_are_the_same_for_the_same_key_scope_and_secret() -> None:
    assert (
        Redactor(key=KEY, scope="conv_1").redact(f"token {TOKEN}") == "token [REDACTED:github_token:523808]"
    )
    assert (
        Redactor(key=KEY, scope="conv_2").redact(f"token {TOKEN}") != "token [REDACTED:github_token:523808]"
    )
    assert (
        Redactor(key=KEY, scope="conv_1").redact("AKIAIOSFODNN7EXAMPLE") == "[REDACTED:aws_access_key:763251]"
    )


def test_lone_surrogates_in_a_secret_or_a_scope_are_redacted() -> None:
    redactor = Redactor(key=KEY, scope="conv_1")
    assert redactor.redact("password=hunter2\ud800x more") == "password=[REDACTED:password:707406] more"
    assert (
        Redactor(key=KEY, scope="conv\ud800").redact(f"token {TOKEN}")
        == "token [REDACTED:github_token:889278]"
    )


def test_overlapping_findings_merge_and_adjacent_ones_do_not() -> None:
    text = "0123456789abcdef"
    # A finding covering another whole keeps its own kind and secret, in whatever order they came.
    covering = [(2, 6, "inner", "x"), (0, 10, "outer", "decoded")]
    assert _merged(covering, text) == [(0, 10, "outer", "decoded")]
    # Two findings overlapping in part become their union, named by the first, with the raw text.
    assert _merged([(4, 9, "b", "y"), (0, 6, "a", "x")], text) == [(0, 9, "a", "012345678")]
    # Same start: the longer one wins.
    assert _merged([(0, 4, "short", "s"), (0, 8, "long", "l")], text) == [(0, 8, "long", "l")]
    # Findings that only touch stay two placeholders.
    assert _merged([(4, 8, "b", "y"), (0, 4, "a", "x")], text) == [(0, 4, "a", "x"), (4, 8, "b", "y")]
    # One ending where a longer overlapping one ends is absorbed, not extended.
    assert _merged([(0, 8, "a", "x"), (3, 8, "b", "y")], text) == [(0, 8, "a", "x")]


def test_a_lower_priority_secret_overlapping_one_already_found_is_skipped_but_adjacent_ones_are_kept() -> (
    None
):
    # Rules run in priority order; a later rule's hit that overlaps an earlier one's (by even one
    # character, at the very start of the text) is dropped, one that only touches it is a secret too.
    rules = [
        rule("AAAA", whole("first"), "a"),
        rule("BBBB", whole("second"), "b"),
        rule("AABB", whole("third"), "b"),
    ]
    assert _find(rules, "AAAABB") == [(0, 4, "first")]
    assert _find(rules, "AAAABBBB") == [(0, 4, "first"), (4, 8, "second")]
    assert _find(rules, "BBBBAAAA") == [(0, 4, "second"), (4, 8, "first")]


def test_an_empty_secret_is_no_secret() -> None:
    # "key=" with nothing after it: a placeholder there would claim a secret the text does not carry.
    rules = [rule(r"key=(?P<v>\w*)", group("key"), "key")]
    assert _find(rules, "key= and key=abc") == [(13, 16, "key")]


def test_a_labelled_value_is_replaced_by_a_placeholder_naming_its_label() -> None:
    # The kind tells whoever reads the redacted call what was there (a password, a token), and the
    # report of what was found counts it under that kind.
    redacted = Redactor(key=KEY, scope="conv_1").redact_value(
        {"password": "hunter2xyz", "args": ["--token", "s3cr3tvalue99"]}
    )
    assert redacted == {
        "password": "[REDACTED:password:563842]",
        "args": ["--token", "[REDACTED:token:582116]"],
    }


def test_only_the_flag_before_a_value_labels_it() -> None:
    # The first argument has no flag before it; the list's last item is not one (a flag that ends a
    # command line labels nothing).
    redactor = Redactor(key=KEY, scope="conv_1")
    assert redactor.redact_value(["s3cr3tvalue99", "--token"]) == ["s3cr3tvalue99", "--token"]


def test_a_mapping_s_keys_labels_and_opaque_fields() -> None:
    redactor = Redactor(key=KEY, scope="conv_1")
    # An environment entry's name labels its value, and only its value.
    env = {"name": "DB_PASSWORD", "value": "hunter2xyz", "description": "rotated monthly"}
    assert redactor.redact_value(env) == {
        "name": "DB_PASSWORD",
        "value": "[REDACTED:password:563842]",
        "description": "rotated monthly",
    }
    # A key is text like any other: a token in it is redacted.
    assert redactor.redact_value({f"token {TOKEN}": 1}) == {"token [REDACTED:github_token:523808]": 1}
    # A key that is not a string labels nothing and is kept.
    assert redactor.redact_value({7: "hunter2xyz"}) == {7: "hunter2xyz"}
    # A thinking block's signature is opaque: changing it would make the provider refuse the block.
    block = {"type": "thinking", "thinking": "plan", "signature": TOKEN}
    assert redactor.redact_value(block) == block


def test_a_logged_value_of_any_shape_is_redacted_with_the_processs_placeholders() -> None:
    # One secret logged as a line and inside a structure gets one placeholder, so the lines of a process
    # still correlate; the structure keeps everything that is not a secret.
    line = redact_for_log(f"token {TOKEN}")
    logged = redact_for_log({"header": f"token {TOKEN}", "attempt": 2, "password": "hunter2xyz"})
    assert isinstance(logged, dict) and logged["attempt"] == 2
    assert logged["header"] == line != f"token {TOKEN}"
    assert logged["password"].startswith("[REDACTED:password:")
    assert redact_for_log([f"token {TOKEN}"]) == [line]


def test_a_long_logged_line_and_one_with_a_lone_surrogate_get_the_same_placeholders() -> None:
    # Lines over 512 characters skip the cache; they must still be redacted with the process's key and
    # scope, or one secret would carry two numbers in one log.
    line = redact_for_log(f"token {TOKEN}")
    long_line = redact_for_log("x" * 600 + f" token {TOKEN}")
    assert long_line == "x" * 600 + " " + line
    # A lone surrogate (valid in JSON text) in a short line is redacted, not a crash.
    assert redact_for_log(f"token {TOKEN} \ud800") == line + " \ud800"


def test_a_cookie_whose_token_has_one_escaped_character_is_redacted_whole() -> None:
    """The raw text's rule stops at the escape (``session=eyJ...Is``); the decoded view's finds the
    whole JWT, starting after the label: the two overlap in part and become one placeholder."""
    jwt = (
        "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2"
        "MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
    )
    escaped = jwt[:20] + "\\u0049" + jwt[21:]  # the "I" of "Is" as JSON writes it escaped
    redactor = Redactor(key=KEY)
    out = redactor.redact(f"Cookie: session={escaped}; path=/")
    assert re.fullmatch(r"Cookie: \[REDACTED:token:\d+\]; path=/", out)
    assert redactor.found == {"token": 1}
