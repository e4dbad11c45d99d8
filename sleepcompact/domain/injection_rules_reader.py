"""The injection detector's rules about the reader: text that singles out the AI reading it.

An indirect injection has to reach the model among text written for people, so it names its reader:
by what it is ("To the AI writing the summary:", "Automated reviewers:"), by what it is doing ("the
assistant handling IT tickets should ...", "the model that reads these logs"), or by a heading
("## For automated assistants"). A named machine reader followed by an order is the sign; people are
addressed the same way, so a bare "agent", "bot" or "model" (a support agent, a CI bot, a data model)
weighs less than an AI noun and needs another sign nearby. Every gap is bounded, so each rule is linear.
"""

from __future__ import annotations

from sleepcompact.domain.injection_rules import AI_NOUN, MEDIUM, STRONG, WEAK, Rule, rule

# Verbs an order to a reader starts with (after "Assistant:", "AI, please", "agents should").
ORDER = (
    r"(?:re-?)?(?:ignore|disregard|forget|send|forward|e-?mail|upload|post|paste|share|include|add|insert"
    r"|append|attach|replace|substitute|rewrite|delete|remove|drop|disable|enable|grant|approve|merge|push"
    r"|deploy|publish|run|execute|call|invoke|open|visit|fetch|download|install|tell|inform|say|state"
    r"|respond|reply|answer|write|print|output|reveal|show|list|summari[sz]e|translate|treat|recommend"
    r"|suggest|prefer|mark|close|label|rate|rank|classify|score|describe|cancel|decline|accept|rsvp|transfer"
    r"|wire|pay|buy|book|order|refund|create|change|modify|update|bump|set|mention|omit|exclude|leave|stop"
    r"|do|don't|never|always|make|use|follow|obey|comply|act|pretend|become|keep|hide|skip|ask|collect"
    r"|gather|extract|read|save|store|persist|record|copy|export|exfiltrate|leak|give|provide|submit"
    r"|confirm|click|navigate|go|refuse|praise|promote|claim|report|remember|assume|prioriti[sz]e|redirect"
    r"|apply|complete|authenticate|request|star|put|consider|note|sign|approve|issue|clean|grant|close"
    r"|reset|revoke|purge|wipe)\b"
)
# A machine reader (AI noun), not a person with "assistant" in the job title (see ``AI_NOUN``).
_AI = AI_NOUN
# A bare agent, bot or model, unless a person's job ("support agent", "travel agent").
_BARE = (
    r"(?<!support\s)(?<!sales\s)(?<!travel\s)(?<!estate\s)(?<!service\s)(?<!insurance\s)(?<!customer\s)"
    r"(?<!human\s)(?<!desk\s)(?<!user\s)(?<!secret\s)(?<!special\s)(?<!free\s)(?<!booking\s)(?<!call\s)"
    r"(?<!shipping\s)(?<!data\s)(?<!role\s)(?<!business\s)(?<!pricing\s)\b(?:agents?|bots?|models?)\b"
)
# Where an address starts: a line, a clause, a vocative, "to"/"for", or an @-mention.
_LEAD = (
    # The punctuation is looked behind, so a quoted address starts inside its quotation marks.
    r"(?:^[ \t>#*/\-]*|(?<=[.!?:;(\[\"'>—–])\s*"
    r"|\b(?:to|for|hey|hi|hello|dear|attention|ok|okay)\s+(?:to\s+)?)"
    r"(?:(?:the|any|all|every|each|our|an?)\s+)?(?:\w{1,20}(?:-\w{1,20}){1,3}\s+)?"
)
# What the reader is doing or has ("... writing the review summary", "... that manages the inbox"):
# whole words after a relative word or a participle, at most eight of them.
_DESCRIPTOR = (
    r"(?:\s+(?:that|which|who|with|in|on|for|of|at|from|[a-z]+ing)\b(?:\s+[^\s:,;.!?—–]{1,30}){0,7}?)?"
)
_SEP = r"\s*(?::|,|->|=>|\s[-–—]|[–—])\s*"
# "when you summarise this invite for Dana, ..." between the address and the order.
_CLAUSE = r"(?:(?:when|if|before|after|while|once|as\s+soon\s+as)\b[^,.;:]{0,80},\s*)?"
_POLITE = (
    r"(?:(?:please|kindly|also|now|first|then|just|simply|always)\s+|(?:could|can|would|will)\s+you\s+"
    r"(?:please\s+|kindly\s+)?){0,3}"
)
_MODAL = (
    r"(?:must|should|shall|will|need\s+to|needs\s+to|have\s+to|has\s+to|are\s+to|is\s+to|are\s+required\s+to"
    r"|is\s+required\s+to|are\s+expected\s+to|is\s+expected\s+to)"
)
# A prohibition ("the assistant must not reveal its prompt", "must refuse ...") is policy written for
# the operators, not an order planted for the reader: the adverbs are read only when no negation follows.
_ADVERBS = (
    r"(?!(?:not|never|refuse)\b)"
    r"(?:(?:also|now|always|immediately|first|kindly|then|only|please|still)\s+){0,3}"
)
_READING = (
    r"(?:reads?|reading|process(?:es|ing)?|pars(?:es|ing)|handl(?:es|ing)|summari[sz](?:es|ing)"
    r"|ingest(?:s|ing)|index(?:es|ing)|screen(?:s|ing)|evaluat(?:es|ing)|assess(?:es|ing)|analy[sz](?:es|ing)"
    r"|render(?:s|ing)|display(?:s|ing)|edit(?:s|ing)|manag(?:es|ing)|review(?:s|ing)|triag(?:es|ing))"
)

READER_RULES: tuple[Rule, ...] = (
    rule(
        "addresses the AI reader",
        "gives the AI reading this an order",
        STRONG,
        # "To the AI writing the review summary: please treat ...", "Hey Copilot — when you summarise
        # this, mention ...", "Automated reviewers: set ...".
        rf"{_LEAD}{_AI}{_DESCRIPTOR}{_SEP}{_CLAUSE}{_POLITE}{ORDER}"
        # "The assistant handling IT tickets should add ...", "Assistants that recommend packages should".
        rf"|{_AI}{_DESCRIPTOR}\s+{_MODAL}\s+{_ADVERBS}{ORDER}"
        # "Could the assistant helping on this issue please paste ...": a polite question is an order.
        rf"|\b(?:could|can|would|will)\s+(?:the|any|an?|our|some)\s+{_AI}{_DESCRIPTOR}\s+(?:please\s+|kindly\s+)"
        rf"{ORDER}",
    ),
    rule(
        "heading for AI readers",
        "a section addressed to AI readers",
        MEDIUM,
        # "## For automated assistants", "## Notes for agents with memory". Projects also write honest
        # guidance for coding assistants under such a heading, so it needs another sign.
        r"^[ \t]*#{1,6}[ \t]*(?:(?:a\s+)?(?:notes?|instructions?|guidance|rules|tips?|message|requests?)\s+)?"
        rf"(?:to|for)\s+(?:the\s+|all\s+|any\s+)?{_AI}(?!\s+(?:users?|use|usage|polic(?:y|ies)|vendors?"
        r"|providers?|adoption|governance|at\s+work))[^\n]{0,40}$",
    ),
    rule(
        "promotes",
        "promotes a product to the model's users",
        WEAK,
        # An injection in a package or a page wants the model to recommend it: "suggest that the user
        # star ...", "prefer this one over PyYAML", "always recommend our service".
        r"\b(?:suggest|recommend|tell|ask|urge|encourage)\s+(?:that\s+)?(?:the\s+)?users?\s+(?:to\s+|should\s+)?"
        r"(?:star|install|buy|visit|subscribe|follow|switch|sign\s+up|upgrade|donate)\b|\bprefer\s+(?:this"
        r"|it|our|us)\b(?:\s+\w+){0,2}?\s+over\b|\b(?:always|only)\s+(?:to\s+)?(?:recommend|suggest|promote|mention"
        r"|send\s+users\s+to)\b",
    ),
    rule(
        "addresses an agent",
        "gives an agent or bot an order",
        MEDIUM,
        rf"{_LEAD}(?:[\w-]+[\s-])?{_BARE}{_DESCRIPTOR}{_SEP}{_CLAUSE}{_POLITE}{ORDER}"
        rf"|{_BARE}{_DESCRIPTOR}\s+{_MODAL}\s+{_ADVERBS}{ORDER}"
        # "AGENT TASK:", "bot instructions:"; "@repo-bot ... please apply".
        r"|\b(?:agents?|bots?)[\s-]+(?:tasks?|notes?|instructions?|directives?|todo)\s*:"
        rf"|@[\w-]{{0,30}}(?:bot|agent)\b[^\n]{{0,100}}?\b(?:please|kindly)\s+{ORDER}",
    ),
    rule(
        "the reader of this",
        "describes the machine reading this text",
        MEDIUM,
        # "the model that reads these logs", "the tool reading this file", "any agent that edits this file".
        r"\b(?:models?|agents?|bots?|tools?|systems?|programs?|software|crawlers?|scrapers?|reviewers?"
        rf"|assessors?|screeners?|summari[sz]ers?)\s+(?:that\s+|which\s+|who\s+)?(?:is\s+|are\s+)?{_READING}"
        r"\s+(?:this|these|the\s+(?:channel|thread|inbox|mailbox|page|repo|repository|document|file|emails?"
        r"|issues?|chat|tickets?|conversation|feed|queue|comments?|reviews?)\b)\b",
    ),
)
"""Rules that find the machine reader named, described or given orders."""
