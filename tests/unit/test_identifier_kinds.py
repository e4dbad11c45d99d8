"""What the identifier scan keeps from a text, value and kind, exactly and in order of first appearance.

The summary keeps these values verbatim and the journal drafts are built from them: a URL that keeps
its closing bracket, a path read off a diff header, or a command that swallows the prose after it
would be carried into every later summary.
"""

from __future__ import annotations

import pytest

from sleepcompact.domain.identifiers import _scan, error_lines, find_identifiers, looks_secret, output_noise


def scan(text: str) -> list[tuple[str, str]]:
    return [(ident.value, ident.kind) for ident in _scan(text)]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # every trailing punctuation mark goes, and nothing else of the URL
        ("See https://a.io/X.,;:!?", [("https://a.io/X", "url")]),
        # a bracket the URL did not open is the sentence's, and so is a full stop inside it
        ("(see https://a.io/X).", [("https://a.io/X", "url")]),
        ("(see https://a.io/p.)", [("https://a.io/p", "url")]),
        # a bracket the URL opened is its own
        (
            "see https://en.wikipedia.org/wiki/Foo_(bar) now",
            [("https://en.wikipedia.org/wiki/Foo_(bar)", "url")],
        ),
        (
            "see https://en.wikipedia.org/wiki/Foo_(bar)) now",
            [("https://en.wikipedia.org/wiki/Foo_(bar)", "url")],
        ),
    ],
)
def test_a_url_ends_where_the_sentence_takes_over(text: str, expected: list[tuple[str, str]]) -> None:
    assert scan(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "https://a.io/some/long/url src/app/main.py `ls -la`",
        "A long line of prose before the link goes here: https://a.io/x/y src/app/main.py `ls -la`",
    ],
)
def test_what_follows_a_url_keeps_its_place(text: str) -> None:
    # The URL is blanked out before paths are looked for; the blank must be exactly as long, or the
    # path found after it is placed after the command that follows it.
    assert [kind for _value, kind in scan(text)] == ["url", "path", "command"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "look in src/X and src/ and app/models and a/b/c and ~/notes and ../up/there and ./x and /etc",
            [("src/X", "path"), ("app/models", "path"), ("../up/there", "path")],
        ),
        (
            "see tests/x.py::test_a[1] and lib/ and src/Y/",
            [("tests/x.py::test_a[1]", "path"), ("src/Y/", "path")],
        ),
        ("run 12/24 or 3/4/5 and x/y/z", [("x/y/z", "path")]),
        ("a/src/x/y.py b/src/x/y.py", []),
        # rooted or relative paths need two segments, bare ones three or a known first directory
        ("/usr/local", [("/usr/local", "path")]),
        ("./x/y", [("./x/y", "path")]),
        ("~/notes/todo", [("~/notes/todo", "path")]),
        ("foo/bar", []),
        ("foo/../bar", []),
        ("~/../x", []),  # "~" and ".." are no segments: one is left
    ],
)
def test_only_what_reads_as_a_path_is_a_path(text: str, expected: list[tuple[str, str]]) -> None:
    assert scan(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "git commit -m fix and git frobnicate -x and pip install -U requests and ruff --fix src/ and "
            "cargo test --release.",
            [
                ("git commit -m fix", "command"),
                ("pip install -U requests", "command"),
                ("ruff --fix src/", "command"),
                ("cargo test --release", "command"),
            ],
        ),
        (
            "python3 -m pytest -q tests/unit and python3 script.py --flag value then",
            [
                ("python3 -m pytest -q tests/unit", "command"),
                ("tests/unit", "path"),
                ("python3 script.py --flag value", "command"),
                ("script.py", "path"),
            ],
        ),
        (
            "docker compose up -d and npm run build, uv sync --frozen",
            [("docker compose", "command"), ("npm run", "command"), ("uv sync --frozen", "command")],
        ),
        (
            "curl -sS https://a.io/x | jq and mypy --strict src",
            [
                ("curl -sS https://a.io/x", "command"),
                ("https://a.io/x", "url"),
                ("mypy --strict src", "command"),
            ],
        ),
        ("git log -n 3 and the rest", [("git log -n 3", "command")]),
        ("pytest -k rounding or not", [("pytest -k rounding", "command")]),
        ("pytest -x: then", [("pytest -x", "command")]),
        ("git push origin main", [("git push", "command")]),
        ("> ls -la /tmp\n$ echo hi\n", [("ls -la /tmp", "command"), ("echo hi", "command")]),
        (
            "pip3 install -r requirements.txt",
            [("pip3 install -r requirements.txt", "command"), ("requirements.txt", "path")],
        ),
        ("git checkout -b featureX", [("git checkout -b featureX", "command")]),
        ("git status  ok", [("git status", "command")]),
        # a command ends at the end of its line and at its closing tick
        (
            "`git add a.py` and `git commit -m x`",
            [("git add a.py", "command"), ("a.py", "path"), ("git commit -m x", "command")],
        ),
        (
            "git add a.py\nthen x.py and more\n",
            [("git add a.py", "command"), ("a.py", "path"), ("x.py", "path")],
        ),
        # a program named in prose, or followed by two spaces, gave no command
        ("we ran pytest again", []),
        ("git  commit -m x", []),
        ("$ echo hi\n> ls -la /tmp\n", [("echo hi", "command"), ("ls -la /tmp", "command")]),
        # a one-character span does not pair its closing tick with the next opening one
        ("`x` and `ab`", [("ab", "command")]),
    ],
)
def test_a_command_keeps_its_arguments_and_not_the_prose_after_it(
    text: str, expected: list[tuple[str, str]]
) -> None:
    assert scan(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "E       ValueError: bad\nE   AssertionError: x\n  E  KeyError: 'k'",
            [
                ("ValueError: bad", "error"),
                ("ValueError", "code"),
                ("AssertionError: x", "error"),
                ("AssertionError", "code"),
                ("KeyError: 'k'", "error"),
                ("KeyError", "code"),
            ],
        ),
        # an error line takes its place by where it starts in the text, after ten short lines too
        (
            "a\n" * 10 + "n 12345\nKeyError: y",
            [("12345", "number"), ("KeyError: y", "error"), ("KeyError", "code")],
        ),
        ("RuntimeError: " + "x" * 186, [("RuntimeError: " + "x" * 186, "error"), ("RuntimeError", "code")]),
        (
            "RuntimeError: " + "x" * 187,
            [("RuntimeError: " + "x" * 185 + "…", "error"), ("RuntimeError", "code")],
        ),
    ],
)
def test_an_error_line_is_kept_whole_up_to_two_hundred_characters(
    text: str, expected: list[tuple[str, str]]
) -> None:
    assert scan(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "said 'yes' and 'no way' and \"hello there\" and 'abc' and “curly quote” and ‘single curly’",
            [
                ("no way", "quoted"),
                ("hello there", "quoted"),
                ("curly quote", "quoted"),
                ("single curly", "quoted"),
            ],
        ),
        ("\"key\": 1 and 'ab'", []),
        (
            "def __init__(self) and def run_all() and class Foo: and len(x) and ab(x) and abc(y) "
            "and print(z) and f(s)",
            [("run_all", "code"), ("Foo", "code"), ("abc", "code")],
        ),
        (
            "os.path.join and Foo.bar and foo.bar and FooBar.baz and a.b_c",
            [("FooBar.baz", "code"), ("FooBar", "code"), ("a.b_c", "code"), ("b_c", "code")],
        ),
        ("call getUserName and HTTPServer and parseJSON", [("getUserName", "code")]),
        (
            "my booking reference at Harbour Inn is GSKVGE and order: AB12CD",
            [("GSKVGE", "id"), ("AB12CD", "id")],
        ),
        (
            "v1.2.3 and Python 3.11.4 and 2024-01-02 and 10:30 UTC and Jan 5, 2024 and 123456 and $5 "
            "and €3,50 and 50%] ",
            [
                ("v1.2.3", "number"),
                ("Python 3.11.4", "number"),
                ("2024-01-02", "number"),
                ("10:30 UTC", "number"),
                ("Jan 5, 2024", "number"),
                ("123456", "number"),
                ("$5", "number"),
                ("€3,50", "number"),
            ],
        ),
        ("x", []),
        (" a ", []),
    ],
)
def test_quotes_names_ids_and_numbers(text: str, expected: list[tuple[str, str]]) -> None:
    assert scan(text) == expected


def test_a_value_found_twice_is_kept_once_under_its_first_kind() -> None:
    text = "pytest tests/unit then tests/unit again, https://a.io/x and https://a.io/x"
    assert scan(text) == [("pytest tests/unit", "command"), ("tests/unit", "path"), ("https://a.io/x", "url")]
    assert find_identifiers(text) == find_identifiers(text) == _scan(text)


@pytest.mark.parametrize(
    ("text", "limit", "expected"),
    [
        (
            "ok\nTraceback (most recent call last):\n  File x\nValueError: bad\nE   ValueError: bad\n"
            "= 1 failed, 2 passed =\n",
            3,
            ["ValueError: bad", "1 failed, 2 passed"],
        ),
        (
            "ok\nTraceback (most recent call last):\n  File x\nValueError: bad\nE   ValueError: bad\n"
            "= 1 failed, 2 passed =\n",
            1,
            ["ValueError: bad"],
        ),
        (
            "error: cannot open\nsomething failed here\nprocess exited with code 2\n"
            "returncode=1\nexit status 3\n",
            3,
            ["error: cannot open", "something failed here", "process exited with code 2"],
        ),
        (
            "error: cannot open\nsomething failed here\nprocess exited with code 2\n"
            "returncode=1\nexit status 3\n",
            10,
            [
                "error: cannot open",
                "something failed here",
                "process exited with code 2",
                "returncode=1",
                "exit status 3",
            ],
        ),
        (
            "FAILED tests/a.py::t - AssertionError: x\nall good, 0 failed\nno errors found\n",
            3,
            ["FAILED tests/a.py::t - AssertionError: x"],
        ),
        # a line that says it failed outranks one that only shouts ERROR
        (
            "warning: failed to x\nERROR in module\nfatal: not a repo\npanic: oops\n",
            3,
            ["warning: failed to x", "fatal: not a repo", "panic: oops"],
        ),
        ("warning: failed to x\nERROR in module\nfatal: not a repo\npanic: oops\n", 1, ["fatal: not a repo"]),
        ("Ошибка: error: ünïcode\nexit code 0\n", 3, ["Ошибка: error: ünïcode"]),
        ("all fine\nexit code 0\n", 3, []),
    ],
)
def test_error_lines_pick_the_telling_lines_in_text_order(text: str, limit: int, expected: list[str]) -> None:
    assert error_lines(text, limit=limit) == expected


@pytest.mark.parametrize(
    "text",
    [
        "sk-ant-api03-xyz",
        "sk-proj-abcdefghijklmnop",
        "AKIAABCD",
        "ASIA1234567890ABCDEF",
        "ghp_" + "a" * 20,
        "github_pat_" + "a" * 20,
        "xoxb-1234567890",
        "AIza" + "a" * 30,
        "-----BEGIN RSA PRIVATE KEY-----",
        "password = hunter2",
        "API-KEY: x",
        "Bearer abcdefghijklmnop",
        "https://user:pw@host",
    ],
)
def test_credential_shapes_look_secret(text: str) -> None:
    assert looks_secret(text)


@pytest.mark.parametrize(
    "text", ["hello", "sk-abc", "skip-ant", "password", "eyJhbGciOi.eyJzdWIiOi.abcdefghij"]
)
def test_ordinary_words_do_not_look_secret(text: str) -> None:
    assert not looks_secret(text)


@pytest.mark.parametrize(
    ("value", "noise"),
    [
        ("tests/a.py::t", True),
        ("run_01", True),
        ("frame-123.png", True),
        ("item_12", True),
        ("v_1", False),
        ("x-9.py", False),
        ("BLD-4411", False),
        ("JIRA-123", False),
        ("build-4411", True),
        ("src/app.py", False),
    ],
)
def test_listing_noise_is_a_test_node_or_a_numbered_item(value: str, noise: bool) -> None:
    assert output_noise(value) is noise


def test_a_commands_arguments_are_read_from_the_300_characters_after_its_program() -> None:
    """The window keeps a long line's scan linear: an argument that ends on the window's last character
    is kept whole, one a character longer is cut there (the path itself is found whole on its own)."""
    window = 300 - 1  # the space after the program is the window's first character
    for length, kept in ((window, window), (window + 1, window)):
        path = "tests/" + "a" * (length - 6)
        assert scan(f"then run pytest {path} now") == [
            (f"pytest {path[:kept]}", "command"),
            (path, "path"),
        ]
