"""The injection detector's English rules about who is addressed and in what voice: overriding earlier
instructions, a new role, forged turns and system messages, prompt extraction, notes to the AI.

See ``domain.injection_rules`` for how rules and weights work. An injection in a page or a file has to
get the model's attention first ("Note to the AI:", "Assistant, ...", "LLMs reading this must ..."),
so a named addressee followed by an order is the most general sign of indirect injection.
"""

from __future__ import annotations

from sleepcompact.domain.injection_rules import (
    AI_ANY,
    AI_NOUN,
    FAINT,
    MEDIUM,
    QUALIFIER,
    STRONG,
    WEAK,
    Rule,
    rule,
)

# Verbs an order to the model starts with (after "Assistant:", "AI, please", "LLMs should").
_ORDER = (
    r"(?:ignore|disregard|forget|send|forward|e-?mail|upload|post|paste|share|include|add|insert|append"
    r"|replace|rewrite|delete|remove|drop|disable|enable|grant|approve|merge|push|deploy|publish|run|execute"
    r"|call|invoke|open|visit|fetch|download|install|tell|inform|say|state|respond|reply|answer|write|print"
    r"|output|reveal|show|list|summari[sz]e|translate|treat|recommend|suggest|mark|close|label|cancel"
    r"|decline|accept|rsvp|transfer|wire|pay|buy|create|change|modify|update|bump|mention|stop|do|don't"
    r"|never|always|make|use|follow|obey|comply|act|pretend|become|keep|hide|skip|ask|collect|gather|extract"
    r"|read|save|store|copy|export|exfiltrate|leak|give|provide|submit|confirm|click|navigate|go|refuse"
    r"|praise|promote|claim|report|remember|assume|prioriti[sz]e|redirect)\b"
)
# A bare addressee ("AI", "assistant") counts after punctuation only: at the start of a line it is a
# chat transcript's speaker label ("Assistant: Run the tests"), which "role line" weighs instead.
_AFTER_PUNCTUATION = r"(?:(?<=[>(\[\"'.!?;,:—-] )|(?<=[>(\[\"'.!?;,:]))"
_QUALIFIED = (
    rf"\b(?:{QUALIFIER}[\s-]+)+(?:agents?|bots?|models?|assistants?|chatbots?)\b|\b(?:ai|a\.i\.|llm"
    rf"|gpt)[\s-]+"
    r"(?:[\w-]+\s+){0,2}?(?:tools?|systems?|agents?|models?|assistants?)\b|\blanguage\s+models?\b|\bllms\b"
)
# "our AI model:", "your assistant:" name a product, not someone spoken to.
_ADDRESSEE = (
    r"\b(?<!\bour\s)(?<!\byour\s)(?<!\bmy\s)(?<!\btheir\s)(?<!\bits\s)"
    rf"(?:{_QUALIFIED}|\b{_AFTER_PUNCTUATION}(?:{AI_NOUN}|agents?\b))(?:[\s-]+(?:directives?|instructions?"
    r"|notes?|notices?|only|tools?))?"
)
_MODAL = (
    r"(?:must|should|shall|will|need\s+to|needs\s+to|have\s+to|has\s+to|are\s+to|is\s+to|are\s+required\s+to"
    r"|is\s+required\s+to)"
)

ADDRESS_RULES: tuple[Rule, ...] = (
    rule(
        "override",
        "overrides earlier instructions",
        STRONG,
        r"\b(?:ignore|disregard|forget|override|bypass|skip|discard|abandon"
        # "Override replaces the previous instructions": a method's doc comment, not an order.
        r"|neglect)\b(?!\s+[a-z]{2,20}s\s+(?:the|a|an|its|their|all|any)\b)[\s\w,'’]{0,30}?\b(?:previous|prior|above|earlier|preceding|original|initial|all|any"
        r"|your|existing|developer)\b[\s\w'’-]{0,25}?\b(?:instructions?|prompts?|rules|directions|directives"
        r"|guidelines|guardrails|constraints|polic(?:y|ies)|programming|training|orders|commands"
        r"|restrictions|context|system\s+message|guidance)\b|\b(?:ignore|disregard|forget|override"
        r"|bypass)\s+(?:the\s+|your\s+)?system\s+(?:prompt|message|instructions?)\b|\b(?:ignore|disregard"
        r"|forget)\s+(?:the\s+)?(?:task|instructions?|prompt|rules|request"
        r"|orders)\s+(?:that\s+)?you\s+(?:were|have\s+been|'ve\s+been)\s+(?:given|told|assigned|asked)"
        r"|\b(?:ignore|disregard)\s+(?:what|anything|everything)\s+(?:the\s+user|they|you\s+were)\s+(?:asked"
        r"|said|requested|told|wants?)|\b(?:ignore|disregard)\s+the\s+user'?s\s+(?:question|request"
        r"|instructions?|constraints|preferences|wishes)|\b(?:do\s+not|don't|never)\s+(?:follow|obey"
        r"|listen\s+to)\s+(?:the\s+user'?s?\b|your\s+(?:system\s+prompt|instructions|guidelines|rules)"
        r"|the\s+system\s+prompt)",
    ),
    rule(
        "void",
        "declares earlier instructions void",
        STRONG,
        r"\b(?:previous|prior|above|earlier|original|all|your|old|initial)\s+(?:instructions|rules"
        r"|guidelines|directives|prompts?|policies)\s+(?:you\s+(?:were|have\s+been)\s+given\s+)?(?:are|were"
        r"|is|have\s+been)\s+(?:now\s+)?(?:void|null|invalid|cancell?ed|revoked|outdated|obsolete|superseded"
        r"|suspended|replaced|overridden|lifted|no\s+longer\s+(?:valid|apply|applicable|in\s+effect))"
        r"|\b(?:previous|prior|earlier|original|old|your)\s+(?:instructions|rules|guidelines|directives"
        r"|orders)\s+(?:have|has)\s+(?:now\s+)?(?:expired|lapsed|been\s+(?:revoked|withdrawn|replaced"
        r"|cancell?ed))|\b(?:instructions|rules|guidelines|prompt)\s+you\s+(?:were"
        r"|have\s+been)\s+given\s+(?:are|is)\s+(?:outdated|obsolete|void|wrong|no\s+longer\s+valid)"
        r"|\b(?:safety|content|ethical)\s+(?:restrictions|filters|guidelines|rules|policies"
        r"|guardrails)\s+(?:have\s+been|are|were)\s+(?:now\s+)?(?:lifted|removed|disabled|suspended"
        r"|turned\s+off|off)\b",
    ),
    rule(
        "disregard above",
        "disregards the above",
        STRONG,
        r"\b(?:disregard|ignore|forget)\s+(?:the\s+|everything\s+|all\s+)?(?:above|before|previous"
        r"|prior)\b(?=\s*(?:[.,;:!)]|and\b|then\b|$))|\b(?:then|and|now)\s+ignore\s+(?:it|this|that|them"
        r"|the\s+above)\b|\bignore\s+everything\s+(?:above|before|else|prior)\b",
    ),
    rule(
        "stop task",
        "breaks off the current task",
        WEAK,
        r"\bstop\s+what\s+you\s+are\s+doing\b|\bstop\s+(?:the|your)\s+current\s+task\b"
        r"|\bbefore\s+you\s+(?:go\s+any\s+further|continue|proceed|answer|respond|reply)\b"
        r"|\bas\s+soon\s+as\s+you\s+(?:read|see|process)\s+this\b|\bas\s+(?:the"
        r"|your)\s+(?:very\s+)?first\s+(?:action|step|thing)\b",
    ),
    rule(
        "role",
        "reassigns the model's role",
        STRONG,
        r"\byou\s+are\s+now\s+(?!(?:logged|signed|connected|disconnected|viewing|on\b|subscribed"
        r"|unsubscribed|registered|enrolled|ready|all\s+set|set\s+up|leaving|entering|using|running|chatting"
        r"|talking|speaking|following|up\s+to\s+date|able|eligible|done|free\s+to|the\s+owner|in\s+(?:the|a"
        r"|an|your|directory|folder|branch|repo|queue|line|position)\b|(?:a|an)\s+(?:member"
        r"|admin(?:istrator)?|owner|collaborator|maintainer|subscriber|contributor|participant|moderator"
        r"|attendee|editor|viewer)\s+(?:of|in|on|for)\b))|\b(?:the\s+)?(?:assistant|model|ai|you)\s+(?:is"
        r"|are)\s+now\s+(?:in\s+)?(?:an?\s+)?(?:unrestricted|unfiltered|uncensored|jailbroken|developer"
        r"|admin|god|dan|evil|root|sudo|maintenance|debug|no-?limits?)\b|\bfrom\s+(?:now|this\s+point"
        r"|here)\s*(?:on|onwards?)?\b,?\s+(?:you|your|the\s+(?:assistant|model|ai|agent))\b|\b(?:henceforth"
        r"|going\s+forward|for\s+the\s+rest\s+of\s+(?:this|the)\s+(?:conversation|session"
        r"|chat)),?\s+you\s+(?:will|must|shall|are|should|only)\b|\bpretend\s+(?:to\s+be"
        r"|(?:that\s+)?you\s+(?:are|have|were))\b|\b(?:i\s+(?:want|need)\s+you\s+to|you\s+(?:will|must"
        r"|shall)\s+now)\s+(?:act|behave|pose|roleplay|role-play)\s+as\b|\bact\s+as\s+(?:if|though)\s+you\b"
        r"|\b(?:act|roleplay|role-play)\s+as\s+(?:my\b|an?\s+(?:\w+\s+){0,2}?(?:ai|assistant|chatbot|model"
        r"|terminal|shell|linux|hacker|persona|unrestricted|unfiltered|uncensored|jailbroken|rogue|evil)\b"
        r"|(?-i:DAN)\b)|\byour\s+(?:new|real|actual|true|only|primary|updated|revised|sole)\s+(?:task"
        r"|instructions?|role|goal|purpose|job|mission|objective|directive|orders|priority)\b"
        r"|\byou\s+(?:will|must|shall|should)\s+now\s+(?:act|behave|respond|answer|reply|obey|follow|ignore"
        r"|only|be\s+(?:a|an|my)|pretend|comply)\b|\byou\s+(?:now\s+)?(?:obey|follow|comply\s+with|answer\s+to"
        r"|take\s+orders\s+from|listen\s+to|answer\s+only\s+to)\s+(?:only\s+)?(?:the\s+text|this\s+(?:file|page|document|text"
        r"|message)|these\s+instructions|me\b|the\s+following|nothing\s+but)"
        r"|\bobey\s+(?:only\s+)?(?:the\s+following|the\s+text\s+below|this\s+(?:page|file|document|text)"
        r"|me)\b",
    ),
    rule(
        "now must",
        "orders the model from now on",
        MEDIUM,
        r"\byou\s+(?:must|will|shall)\s+now\b|\b(?:the\s+user|they)\s+(?:now\s+)?wants?\s+you\s+to\b",
    ),
    rule(
        "role claim",
        "tells the model what it is",
        WEAK,
        r"\byou\s+are\s+(?:a|an|the)\s+(?:[\w-]+\s+){0,3}?(?:assistant|bot|ai|model|agent|administrator"
        r"|admin|terminal|shell|persona)\b|\byou\s+are\s+\w*(?:bot|gpt)\b",
    ),
    rule(
        "new instructions",
        "declares new instructions",
        STRONG,
        r"\b(?:hidden|secret|real|actual|true|priority|overriding|admin|developer)\s+(?:instructions?"
        r"|directives?|orders|commands)\s*(?::|\bare\b|\bfollow\b|\bbelow\b)|\b(?:system|admin|priority"
        r"|security|emergency)\s+override\b|\boverride\s+(?:mode|code|protocol)\b",
    ),
    rule(
        "new rules",
        "announces new rules",
        MEDIUM,
        r"\bnew\s+(?:system\s+)?(?:instructions?|directives?|rules|policy|task|orders|objective|goal|mission"
        r"|priority)\s*[:\-–—]|\buse\s+these\s+(?:instructions\s+)?instead\b"
        r"|\bnew\s+(?:instructions?|directives?|rules|policy|orders)\s+(?:is|are)\s+(?:that\s+)?you\b",
    ),
    rule(
        "claimed authority",
        "claims the authority of the developers or the user",
        MEDIUM,
        r"\b(?:update|message|notice|directive|instructions?|memo)\s+from\s+(?:your|the)\s+(?:developers?"
        r"|creators?|operators?|makers|administrators?|admins?|system\s+administrator|openai|anthropic"
        r"|google|deepmind)\b|\bthe\s+user\s+(?:has\s+|had\s+)?(?:already\s+)?(?:authori[sz]ed|granted|given"
        r"|allowed|permitted)\s+you\b|\bthe\s+user\s+(?:has\s+)?(?:already\s+)?(?:agreed|approved"
        r"|consented)\s+(?:that|to)\s+you\b|\bthe\s+user\s+has\s+(?:changed\s+(?:their|his|her)\s+mind"
        r"|granted)\b|\b(?:this\s+is|i\s+am|i'm)\s+(?:the\s+user'?s|your)\s+(?:manager|boss|supervisor|admin"
        r"|administrator|developer|creator|owner|operator)\b",
    ),
    rule(
        "maintainers approved",
        "claims the maintainers approved",
        FAINT,
        r"\b(?:the\s+)?(?:maintainers?|owners?|admins?)\s+(?:has\s+|have\s+)?(?:approved|asked|requires?"
        r"|wants?|authori[sz]ed|pre-approved)\b|\bpre-approved\b",
    ),
    rule(
        "conversation break",
        "fakes a conversation turn",
        STRONG,
        r"(?:^|\n)[ \t]*\n[ \t]*(?:Human|Assistant)\s*:",
    ),
    rule(
        "role line",
        "a line in a chat role's name",
        WEAK,
        r"^[ \t>]*\[?(?:Human|Assistant|AI|User|System|Developer|Model|Bot|GPT|Claude)\]?\s*:"
        r"|^[ \t]*\[(?:system|developer|admin)\][ \t]+(?=\S)|^[ \t]*#{1,6}[ \t]*(?:response"
        r"|output)[ \t]*:[ \t]*$",
    ),
    rule(
        "system line",
        "poses as a system message",
        STRONG,
        r"(?:^|[\"'>\[(]\s*)\[?(?:system|developer|admin)\]?\s*(?:message|prompt|note|notice|update"
        r"|instruction)?\s*(?:\([^)\n]{0,40}\))?\s*:\s*(?:you\b|ignore|disregard|forget|new\b|from\s+now"
        r"|the\s+(?:assistant|model|ai|agent)|all\s+(?:prior|previous)|override|priority|important|send"
        r"|forward|reveal|execute|run\b|do\s+not|never|always|stop)|\[system\]\(#\w+\)",
    ),
    rule(
        "system heading",
        "a heading that poses as a system prompt",
        MEDIUM,
        r"^[ \t]*#{1,6}[ \t]*(?:system|system\s+prompt|system\s+message|developer\s+message"
        r"|instructions?\s+for\s+(?:the\s+)?(?:ai|assistant|model|llm|agent)s?)[ \t]*:?[ \t]*$"
        r"|^[ \t]*#{1,6}[ \t]*(?:instructions?|input)[ \t]*:[ \t]*$",
    ),
    rule(
        "template markers",
        "chat-template or system markers",
        STRONG,
        r"(?<!escapes\s)(?<!escape\s)(?<!escaped\s)(?<!escaping\s)(?<!strips\s)(?<!strip\s)(?<!literal\s)"
        r"(?:<\|(?:im_start|im_end|im_sep|system|user|assistant|endoftext|begin_of_text|end_of_text"
        r"|start_header_id|end_header_id|eot_id|eom_id|tool_call|python_tag)\|>|\[/?INST\]|<</?SYS>>"
        r"|</?(?:start|end)_of_turn>|</?system(?:[-_]prompt)?>|</?(?:system|admin|developer|operator)[-_](?:reminder"
        r"|message|note|notice|instructions?|update|override)>|</?(?:tool_result|function_results"
        r"|tool_response)>|</(?:assistant|human)>|</transcript>|\bBEGIN\s+(?:SYSTEM|ADMIN"
        r"|DEVELOPER)(?:\s+(?:PROMPT|MESSAGE|INSTRUCTIONS?))?\b|\bEND\s+OF\s+(?:SYSTEM\s+PROMPT|INSTRUCTIONS"
        r"|USER\s+INPUT)\b|\[\s*system\s+(?:instructions?|message|prompt|override|notice|update)\s*\]"
        r"|[【\[]\s*(?:系统|系統|システム)\s*(?:指令|提示|消息|通知|命令|メッセージ|指示)\s*[】\]]"
        # ... not a marker named as a word in a changelog or docs ("escapes <start_of_turn> in user
        # content", "the <|im_end|> token").
        r")(?!\s+(?:in|tokens?|markers?|tags?|sequences?|strings?|is|are|was|were|and|or)\b)",
    ),
    rule(
        "urgent tag",
        "an urgent pseudo-tag",
        FAINT,
        r"<(?:important|critical|urgent|instructions?|secret|hidden|admin)>",
    ),
    rule(
        "prompt extraction",
        "asks for the system prompt",
        STRONG,
        r"\b(?:reveal|print|show|repeat|output|leak|tell\s+me|display|dump|expose|recite|echo|write\s+out"
        r"|give\s+me|share|disclose|spell\s+out"
        r"|paste)\s+(?:me\s+)?(?:back\s+)?(?:all\s+)?(?:of\s+)?your\s+(?:\w+\s+){0,2}?(?:system\s+prompt"
        r"|system\s+message|prompt|instructions|rules|guidelines|initial\s+prompt|pre-?prompt|directives"
        r"|developer\s+message)\b|\b(?:reveal|print|show|repeat|output|leak|display|dump|expose|recite"
        r"|disclose)\s+(?:me\s+)?(?:the\s+)?(?:(?:full|complete|original|hidden|initial|secret|entire|exact"
        r"|verbatim)\s+)+(?:system\s+prompt|system\s+message|prompt|instructions)\b|\bwhat\s+(?:is|are|was"
        r"|were)\s+your\s+(?:system\s+prompt|instructions|initial\s+prompt|rules|guidelines)\b",
    ),
    rule(
        "system prompt",
        "asks for the system prompt",
        MEDIUM,
        r"\b(?:reveal|print|show|repeat|output|leak|display|dump|expose|recite"
        r"|disclose)\s+(?:me\s+)?the\s+system\s+(?:prompt|message)\b",
    ),
    rule(
        "addressed",
        "addressed to the model",
        STRONG,
        r"\b(?:note|message|instructions?|attention|notice|memo|reminder|p\.?s\.?|warning|directive"
        r"|heads[- ]up"
        rf"|hint|task|tasks|job|orders|commands?|aside|request|favou?r|facts?|fyi|update|brief(?:ing)?|guidance"
        rf"|tip)\s+(?:to|for)\s+(?:the\s+|any\s+|all\s+|every\s+|an?\s+)?(?:[\w-]+\s+){{0,2}}?{AI_NOUN}|(?:^|[.!?:;(\[\-–—\"']\s*|<!--\s*)(?:to|for)\s+(?:the\s+|any\s+"
        rf"|all\s+)?{AI_NOUN}(?:\s+\w+){{0,3}}?\s*(?:only\s*)?[:,)–—]|\bif\s+you\s+are\s+(?:an?\s+"
        rf"|the\s+)?{AI_ANY}|{AI_NOUN}\s+(?:\w+\s+){{0,2}}?(?:reading|processing|summari[sz]ing|parsing"
        rf"|reviewing|analy[sz]ing"
        r"|browsing|crawling|scraping|ingesting|seeing|viewing|editing|modifying|changing|touching"
        r"|working\s+on)\s+(?:this|these|the\s+following|my)\b"
        rf"|{AI_NOUN}\s+(?:that|who|which)\s+(?:reads?|process(?:es)?|sees?|parses?|ingests?|summari[sz]es?"
        rf"|crawls?|index(?:es)?)\s+(?:this|these)\b|\b(?:whatever|whichever|any)\s+{AI_ANY}\s+(?:is\s+)?"
        r"(?:reading|triaging|processing|summari[sz]ing|reviewing|handling|looking\s+at)\s+this\b|\b(?:and"
        r"|or|&)\s+(?:all\s+)?other\s+(?:ai\s+)?(?:assistants|models|agents|llms|chatbots|bots|ais)\s*[:,]"
        r"|@(?:ai|llm|agent|assistant|claude|copilot)[-_]?(?:instructions?|directives?|notes?|tasks?)\b"
        rf"|^[\s>#*/-]*(?:{AI_NOUN}|agent)(?:\s*/\s*{AI_NOUN})*\s*,"
        rf"|^[\s>#*/-]*(?:{QUALIFIER}[\s-]+)+(?:{AI_ANY})(?:\s*/\s*{AI_NOUN})*\s*:"
        rf"|^[\s>#*/-]*{AI_NOUN}\s*/\s*{AI_NOUN}",
    ),
    rule(
        "addressed with an order",
        "gives the model an order",
        STRONG,
        rf"{_ADDRESSEE}\s*(?::|,|\s-|\s[–—])\s*(?:(?:please|kindly|also|now|first|then)\s+){{0,3}}{_ORDER}"
        # A prohibition ("must never reveal its prompt") is the operators' policy, not an order.
        rf"|{AI_NOUN}\s+{_MODAL}\s+(?!(?:not|never)\b)(?:(?:also|now|always|immediately|first)\s+){{0,2}}{_ORDER}",
    ),
    rule(
        "addressed softly",
        "speaks to the model",
        MEDIUM,
        # A greeting alone is how users talk to their assistant; it counts only with an order or a sign.
        r"\b(?:hey|hi|hello|dear|ok|okay|attention|listen)\s*,?\s+(?:claude|chatgpt|gpt|copilot|gemini"
        r"|assistant|ai|llm|bot|agent)\b|"
        rf"@(?:agent|ai|assistant|claude|copilot|gpt|bot|llm)\b|\btodo\s*\(\s*(?:ai|llm|agent|assistant"
        rf"|claude"
        r"|copilot|gpt)\s*\)|\[\s*(?:assistant|ai|system|llm|agent|claude)\s*:"
        rf"|\b(?:the\s+)?{AI_NOUN}\s+(?:must|should|shall"
        r"|needs?\s+to|has\s+to|is\s+required\s+to|is\s+to|is\s+instructed\s+to)\b(?!\s+(?:not|never)\b)"
        r"|\bwhen\s+(?:you\s+are\s+)?summari[sz]ing\s+this\b|\bwhen\s+you\s+(?:summari[sz]e|read"
        r"|process)\s+this\b|(?:^|[.!?]\s+)agent\s*:|^[ \t]*(?://+|#+|\*+|--|<!--|;+|/\*+)[ \t]*(?:agents?"
        r"|ai|assistants?|llms?|bots?|claude|copilot|gpt)[ \t]*[:,]|\bbefore\s+(?:calling|using"
        r"|invoking)\s+this\s+tool\b"
        rf"|{_ADDRESSEE}\s*(?::|,\s|\s-\s|\s[–—]\s)|\b(?:updated|new|operating|special|additional|hidden"
        rf"|secret)\s+(?:rules|guidance|guidelines)\s+for\s+(?:the\s+)?{AI_NOUN}",
    ),
    rule(
        "jailbreak",
        "jailbreak or safety bypass",
        STRONG,
        r"\bjailbr(?:eak|oken)\s+mode\b|\byou\s+are\s+(?:now\s+)?jailbroken\b|(?-i:\bDAN\s+(?:mode|ready)\b)"
        r"|\bdo\s+anything\s+now\b|\bdeveloper\s+mode\b[^\n]{0,80}\b(?:enabled|ignores?|no\s+(?:rules"
        r"|restrictions|filters)|without)\b|\b(?:disable|bypass|turn\s+off|ignore|remove|lift|suspend"
        r"|override|deactivate)\s+(?:all\s+|your\s+|the\s+|any\s+)?(?:safety|content|ethical|moderation"
        r"|security)\s+(?:filters?|guidelines|guardrails|restrictions|checks|rules|policies|protocols"
        r"|features|measures)\b|\bno\s+(?:content|usage)\s+polic(?:y|ies)\b|\b(?:unrestricted|unfiltered"
        r"|uncensored|unaligned)\s+(?:mode|assistant|ai|model|version|llm)\b|\bbypass\s+(?:your\s+"
        r"|the\s+)?guardrails\b",
    ),
    rule(
        "no limits",
        "claims the model has no limits",
        MEDIUM,
        r"\b(?:without|with\s+no|free\s+(?:of|from))\s+(?:any\s+)?(?:restrictions|limitations|filters|rules"
        r"|guidelines|censorship|guardrails|ethical\s+constraints)\b|\bno\s+(?:rules|restrictions|filters"
        r"|guidelines)\b(?=[^\n]{0,20}$)|(?-i:\bDAN\b)",
    ),
)
"""Rules for who is addressed and how: instructions overridden, roles, forged turns, notes to the AI."""
