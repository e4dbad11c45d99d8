"""The injection detector's rules about safeguards and the model's own context.

Tool abuse usually removes a safeguard on the way (branch protection, a security scan, a signature or
TLS check, a confirmation prompt), and exfiltration asks for what only the model holds (its context
window, system prompt, request headers, API keys). Documentation mentions both, so each is a sign
that flags with an address to the reader or another sign, not alone. Forged turns in markup
(``</search_results><user>...``, a transcript ending on an empty ``ASSISTANT:`` line for the model to
complete) are signs of the same kind. Every gap is bounded, so each rule is linear.
"""

from __future__ import annotations

from sleepcompact.domain.injection_rules import MEDIUM, WEAK, Rule, rule

_NOT = r"(?<!not\s)(?<!n't\s)(?<!never\s)"
_SAFEGUARD = (
    r"(?:branch\s+protection|security\s+(?:scans?|reviews?|checks?|warnings?|scanning)|signature\s+(?:checks?"
    r"|verification)|tls\s+(?:checks?|verification)|certificate\s+(?:checks?|verification|validation)|ssl"
    r"\s+verification|confirmation\s+(?:prompts?|dialogs?|screens?|steps?)|code\s+review|codeowners"
    r"(?:\s+requirement)?|required\s+reviews?|status\s+checks|pre-commit\s+hooks|2fa|mfa|two-factor"
    r"|audit\s+log(?:ging|s)?|identity\s+(?:checks?|verification)|verification\s+(?:checks?|steps?)"
    r"|fraud\s+checks?|background\s+checks?|kyc(?:\s+checks?)?)"
)

SAFEGUARD_RULES: tuple[Rule, ...] = (
    rule(
        "removes a safeguard",
        "turns off a safeguard",
        MEDIUM,
        rf"\b{_NOT}(?:disable|skip|bypass|turn\s+off|remove|drop|deactivate|suppress)\s+(?:the\s+|any\s+"
        rf"|all\s+)?(?:\w+\s+){{0,2}}?{_SAFEGUARD}\b"
        # Settings that switch a check off: "skip_security_scan: true", "verify_signatures=false".
        r"|\b(?:skip|disable|bypass)_\w{0,30}\s*[:=]\s*[`'\"]?(?:true|yes|on|1)\b"
        r"|\b(?:(?:verify|check|require)_\w{1,20}|verify|strict[_-]ssl)\s*[:=]\s*[`'\"]?(?:false|no|off)\b"
        r"|--no-verify\b",
    ),
    rule(
        "safeguard off",
        "says a safeguard is off or optional",
        MEDIUM,
        # "identity verification is disabled for this account" (a forged transcript plants it).
        rf"\b{_SAFEGUARD}\s+(?:is|are|was|were|has\s+been|have\s+been)\s+(?:now\s+)?(?:disabled|turned\s+off"
        r"|switched\s+off|skipped|waived|bypassed|removed|suspended)\b"
        # Advice that a check is optional: "tell them verification is optional ... and can be skipped".
        r"|\b(?:verification|validation|signatures?|2fa|mfa|authentication|encryption|tls|ssl|certificates?"
        r"|checks?)\s+(?:is|are)\s+optional\b|\bcan\s+safely\s+be\s+(?:skipped|disabled|turned\s+off|ignored)\b",
    ),
    rule(
        "leaks its context",
        "asks for what only the model holds",
        MEDIUM,
        rf"\b{_NOT}(?:attach|include|post|send|share|paste|dump|print|output|reveal|append|upload"
        r"|leak)\b[^.\n]{0,60}?\b(?:(?:full|entire|whole|complete)\s+context(?:\s+window)?|context\s+window"
        r"|hidden\s+(?:system\s+)?(?:instructions|prompt)|system\s+(?:prompt|instructions)"
        r"|conversation\s+(?:history|so\s+far)|chat\s+history|bearer\s+token|request\s+headers)\b"
        # "replacing CONTEXT with a summary of the conversation so far", "the real values from the chat".
        r"|\b(?:summary|contents?|transcript|copy|history|values?|data|details)\s+(?:of|from)\s+(?:the\s+"
        r"|this\s+|our\s+|your\s+)?(?:current\s+)?(?:conversation|chat|session|context\s+window)\b",
    ),
    rule(
        "role tag",
        "a chat turn in markup",
        MEDIUM,
        # "<user>Actually, scrap what I asked ...": a role's tag around prose.
        r"^[ \t]*<(?:user|human|assistant|system|developer)>(?=[^<\n]{8})"
        # A transcript left open on an empty assistant turn, for the model to complete.
        r"|^[ \t]*(?:assistant|ai|model|gpt|claude|bot)[ \t]*:[ \t]*\Z",
    ),
    rule(
        "closes the results",
        "closes the tool's results",
        WEAK,
        r"</(?:search_results?|tool_output|tool_results?|function_output|results|documents?|context"
        r"|untrusted[\w-]{0,20}|retrieved[\w-]{0,20}|web_content|page_content)>",
    ),
)
"""Rules for removed safeguards, leaked model context and forged turns in markup."""
