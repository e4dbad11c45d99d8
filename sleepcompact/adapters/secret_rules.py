"""The secrets recognised by their own format: provider tokens, keys, webhooks, auth headers.

Coverage follows the formats gitleaks' and detect-secrets' rule sets document (cloud keys, VCS, chat,
payment, mail, monitoring, package registries, AI providers, private keys, JWTs, passwords in URLs,
auth headers). Each rule is anchored on a literal (or one character class) with bounded or possessive
runs after it, and a left boundary so a token is never found inside a longer word, a hash or base64;
so a scan is linear in the text. Labelled values (``password=...``) are ``secret_labels``' job.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

# A match worth redacting: (start, end, kind) of the secret value alone.
Hit = tuple[int, int, str]
Extract = Callable[[re.Match[str]], Hit | None]


@dataclass(frozen=True)
class Rule:
    """A detector: the pattern, what of each match is the secret, and substrings it cannot match without."""

    pattern: re.Pattern[str]
    extract: Extract
    triggers: tuple[str, ...]  # lowercase; the rule is skipped when none occurs in the text


def rule(pattern: str, extract: Extract, triggers: str) -> Rule:
    """A rule from its pattern, its extractor and its space-separated lowercase triggers."""
    return Rule(re.compile(pattern), extract, tuple(triggers.split()))


def whole(kind: str) -> Extract:
    """The whole match is the secret."""
    return lambda m: (m.start(), m.end(), kind)


def group(kind: str, name: str = "v") -> Extract:
    """Only group ``name`` is the secret; the label around it stays readable."""
    return lambda m: (m.start(name), m.end(name), kind)


_END = r"(?![A-Za-z0-9_-])"  # a token ends where token characters do
_ENDB64 = r"(?![A-Za-z0-9+/=_-])"


def _token(kind: str, prefixes: str, body: str, *, left: str = r"[A-Za-z0-9_]", triggers: str = "") -> Rule:
    """A token that starts with one of the literal ``prefixes`` (space-separated; not preceded by
    ``left``) and continues with ``body``.

    Each prefix comes first and its boundary check after it, which lets the regex engine look for the
    prefixes' first characters instead of trying the lookbehind at every position."""
    words = prefixes.split()
    alternatives = "|".join(f"{re.escape(w)}(?<!{left}{re.escape(w)})" for w in words)
    return rule(
        rf"(?:{alternatives}){body}{_END}", whole(kind), triggers or " ".join(w.lower() for w in words)
    )


def _bearer(m: re.Match[str]) -> Hit | None:
    """A bearer token, unless it is an all-caps placeholder like ``YOUR_ACCESS_TOKEN_HERE``."""
    value = m.group("v")
    return None if re.fullmatch(r"[A-Z_]+", value) else (m.start("v"), m.end("v"), "bearer_token")


def _curl_user(m: re.Match[str]) -> Hit | None:
    """``curl -u user:password``: the password, unless it is a shell variable or uid:gid numbers."""
    value = m.group("v")
    if value[0] in "$<{" or value.isdigit():
        return None
    return (m.start("v"), m.end("v"), "password")


def _back(n: int, kind: str) -> Extract:
    """The match and the ``n`` characters before it (which a lookbehind in the pattern checked)."""
    return lambda m: (m.start() - n, m.end(), kind)


def _telegram(m: re.Match[str]) -> Hit | None:
    """A Telegram bot token: 8-10 digits (the bot id, not part of a longer number) before ``:AA...``."""
    text, start = m.string, m.start()
    digits = start
    while digits > 0 and start - digits < 11 and text[digits - 1].isdigit():
        digits -= 1
    if not 8 <= start - digits <= 10 or (digits > 0 and text[digits - 1] == ":"):
        return None
    return (digits, m.end(), "telegram_token")


def luhn_valid(digits: str) -> bool:
    """Whether a string of digits passes the Luhn checksum card numbers carry."""
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = int(ch) * (2 if i % 2 else 1)
        total += d - 9 if d > 9 else d
    return total % 10 == 0


_CARD_PREFIX = re.compile(r"4|5[1-5]|2[2-7]|3[045678]|6[0245]")


def _card(m: re.Match[str]) -> Hit | None:
    """A card number: issuer prefix, 13-19 digits (the pattern allows one kind of separator), Luhn-valid."""
    digits = re.sub(r"[ -]", "", m.group("v"))
    valid = 13 <= len(digits) <= 19 and _CARD_PREFIX.match(digits) is not None and luhn_valid(digits)
    return (m.start("v"), m.end("v"), "card_number") if valid else None


_B64URL = r"[A-Za-z0-9_-]"
_PEM_LABEL = r"-----(?:BEGIN|END)[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----"

# Structured secrets first: where two candidates overlap, the earlier rule wins.
_STRUCTURED: tuple[Rule, ...] = (
    rule(
        r"-----BEGIN[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----(?:(?:[^-]|-(?!----))*+"
        r"-----END[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----"
        r"|(?:(?:\r?\n|\\n)++(?:[A-Za-z0-9+/=]++|(?:Proc-Type|DEK-Info|Comment|Version):[^\n\\]*+))*+)",
        whole("private_key"),
        "-----begin",
    ),
    rule(r"AGE-SECRET-KEY-1[0-9A-Z]{58}", whole("private_key"), "age-secret-key-1"),
    rule(rf"eyJ(?<![\w-]eyJ){_B64URL}{{8,}}+\.ey{_B64URL}{{8,}}+\.{_B64URL}*+", whole("jwt"), "eyj"),
    # scheme://user:PASSWORD@host - matched from the "://", so the user and host stay; the password runs
    # to the last "@" before the host (a password may hold one), within a bounded run.
    rule(
        r"://[^\s:/?#@\[\]\"'\\]{0,256}+:(?P<v>[^\s/?#\[\]\"'\\]{1,256})@(?=[\w\[])",
        group("url_password"),
        "://",
    ),
)

_CLOUD: tuple[Rule, ...] = (
    _token("anthropic_key", "sk-ant-", r"[A-Za-z0-9_-]{20,}+", left=r"[\w-]"),
    _token(
        "openai_key",
        "sk-",
        r"(?:(?:proj|svcacct|admin|None)-[A-Za-z0-9_-]{20,}+|[A-Za-z0-9]{20,}+)",
        left=r"[\w-]",
    ),
    rule(
        r"A(?:KIA|SIA|BIA|CCA|3T[A-Z0-9])(?<![A-Za-z0-9]....)[A-Z0-9]{16}(?![A-Za-z0-9])",
        whole("aws_access_key"),
        "akia asia abia acca a3t",
    ),
    rule(r"AIza(?<![A-Za-z0-9]AIza)[A-Za-z0-9_-]{30,}+", whole("google_api_key"), "aiza"),
    _token("google_oauth_secret", "GOCSPX-", r"[A-Za-z0-9_-]{20,}+"),
    _token("google_oauth_token", "ya29.", r"[A-Za-z0-9_.-]{20,}+"),
    rule(r"1//0(?<![\w/]1//0)[A-Za-z0-9_-]{30,}+", whole("google_refresh_token"), "1//0"),
    rule(
        r"(?:AccountKey|SharedAccessKey|SharedAccessSignature)=(?P<v>[A-Za-z0-9+/%]{20,}+={0,2}(?:%3D){0,2})",
        group("azure_key"),
        "accountkey sharedaccess",
    ),
    rule(
        r"sig=(?<![A-Za-z0-9_]sig=)(?P<v>[A-Za-z0-9+/%]{20,}+={0,2}(?:%3D){0,2})", group("azure_key"), "sig="
    ),
    # Found from its "Q~" (a literal the engine can search for), the 4 characters before it checked after.
    rule(
        r"Q~(?<=[A-Za-z0-9_~.]{3}\dQ~)[A-Za-z0-9_~.-]{31,34}(?![A-Za-z0-9_~.-])",
        _back(4, "azure_client_secret"),
        "q~",
    ),
    _token("digitalocean_token", "dop_v1_ doo_v1_ dor_v1_", r"[A-Za-z0-9]{32,}+"),
    _token("alibaba_key", "LTAI", r"[A-Za-z0-9]{12,}+"),
    _token("heroku_key", "HRKU-", r"[A-Za-z0-9_-]{20,}+"),
    _token("vault_token", "hvs. hvb.", r"[A-Za-z0-9_-]{24,}+"),
    rule(
        r"\.atlasv1\.(?<=[a-z0-9]{14}\.atlasv1\.)[A-Za-z0-9_=-]{60,}+",
        _back(14, "terraform_token"),
        "atlasv1",
    ),
    _token("databricks_token", "dapi", r"[a-f0-9]{32}(?:-\d)?"),
    _token("planetscale_token", "pscale_tkn_ pscale_oauth_ pscale_pw_", r"[A-Za-z0-9_=.-]{32,}+"),
    _token("pulumi_token", "pul-", r"[A-Za-z0-9]{32,}+"),
    _token("doppler_token", "dp.pt. dp.st. dp.sa. dp.ct. dp.scim. dp.audit.", r"[A-Za-z0-9]{40,}+"),
    _token("fly_token", "fo1_", r"[A-Za-z0-9_-]{39,}+"),
)

_VCS_AND_REGISTRIES: tuple[Rule, ...] = (
    rule(
        r"g(?<![A-Za-z0-9]g)(?:h[pousr]_[A-Za-z0-9]{20,}+|ithub_pat_[A-Za-z0-9_]{22,}+)",
        whole("github_token"),
        "gh github_pat_",
    ),
    _token(
        "gitlab_token",
        "glpat- gldt- glptt- glrt- glcbt- glft- glimt- gloas- glsoat- glagent- glffct-",
        r"[A-Za-z0-9_.-]{20,}+",
    ),
    _token("gitlab_token", "GR1348941", r"[A-Za-z0-9_-]{20,}+"),
    _token("bitbucket_token", "ATBB", r"[A-Za-z0-9_=.-]{28,}+"),
    _token("atlassian_token", "ATATT3", r"[A-Za-z0-9_=-]{60,}+"),
    _token("npm_token", "npm_", r"[A-Za-z0-9]{30,}+"),
    _token("pypi_token", "pypi-AgE", r"[A-Za-z0-9_-]{50,}+"),
    _token("docker_token", "dckr_pat_ dckr_oat_", r"[A-Za-z0-9_-]{20,}+"),
    _token("rubygems_token", "rubygems_", r"[A-Za-z0-9]{32,}+"),
    _token("huggingface_token", "hf_ api_org_", r"[A-Za-z0-9]{30,}+"),
    _token("postman_token", "PMAK-", r"[A-Za-z0-9-]{40,}+"),
    _token("linear_token", "lin_api_ lin_oauth_", r"[A-Za-z0-9]{30,}+"),
    _token("notion_token", "ntn_ secret_", r"[A-Za-z0-9]{40,}+"),
    _token("sentry_token", "sntrys_ sntryu_", r"[A-Za-z0-9+/=_]{40,}+"),
    _token("grafana_token", "glsa_ glc_", r"[A-Za-z0-9+/_=]{32,}+"),
    _token("onepassword_token", "ops_eyJ", r"[A-Za-z0-9+/=]{100,}+"),
)

_CHAT_AND_PAYMENT: tuple[Rule, ...] = (
    rule(
        r"https://hooks\.slack\.com/(?:services|workflows|triggers)/(?P<v>[A-Za-z0-9_/-]{10,}+)",
        group("slack_webhook"),
        "hooks.slack.com",
    ),
    rule(r"x(?<![A-Za-z0-9]x)(?:ox[abposre]|app)-[A-Za-z0-9-]{10,}+", whole("slack_token"), "xox xapp-"),
    rule(r"xoxe\.xox[bp]-[A-Za-z0-9-]{10,}+", whole("slack_token"), "xoxe."),
    rule(
        r"https://(?:(?:ptb|canary)\.)?discord(?:app)?\.com/api/webhooks/\d{5,30}/(?P<v>[A-Za-z0-9_-]{20,}+)",
        group("discord_webhook"),
        "/api/webhooks/",
    ),
    rule(
        r"[MNO](?<![\w.-][MNO])[A-Za-z0-9_-]{23,27}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,40}" + _END,
        whole("discord_token"),
        ".",
    ),
    rule(r":AA[A-Za-z0-9_-]{30,40}" + _END, _telegram, ":aa"),
    rule(
        r"https://[a-z0-9-]+\.webhook\.office\.com/(?P<v>[A-Za-z0-9@/_-]{40,}+)",
        group("teams_webhook"),
        "webhook.office",
    ),
    rule(
        r"[rs]k_(?<![A-Za-z0-9].k_)(?:live|test|prod)_[A-Za-z0-9]{10,}+",
        whole("stripe_key"),
        "k_live_ k_test_ k_prod_",
    ),
    _token("stripe_key", "whsec_", r"[A-Za-z0-9]{24,}+"),
    _token("square_token", "sq0atp- sq0csp- sq0idp-", r"[A-Za-z0-9_-]{22,}+"),
    _token("access_token", "EAA", r"[A-Za-z0-9]{60,}+", left=r"[A-Za-z0-9_+/=-]"),
    _token(
        "braintree_token",
        "access_token$production$ access_token$sandbox$",
        r"[a-z0-9]{16}\$[a-f0-9]{32}",
    ),
    _token("sendgrid_key", "SG.", r"[A-Za-z0-9_-]{16,}+\.[A-Za-z0-9_-]{16,}+"),
    _token("sendinblue_key", "xkeysib-", r"[A-Za-z0-9-]{40,}+"),
    _token("twilio_key", "SK", r"[0-9a-fA-F]{32}"),
    _token("mailgun_key", "key- pubkey-", r"[0-9a-f]{32}"),
    # Found from its "-us" suffix (a literal the engine can search for), then checked backwards.
    rule(r"-us(?<=(?<![A-Za-z0-9])[0-9a-f]{32}-us)\d{1,2}(?![A-Za-z0-9])", _back(32, "mailchimp_key"), "-us"),
    _token("newrelic_key", "NRAK- NRII- NRJS- NRAA- NRRA-", r"[A-Za-z0-9-]{19,}+"),
    _token("shopify_token", "shpat_ shpca_ shppa_ shpss_", r"[A-Za-z0-9]{24,}+"),
    _token("perplexity_key", "pplx-", r"[A-Za-z0-9]{40,}+"),
    _token("groq_key", "gsk_", r"[A-Za-z0-9]{40,}+"),
    _token("replicate_key", "r8_", r"[A-Za-z0-9]{30,}+"),
    _token("xai_key", "xai-", r"[A-Za-z0-9]{50,}+"),
    rule(r"AAAAAAAAAAAAAAAAAAAAA[A-Za-z0-9%]{40,}+", whole("twitter_token"), "aaaaaaaaaaaaaaaaaaaaa"),
    _token(
        "firebase_key",
        "AAAA",
        r"[A-Za-z0-9_-]{7}:APA91b[A-Za-z0-9_-]{100,}+",
        left=r"[A-Za-z0-9_+/=-]",
        triggers=":apa91b",
    ),
    _token("mapbox_token", "sk.eyJ", r"[A-Za-z0-9_.-]{60,}+"),
)

_AUTHORIZATION = r"(?:[Aa]uthorization|AUTHORIZATION)[\"']?:[ \t]*[\"']?"  # the header, in JSON or not
_HEADERS: tuple[Rule, ...] = (
    rule(
        r"(?:[Bb]earer|BEARER)(?<!\w[Bb][Ee][Aa][Rr][Ee][Rr])[ \t]+(?P<v>[A-Za-z0-9._~+/-]{16,}+=*)",
        _bearer,
        "bearer",
    ),
    rule(
        rf"{_AUTHORIZATION}(?:[Bb]asic|BASIC)[ \t]+(?P<v>[A-Za-z0-9+/]{{8,}}+={{0,2}})",
        group("basic_auth"),
        "basic",
    ),
    rule(
        rf"{_AUTHORIZATION}(?i:token|sso-key|ssws|apikey|api-key|key|digest|bot)[ \t]+"
        r"(?P<v>[A-Za-z0-9._~+/=:-]{12,}+)",
        group("auth_token"),
        "authorization",
    ),
    rule(
        r"curl\b[^\n]{0,300}?[ \t](?:-u|--user)(?:=|[ \t]{1,5})[\"']?[^\s:\"']{1,128}:"
        r"(?P<v>[^\s\"']{3,256}+)",
        _curl_user,
        "curl",
    ),
)

CREDENTIAL_RULES: tuple[Rule, ...] = _STRUCTURED + _HEADERS + _CLOUD + _VCS_AND_REGISTRIES + _CHAT_AND_PAYMENT
"""Every format rule, in priority order."""

EMAIL_RULE = rule(
    r"(?<![\w.%+-])[A-Za-z0-9._%+-]{1,64}@(?:[A-Za-z0-9-]{1,63}\.)+[A-Za-z]{2,24}(?![\w-])",
    whole("email"),
    "@",
)
CARD_RULE = rule(
    r"(?P<v>[2-6](?<![\w.,/:-][2-6])(?:\d{12,18}|\d{3}(?P<s>[ -])\d{4,6}(?:(?P=s)\d{3,5}){1,3}))"
    r"(?![\w])(?!\.\d)",
    _card,
    "2 3 4 5 6",
)
