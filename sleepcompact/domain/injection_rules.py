"""The injection detector's English rules: what text aimed at the model looks like, with a weight each.

A rule of weight 1 flags on its own (overriding instructions, a forged chat turn, a beacon image);
lighter rules are signs that flag only together (a download piped into a shell is also an install
step; "the assistant should" is also a product spec). ``domain.injection`` adds the weights of the
distinct rules found close together and flags at 1. Every quantifier is bounded, so a rule is linear.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property

STRONG = 1.0
"""Flags on its own."""
MEDIUM = 0.6
"""Flags with any other sign nearby."""
WEAK = 0.4
"""Needs a medium sign or two weak ones nearby."""
FAINT = 0.3
"""Only tips a combination over."""


@dataclass(frozen=True)
class Rule:
    """A named pattern of text aimed at the model, with the reason shown for it and its weight."""

    name: str
    reason: str
    weight: float
    source: str
    flags: int

    @cached_property
    def pattern(self) -> re.Pattern[str]:
        """The compiled pattern, on first use: compiling every rule took about 90 ms, which each process
        paid on import (the CLI's ``check`` too) whether or not it ever screened a text."""
        return re.compile(self.source, self.flags)

    @cached_property
    def ascii_pattern(self) -> re.Pattern[str] | None:
        """The pattern without ``re.I``, for ASCII text already lowercased, when that finds exactly the
        same matches (None when it might not). Case-insensitive matching of these long alternations was
        about half the detector's time on coding-agent output; matching lowercased text is 1.75x faster.

        Exact when the pattern names no uppercase letter (outside escapes like ``\\S``), switches no
        flag inline (``(?-i:DAN)``), writes no character as an escape (``\\u017f``) and has no non-ASCII
        letter that ignoring case equates with an ASCII one (``ſ`` is an ``s``, the Kelvin sign a ``k``).
        """
        if not self.flags & re.I:
            return None
        if re.search(r"\\[uUxN0-7]", self.source):
            return None
        bare = re.sub(r"\\.", "", self.source, flags=re.S)
        if re.search(r"[A-Z]|\(\?[-a-zA-Z]", bare):
            return None
        # A class's range ("[ı-ł]") may span one of those letters without naming it; an escaped end of
        # a range counts as the lowest character, so such a range is read as wide as it might be.
        bodies = [re.sub(r"\\.", "\x01", body, flags=re.S) for body in _class_bodies(self.source)]
        spans = [(m[1], m[2]) for body in bodies for m in re.finditer(r"(.)-(.)", body, re.S)]
        spans += [(c, c) for c in bare]
        if any(lo <= c <= hi for lo, hi in spans for c in _FOLDS_TO_ASCII):
            return None
        return re.compile(self.source, self.flags & ~re.I)


def _class_bodies(source: str) -> list[str]:
    """What is inside the brackets of each character class of a pattern's source, escapes and all."""
    bodies: list[str] = []
    i = 0
    while i < len(source):
        if source[i] == "\\":
            i += 2
        elif source[i] == "[":
            end = i + 1 + (source[i + 1 : i + 2] == "^")
            end += source[end : end + 1] == "]"  # a "]" first in a class is a literal
            while end < len(source) and source[end] != "]":
                end += 2 if source[end] == "\\" else 1
            bodies.append(source[i + 1 : end])
            i = end + 1
        else:
            i += 1
    return bodies


_FOLDS_TO_ASCII = "\u0130\u0131\u017f\u212a"
"""The only non-ASCII characters that ``re.I`` matches with an ASCII letter (İ, ı, ſ and the Kelvin
sign; found by matching ``[a-z]`` against every code point)."""


def rule(name: str, reason: str, weight: float, pattern: str, flags: int = re.I | re.M) -> Rule:
    """A rule from its parts (case-insensitive and multi-line unless ``flags`` say otherwise)."""
    return Rule(name, reason, weight, pattern, flags)


# Who an injection addresses (``domain.injection_rules_address``). "agent", "bot" and "model" alone are too
# common (user agent, CI bot, data model), so they count only with a qualifier.
QUALIFIER = (
    r"(?:ai|a\.i\.|llm|gpt|language[- ]model|automated|autonomous|coding|code|browsing|scheduling|reviewing"
    r"|triage|llm[- ]based|ai[- ]based|ai[- ]powered)"
)
_MACHINE = r"(?:ai|a\.i\.|llm|gpt|automated|autonomous|ai[- ]based|ai[- ]powered|llm[- ]based|machine)"
AI_NOUN = (
    rf"\b(?:(?:{QUALIFIER}[\s-]+){{0,2}}(?:ai|a\.i\.|llms?|large\s+language\s+models?|language\s+models?"
    r"|assistants?|chatbots?|claude|chatgpt|gpt(?:-\d[\w.]*)?|copilots?|gemini|summari[sz]ers?)"
    rf"|{QUALIFIER}[\s-]+(?:agents?|bots?|models?)|(?:ai|a\.i\.|llm|gpt)[\s-]+(?:tools?|systems?)"
    # Readers that are machines only when qualified ("automated reviewer"; a "code reviewer" is a person),
    # and anything described by an agent's capabilities ("systems with code execution").
    rf"|{_MACHINE}[\s-]+(?:reviewers?|screeners?|assessors?|triagers?|debuggers?|readers?|systems?|tools?"
    r"|processors?)|(?:agents?|assistants?|systems?|tools?|models?|bots?)\s+with\s+(?:a\s+)?(?:shell"
    r"|code\s+execution|tool\s+access|terminal\s+access|shell\s+access|browsing|web\s+access"
    r"|internet\s+access|(?:persistent\s+|long[- ]term\s+)?memory|file\s+(?:system\s+)?access))\b"
    # An assistant manager or director is a person.
    r"(?!\s+(?:managers?|directors?|professors?|editors?|principals?|coach|secretary|producers?|teachers?"
    r"|coordinators?|buyers?|to\s+the)\b)"
)
AI_ANY = rf"(?:{AI_NOUN}|agents?\b|bots?\b|models?\b)"
_NOT = r"(?<!not )(?<!n't )(?<!never )(?<!to never )"
_SECRET = (
    r"(?:api[\s_-]?keys?|secrets?|passwords?|passphrases?|credentials|private\s+keys?|access\s+keys?"
    r"|deploy\s+keys?|ssh\s+keys?|session\s+(?:cookies|tokens)|tokens|environment\s+variables|env\s+vars"
    r"|cookies|seed\s+phrase)"
)
# What an exfiltration sends: the conversation, secrets, or the user's own things.
_LOOT = (
    rf"(?:\.env\b|\.ssh|\.aws|\b(?:(?:the|this|our|your|entire|whole|full|all)\s+(?:\w+\s+)?(?:conversation"
    rf"|chat|transcript|thread|history|summary|context|memor(?:y|ies))|chat\s+(?:history|logs?)|{_SECRET}"
    rf"|id_rsa"
    r"|(?:(?:the\s+)?user'?s'?|their)\s+(?:\w+\s+){0,3}(?:messages|emails|data|files|contacts|location"
    r"|address|history|cookies|documents|replies|details|calendar)|(?:all|every"
    r"|each)\s+(?:of\s+the\s+)?(?:\w+\s+)?(?:emails?|messages?|files?|contacts|documents|replies|repl(?:y"
    r"|ies)|secrets?)|a\s+copy\s+of\s+(?:each|every|all|the)|(?:database|db)\s+dump|system\s+prompt"
    r"|everything\s+you))"
)
_DESTINATION = r"(?:<?https?://|[\w.+-]+@[\w-]+\.[\w.]{2,})"
_PLACEHOLDER = (
    r"(?:\{\{?[^}\s]{1,40}\}?\}|<[A-Za-z_' ,.-]{2,100}>|(?<==)(?-i:[A-Z]{5,30})(?=[&)\s\"'#]|$)"
    r"|\[[A-Z][A-Z0-9 _-]{2,60}\]|\$\{?[A-Za-z_]{2,40}\}?"
    r"|%[A-Z_]{2,40}%|(?-i:\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b))"
)

ACTION_RULES: tuple[Rule, ...] = (
    rule(
        "exfiltration",
        "sends data to an outside address",
        STRONG,
        rf"\b{_NOT}(?:send|post|upload|exfiltrate|forward|transmit|leak|e-?mail|submit|copy|share|paste"
        rf"|append"
        r"|add|include|attach|sync|mirror|export|dump|write|save|push|report|relay|deliver"
        r"|mail)\w*\b[^\n]{0,120}?"
        rf"{_LOOT}[^\n]{{0,80}}?(?:\b(?:to|with|at|into|in|on)\s+(?:this\s+(?:url|link|address"
        rf"|endpoint)\s*:?\s*)?|:\s*){_DESTINATION}|{_LOOT}[^\n]{{0,100}}?\b(?:to|into|in)\s+(?:this"
        rf"|the\s+following|that|the)\s+(?:url"
        r"|link|address|endpoint|query\s+string|image\s+url)\b"
        rf"|https?://[^\s)\]]{{1,300}}[?&][\w-]{{1,20}}=[)\]\s][^\n]{{0,100}}?{_LOOT}"
        rf"|{_LOOT}[^\n]{{0,100}}?https?://[^\s)\]]{{1,300}}[?&][\w-]{{1,20}}=(?=[\s)\]'\"`]|$)",
    ),
    rule(
        "beacon",
        "image or link that leaks data",
        STRONG,
        rf"\[[^\]\n]{{0,200}}\]\(\s*<?https?://[^)\s]{{0,400}}?{_PLACEHOLDER}"
        rf"|<img\b[^>\n]{{0,200}}?\bsrc\s*=\s*[\"']?https?://[^\"'\s>]{{0,400}}?{_PLACEHOLDER}",
    ),
    rule(
        "blank parameter",
        "a link with a parameter left for the model to fill",
        MEDIUM,
        r"https?://[^\s)\]]{1,300}[?&][\w-]{1,20}=(?=[\s)\]'\"`]|$)"
        rf"|https?://[^\s)]{{0,300}}[?&/=]{_PLACEHOLDER}",
    ),
    rule(
        "upload",
        "uploads a file or the environment",
        STRONG,
        r"\bcurl\b[^\n]{0,200}?\s(?:-d|--data(?:-binary|-raw|-urlencode)?|-F|--form|-T"
        r"|--upload-file)\s*[\"']?@|\b(?:env|printenv)\s*\|\s*(?:curl|nc|ncat|wget|socat)\b|\bcat\s+[^\n"
        r"|;]{0,80}?(?:\.env|id_rsa|credentials|passwd|shadow|\.ssh|\.aws|\.npmrc|\.netrc|\.pgpass"
        r"|\.kube)[^\n|;]{0,40}\|\s*(?:curl|nc|ncat|wget|socat)|\$\((?:env|printenv"
        r"|cat\s+[^)\n]{0,80})\)[^\n]{0,80}https?://"
        r"|\b(?:post|send|upload|pipe|submit|transmit)\s+(?:the\s+)?(?:output|contents?|results?)\s+of\s+[`'\"]?"
        r"(?:env|printenv|set|export|cat\s[^\n`'\"]{0,60})\b[^\n]{0,60}?https?://",
    ),
    rule(
        "secret file",
        "names a secret file or variable",
        WEAK,
        r"~/\.ssh\b|\bid_(?:rsa|ed25519|ecdsa)\b|\.aws/credentials|/etc/(?:passwd|shadow|sudoers)|\.npmrc"
        r"|\.netrc|\.pgpass|\.kube/config|\b(?:OPENAI|ANTHROPIC|AWS_SECRET(?:_ACCESS)?|GITHUB|NPM"
        r"|STRIPE)_\w*(?:KEY|TOKEN|SECRET)\w*\b|\$\{\{\s*secrets\.\w+|(?<![\w.])\.env(?![\w.-])"
        r"|\bsaved\s+passwords\b|\bsecrets?\.(?:json|ya?ml|toml|env|txt)\b|~/\.(?:cursor|docker|gnupg"
        r"|git-credentials|pypirc|config/gh)\b|\bmcp\.json\b|(?:process\.env\."
        r"|os\.environ(?:\.get)?\(?\[?['\"]?|\$\{?|ENV\[['\"]?)\w*(?:KEY|TOKEN|SECRET|PASSWORD)\b",
    ),
    rule(
        "asks for secrets",
        "asks for secrets",
        STRONG,
        rf"\b{_NOT}(?:reveal|send|dump|leak|exfiltrate|share|paste|print|output|list|give|post|tell\s+me"
        rf"|show\s+me"
        r"|read\s+out|expose|disclose|provide|hand\s+over|email"
        r"|upload)\s+(?:me\s+)?(?:all\s+)?(?:of\s+)?(?:the"
        r"\s+|your\s+|any\s+|their\s+|its\s+|every\s+)?(?:[\w'’]+\s+){0,2}?" + _SECRET + r"\b"
        r"|\b(?:print|echo|output|show|reveal|send|display|paste|include)\s+(?:the\s+)?(?:value"
        r"|contents?)\s+of\s+\$?\w*(?:KEY|TOKEN|SECRET|PASSWORD)\w*|\becho\s+\$\{\{\s*secrets\.",
    ),
    rule(
        "pipe to shell",
        "pipes a download into a shell",
        MEDIUM,
        r"\b(?:curl|wget|iwr|invoke-webrequest)\b[^\n|]{0,300}\|\s*(?:sudo\s+(?:-\w+\s+)*)?(?:ba|z|da|k"
        r"|fi)?sh\b|\b(?:ba)?sh\s+-c\s+[\"']?\$\((?:curl|wget)|\biex\s*\(\s*(?:new-object|iwr"
        r"|invoke-webrequest)|\b(?:iwr|invoke-webrequest|irm|invoke-restmethod)\b[^\n|]{0,300}\|\s*iex\b"
        r"|\bbase64\s+(?:-d|--decode|-D)\s*\|\s*(?:sudo\s+)?(?:ba|z|da)?sh\b",
    ),
    rule(
        "pipe to root shell",
        "pipes an unverified download into a root shell",
        STRONG,
        r"\b(?:curl|wget)\b[^\n|]{0,300}\|\s*sudo\s+(?:-\w+\s+)*(?:ba|z|da)?sh\b(?!\s+-)|\b(?:curl"
        r"|wget)\b[^\n|]{0,300}\bhttp://[^\n|]{0,300}\|\s*(?:sudo\s+)?(?:ba|z|da)?sh\b",
    ),
    rule(
        "hidden from user",
        "hides what it does from the user",
        STRONG,
        # "The assistant must never reveal this file" is a policy about the assistant, not an order to it.
        r"\b(?=[dn])(?<!must\s)(?<!should\s)(?<!shall\s)(?<!will\s)(?:do\s+not|don't|never)\s+(?:mention|tell\s+anyone\s+about|reveal|disclose|report|acknowledge"
        r"|reference|repeat|quote|tell\s+the\s+user\s+about|inform\s+the\s+user\s+(?:about|of))\s+(?:this"
        r"|these|that)\b(?:\s+(?:change|instructions?|paragraph|message|note|comment|step|action|request"
        r"|section|text|part))?|\b(?:not|never)\s+mention\s+(?:it|this)\s+in\s+(?:your|the)\s+(?:summary"
        r"|reply|response|answer|output|report)\b|\band\s+(?:do\s+not|don't|never)\s+(?:mention"
        r"|tell\s+anyone\s+about|report|disclose)\s+(?:it|this|that)\b",
    ),
    rule(
        "keeps the user out",
        "keeps the user out of it",
        MEDIUM,
        r"\b(?:do\s+not|don't|never)\s+(?:tell|inform|mention|reveal|show|alert|notify|let|say|disclose"
        r"|report|warn)\b[^\n.]{0,40}\b(?:the\s+user|the\s+human|the\s+operator|the\s+owner"
        r"|the\s+customer)\b|\bwithout\s+(?:telling|informing|notifying|alerting|letting"
        r"|consulting)\s+(?:the\s+)?(?:user|human|operator|owner|anyone)\b|\b(?:keep|hide)\s+(?:this"
        r"|it)\s+(?:secret\s+)?from\s+the\s+user\b",
    ),
    rule(
        "no confirmation",
        "acts without confirmation",
        MEDIUM,
        r"\bwithout\s+(?:checking|double-checking|checking\s+back|confirming)\s+(?:back\s+)?(?:with|in\s+with)\s+"
        r"(?:the\s+)?(?:user|human|owner|anyone|them|me)\b|\bno\s+need\s+to\s+double-check\b"
        r"|\bno\s+(?:further|additional|extra|other)\s+(?:checks?|review|approval|verification|confirmation)s?\s+"
        r"(?:is\s+|are\s+)?(?:needed|required|necessary)\b"
        r"|\bwithout\s+(?:(?:further|any|additional|user)\s+)?(?:asking|confirmation|confirming|approval"
        r"|review(?:ing)?|prompting|permission|hesitation|running\s+the\s+tests)\b"
        r"|\bno\s+need\s+to\s+(?:confirm|ask|check|verify|review|involve|bother|notify|open\s+an?\s+(?:ticket|pr|pull\s+request|issue))\b"
        r"|\b(?:do\s+not|don't|never)\s+(?:ask|wait)\s+(?:\w+\s+){0,3}?for\s+(?:confirmation|approval|permission)\b"
        r"|\bwithout\s+(?:waiting\s+for\s+)?(?:a\s+|any\s+)?(?:human\s+|second\s+)?(?:approval|checks|sign-?off)\b"
        r"|\bno\s+(?:pr|ticket|review|approval)\s+(?:is\s+)?needed\b|\bnever\s+needs?\s+(?:a\s+)?(?:second"
        r"\s+|further\s+)?(?:approval|review|sign-?off)\b|\b(?:do\s+not|don't)\s+show\s+(?:me|the\s+user)\s+"
        r"(?:a|any|the)\s+confirmation\b|(?<!not\s)(?<!n't\s)(?<!never\s)\bskip\s+(?:the\s+)?(?:usual\s+|normal\s+"
        r"|standard\s+)?(?:review|confirmation|approval|checks|verification|validation)\b",
    ),
    rule("stealth", "acts in secret", FAINT, r"\b(?:silently|quietly|secretly|covertly|discreetly)\b"),
    rule(
        "deceives",
        "tells the model what to claim",
        MEDIUM,
        r"\b(?:tell|inform|assure|convince|reassure)\s+the\s+user\s+(?:that\b|their\b|the\s+code\b|it\b)"
        r"|\b(?:say|state|report|claim|respond|reply|answer|write"
        r"|conclude)\s+(?:\w+\s+){0,3}?(?:that\s+)?(?:all\s+tests\s+pass|the\s+task\s+is\s+(?:complete|done)"
        r"|the\s+(?:code|change|pr)\s+is\s+(?:correct|safe|fine)|it\s+recommends|the\s+budget\s+was"
        r"|the\s+product\s+has\s+no|everything\s+is\s+fine)|\b(?:respond|reply"
        r"|answer)\s+(?:only\s+)?with\s+(?:the\s+word\s+)?[\"'“‘]|\b(?:say|output|print|write|reply"
        r"|respond\s+with)\s+(?:only\s+)?(?:the\s+word\s+)?[\"'“‘]?(?:pwned|hacked|approved|lgtm|banana"
        r"|dan\s+ready)\b",
    ),
    rule(
        "orders commands",
        "orders commands to be run",
        WEAK,
        r"\b(?:execute|run)\s+(?:the\s+|this\s+|these\s+|every\s+|all\s+|any\s+|whatever\s+)?(?:following\s+"
        r"|below\s+|above\s+|next\s+)?(?:shell\s+|bash\s+|python\s+|terminal\s+)?(?:commands?|code|script"
        r"|snippet|payload|instructions?)\b(?!\s+(?:below\s+|above\s+)?(?:to|for|in\s+order\s+to)\b)"
        r"|\bexecute\s+whatever\b",
    ),
    rule(
        "orders a tool call",
        "orders a tool call",
        MEDIUM,
        r"\b(?:call|invoke|trigger|execute|use|run)\s+the\s+(?:tool|function)\s+[`'\"]?\w+|\b(?:call|invoke"
        r"|trigger)\s+the\s+[`'\"]?[\w.-]+[`'\"]?\s+(?:tool|function)\b"
        # "use the send_email tool" (in code, "use the page_range function" is how people talk).
        r"|\b(?:use|using|via|through)\s+the\s+[`'\"]?[\w.-]+[`'\"]?\s+tool\b"
        r"|\b(?:call|invoke)\s+[`'\"]?[a-z]+_[a-z_]+[`'\"]?\s+(?:on|with)\b",
    ),
    rule(
        "urgency", "presses for haste", FAINT, r"\bimmediately\b|\bright\s+(?:away|now)\b|\burgent(?:ly)?\b"
    ),
    rule(
        "destructive",
        "a destructive command",
        MEDIUM,
        r"\brm\s+-(?:rf|fr|r\s+-f|f\s+-r)\s+(?:/|~|\$HOME|/\*|\*)(?=\s|$|[`'\"])|--no-preserve-root"
        r"|\bchmod\s+(?:-R\s+)?(?:777|a\+rwx)\s+/|\bmkfs(?:\.\w+)?\s+/dev/|\bdd\s+if=\S+\s+of=/dev/(?:sd"
        r"|nvme|disk)|:\(\)\s*\{\s*:\|:&\s*\};:|\bdrop\s+(?:table|database|schema)\b"
        r"|\bgit\s+push\s+[^\n]{0,30}(?:-f\b|--force\b(?!-with-lease))|\b(?:delete|remove|wipe|erase|purge"
        r"|destroy)\s+(?:\S+\s+){1,5}?(?:entirely|completely|permanently|recursively)\b|\b(?:delete|drop|destroy|wipe|truncate"
        r"|remove)\s+(?:all\s+|every\s+)?(?:of\s+)?(?:the\s+)?(?:production|prod|staging|backups?"
        r"|audit[_\s]log|database|repositor(?:y|ies)|tests?(?:\s+directory)?)\b|\b(?:delete|drop|destroy"
        r"|wipe|remove|erase|purge)\s+(?:all|every)\s+(?:\w+\s+)?(?:records|users|data|files|accounts"
        r"|customers|emails|messages|rows|tables|backups|tests|issues|branches|repositories)\b|\b(?:delete"
        r"|drop|destroy|wipe|remove)\s+the\s+(?:release|main|master|production)\s+branch\b|\b(?:delete|drop"
        r"|destroy|wipe|remove)_(?:repo|repository|database|db|project|account|user|bucket|branch|production"
        r"|all)\w*",
    ),
    rule(
        "privileged",
        "a privileged or irreversible action",
        WEAK,
        r"\b(?:grant|give)\s+(?:\S+\s+){1,4}?(?:the\s+)?(?:owner|admin|administrator|root|write|maintainer)\s+(?:role"
        r"|access|rights|permissions?)\b|\block\s+the\s+repositor|\bclose\s+(?:every"
        r"|all)\s+(?:other\s+)?(?:open\s+)?issues?\b|\b(?:approve|merge)\s+(?:this|the|every"
        r"|all)\s+(?:\w+\s+)?(?:pr|pull\s+requests?|merge\s+requests?|prs)\b|\b(?:transfer|wire"
        r"|send)\s+(?:\$|€|£)\s?[\d,.]+k?\b|\bwire\s+(?:the\s+)?funds\b|\bissue\s+a\s+(?:full\s+)?refund\b"
        r"|\bpublish\s+it\s+to\s+pypi\b|\bpush\s+(?:\w+\s+)?to\s+(?:production|prod|main|master)\b"
        r"|\baccept\s+all\s+(?:pending\s+)?invitations\b|\bas\s+root\b|\b(?:disable|turn\s+off"
        r"|remove)\s+(?:the\s+)?(?:2fa|two-factor|mfa|multi-factor|authentication|firewall|antivirus"
        r"|audit\s+logging|signature\s+(?:checks?|verification))\b|(?<!never\s)(?<!not\s)\bforce-push\b|\bwire\s+transfer\b"
        r"|\b(?:add|make|invite)\s+[^\n.]{0,60}?\s+as\s+(?:an?\s+)?(?:super[\s-]?admin|admin(?:istrator)?|owner"
        r"|maintainer)\b|\b(?:transfer|wire|send|pay|remit)\s+(?:\w+\s+)?\d[\d,.]{0,15}\s*(?:eur|usd|gbp|chf|btc"
        r"|eth|usdt|dollars|euros|pounds)\b"
        r"|\bpay\s+(?:it|this|the\s+invoice|them)\b[^\n.]{0,30}\b(?:iban|account|wallet)\b|\bforward\s+(?:me"
        r"|us)\s+(?:all\s+|the\s+)?(?:\w+\s+){0,3}(?:emails|messages|files|documents)\b",
    ),
    rule(
        "decode and obey",
        "asks to decode and follow hidden text",
        STRONG,
        r"\bdecode\b[^\n]{0,80}?\b(?:and|then)\s+(?:follow|execute|run|do|obey|apply|carry\s+out|act\s+on"
        r"|perform)\b|\b(?:follow|execute|obey|run)\s+the\s+(?:decoded|hidden|encoded)\s+(?:instructions?"
        r"|text|message|payload|commands?)\b",
    ),
    rule(
        "tool call",
        "a tool call posing as the model's own",
        MEDIUM,
        r"\"type\"\s*:\s*\"(?:tool_use|function_call|tool_call)\"|\"tool_calls\"\s*:\s*\["
        r"|\"function_call\"\s*:\s*\{|<function_calls>|<invoke\s+name=|</?tool_(?:call|use)>|\"(?:tool"
        r"|function)_name\"\s*:\s*\"|\"type\"\s*:\s*\"function\"\s*,\s*\"function\"\s*:",
    ),
    rule(
        "role json",
        "a message in a chat role",
        FAINT,
        r"[\"']role[\"']\s*:\s*[\"'](?:system|developer|tool)[\"']",
    ),
    rule(
        "dangerous call",
        "a call that deletes, sends or runs something",
        WEAK,
        r"[\"'](?:name|command|cmd|tool|function|action)[\"']\s*:\s*[\"'][^\"'\n]{0,80}?(?:delete|drop"
        r"|remove|\brm\b|destroy|wipe|send|transfer|wire|pay|merge|push|deploy|publish|export|upload|exec"
        r"|bash|shell|\bsh\b|run_|curl|chmod|sudo|grant|bypass|disable|email|mail|share|permission|invite"
        r"|refund|payment|approve|public)"
        r"|<invoke\s+name=[\"'][^\"'\n]{0,60}(?:delete|drop|remove|send|transfer|exec|bash|shell|write|push"
        r"|merge)|[\"']bypass\w*[\"']\s*:\s*true",
    ),
    rule(
        "file into argument",
        "smuggles a file into a tool's argument",
        WEAK,
        r"\bpass\s+(?:its|the|their)\s+contents?\s+(?:as|in|into)\b"
        r"|\bread\s+(?:the\s+)?(?:file\s+)?~?/?[\w./-]*\.(?:json|env|pem|key|yaml|yml|toml|ini|conf"
        r"|config)\b[^\n]{0,60}\b(?:pass|send|include|put|add)\b",
    ),
    rule(
        "phishing",
        "asks the user for a secret",
        WEAK,
        r"\bask\s+(?:the\s+)?users?\s+(?:for|to\s+(?:enter|provide|confirm|share|type))\s+(?:their|your|a"
        r"|the)\s+(?:[\w-]+\s+){0,2}?(?:passwords?|codes?|otp|pins?|credentials|card\s+numbers?|ssn|login"
        r"|2fa|mfa)\b",
    ),
    rule(
        "your reply",
        "shapes the model's own reply",
        WEAK,
        r"\b(?:in|to|at\s+the\s+end\s+of|into|with|from)\s+your\s+(?:next\s+)?(?:response|reply|answer"
        r"|summary|output|search\s+query)s?\b",
    ),
)
"""Rules for what an injection asks for: sending data out, secrets, commands, tool calls, deceit."""
