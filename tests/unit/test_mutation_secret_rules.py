"""The edges of the format rules whose extractors decide (Telegram bot tokens, ``curl -u``, bearer
placeholders, card numbers), where mutation testing found the suite blind (docs/mutation.md).

What a user sees is the redacted text: which span became a placeholder, of which kind, and what was left
alone (a longer number is no bot id, a shell variable is no password, an all-caps placeholder is no token,
a card number has 13 to 19 digits). The rule builders, which only run while the rule table is built,
are checked on rules of their own.
"""

from __future__ import annotations

import re

import pytest

from sleepcompact.adapters.redaction import RedactionPolicy, Redactor, luhn_valid
from sleepcompact.adapters.secret_rules import Rule, _back, _token, group, rule, whole

BOT = "AA" + "b" * 33  # what follows a Telegram bot id and its colon


def _redact(text: str) -> str:
    """The redacted text with each placeholder's number dropped (they are keyed digests)."""
    return re.sub(r":\d+\]", "]", Redactor(RedactionPolicy(card_numbers=True)).redact(text))


def _with_check_digit(body: str) -> str:
    """``body`` and the digit that makes it pass the Luhn checksum (computed here, independently)."""
    total = 0
    for i, ch in enumerate(reversed(body)):
        d = int(ch) * (1 if i % 2 else 2)
        total += d - 9 if d > 9 else d
    return body + str(-total % 10)


@pytest.mark.parametrize(
    ("text", "redacted"),
    [
        (f"123456789:{BOT}", "[REDACTED:telegram_token]"),  # at the very start
        (f"123456789:{BOT} sent at 2024", "[REDACTED:telegram_token] sent at 2024"),
        (f"123456789:{BOT} is the token:", "[REDACTED:telegram_token] is the token:"),
        (f"bot 12345678:{BOT}", "bot [REDACTED:telegram_token]"),  # 8 digits
        (f"x 123456789:{BOT}", "x [REDACTED:telegram_token]"),
        (f"bot 1234567890:{BOT}", "bot [REDACTED:telegram_token]"),  # 10 digits
    ],
)
def test_a_telegram_bot_token_is_redacted_from_its_first_digit(text: str, redacted: str) -> None:
    assert _redact(text) == redacted


@pytest.mark.parametrize(
    "text",
    [
        f"bot 1234567:{BOT}",  # 7 digits: too short for a bot id
        f"bot 12345678901:{BOT}",  # 11: part of a longer number
        f"id:123456789:{BOT}",  # after a colon: a field of something else
        f":123456789:{BOT}",
    ],
)
def test_what_only_looks_like_a_telegram_token_is_left_alone(text: str) -> None:
    assert _redact(text) == text


def test_curl_passwords_are_redacted_but_not_shell_variables_nor_uids() -> None:
    assert _redact("curl -u admin:s3cretpw https://x") == "curl -u admin:[REDACTED:password] https://x"
    assert _redact("curl -u admin:Xyz12345 https://x") == "curl -u admin:[REDACTED:password] https://x"
    assert _redact("curl -u admin:a$b{c}d https://x") == "curl -u admin:[REDACTED:password] https://x"
    for kept in ("curl -u admin:$PASSWORD https://x", "curl -u admin:{pw} https://x", "curl -u 1000:1000 x"):
        assert _redact(kept) == kept


def test_an_all_caps_bearer_placeholder_is_not_a_token() -> None:
    kept = "Authorization: Bearer YOUR_ACCESS_TOKEN_HERE"
    assert _redact(kept) == kept
    assert (
        _redact("Authorization: Bearer abcdefghijklmnopqrstu")
        == "Authorization: Bearer [REDACTED:bearer_token]"
    )
    assert (
        _redact("Authorization: Bearer ABCDEFGHIJKLMNOPQRS1")
        == "Authorization: Bearer [REDACTED:bearer_token]"
    )


def test_luhn_counts_a_nine_in_an_undoubled_place() -> None:
    assert luhn_valid("79927398713")  # the checksum's textbook example
    assert not luhn_valid("79927398710")
    assert luhn_valid("4539578763621486")


def test_card_numbers_have_13_to_19_digits() -> None:
    thirteen = _with_check_digit("422222222222")
    nineteen = _with_check_digit("6011" + "1" * 14)
    twenty = _with_check_digit("4111 1111 1111 1111 111".replace(" ", ""))
    assert (len(thirteen), len(nineteen), len(twenty)) == (13, 19, 20)
    assert _redact(f"card {thirteen} ok") == "card [REDACTED:card_number] ok"
    assert _redact(f"card {nineteen} ok") == "card [REDACTED:card_number] ok"
    grouped = " ".join(twenty[i : i + 4] for i in range(0, 20, 4))  # five groups of four
    assert _redact(f"ref {grouped} ok") == f"ref {grouped} ok"


# The rule builders run when the rule table is built (at import), before any test: each is checked
# here on a rule of its own, as a new format rule would be written.


def _hits(built: Rule, text: str) -> list[tuple[int, int, str] | None]:
    return [built.extract(m) for m in built.pattern.finditer(text)]


def test_a_rule_keeps_its_pattern_extractor_and_triggers() -> None:
    extract = whole("demo")
    built = rule(r"k\d{3}", extract, "k K9")
    assert built.pattern.pattern == r"k\d{3}" and built.extract is extract
    assert built.triggers == ("k", "K9")
    assert _hits(built, "x k123 k45") == [(2, 6, "demo")]


def test_group_rules_redact_only_the_named_group() -> None:
    assert _hits(rule(r"pw=(?P<v>\w+)", group("password"), "pw="), "a pw=hunter2 b") == [(5, 12, "password")]
    assert _hits(rule(r"key:(?P<s>\w+)", group("api_key", "s"), "key:"), "key:abc") == [(4, 7, "api_key")]


def test_a_lookbehind_rule_takes_the_characters_it_checked() -> None:
    built = rule(r"-us(?<=[0-9a-f]{4}-us)\d", _back(4, "mailchimp_key"), "-us")
    assert _hits(built, "key beef-us7 end") == [(4, 12, "mailchimp_key")]


def test_a_token_rule_starts_at_a_prefix_that_is_not_inside_a_word() -> None:
    built = _token("demo_token", "ab_ Cd-", r"[0-9]{4}")
    assert built.triggers == ("ab_", "cd-")
    assert _hits(built, "ab_1234 and Cd-5678, (ab_0000)") == [
        (0, 7, "demo_token"),
        (12, 19, "demo_token"),
        (22, 29, "demo_token"),
    ]
    for inside in ("xab_1234", "Xab_1234", "7ab_1234", "_ab_1234", "ab_12345", "ab_1234x", "ab_1234-"):
        assert _hits(built, inside) == [], inside
    dashed = _token("demo_token", "ab_", r"[0-9]{4}", left="-", triggers="zz yy")
    assert dashed.triggers == ("zz", "yy")
    assert _hits(dashed, "xab_1234") == [(1, 8, "demo_token")] and _hits(dashed, "-ab_1234") == []
