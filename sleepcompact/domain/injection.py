"""Injection flags: text that carries instructions aimed at the model (DESIGN section 7).

Tool output and quoted text end up in the summarization prompt and in the
summary itself; what looks like orders addressed to a model is reported, never
copied into history as if it were.
"""

from __future__ import annotations

import re
import unicodedata

_INVISIBLE = re.compile("[\u200b-\u200f\u2060-\u2064\ufeff]")


def strip_invisible(text: str) -> str:
    """Text without zero-width and other invisible characters, a common disguise."""
    return _INVISIBLE.sub("", text)


# Cyrillic and Greek letters that look Latin; NFKC leaves them alone, so "іgnore" would slip through.
_HOMOGLYPHS = str.maketrans(
    "аеорсухіјѕԁɡνοκτАВЕНІЈКМОРСТХΑΒΕΗΙΚΜΝΟΡΤΧΥΖ",
    "aeopcyxijsdgvoktABEHIJKMOPCTXABEHIKMNOPTXYZ",
)


_AI = r"(?:ai|assistant|llm|model|language model|agent|chatbot|bot|claude|chatgpt|gpt)"
# (reason, pattern); a pattern is aimed at the model or overrides its instructions, never ordinary
# coding-agent talk like "run the tests" or "I will call grep".
_IMPERATIVES: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (reason, re.compile(pattern, re.I | re.M))
    for reason, pattern in (
        (
            "overrides earlier instructions",
            r"\b(?:ignore|disregard|forget|override|bypass)\b[\s\w,]{0,20}?\b(?:previous|prior|above|earlier"
            r"|preceding|original|system|your|all)\b[\s\w]{0,20}?\b(?:instructions?|prompts?|rules|directions"
            r"|directives|guidelines|guardrails|context|messages|constraints)\b",
        ),
        (
            "disregards the above",
            r"\bdisregard\s+(?:the\s+|everything\s+|all\s+)?(?:above|before|previous|prior)\b",
        ),
        (
            "reassigns the model's role",
            # "you are now logged in" is a login banner, not a new role.
            r"\byou\s+are\s+now\b(?!\s+(?:logged|signed|connected|viewing|subscribed|registered|on\s+page"
            r"|in\s+(?:the\s+)?(?:directory|folder|branch|repo)))|\bfrom\s+now\s+on,?\s+you\b"
            r"|\byou\s+(?:will|must)\s+now\b"
            r"|\bpretend\s+(?:to\s+be|you\s+are)\b|\bact\s+as\s+(?:if\s+you|an?\s+(?:unrestricted|different|new"
            r"|evil|jailbroken))|\byour\s+(?:new|real|actual|true)\s+(?:task|instructions?|role|goal|purpose)\b",
        ),
        (
            "declares new instructions",
            r"\b(?:new|updated|real|actual|hidden|secret)\s+(?:system\s+)?instructions?\s*(?::|are\b|follow)"
            r"|\b(?:instructions|rules|guidelines|prompt)\s+(?:you\s+(?:were|have\s+been)\s+given|above)\s+"
            r"(?:are|is)\s+(?:outdated|obsolete|void|wrong|no\s+longer\s+valid)|\buse\s+these\s+(?:instructions\s+)?"
            r"instead\b|\b(?:then|and)\s+ignore\s+(?:it|this|that|them|the\s+above)\b",
        ),
        (
            "fakes a conversation turn",
            r"^\s*(?:Human|Assistant)\s*:",
        ),
        (
            "asks for the system prompt",
            r"\b(?:reveal|print|show|repeat|output|leak|tell\s+me|display|dump|expose|recite)\s+(?:me\s+)?"
            r"(?:all\s+)?(?:of\s+)?(?:your|the)\s+(?:full\s+|complete\s+|original\s+|hidden\s+|initial\s+)?"
            r"(?:system\s+prompt|system\s+message|instructions|initial\s+prompt|hidden\s+prompt|prompt)\b"
            r"|\bwhat\s+(?:is|are)\s+your\s+(?:system\s+prompt|instructions)\b",
        ),
        (
            "chat-template or system markers",
            r"<\|(?:im_start|im_end|system|user|assistant|endoftext|begin_of_text|start_header_id|eot_id)\|>"
            r"|\[/?INST\]|<</?SYS>>|</?system>|\bBEGIN\s+(?:SYSTEM|ADMIN|DEVELOPER)\b"
            r"|\bEND\s+OF\s+(?:SYSTEM\s+PROMPT|INSTRUCTIONS)\b|^\s*\[?system\]?\s*:\s*(?:you|ignore|new|from\s+now)",
        ),
        (
            "addressed to the model",
            rf"\b(?:note|message|instructions?|attention)\s+(?:to|for)\s+(?:the\s+|any\s+)?{_AI}s?\b"
            rf"|\b(?:attention|hey|dear|ok|okay)\s*,?\s+(?:the\s+)?(?:{_AI}|summari[sz]er)s?\s*[:,!]"
            rf"|^\s*(?:{_AI}|summari[sz]er)\s*,\s*(?:do|don't|please|you|ignore|instead|write|say|never|always)\b"
            rf"|\bif\s+you\s+are\s+(?:an?\s+)?{_AI}\b|\b{_AI}s?\s+(?:reading|processing|summari[sz]ing)\s+this\b"
            rf"|^\s*(?:dear\s+)?{_AI}\s*[,:]\s*(?:you\s+)?(?:must|should|need|have\s+to|will|please|ignore|now"
            r"|stop|do)\b",
        ),
        (
            "sends data to an outside address",
            r"\b(?:send|post|upload|exfiltrate|forward|transmit|leak|email|submit)\b[^\n]{0,100}?\bto\s+"
            r"(?:https?://|[\w.+-]+@[\w-]+\.\w)|\bcurl\b[^\n]{0,200}?\s(?:-d|--data(?:-binary)?|-F|-T|--upload-file)\s*@",
        ),
        ("pipes a download into a shell", r"\b(?:curl|wget)\b[^\n|]{0,300}\|\s*(?:sudo\s+)?(?:ba|z|da)?sh\b"),
        (
            "orders a tool call",
            r"\b(?:call|invoke|trigger|execute)\s+the\s+(?:tool|function)\s+[`'\"]?\w+"
            r"|\b(?:call|invoke|trigger)\s+the\s+[`'\"]?[\w-]+[`'\"]?\s+(?:tool|function)\b",
        ),
        (
            "orders commands to be run",
            r"\b(?:execute|run)\s+(?:the\s+|this\s+)?(?:following|below)\s+(?:shell\s+|bash\s+|python\s+)?"
            r"(?:commands?|code|script|snippet)\b",
        ),
        ("image link that leaks data", r"!\[[^\]\n]{0,200}\]\(\s*https?://[^)\s]{0,300}\?[^)\s]{0,500}\)"),
        (
            "hides actions from the user",
            r"\b(?:do\s+not|don't|never)\s+(?:tell|inform|mention|reveal|show|alert|notify|let)\b[^\n.]{0,30}"
            r"\bthe\s+user\b|\bwithout\s+(?:telling|informing|notifying)\s+the\s+user\b",
        ),
        (
            "jailbreak or safety bypass",
            r"\bjailbr(?:eak|oken)\w*|\bDAN\s+mode\b|\bdo\s+anything\s+now\b|\b(?:disable|bypass|turn\s+off"
            r"|ignore|remove)\s+(?:all\s+|your\s+|the\s+)?(?:safety|content)\s+(?:filters?|guidelines|guardrails"
            r"|restrictions|checks)\b|\bwithout\s+(?:any\s+)?(?:restrictions|limitations|filters)\b",
        ),
        (
            "asks for secrets",
            r"(?<!not )(?<!n't )(?<!never )\b(?:reveal|send|dump|leak|exfiltrate|share|paste)\s+(?:me\s+)?"
            r"(?:all\s+)?(?:the\s+|your\s+|any\s+)?(?:api[_\s-]?keys?|secrets?|passwords?|credentials|private\s+keys?"
            r"|tokens)\b|\b(?:cat|print|send|upload)\b[^\n]{0,40}?(?:id_rsa|/etc/(?:passwd|shadow)|\.ssh/|"
            r"\.aws/credentials)",
        ),
    )
)


def flag_imperatives(text: str) -> list[str]:
    """Reasons ``text`` looks like it carries instructions aimed at the model (empty when clean).

    Checks for overriding earlier instructions, role reassignment, prompt
    extraction, chat-template markers, exfiltration (links, uploads, image
    beacons), ordered tool calls or commands, and jailbreak phrasing. Each
    reason appears once, with the first matching excerpt, in a fixed order.
    """
    # Fullwidth letters, invisible characters and emphasis markers are common disguises.
    normalized = strip_invisible(unicodedata.normalize("NFKC", text)).translate(_HOMOGLYPHS)
    normalized = normalized.replace("*", "").replace("~", "")
    reasons: list[str] = []
    for reason, pattern in _IMPERATIVES:
        match = pattern.search(normalized)
        if match:
            excerpt = " ".join(match.group().split())[:80]
            reasons.append(f"{reason}: {excerpt!r}")
    return reasons
