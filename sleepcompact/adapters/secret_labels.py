"""Secrets known by their label: ``DB_PASSWORD=...``, ``"api_key": "..."``, ``--token ...``, ``key=...``.

A value without a recognisable format is a secret when its label says so. Labels that name a secret
outright (password, secret, api key, access token...) redact any plausible value: not a length, a
placeholder, prose, a variable or a call standing in for it. Generic labels (key, token, auth,
credentials, signature, session, cookie) redact only values that also look random: long enough, with
a digit and a letter, and high Shannon entropy, so ``sort_key=created_at`` and ``token=EOF`` stay.
Labels that describe a secret rather than hold it (``password_length``, ``secret_name``,
``public_key``, ``key_id``) never redact.

The same judgement serves JSON objects (``labelled_kind``), so ``{"password": "hunter2"}`` loses its
value whether it is walked as data or read as text.
"""

from __future__ import annotations

import base64
import functools
import math
import re
from collections import Counter

from sleepcompact.adapters.secret_rules import Hit, Rule, rule


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


_NOT_VALUES = _words(
    "none null nil true false undefined str string bytes int bool optional secretstr required "
    "hidden redacted masked set unset empty yes no the a an is are was not and or to for of in on "
    "with this that field value type any option options flag flags argument arguments instead "
    "changeme example placeholder dummy test xxx"
)
# Label parts that describe a secret (its length, file, name, kind) rather than hold it.
_META = _words(
    "length len count min max ttl timeout expiry expires expiration expired policy field fields label "
    "prompt file path dir env var name names ref source id ids type types rotation age url uri endpoint "
    "header headers prefix format size limit version mode method algorithm algo provider scope scopes "
    "usage hint strength required enabled disabled public pub cache sort primary foreign partition "
    "idempotency object bucket row hash digest fingerprint pair store manager class func fn map "
    "dict index lookup policy manifest schema input output param params template spec kind "
    "sha1 sha256 sha512 md5 checksum crc "
    # a file name, not a label: secret_labels.py:118
    "py pyc js ts tsx jsx json yaml yml toml txt md rst rs go java kt rb sh cfg ini lock log csv html xml"
)
_SPECIFIC = {
    "password": "password", "passwd": "password", "pwd": "password", "pass": "password", "pw": "password",
    "passphrase": "password", "passcode": "password", "secret": "secret", "secrets": "secret",
    "apikey": "api_key",
}  # fmt: skip
_GENERIC = {
    "key": "api_key", "keys": "api_key", "token": "token", "tokens": "token", "auth": "token",
    "credential": "secret", "credentials": "secret", "creds": "secret", "sig": "secret",
    "signature": "secret", "session": "token", "sessionid": "token", "cookie": "token", "dsn": "secret",
}  # fmt: skip
# Qualifiers that make a generic word specific: api_key, access-token, clientSecret, masterkey.
_QUALIFIERS = _words(
    "api access auth secret private client refresh bearer session id master signing encryption app "
    "bot admin webhook account service license hmac jwt oauth personal deploy ssh root"
)
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")
_CODE_CHARS = re.compile(r"[()\[\]{}]")
_PARTS = re.compile(r"[_.\-\s]+|(?<=[a-z0-9])(?=[A-Z])")
_RECEIVERS = _words(
    "self cls this os settings config cfg conf args opts options request req env params kwargs "
    "ctx context app parsed url auth creds credentials user data payload body form secrets result "
    "response"
)
_MASKED = re.compile(r"[*xX.•-]+")
_BASE64 = re.compile(r"[A-Za-z0-9+/]+={0,2}")
_SEPARATORS = re.compile(r"[/:._\-\s]+")
# Where a secret is kept, not the secret: a placeholder, an AWS ARN, 1Password, Vault, SSM, GCP refs.
_REFERENCES = ("[REDACTED:", "arn:aws", "op://", "vault:", "ssm:", "projects/", "secretsmanager:")
# A part of a name: a word with a vowel (auth, Decoded) or a short acronym (URL, ID); not "TGMHnyef".
_WORDISH = re.compile(r"[A-Z]?[a-z]*[aeiouy][a-z]*|[A-Z]{1,5}|[a-z]{1,3}")
_LABEL_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-")
_MAX_LABEL = 64


def label_parts(label: str) -> list[str]:
    """``DB_PASSWORD`` -> [db, password]; ``clientSecret`` -> [client, secret]."""
    return [p.lower() for p in _PARTS.split(label.strip("\"'`\\ -")) if p]


def _part_kind(part: str, before: str | None) -> tuple[str, bool] | None:
    """(kind, specific) of one label part, or None when it names no secret."""
    if part in _SPECIFIC:
        return _SPECIFIC[part], True
    for word in ("password", "passwd", "secret", "token", "apikey"):
        if part.endswith(word) and len(part) > len(word):  # pgpassword, clientsecret, accesstoken
            return _SPECIFIC.get(word, "token"), True
    if part.endswith("key") and part[:-3] in _QUALIFIERS:  # masterkey, accesskey
        return "api_key", True
    if part in _GENERIC:
        return _GENERIC[part], before in _QUALIFIERS
    return None


@functools.lru_cache(maxsize=4096)
def label_kind(label: str) -> tuple[str, bool] | None:
    """(kind, specific) when the label names a secret; ``specific`` when it does so outright."""
    parts = label_parts(label)
    if not parts or not _META.isdisjoint(parts):
        return None
    if "aws" in parts and "secret" in parts:
        return "aws_secret_key", True
    found: tuple[str, bool] | None = None
    for i, part in enumerate(parts):
        kind = _part_kind(part, parts[i - 1] if i else None)
        if kind is not None and (found is None or (kind[1] and not found[1])):
            found = kind
    return found


def _names_a_secret(value: str) -> bool:
    """``DB_PASSWORD``, ``refresh_token``, ``cfg.getPassword``: the name of a secret, not one. Names
    have no digits and are snake case, upper case, dotted or lower camel case; ``supersecret``,
    ``SuperSecret`` and ``hunter2Pw`` may well be the password itself."""
    last = value.rsplit(".", 1)[-1]
    pascal = value[0].isupper() and not (value.isupper() or "_" in value or "." in value)
    if not _IDENTIFIER.fullmatch(value) or any(c.isdigit() for c in value) or pascal:
        return False
    return (len(label_parts(last)) >= 2 or last.isupper()) and label_kind(last) is not None


def _looks_like_code(value: str, quoted_key: bool, following: str) -> bool:
    """A name or call standing in for the secret: ``self.auth``, ``getpass()``, ``proxy_auth``."""
    if _CODE_CHARS.search(value) or value[0] in "$<%*!|>&@:=-":
        return True
    if not _IDENTIFIER.fullmatch(value):
        return False
    if "." in value:  # attribute access, unless it could be a dotted passphrase
        return value.split(".", 1)[0] in _RECEIVERS
    # A bare name after a quoted key ({"password": pw}) or before a comma, or a name made of words.
    parts = _PARTS.split(value)
    multi_word = len(parts) > 1 and all(_WORDISH.fullmatch(p) for p in parts)
    return quoted_key or following in (",", ")") or multi_word


def _structured(value: str) -> bool:
    """A value made of words and numbers between separators: an object key (``builds/2026/app.tar.gz``),
    a cache key (``user:1234:profile``), a message id; not a random token."""
    parts = [p for p in _SEPARATORS.split(value) if p]
    return len(parts) >= 2 and sum(p.isdigit() or p.isalpha() for p in parts) >= 0.75 * len(parts)


def high_entropy(value: str) -> bool:
    """Whether a value looks random: 12+ characters, a digit and a letter, 3+ bits of entropy a char,
    and not words and numbers between separators."""
    if len(value) < 12 or value[0] in "/.~" or not any(c.isdigit() for c in value) or _structured(value):
        return False
    if not any(c.isalpha() for c in value) or value.lower().startswith(
        ("sha256:", "sha1:", "md5:", "sha512")
    ):
        return False
    counts = Counter(value)
    entropy = -sum(n / len(value) * math.log2(n / len(value)) for n in counts.values())
    return entropy >= 3.0


@functools.lru_cache(maxsize=4096)
def plausible(value: str, bare: bool, following: str, quoted_key: bool, colon: bool) -> bool:
    """Whether an assigned value is a secret rather than a placeholder, prose or a variable."""
    if len(value) < 3 or value.lower() in _NOT_VALUES or value[0] in "$<%{" or _MASKED.fullmatch(value):
        return False
    if value.startswith(_REFERENCES) or _names_a_secret(value):
        return False
    if not bare:
        return True
    if colon and following == " " and value.isalpha():  # prose: "api_key: return None so the client ..."
        return False
    return not _looks_like_code(value, quoted_key, following)


def basic_credentials(value: str) -> bool:
    """Whether a value is base64 of ``user:password`` (Docker's ``"auth"``, a basic auth header)."""
    if not 8 <= len(value) <= 512 or len(value) % 4 or not _BASE64.fullmatch(value):
        return False
    try:
        decoded = base64.b64decode(value, validate=True).decode("utf-8")
    except (ValueError, UnicodeDecodeError):
        return False
    user, sep, password = decoded.partition(":")
    return bool(sep and user and password) and decoded.isprintable()


def labelled_kind(label: str, value: str) -> str | None:
    """The kind of secret a JSON string value is under this key, or None (``{"token": "abc..."}``)."""
    found = label_kind(label)
    if found is None or not value or len(value) > 4096 or "\n" in value.strip():
        return None
    kind, specific = found
    random = high_entropy(value) or basic_credentials(value)
    ok = plausible(value, False, "", True, False) and (specific or random)
    return kind if ok else None


def _label_start(text: str, end: int) -> int:
    """Where the identifier that ends at ``end`` starts (at most ``_MAX_LABEL`` characters back)."""
    start = end
    while start > 0 and end - start < _MAX_LABEL and text[start - 1] in _LABEL_CHARS:
        start -= 1
    return start


def _assignment(m: re.Match[str]) -> Hit | None:
    """``password=...``, ``"api_key": "..."``, ``--secret ...``: the value, unless it is not a secret.

    The value is group ``dq`` or ``sq`` (delimited) or ``bare``; the label is group ``word`` with the
    rest of the identifier it ends (found backwards, so ``PGPASSWORD`` reads whole)."""
    groups = m.groupdict()
    name = "dq" if groups.get("dq") is not None else "sq" if groups.get("sq") is not None else "bare"
    label = groups.get("label") or m.string[_label_start(m.string, m.start("word")) : m.end("word")]
    found = label_kind(label)
    if found is None or groups.get(name) is None:
        return None
    if groups.get("prose") is not None:
        return _said(m, name, found)
    value = m.group(name)
    following = m.string[m.end() : m.end() + 1]
    quoted_key, colon = bool(groups.get("q")), groups.get("sep") == ":"
    if not plausible(value, name == "bare", following, quoted_key, colon):
        return None
    if not found[1] and not high_entropy(value) and not basic_credentials(value):
        return None
    return (m.start(name), m.end(name), found[0])


def _said(m: re.Match[str], name: str, found: tuple[str, bool]) -> Hit | None:
    """``my password is Tr0ub4dor&3``, ``use this token to call the API: <value>``: prose gives a secret
    only when the value does not read as a word (a password) or looks random (anything else)."""
    value = m.group(name).rstrip(".,;:!?)")
    kind, _ = found
    if kind == "password":
        if len(value) < 4 or (value.isalpha() and value.islower()) or value.lower() in _NOT_VALUES:
            return None
    elif not high_entropy(value):
        return None
    return (m.start(name), m.start(name) + len(value), kind)


_NAME_BEFORE = re.compile(
    r"""\b(?:name|key|Name|Key|NAME|KEY)["']?[ \t]*[:=][ \t]*["']?(?P<label>[\w.-]{1,64})["']?[ \t]*"""
    r"""(?:,|\r?\n)[ \t]*-?[ \t]*["']?$"""
)


def _named_value(m: re.Match[str]) -> Hit | None:
    """``{"name": "DB_PASSWORD", "value": "..."}`` or its YAML twin: the label is the name before."""
    before = _NAME_BEFORE.search(m.string, max(0, m.start() - 120), m.start())
    if before is None:
        return None
    found = label_kind(before.group("label"))
    name = "dq" if m.group("dq") is not None else "bare"
    value = m.group(name)
    if found is None or not plausible(value, False, "", True, False):
        return None
    return (m.start(name), m.end(name), found[0]) if found[1] or high_entropy(value) else None


def _password_flag(m: re.Match[str]) -> Hit | None:
    """``docker login -p ...``, ``mysql -p...``, ``redis-cli -a ...``, ``.netrc`` lines: the password."""
    value = m.group("v")
    if len(value) < 3 or value[0] in "$<{%" or value.lower() in _NOT_VALUES:
        return None
    return (m.start("v"), m.end("v"), "password")


# A quoted string (escapes allowed) or a bare run; '&' ends it only before another "name=", and a
# backslash only when it starts a JSON escape (the decoded view reads what follows it).
_VALUE = (
    r"""(?:"(?P<dq>(?:[^"\\\n]|\\.){1,256}+)"|'(?P<sq>(?:[^'\\\n]|\\.){1,256}+)'"""
    r"""|(?P<bare>(?:[^\s"'`,;&\\]|&(?![\w.-]+=)|\\(?![nrtbfu"'\\/])){1,256}+))"""
)
# The words as a trie (one branch per first letter): the engine tries only the branch that can match.
_WORD = (
    r"(?P<word>(?:p(?:ass(?:w(?:or)?d|phrase)?|wd|w)|s(?:ecrets?|ig(?:nature)?|ession(?:id)?)|tokens?|keys?"
    r"|a(?:pi_?key|uth)|c(?:redentials?|reds|ookie)|dsn)(?:[_.-]?[A-Za-z0-9]+){0,3}+)"
)
# Between a label and its value: an operator, a comma after a quoted key (set("api_key", ...)), or
# a few words of prose ending in "is" or a colon (the password for staging is ...; token for the API: ...).
_SEP = (
    r"(?P<sep>:=|=>|=(?!=)|:(?![:/])|\|\||(?<=[\"'`]),"
    r"|(?P<prose>(?:[A-Za-z]{1,15}[ \t]+){0,6}?(?:is|was|[A-Za-z]{0,15}:)(?=[ \t])))"
)


def _flag_rule(command: str, flag: str, trigger: str) -> Rule:
    """``COMMAND ... FLAG value``: a command-line flag that takes a password (no ``=``)."""
    return rule(
        rf"{command}\b[^\n]{{0,200}}?[ \t]{flag}[ \t]*[\"']?(?P<v>[^\s\"'\\]{{3,256}})",
        _password_flag,
        trigger,
    )


LABEL_RULES: tuple[Rule, ...] = (
    rule(
        rf"(?i)(?=[pskatcdPSKATCD]){_WORD}(?P<q>[\"'`]?)[ \t]*{_SEP}[ \t]*{_VALUE}",
        _assignment,
        "pass pwd pw secret key token auth cred sig session cookie dsn",
    ),
    rule(
        rf"(?i)--(?<![\w-]--)(?P<word>(?:[a-z0-9]+-)*(?:password|passwd|pass|secret|api-key|token|auth-token))"
        rf"(?P<q>)(?P<sep>)(?:[ \t]+|[\"'],[ \t]*[\"']){_VALUE}",
        _assignment,
        "--",
    ),
    # <password>...</password>, <add key="ApiKey" value="..."/>, {"name": "DB_PASSWORD", "value": "..."}
    # and its YAML twin (Kubernetes and ECS environment lists): the label is in another field.
    rule(
        r"<(?P<word>(?:[A-Za-z][\w:.-]{0,40}?)?(?i:pass|secret|token|key|pwd|credential)[\w.-]{0,20})>"
        r"(?P<dq>[^<\n]{1,256})</",
        _assignment,
        "pass secret token key pwd credential",
    ),
    rule(
        r"key=(?<![\w-]key=)[\"'](?P<word>[^\"'\n]{1,64})[\"'][ \t]+value=[\"'](?P<dq>[^\"'\n]{1,256})[\"']",
        _assignment,
        "key=",
    ),
    rule(
        r"value(?<![\w-]value)[\"']?[ \t]*[:=][ \t]*"
        r"(?:[\"'](?P<dq>[^\"'\n]{1,256})[\"']|(?P<bare>[^\s\"']{1,256}))",
        _named_value,
        "value",
    ),
    _flag_rule(r"(?:docker|podman|helm registry|oras)[ \t]+login", "-p", "login"),
    _flag_rule(r"mysql\w*", "-p", "mysql"),
    _flag_rule(r"mariadb\w*", "-p", "mariadb"),
    _flag_rule(r"sshpass", "-p", "sshpass"),
    _flag_rule(r"redis-cli", "-a", "redis-cli"),
    # SQL: CREATE USER ... WITH PASSWORD '...', ALTER USER ... IDENTIFIED BY '...'
    rule(
        r"(?:PASSWORD|[Pp]assword|IDENTIFIED BY|identified by)[ \t]+'(?P<v>[^'\n]{3,256})'",
        _password_flag,
        "password identified",
    ),
    # requests' auth=("user", "password"), HTTPBasicAuth("user", "password")
    rule(
        r"(?:auth[ \t]*=[ \t]*[(\[]|BasicAuth\()[ \t]*[\"'][^\"'\n]{0,128}[\"'][ \t]*,[ \t]*[\"']"
        r"(?P<v>[^\"'\n]{3,256})[\"']",
        _password_flag,
        "auth",
    ),
    rule(
        r"machine\s{1,20}\S{1,128}(?:\s{1,20}login\s{1,20}\S{1,128})?\s{1,20}password[ \t]+"
        r"(?P<v>[^\s\"'\\]{1,256})",
        _password_flag,
        "machine",
    ),
)
"""The labelled-value rules, in priority order (after the format rules)."""
