"""Salience: what kind of statement a sentence of a conversation is, as journal tags.

The tags decide a journal entry's heuristic importance (``journal.heuristic_importance``), so they are
what keeps "I totally agree!" out of long-term memory while "I started a pottery class on Thursdays"
gets in. A sentence is, in this order:

- ``chat``: an acknowledgement, greeting or pleasantry ("Thanks!", "OK, sounds good", "Nice to meet
  you", "That's a great idea"), or a sentence with no content left once its opener is dropped;
- ``asked``: a question (the extraction turns an unanswered user question into a ``question`` gap);
- ``recommendation``: a recommendation given ("I recommend ...", "you could try ...", "how about ...");
- ``hypothetical`` ("if I were", "I would love to someday") or ``hedged`` ("maybe", "probably", "I
  think I might"): said, but not a fact;
- else its kind: ``preference`` (stated firmly), ``deadline``, ``plan`` (with a time), ``event``
  (something the speaker did), ``decision`` (assistant), ``fact`` (about the speaker), or ``remark``
  (a general statement).

Detail tags add to that: ``named`` (a quoted title or a proper name), ``dated`` (a day, date, time or
period beyond "today"), ``numeric`` (a number). ``vague`` marks a statement with almost no content of
its own ("I'll give it a try", "I found it very interesting"). Rule based and pure (standard library).
"""

from __future__ import annotations

import re

from sleepcompact.domain.sentences import is_decision, is_past_ed, strip_lead_in

_I = r"\b(?:i|we)\b"


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


_OPENER = re.compile(
    r"^(?:(?:hi|hello|hey|dear|greetings|good (?:morning|afternoon|evening))\b"
    r"(?:\s+(?:there|again|ai companion|ai|friend|my friend|everyone|buddy|[A-Z][a-z]+))*\s*[,!.:;-]*\s*"
    r"|(?:ok|okay|yes|yeah|yep|sure|of course|certainly|wow|hmm+|oh|ah|great|awesome|alright|all right"
    r"|well|haha|right|indeed|absolutely|definitely|exactly|no problem|sounds good|sounds great|i see"
    r"|got it|i got it|cool|nice|then|so|anyway|actually|by the way|btw|also|and|but|plus|hello again"
    r"|you're right|you are right|that's right|that's true|true|thank you|thanks)\s*[,!.:;-]+\s*)+",
    re.I,
)
# A section label an agent writes before its prose ("THOUGHT: ", "Analysis: ").
_LABEL = re.compile(
    r"^(?:[A-Z]{3,}(?: [A-Z]{3,})?|(?i:thought|thinking|analysis|plan|note|observation|reasoning|answer)s?)"
    r"\s*:\s+"
)
_CONJUNCTION = re.compile(r"^(?:but|and|so|then|well|also|plus|anyway|now)\s+", re.I)
_PLEASANTRY = re.compile(
    r"\b(?:feel free to|let me know|don't hesitate|do not hesitate|nice to meet you|i'm here for you"
    r"|i am here for you|talk (?:to you |with you )?(?:again )?(?:later|tomorrow|soon)|see you"
    r"|let's (?:talk|chat)|sweet dreams|good night|have fun|looking forward to|look forward to)\b",
    re.I,
)
_CHAT = re.compile(
    r"^(?:thanks?\b|thank you|many thanks|(?:i )?appreciate|you(?:'re| are) (?:welcome|right|so kind"
    r"|very kind|too kind|(?:a |an |very |really |so |such a |truly )*(?:good|great|nice|wonderful|smart"
    r"|helpful|thoughtful|considerate|caring|patient|sweet)\b)|no problem|no worries|my pleasure"
    r"|it(?:'s| is| was) (?:my|a|an) (?:great )?(?:pleasure|honou?r)|(?:it was )?nice (?:to meet|meeting"
    r"|talking|chatting)|(?:see|talk to|chat with) you|good ?bye|bye|good night|have a (?:nice|good|great"
    r"|pleasant|wonderful|lovely|happy)|take care|(?:i(?:'m| am) )?(?:so |very |really )?(?:glad\b|(?:happy"
    r"|pleased) (?:to|that|you))|i (?:totally |completely |really |fully |absolutely |strongly |also )?"
    r"agree|(?:that|this|it)(?:'s| is| was)? (?:sounds?|seems?|looks?) |(?:sounds?|seems?|looks?) "
    r"(?:like |great|good|interesting|nice|wonderful|fun|awesome|amazing|lovely|delicious|simple|cool)"
    r"|i (?:see|understand|got it|hope so)\b|(?:that|it) makes sense|makes sense|feel free|let me know"
    r"|(?:i )?wish(?:ing)? you|congratulations|congrats|good luck|me too|same here|you too"
    r"|(?:i'm |i am )?sorry,? (?:to hear|as an ai|i (?:can't|cannot|don't))|as an ai"
    r"|(?:(?:very |really |such )?(?:good|great|useful|practical|helpful|nice) (?:suggestions?|advice"
    r"|ideas?|tips?|recommendations?))\b"
    r"|(?:those|these|that|this|it|they|your|the)(?: \w+)?(?:'s| is| are| was| were)? (?:all )?"
    r"(?:very |really |so |such |quite |truly )*(?:a |an )?(?:good|great|practical|useful|helpful|nice"
    r"|wonderful|excellent|interesting|valuable|reasonable|brilliant|fantastic|important|true|right"
    r"|correct|perfect)\b|(?:good|great|nice|excellent) (?:idea|point|question|choice)"
    r"|what a (?:great|good|nice)"
    r"|i(?:'m| am) (?:always )?here (?:for|to)|(?:i'm|i am) back\b)",
    re.I,
)
_RECOMMEND = re.compile(
    r"\b(?:(?:i|we)(?: would| 'd|'d| strongly| highly| also| really| just| still)* (?:recommend|suggest"
    r"|advise|propose)\w*|(?:recommend|suggest)(?:s|ed)? (?:that )?you"
    r"|my (?:suggestion|recommendation|advice)"
    r"|(?:some|a few|two|three|several|the following) (?:good |great |other )?(?:suggestions|recommendations"
    r"|options|choices)\b(?! (?:from|by) you)|you (?:could|can|should|might|may"
    r"|must)(?: also| definitely| really)?(?: want to)? (?:try|read|watch|visit|listen|go|see|check|consider"
    r"|take|look|play|use|start|come|pick|choose)|how about|what about|why not (?:try|read|watch|visit)"
    r"|worth (?:reading|watching|visiting|trying|a try|a visit|a look)|(?:be|is|are) (?:a |all )?(?:good"
    r"|great|nice) (?:choices?|options?|picks?)|(?:recommended|suggested) for you)\b",
    re.I,
)
_IMPERATIVE = re.compile(r"^(?:try|consider|check out|visit|watch|read|listen to|go to|pick|choose)\b", re.I)
_REQUEST = re.compile(
    r"^(?:please (?!keep|use|avoid|make sure|remember|note|always|never|don't|do not)|can you|could you"
    r"|would you|will you|tell me|give me|show me|help me|recommend|suggest"
    r"|let me know|i (?:have|had) (?:a|one|another) (?:small |quick |little )?question)\b",
    re.I,
)
_HYPOTHETICAL = re.compile(
    rf"\bif {_I} (?:were|was|had|could|would)\b|{_I}(?:'d| would)(?: also| really| \w+ly)? (?:love|like|want)"
    rf" to\b|\bsomeday\b"
    rf"|\bsome day\b|\bone day\b|{_I} wish\b|\bwould (?:be|have been) (?:nice|great|fun|cool|amazing)\b"
    rf"|\bdream(?:s|ed)? (?:of|about)\b|\bimagine\b|\bin the future\b|\bif (?:only|possible)\b",
    re.I,
)
_HEDGED = re.compile(
    r"\b(?:maybe|perhaps|probably|possibly|might|not sure|i guess|i suppose"
    r"|(?<!a )(?<!any )(?<!what )(?<!this )(?<!that )(?<!some )(?<!the )(?<!special )(?:kind|sort) of"
    r"|i think (?:i |we )?(?:might|may|could|will|would)|thinking (?:of|about)|considering|wondering"
    r"|it seems|seems to)\b",
    re.I,
)
# A habit is a preference, its verb quoted or not: 'I often "work from home"' (the quotation is read as a
# title, ``"Title"``, by then).
_PREFERENCE = re.compile(
    rf"{_I}(?:\s+(?:really|also|just|especially|particularly|truly|absolutely|do|still|usually|always"
    rf"|often|generally|totally|quite|very much|even|most))*\s+(?:like|love|enjoy|prefer|adore|hate"
    rf"|dislike|detest|can't stand|cannot stand|don't like|do not like|don't enjoy)\b|\bprefer(?:s|red)?\b"
    rf"|\bfavou?rite\b|\ballerg(?:ic|y)\b|{_I}(?:'m| am| are) (?:a (?:big |huge )?fan of|into|obsessed with"
    rf"|passionate about|interested in|fond of|keen on)|{_I} (?:always|never|usually|often) [\"“]?\w+",
    re.I,
)
# A standing instruction is a preference: "Always use type hints", "Please keep the API unchanged".
_STANDING = re.compile(r"^(?:please\s+)?(?:always|never|keep|make sure|avoid|remember to)\b", re.I)
_DEADLINE = re.compile(
    r"\b(?:deadline|due (?:on|by|date)|no later than|by (?:mon|tue|wed|thu|fri|sat|sun)\w*"
    r"|by (?:tomorrow|tonight|noon|eod|end of))\b",
    re.I,
)
_PLAN = re.compile(
    rf"{_I}(?:'ll| will|'m going to| am going to| plan to| am planning to|'m planning to| intend to"
    rf"| want to| hope to|'m about to| am about to| have to| need to)\b|\b(?:planning|going) to\b",
    re.I,
)
_PAST = re.compile(
    rf"{_I}(?:\s+\w+ly|\s+(?:also|just|finally|recently|already|first|then|even|once|all))*"
    rf"(?:'ve| have| had)?(?:\s+\w+ly|\s+(?:also|just|finally|recently|already))*\s+(\w+)\b",
    re.I,
)
_PAST_FORMS = _words(
    "went saw took made got had did met ran ate bought found read won began became came left wrote "
    "drew sang swam flew rode spent sold built heard felt gave taught caught brought thought lost "
    "fell sent grew chose drove wore kept told spoke been done seen gone eaten taken written given"
)
_ABOUT_ME = re.compile(r"\b(?:i|i'm|i've|i'd|me|my|mine|we|we're|our|us)\b", re.I)
_ABOUT_YOU = re.compile(r"\b(?:you|you're|you've|you'd|your|yours)\b", re.I)
_DATED = re.compile(
    r"\b(?:tomorrow|yesterday|tonight|(?:this|next|last|every) (?:week|weekend|month|year|morning"
    r"|afternoon|evening|night|day|summer|winter|spring|autumn|fall|(?:mon|tues|wednes|thurs|fri|satur"
    r"|sun)day)|(?:mon|tues|wednes|thurs|fri|satur|sun)days?|(?:jan|feb|mar|apr|jun|jul|aug|sep|sept|oct"
    r"|nov|dec)[a-z]*\.? \d{1,2}(?:st|nd|rd|th)?|May \d{1,2}(?:st|nd|rd|th)?|\d{1,2}(?:st|nd|rd|th)? of"
    r" (?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*|\d{4}-\d{2}-\d{2}|\d{1,2}:\d{2}"
    r"|\d{1,2} ?(?:am|pm)|(?:in|since) \d{4}|\d+ (?:days?|weeks?|months?|years?|hours?|minutes?) ago)\b",
)
_DATED_I = re.compile(_DATED.pattern, re.I)
_NUMBER = re.compile(r"(?<![\w-])\d+(?:[.,:]\d+)*(?![\w-])")
_QUOTED = re.compile(r"\"[^\"]{2,}\"|“[^”]{2,}”|《[^》]+》")
_CAPITAL = re.compile(r"(?<=[\s(,;])([A-Z][\w'’-]*)")
_NOT_NAMES = _words(
    "I I'm I've I'll I'd AI OK Ok Mr Mrs Ms Dr Monday Tuesday Wednesday Thursday Friday Saturday "
    "Sunday January February March April May June July August September October November December"
)
_CONTENT = re.compile(r"[A-Za-z][A-Za-z'’-]{2,}")
_FILLER = _words(
    "the and but for with that this these those there here then than what which who whom when where "
    "why how all any some just also always really very much more most so too not are was were been "
    "being have has had having does did doing will would can could shall should may might must its "
    "it's that's i'm i've i'll i'd you're you've you'll you'd we're we've your yours our ours their "
    "them they she her his him about into from over under again still currently recently today "
    "actually maybe quite such lot lots something anything everything nothing thing things one ones "
    "way well yes okay sure going get got make made let like out off own even only ever never once "
    "bit"
)
_PERSONAL = re.compile(
    r"\b(?:do|did|have|are|were|would|will|can)\s+you\s+(?!know\b|remember\b|tell\b|find\b|check\b)"
    r"|\byour\b|\b(?:what|how) about you\b",
    re.I,
)
_POINTER = re.compile(r"\b(?:it|that|this|them|these|those|there|one)\b", re.I)


def opener_stripped(sentence: str) -> str:
    """The sentence without its greeting or acknowledgement opener ("Hi AI companion, ", "OK, ")."""
    stripped = _CONJUNCTION.sub("", strip_lead_in(_OPENER.sub("", _LABEL.sub("", sentence)).strip()))
    return stripped[:1].upper() + stripped[1:] if stripped else ""


def _content_words(sentence: str) -> list[str]:
    return [w for w in _CONTENT.findall(sentence) if w.casefold() not in _FILLER]


def detail_tags(sentence: str) -> tuple[str, ...]:
    """``named``, ``dated`` and ``numeric``: what makes a statement concrete."""
    names = [m for m in _CAPITAL.findall(sentence) if m not in _NOT_NAMES and not m.isupper()]
    dated = _DATED_I.search(sentence) is not None
    # Titles go before dates: a title that is a date word ("Yesterday") removed first would leave its
    # quote marks to pair with the next title's, hiding the count between them.
    bare = _DATED_I.sub(" ", _QUOTED.sub(" ", sentence))
    tags = []
    if names or _QUOTED.search(sentence):
        tags.append("named")
    if dated:
        tags.append("dated")
    if _NUMBER.search(bare):
        tags.append("numeric")
    return tuple(tags)


def _is_vague(body: str, details: tuple[str, ...]) -> bool:
    words = _content_words(body)
    if details:
        return False
    return len(words) < 2 or (len(words) <= 3 and _POINTER.search(body) is not None)


def _kind(body: str, *, assistant: bool, details: tuple[str, ...]) -> str:
    if (_PREFERENCE.search(body) or _STANDING.match(body)) and not assistant:
        return "preference"
    if _DEADLINE.search(body):
        return "deadline"
    if _PLAN.search(body):  # an intention without a time or a name is not a plan yet
        return "plan" if "dated" in details else "intention"
    past = _PAST.search(body)
    if past and (is_past_ed(past.group(1).casefold()) or past.group(1).casefold() in _PAST_FORMS):
        return "event"
    # "I'll ..." never gets here: _PLAN took it above, as a plan or an intention.
    if assistant and is_decision(body):
        return "decision"
    # The assistant's statements about itself are its persona; about the user they are facts it noted.
    about = _ABOUT_YOU if assistant else _ABOUT_ME
    return "fact" if about.search(body) else "remark"


def personal_question(sentence: str) -> bool:
    """Whether a question is about the one asked ("Do you like music?"), not something to find out."""
    return _PERSONAL.search(sentence) is not None


def statement_tags(sentence: str, *, assistant: bool = False) -> tuple[str, ...]:
    """Tags of one sentence (see the module docstring); the first tag is its kind."""
    full = opener_stripped(sentence)
    if not full or not _CONTENT.search(full):
        return ("chat",)
    details = detail_tags(full)
    # A title says nothing about the sentence around it ("Dream of the Red Chamber" is no hypothetical).
    body = _QUOTED.sub('"Title"', full)
    if (_CHAT.match(body) and (len(body.split()) <= 10 or not details)) or _PLEASANTRY.search(body):
        return ("chat",)
    if len(_content_words(body)) <= 1 and not details:
        return ("chat",)
    if body.rstrip().endswith("?") or (not assistant and _REQUEST.match(body)):
        if _RECOMMEND.search(body) and "named" in details:
            return ("recommendation", *details)
        return ("asked", *details)
    if _RECOMMEND.search(body) or (assistant and _IMPERATIVE.match(body)):
        return ("recommendation", *details)
    if _HYPOTHETICAL.search(body):
        return ("hypothetical", *details)
    if _HEDGED.search(body):
        return ("hedged", *details)
    kind = _kind(body, assistant=assistant, details=details)
    vague = ("vague",) if _is_vague(body, details) else ()
    if kind == "intention":
        kind, vague = "remark", () if {"named", "numeric"} & set(details) else ("vague",)
    return (kind, *details, *vague)
