"""Secret redaction before anything leaves the process (DESIGN section 7).

Secrets are assembled from pieces at run time so that this file does not
itself look like a leaked credential to secret scanners.
"""

from __future__ import annotations

import hashlib
import re

import pytest

from sleepcompact.adapters.redaction import RedactionPolicy, Redactor, luhn_valid

PLACEHOLDER = re.compile(r"\[REDACTED:([a-z_]+):(\d+)\]")


def j(*parts: str) -> str:
    return "".join(parts)


class Numbered:
    """A ``Redactor`` whose placeholder numbers (keyed digests) are renumbered 1, 2, ... by first
    appearance, so expected outputs can be written down."""

    def __init__(self, policy: RedactionPolicy | None = None) -> None:
        self.inner = Redactor(policy or RedactionPolicy())
        self.order: dict[str, int] = {}

    @property
    def found(self) -> dict[str, int]:
        return self.inner.found

    def redact(self, text: str) -> str:
        out = self.inner.redact(text)
        return PLACEHOLDER.sub(
            lambda m: f"[REDACTED:{m[1]}:{self.order.setdefault(m[2], len(self.order) + 1)}]", out
        )


# kind, a line holding {s}, a realistic secret, and a second, different secret of the same kind.
KINDS: list[tuple[str, str, str, str]] = [
    (
        "anthropic_key",
        "export ANTHROPIC_API_KEY={s}  # set in ~/.zshrc",
        j("sk-ant-", "api03-", "Xq7vR2mT9kLw4ZpB8nYc3HdF6jGs1AeU", "-Qx5Wv0Ni_Ko4Tm9RpLa-A2bCdEfGh"),
        j("sk-ant-", "api03-", "Lm3Np8Qr2St7Uv1Wx6Yz0Ab5Cd9Ef4Gh", "-Ij8Kl2Mn6Op0Qr4St8Uv-W3xYz1Ab"),
    ),
    (
        "openai_key",
        'client = OpenAI(api_key="{s}")',
        j("sk-", "proj-", "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8S9t0", "_UvWxYz12"),
        j("sk-", "Zy9Xw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0FeDcBa98765432", "10"),
    ),
    (
        "github_token",
        "git remote set-url origin https://{s}@github.com/acme/widgets.git",
        j("gh", "p_", "R8kX2mQ9vL4tZ7wN1pB6yC3hF5jD0sAe9Gu2"),
        j(
            "github",
            "_pat_",
            "11AB2CD3E0",
            "Fg4Hi5Jk6Lm7No8Pq9Rs0Tu1Vw2Xy3Za4Bc5De6Fg7Hi8Jk9Lm0No1Pq2Rs3Tu4Vw5Xy6Za7",
        ),
    ),
    (
        "slack_token",
        "SLACK_BOT_TOKEN={s} node bot.js",
        j("xo", "xb-", "2389471023-4810293847561-", "Qw8Er7Ty6Ui5Op4As3Df2Gh1"),
        j("xo", "xp-", "1029384756-1928374650192-", "Zx1Cv2Bn3Mm4Lk5Jh6Gf7Ds8"),
    ),
    (
        "slack_webhook",
        "curl -X POST -d @msg.json https://hooks.slack.com/services/{s} -> ok",
        j("T04AB", "C1D2E/B05FG3H4I5J/", "kL6mN7oP8qR9sT0uV1wX2yZ3"),
        j("T09ZY", "X8W7V/B01UT6S5R4Q/", "aB3cD4eF5gH6iJ7kL8mN9oP0"),
    ),
    (
        "aws_access_key",
        "aws_access_key_id = {s}\nregion = eu-west-1",
        j("AKIA", "4RZ7QW2N5XK3JH6M"),
        j("ASIA", "Q3WE8RT5YU2IO9PA"),
    ),
    (
        "aws_secret_key",
        "[default]\naws_secret_access_key = {s}\n",
        j("wJalrXUtnFEMI/", "K7MDENG/bPxRfiCY7q2Lm9Zw4X"),
        j("Hq8zN2vL5tR", "+Yw3mK9pB6cX1jF4dS7gA0eU2iOpq"),
    ),
    (
        "bearer_token",
        "curl -H 'Authorization: Bearer {s}' https://api.example.com/v1/items",
        j("ya29.", "a0AfH6SMBx7Kq2Lm9Zw4Xv8Tn3Rp6Yb1Hc5Jd0Ge"),
        j("9f8e7d6c5b4a", "39281706abcdEFGH"),
    ),
    (
        "jwt",
        "Set-Cookie: session={s}; Path=/; HttpOnly",
        j(
            "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9",
            ".eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkRhbmEifQ",
            ".Sfl_KxwRJSMeKKF2QT4fwpMeJf36POk6yJV-adQssw5c",
        ),
        j(
            "eyJhbGciOiJSUzI1NiJ9",
            ".eyJpc3MiOiJhdXRoLmV4YW1wbGUiLCJleHAiOjE3MDAwMDAwMDB9",
            ".dGhpc2lzbm90YXJlYWxzaWduYXR1cmVfYnV0bG9va3NsaWtlb25l",
        ),
    ),
    (
        "url_password",
        "DATABASE_URL=postgresql://app:{s}@db.internal:5432/prod",
        "s3cr3t-P4ss",
        "An0ther!Pw",
    ),
    ("password", "DB_PASSWORD={s} ./manage.py migrate", "Tr0ub4dor&3x", "c0rrectH0rse"),
    ("password", "passwd: {s}\nport: 5432", "hunter2!", "swordfish99"),
    ("password", "mysql --password {s} -u root", "M7sq1Root", "R00tPassw0rd"),
    ("secret", "secret={s}&client_id=web", "Zq8vT2mX9kLw", "Pp4Lm8Nq2Rs6"),
    ("api_key", 'settings = {{"api_key": "{s}", "timeout": 30}}', "a9f3K2mQ7xZ1", "b8e2J1lP6wY0"),
    (
        "stripe_key",
        "stripe.api_key = '{s}'",
        j("sk_", "live_", "51HxQ2eLk9Zw4Xv8Tn3Rp6Yb"),
        j("rk_", "test_", "4eC39HqLyjWDarjtT1zdp7dc"),
    ),
    (
        "google_api_key",
        "https://maps.googleapis.com/maps/api/geocode/json?address=Paris&key={s}",
        j("AIza", "SyD3x9Kq2Lm7Zw4Xv8Tn3Rp6Yb1Hc5Jd0Gk"),
        j("AIza", "SyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q"),
    ),
    (
        "basic_auth",
        "Authorization: Basic {s}\nAccept: */*",
        j("YWxhZGRpbjpv", "cGVuc2VzYW1l"),
        j("dXNlcjpo", "dW50ZXIy"),
    ),
]


@pytest.mark.parametrize(
    ("kind", "line", "secret", "other"), KINDS, ids=[f"{k[0]}-{i}" for i, k in enumerate(KINDS)]
)
def test_each_kind_is_replaced_by_a_stable_placeholder(kind: str, line: str, secret: str, other: str) -> None:
    redactor = Numbered()
    out = redactor.redact(line.format(s=secret))
    assert secret not in out
    assert out == line.format(s=f"[REDACTED:{kind}:1]")  # the text around the secret is kept intact

    again = redactor.redact(f"{line.format(s=secret)}\n{line.format(s=other)}\n{line.format(s=secret)}")
    assert secret not in again and other not in again
    expected = [line.format(s=f"[REDACTED:{kind}:{n}]") for n in (1, 2, 1)]
    assert again == "\n".join(expected)
    assert redactor.found == {kind: 2}


def test_numbering_follows_first_appearance_across_kinds() -> None:
    anthropic = j("sk-ant-", "api03-", "Xq7vR2mT9kLw4ZpB8nYc3HdF6jGs1AeU")
    aws = j("AKIA", "4RZ7QW2N5XK3JH6M")
    redactor = Numbered()
    out = redactor.redact(f"rotated {anthropic}; kept {aws}; {anthropic} is dead")
    first, second = "[REDACTED:anthropic_key:1]", "[REDACTED:aws_access_key:2]"
    assert out == f"rotated {first}; kept {second}; {first} is dead"
    # A later call reuses the earlier placeholders.
    assert (
        redactor.redact(f"{aws} and {anthropic}")
        == "[REDACTED:aws_access_key:2] and [REDACTED:anthropic_key:1]"
    )


def test_keyed_placeholders_are_stable_across_redactors_of_one_scope_only() -> None:
    """Jobs of one conversation get the same placeholder for a secret; another conversation does not."""
    aws = j("AKIA", "4RZ7QW2N5XK3JH6M")
    line = f"aws_access_key_id = {aws}; password=Tr0ub4dor&3x"
    key = b"k" * 32
    first = Redactor(key=key, scope="conv-1").redact(line)
    assert Redactor(key=key, scope="conv-1").redact(line) == first
    assert PLACEHOLDER.fullmatch(Redactor(key=key, scope="conv-1").redact(aws)) is not None
    assert Redactor(key=key, scope="conv-1").redact(aws) in first
    other_scope = Redactor(key=key, scope="conv-2").redact(line)
    assert other_scope != first and aws not in other_scope
    assert Redactor(key=b"x" * 32, scope="conv-1").redact(line) != first  # the number depends on the key
    # A number is 6 digits derived from a keyed digest: not the secret, nor any unkeyed hash of it.
    numbers = [m[2] for m in PLACEHOLDER.finditer(first)]
    assert all(len(n) == 6 for n in numbers)
    for unkeyed in (hashlib.sha256(aws.encode()).hexdigest(), hashlib.md5(aws.encode()).hexdigest()):
        assert not any(n in unkeyed or n in str(int(unkeyed, 16)) for n in numbers)


def test_placeholders_never_carry_any_part_of_the_secret() -> None:
    redactor = Numbered()
    text = "\n".join(line.format(s=secret) for _, line, secret, _ in KINDS)
    out = redactor.redact(text)
    for _, _, secret, _ in KINDS:
        assert secret not in out
    # A placeholder is a fixed kind name and a counter, nothing else.
    found = [(m.group(1), int(m.group(2))) for m in PLACEHOLDER.finditer(out)]
    assert {kind for kind, _ in found} == {kind for kind, *_ in KINDS}
    assert [n for _, n in found] == list(range(1, len(KINDS) + 1))
    assert out.count("[REDACTED:") == len(KINDS)
    plain = Redactor()
    once = plain.redact(text)
    assert plain.redact(once) == once  # placeholders are never redacted again


def test_password_in_url_keeps_scheme_user_and_host() -> None:
    out = Numbered().redact("connecting to postgresql://app:s3cr3t-P4ss@db.internal:5432/prod ...")
    assert "s3cr3t-P4ss" not in out
    assert "postgresql://app:" in out and "@db.internal:5432/prod" in out
    assert out == "connecting to postgresql://app:[REDACTED:url_password:1]@db.internal:5432/prod ..."
    assert (
        Numbered().redact("redis://:hunter22@cache:6379/0")
        == "redis://:[REDACTED:url_password:1]@cache:6379/0"
    )


PEM_BODY = "\n".join(
    [
        j("MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun", "VTLw7onLRnrq0"),
        j("/Iu6Sxz4hHfH7m0cNU1b3Z1xw+9ZbR9Y+aKJ4wQyBi8c5cBWq1D1cWj3Yh9bVx", "Rr4Tt8Kk2Mm6"),
        j("HdH0f5Yc6eQ9bPzL7ZgL0Q2r5wV8mH3kN1jS4tX7cA0pE6fU9iB2dG5lJ8oM", "1qR4uW7yZ0=="),
    ]
)


@pytest.mark.parametrize("label", ["RSA PRIVATE KEY", "PRIVATE KEY", "OPENSSH PRIVATE KEY", "EC PRIVATE KEY"])
def test_pem_private_key_spanning_lines_is_removed(label: str) -> None:
    pem = f"-----BEGIN {label}-----\n{PEM_BODY}\n-----END {label}-----"
    redactor = Numbered()
    out = redactor.redact(f"$ cat deploy_key\n{pem}\n$ echo done\ndone")
    assert out == "$ cat deploy_key\n[REDACTED:private_key:1]\n$ echo done\ndone"
    assert "BEGIN" not in out and "MIIE" not in out
    assert redactor.found == {"private_key": 1}


def test_pem_inside_json_and_truncated_pem_are_removed() -> None:
    escaped = PEM_BODY.replace("\n", "\\n")
    service_account = (
        '{"type": "service_account", "private_key": "-----BEGIN PRIVATE KEY-----\\n'
        f'{escaped}\\n-----END PRIVATE KEY-----\\n", "client_email": "bot@proj.iam.example"}}'
    )
    out = Numbered().redact(service_account)
    assert "MIIE" not in out and "1qR4uW7yZ0" not in out
    assert out.startswith('{"type": "service_account", "private_key": "[REDACTED:private_key:1]\\n"')
    truncated = f"-----BEGIN OPENSSH PRIVATE KEY-----\n{PEM_BODY}\n[... output truncated ...]"
    out = Numbered().redact(truncated)
    assert "MIIE" not in out and out.endswith("\n[... output truncated ...]")


def test_a_certificate_is_not_a_secret() -> None:
    cert = f"-----BEGIN CERTIFICATE-----\n{PEM_BODY}\n-----END CERTIFICATE-----"
    assert Numbered().redact(cert) == cert


def test_emails_only_when_enabled() -> None:
    line = "Assigned to dana.lee+ops@example.co.uk and cc bob@corp.example"
    assert Numbered().redact(line) == line
    redactor = Numbered(RedactionPolicy(emails=True))
    out = redactor.redact(line)
    assert out == "Assigned to [REDACTED:email:1] and cc [REDACTED:email:2]"
    assert redactor.found == {"email": 2}


def test_card_numbers_only_when_enabled_and_luhn_valid() -> None:
    line = "paid with 4111 1111 1111 1111, retried with 4111 1111 1111 1112 and 5555-5555-5555-4444"
    assert Numbered().redact(line) == line
    redactor = Numbered(RedactionPolicy(card_numbers=True))
    out = redactor.redact(line)
    assert (
        out
        == "paid with [REDACTED:card_number:1], retried with 4111 1111 1111 1112 and [REDACTED:card_number:2]"
    )
    assert redactor.redact("card 4111111111111111 exp 12/29") == "card [REDACTED:card_number:3] exp 12/29"
    assert redactor.found == {"card_number": 3}


def test_luhn() -> None:
    assert luhn_valid("4111111111111111") and luhn_valid("378282246310005") and luhn_valid("5555555555554444")
    assert not luhn_valid("4111111111111112") and not luhn_valid("1234567812345678")


def test_cards_do_not_catch_ordinary_numbers() -> None:
    redactor = Numbered(RedactionPolicy(card_numbers=True, emails=True))
    line = (
        "ts=1712345678901 id=20240115123045 order 4242 of 10000, port 5432, build 4111111 "
        "sha 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b, version 4.111111111111111, phone +1 555 123 4567"
    )
    assert redactor.redact(line) == line


BENIGN = [
    "commit 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b (HEAD -> main, origin/main)",
    "a3f9c2e Fix token budget rounding in ladder.py",
    "Merge: 1a2b3c4 5d6e7f8",
    "request_id=550e8400-e29b-41d4-a716-446655440000 status=200 duration_ms=34",
    "===== 142 passed, 3 skipped, 1 xfailed in 12.34s =====",
    "FAILED tests/unit/test_ladder.py::test_soft_threshold - AssertionError: assert 0.71 <= 0.7",
    "tests/unit/test_redaction.py::test_luhn PASSED                                  [ 42%]",
    "/home/dev/projects/sleepcompact/sleepcompact/adapters/redaction.py:118: in redact",
    "C:\\Users\\dev\\AppData\\Local\\Temp\\pytest-of-dev\\pytest-12\\test_x0",
    "tool_use id=toolu_01A09q90qw90lq917835lq9 name=bash",
    "call_abc123 returned exit code 0 after toolu_0_0001",
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==",
    "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAgAAAAIAQMAAAD+wSzIAAAABlBMVEX///+/v7+jQ3Y5AAAADklEQVQ",
    "The password field is validated on the server and never logged.",
    "Reset the password from the admin page; the secret rotation job runs nightly.",
    "def check_password(password: str, hashed: bytes) -> bool:",
    "    password = getpass.getpass()",
    '    password = os.environ["DB_PASSWORD"]',
    "    client = Client(api_key=api_key, timeout=30)",
    "    token = secrets.token_hex(16)",
    "PASSWORD_MIN_LENGTH = 12",
    "secret_name: app-db-credentials",
    "    secret: Optional[str] = None",
    "api_key: ${OPENAI_API_KEY}",
    "password: <your-password-here>",
    "https://github.com/acme/widgets/pull/4242#issuecomment-1712345678",
    "https://example.com:8443/path/to/resource?page=2&sort=desc",
    "ssh://git@github.com/acme/widgets.git",
    "git clone git@github.com:acme/widgets.git",
    "Bearer tokens are checked by the gateway before the request reaches us.",
    "Authorization: Bearer $TOKEN",
    "2024-01-15T10:22:33.123Z INFO worker compacted conversation c42 (81234 -> 40210 tokens)",
    "pid 4242 exited with status 137 after 1712345678 s",
    "max_tokens=4096 input_tokens=81234 output_tokens=812 cost_usd=0.0132",
    "sk-learn is a common misspelling; the package is scikit-learn",
    "AKIA prefix marks long-term AWS access key ids; ASIA marks temporary ones.",
    "eyJ is what base64 of '{\"' looks like, so JWT headers start with it.",
    "docker login --password-stdin < token.txt",
    "Use the --username and --password options instead of embedding them in the URL.",
    ":param password: When `True`, display the input using asterisks.",
    "# env api_key: return None so the base client sends the key header itself.",
    'GRANT_TYPE_REFRESH_TOKEN = "refresh_token"',
    'ENV_API_KEY = "ANTHROPIC_API_KEY"',
    "PQconnectionNeedsPassword = pq.PQconnectionNeedsPassword",
    "    username, password = self.auth_decoded",
    '    "invalid password": AuthenticationError,',
    "    file_secret_settings: SettingsSourceCallable,",
    "api_key_ids: filter usage by the API key ids given",
    "version 1.24.3, sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
]


def test_benign_coding_agent_lines_are_untouched() -> None:
    assert len(BENIGN) >= 30
    redactor = Numbered()
    changed = [(line, out) for line in BENIGN if (out := redactor.redact(line)) != line]
    assert not changed, changed
    assert redactor.found == {}
    text = "\n".join(BENIGN)
    assert Numbered(RedactionPolicy(card_numbers=True)).redact(text) == text


def test_two_megabytes_of_log_output_finish_and_lose_their_secrets() -> None:
    """No timing assertion: catastrophic backtracking would simply never finish."""
    block = "\n".join(BENIGN) + "\n"
    secrets_in = [
        j("sk-ant-", "api03-", "Xq7vR2mT9kLw4ZpB8nYc3HdF6jGs1AeU"),
        j("AKIA", "4RZ7QW2N5XK3JH6M"),
        "postgresql://app:s3cr3t-P4ss@db.internal:5432/prod",
        f"-----BEGIN PRIVATE KEY-----\n{PEM_BODY}\n-----END PRIVATE KEY-----",
    ]
    pieces: list[str] = []
    size = 0
    while size < 2 * 1024 * 1024:
        pieces.append(block)
        size += len(block)
        if len(pieces) % 200 == 0:
            pieces.append(secrets_in[len(pieces) // 200 % len(secrets_in)] + "\n")
    text = "".join(pieces)
    # Adversarial runs for the bounded patterns: long word runs, digits, dashes, '://' and '@'.
    text += (
        "a" * 200_000 + "1" * 200_000 + "-" * 100_000 + "://" * 30_000 + "@." * 50_000 + "password=" * 20_000
    )
    out = Numbered(RedactionPolicy(emails=True, card_numbers=True)).redact(text)
    assert j("sk-ant-", "api03-") not in out and j("AKIA", "4RZ7") not in out
    assert "s3cr3t-P4ss" not in out and "MIIE" not in out
    assert out.count("postgresql://app:[REDACTED:url_password:") >= 1


def test_found_reports_counts_per_kind_never_values() -> None:
    redactor = Numbered()
    key = j("sk-ant-", "api03-", "Xq7vR2mT9kLw4ZpB8nYc3HdF6jGs1AeU")
    redactor.redact(f"{key} {key} password=Tr0ub4dor&3x")
    redactor.redact("postgresql://app:s3cr3t-P4ss@db/prod and again " + key)
    found = redactor.found
    assert found == {"anthropic_key": 1, "password": 1, "url_password": 1}
    assert all(isinstance(v, int) for v in found.values())
    for value in (key, "Tr0ub4dor&3x", "s3cr3t-P4ss"):
        assert value not in repr(found) and value not in repr(vars(redactor))
    found["anthropic_key"] = 99  # a copy: the redactor's own counts are unchanged
    assert redactor.found["anthropic_key"] == 1


def test_empty_and_clean_text_come_back_unchanged() -> None:
    redactor = Numbered()
    assert redactor.redact("") == ""
    assert redactor.redact("nothing to see here") == "nothing to see here"
    assert redactor.found == {}


def test_quoted_values_are_removed_whole_even_with_escapes_and_ampersands() -> None:
    redactor = Numbered()
    out = redactor.redact('{"password": "ab\\"c&d", "user": "dana"} PASSWORD=x9&y7z ?api_key=k3y9z&page=2')
    assert out == (
        '{"password": "[REDACTED:password:1]", "user": "dana"} PASSWORD=[REDACTED:password:2]'
        " ?api_key=[REDACTED:api_key:3]&page=2"
    )
