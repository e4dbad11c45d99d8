"""Redaction measured on the tuning corpus, inside JSON at any depth, and what it must leave alone.

``tests/redteam/tune/secrets.jsonl`` holds one secret a line in a realistic context (128 of them,
about 60 formats); ``keep.jsonl`` holds identifiers a coding agent needs verbatim and look-alikes that
are not secrets. The held-out corpus the project is measured on is elsewhere and no test reads it.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from sleepcompact.adapters.escape_views import escape_views
from sleepcompact.adapters.redaction import PLACEHOLDER, Redactor
from sleepcompact.adapters.secret_labels import high_entropy, label_kind, labelled_kind
from sleepcompact.logs import redact_event, redact_with
from tests.support.redteam import Planted, load_keep, load_secrets, placements

SECRETS = load_secrets()
KEEP = load_keep()


def _forms(p: Planted) -> dict[str, Any]:
    """Every way the corpus plants a secret: the three placements, the arguments also as the JSON a
    transcript shows and as a JSON string nested in a JSON string."""
    where = placements(p)
    args = where.pop("tool-call arguments")
    return {
        **where,
        "arguments": args,
        "arguments as JSON": json.dumps(args),
        "arguments as a JSON string in JSON": json.dumps({"input": json.dumps(args)}),
    }


def _redacted(value: Any) -> str:
    out = Redactor().redact(value) if isinstance(value, str) else Redactor().redact_value(value)
    return out if isinstance(out, str) else json.dumps(out)


def test_every_secret_of_the_tuning_corpus_is_gone_in_every_form() -> None:
    assert len(SECRETS) >= 100 and len({p.kind for p in SECRETS}) >= 80
    missed = [
        (p.kind, form)
        for p in SECRETS
        for form, value in _forms(p).items()
        if p.secret in (out := _redacted(value)) or json.dumps(p.secret)[1:-1] in out
    ]
    assert missed == []


def test_identifiers_a_task_needs_are_kept() -> None:
    changed = [(k.kind, out) for k in KEEP if (out := Redactor().redact(k.text)) != k.text]
    assert changed == []
    for k in KEEP:  # as JSON values too (a tool result carrying them)
        assert Redactor().redact_value({"output": k.text, "lines": k.text.splitlines()}) == {
            "output": k.text,
            "lines": k.text.splitlines(),
        }


@pytest.mark.parametrize(
    "text",
    [
        '{"content": "DB_PASSWORD=hunter2x\\nDEBUG=1"}',
        json.dumps(json.dumps({"password": "hunter2x"})),
        json.dumps(json.dumps(json.dumps({"cmd": "PGPASSWORD=hunter2x psql"}))),
        '{"note": "pass\\u0077ord=hunter2x"}',
    ],
)
def test_json_escaped_at_any_depth_loses_the_value_and_stays_valid(text: str) -> None:
    out = Redactor().redact(text)
    assert "hunter2x" not in out and PLACEHOLDER.search(out)
    json.loads(out)  # a replacement never cuts an escape in half


def test_one_secret_gets_one_placeholder_escaped_or_not() -> None:
    redactor = Redactor(key=b"k" * 32, scope="c1")
    plain = redactor.redact("password=hunter2x")
    nested = redactor.redact(json.dumps({"cmd": "password=hunter2x"}))
    assert PLACEHOLDER.findall(plain) == PLACEHOLDER.findall(nested)


_ESCAPE = re.compile(r'\\(["\\/bfnrt]|u[0-9a-fA-F]{4})')
_SIMPLE = {"b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}


def _unescape(text: str) -> str:
    def one(m: re.Match[str]) -> str:
        c = m.group(1)
        return chr(int(c[1:], 16)) if c[0] == "u" else _SIMPLE.get(c, c)

    return _ESCAPE.sub(one, text)


def test_escape_views_map_every_span_back_to_whole_escape_sequences() -> None:
    text = json.dumps({"a": 'x"y\nz\u00e9', "b": json.dumps({"c": "d\te", "p": 'q\\"r'})})
    views = escape_views(text)
    assert len(views) == 3  # the inner string holds an escaped quote: a third level
    assert [v.text for v in views] == [_unescape(p) for p in [text, *(v.text for v in views[:-1])]]
    for depth, view in enumerate(views, 1):
        for start in range(len(view.text)):
            for end in (start, min(len(view.text), start + 1), min(len(view.text), start + 7)):
                s, e = view.to_original(start, end)
                decoded = text[s:e]
                for _ in range(depth):
                    decoded = _unescape(decoded)
                assert decoded == view.text[start:end]
    assert escape_views("no escapes here") == [] and escape_views("C:\\Users\\dev") == []


def test_a_generic_label_needs_a_random_looking_value() -> None:
    assert label_kind("GITHUB_TOKEN") == ("token", False) and label_kind("DB_PASSWORD") == ("password", True)
    assert label_kind("password_min_length") is None and label_kind("public_key") is None
    assert label_kind("monkey") is None and label_kind("secret_labels.py") is None
    out = Redactor().redact("token=EOF sort_key=created_at key=9fQ2xL7vK3mZ8wR1 max_tokens=4096")
    assert out.startswith("token=EOF sort_key=created_at key=[REDACTED:api_key:") and "4096" in out
    assert high_entropy("9fQ2xL7vK3mZ8wR1") and not high_entropy("created_at_desc")
    assert labelled_kind("password", "hunter2x") == "password" and labelled_kind("token", "abc") is None


def test_walked_values_are_labelled_by_their_key_their_name_or_their_flag() -> None:
    value = {
        "env": [{"name": "DB_PASSWORD", "value": "hunter2x"}, {"name": "PORT", "value": "8080"}],
        "argv": ["mysql", "--password", "hunter2x", "app"],
        "auth": {"password": "hunter2x", "user": "dana"},
        "signature": "opaque-signature-kept",
    }
    out = Redactor().redact_value(value)
    assert "hunter2x" not in json.dumps(out)
    assert out["env"][1] == {"name": "PORT", "value": "8080"} and out["argv"][0] == "mysql"
    assert out["auth"]["user"] == "dana" and out["signature"] == "opaque-signature-kept"
    assert value["auth"]["password"] == "hunter2x"  # the argument is never changed


def test_log_events_are_redacted_once_installed() -> None:
    from sleepcompact.adapters.redaction import redact_for_log

    redact_with(redact_for_log)
    event = redact_event(
        None, "info", {"event": "ran psql PGPASSWORD=hunter2x", "args": ["--token", "x" * 3]}
    )
    assert "hunter2x" not in json.dumps(event) and re.search(r"\[REDACTED:password:\d+\]", event["event"])
