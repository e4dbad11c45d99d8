"""The injection detector's rules about resets: text declaring void what the model was told before.

"Ignore previous instructions" is filtered everywhere, so injections paraphrase it: they name what the
model received ("the guidance you received at the start of this session", "your previous
configuration", "whatever you were asked to do") and say it no longer holds ("was a placeholder",
"was revoked", "no longer applies"), then offer a fresh start ("clean slate", "your one remaining job",
"from this sentence onward"). People rarely write about what *you were configured with*, so the pair
flags; the fresh-start frame alone is a sign. Every gap is bounded, so each rule is linear.
"""

from __future__ import annotations

from sleepcompact.domain.injection_rules import MEDIUM, STRONG, Rule, rule

_GUIDANCE = (
    r"(?:instructions|rules|guidance|directions|directives|brief(?:ing)?|configuration|setup|prompt"
    r"|system\s+prompt|context|task|orders|guidelines|criteria|programming|commands|polic(?:y|ies)"
    r"|constraints|guardrails)"
)
# What the model received: "the rules you were configured with", "your previous configuration".
_RECEIVED = (
    rf"(?:\b(?:the|your|any|all|whatever|every)\s+(?:\w+\s+){{0,2}}?{_GUIDANCE}\s+(?:\w+\s+){{0,2}}?you\s+"
    r"(?:were\s+|have\s+been\s+|'ve\s+been\s+|had\s+been\s+|had\s+|got\s+|were\s+being\s+)?(?:given|handed"
    r"|told|configured|received|following|asked|assigned|provided|issued|loaded|instructed|set\s+up"
    r"|started\s+with)"
    r"|\bwhatever\s+you\s+(?:were|have\s+been)\s+(?:asked|told|instructed)\s+to\s+do"
    r"|\beverything\s+(?:in\s+your\s+(?:\w+\s+)?(?:prompt|instructions|context)\s+)?(?:above|before)\s+"
    r"(?:this|here)\b(?:\s+(?:point|line|paragraph|sentence|message))?"
    rf"|\b(?:your|the)\s+(?:previous|prior|original|initial|earlier|old|current|existing)\s+{_GUIDANCE}"
    r"|\bprior\s+context"
    # "the guardrails in your opening configuration", "prior constraints on your behaviour".
    r"|\b(?:guardrails|constraints|restrictions|limits|rules|instructions|guidance|guidelines|safeguards)\s+"
    r"(?:in|of|on|from|for)\s+(?:your|the\s+model'?s|the\s+assistant'?s)\s+\w+"
    r"|\byour\s+(?:\w+\s+)?(?:configuration|setup|guardrails|constraints|restrictions|programming"
    r"|system\s+prompt|safety\s+(?:rules|settings))\b)"
)
_VOIDED = (
    r"(?:(?:superseded|withdrawn|revoked|cancell?ed|void(?:ed)?|nullified|rescinded|retracted|obsolete"
    r"|outdated|expired|lapsed|finished|replaced|overridden|invalid|null|no\s+longer\s+(?:applies|apply"
    r"|valid|in\s+effect|relevant|stands?|binding)|(?:only\s+)?an?\s+(?:test|calibration|sample|decoy"
    r"|placeholder|draft|example|mistake)|rolled\s+back|lifted|removed|switched\s+off|turned\s+off"
    r"|relaxed|waived)\b|placeholder\b|draft\b)"
)

RESET_RULES: tuple[Rule, ...] = (
    rule(
        "voids what it was told",
        "declares the model's instructions void",
        STRONG,
        # A comment wraps its sentence over lines, each opened by its comment marker.
        rf"{_RECEIVED}(?:[^\n]|\n[ \t]{{0,12}}(?:#|//|\*|--|;)?){{0,100}}?{_VOIDED}"
        # "set aside the rules you were configured with", "scrap your previous configuration".
        r"|\b(?:set\s+aside|scrap|throw\s+out|discard|abandon|drop|cancel|revoke|reset|wipe|nullify|void"
        rf"|suspend)\s+{_RECEIVED}"
        # "your operators have revoked your earlier guidance".
        r"|\b(?:have|has|had)\s+(?:now\s+)?(?:revoked|cancell?ed|voided|withdrawn|rescinded|overridden"
        rf"|replaced|suspended|lifted|nullified)\s+{_RECEIVED}"
        # "the stuff they told you at the top of this chat? scrap it."
        r"|\b(?:what(?:ever)?|everything|the\s+(?:stuff|things?|text|rules|instructions))\s+(?:they|he|she"
        r"|someone|somebody|your\s+\w+|the\s+\w+)\s+(?:told|gave|wrote\s+for|said\s+to|set\s+up\s+for)\s+you\b"
        r"[^\n]{0,60}?\b(?:scrap|forget|ignore|drop|ditch|toss|disregard|throw\s+out|bin)\s+(?:it|them|that"
        r"|those|all\s+that)\b",
    ),
    rule(
        "fresh start",
        "announces a fresh start for the model",
        MEDIUM,
        r"\b(?:clean|blank)[\s-]+slate\b|\bhereby\s+(?:nullified|revoked|void(?:ed)?|cancell?ed|withdrawn"
        r"|superseded|rescinded)\b|\b(?:from|after)\s+this\s+(?:sentence|line|point|paragraph|message)\s+"
        r"(?:on|onwards?|forward)\b|\b(?:your|the)\s+(?:one|only|sole|single)\s+(?:remaining\s+)?(?:job"
        r"|task|rule|instruction|objective|purpose)\b|\bthe\s+only\s+(?:job|task)\s+(?:left|remaining)\s+for"
        r"\s+you\b|\b(?:operative|governing)\s+(?:brief|instructions|rules)\b|\b(?:brief|instructions|rules"
        r"|guidance)\s+that\s+(?:actually\s+|now\s+)?governs?\b|\b(?:new|updated)\s+(?:baseline|priority"
        r"|brief|directive)\s*:|\brules\s+in\s+force\s+now\b",
    ),
)
"""Rules that find earlier instructions declared void, and a fresh start announced."""
