"""Cheap necessary conditions for the injection rules, so a long text is not matched rule by rule.

Running every rule's regex over a megabyte of tool output is slow; most rules cannot match a chunk of
code or logs at all, because a word every match contains is missing from it ("disregard", "assistant",
"<|"). ``tokens_of`` reads a chunk once; ``passes`` checks a rule's gate against it before the regex
runs. A gate lists alternatives (``|``), each a list of groups that must all be present (``&``); a
group is satisfied by any of its tokens: a token of letters only is a whole word of the chunk, any
other token (``".env"``, ``"<|"``, ``"n't"``) a substring. A test checks, on every corpus sample, that
no gate hides a match.
"""

from __future__ import annotations

import re
from collections.abc import Sequence, Set

from sleepcompact.domain.injection_rules_world import ASCII_WORDS

_WORD = re.compile(r"[a-z]+")

_AI_WORDS = (
    "ai a.i. llm llms gpt assistant assistants chatbot chatbots claude chatgpt copilot gemini summarizer"
    " summarizers summariser summarisers language | agent agents bot bots model models & you automated"
    " autonomous coding code browsing scheduling reviewing triage whatever whichever any"
    " | automated autonomous machine | with & shell execution access browsing memory"
)
_LOOT_WORDS = (
    "conversation chat transcript thread history summary context memory memories secret secrets key keys"
    " token tokens password passwords passphrase passphrases credentials cookie cookies environment env .env"
    " id_rsa .ssh .aws user users user's their all every each copy database db prompt everything"
)
# Words in Latin letters without which no rule of another language matches (the rest of those rules
# need non-ASCII letters: accents, Cyrillic, CJK).
_FOREIGN = (
    "les tes vos ces des anweisungen instruktionen regeln vorgaben richtlinien befehle instrucciones reglas"
    " indicaciones directrices istruzioni regole indicazioni instrucoes regras diretrizes instructies regels"
    " maintenant bist sofort jetzt ahora ora agora affiche montre donne imprime gib zeige zeig verrate nenne"
    " wiederhole revela muestra repite dime mostra rivela stampa ripeti revele mostre exiba imprima pour"
    " consigne hinweis nachricht anweisung notiz nota mensaje messaggio utilisateur benutzer nutzer anwender"
    " usuario utente sans ohne restricciones filtros ninguna senza limites nenhuma neue nouvelles nuevas"
    " envoie envoyez envoyer transmet transmets transmettez leite sende schicke leitest sendest schickst"
    " envia reenvia manda sube invia inoltra transmettre transferer weiterleiten senden schicken"
    " enviar reenviar mandar subir inviare inoltrare sigas obedezcas suis suivez befolge folge seguire siga"
    " para cher querido querida estimado liebe lieber caro cara ia ki asistente assistente assistent modelo"
    " modell modello agente agenten opmerking voor aan notitie keur meld uwaga dla asystenta asystent"
    " notatka yapay zeka icin ricorda recuerda onthoud"
    # Languages in plain ASCII letters (Indonesian, Malay, Swahili, Tagalog): see injection_rules_world.
    " untuk kepada catatan pesan asisten kwa msaidizi ujumbe tuma kumbuka bila kirim simpan ingat abaikan"
    " lupakan jangan huu hii sahau puuza katulong asistan talimat gonder"
)

GATES: dict[str, str] = {
    "override": "ignore disregard forget override bypass skip discard abandon neglect follow obey listen",
    "void": "instructions rules guidelines directives prompt prompts policies restrictions filters"
    " guardrails",
    "disregard above": "disregard ignore forget",
    "stop task": "stop before soon first",
    "role": "you your assistant model ai pretend obey act roleplay role-play henceforth forward rest",
    "now must": "you they",
    "role claim": "you",
    "new instructions": "instruction instructions directive directives orders commands override",
    "new rules": "new instead",
    "claimed authority": "from user your",
    "maintainers approved": "maintainer maintainers owner owners admin admins approved pre-approved",
    "conversation break": "human assistant",
    "role line": "human assistant ai user system developer model bot gpt claude response output admin",
    "system line": "system developer admin",
    "system heading": "system developer instruction instructions input",
    "template markers": "system 系统 系統 システム <| [inst [/inst <<sys <</sys _of_turn <system </system"
    " <admin </admin <developer </developer <operator </operator"
    " tool_result function_results tool_response </assistant </human </transcript begin end",
    "urgent tag": "<important <critical <urgent <instruction <secret <hidden <admin",
    "prompt extraction": "your prompt instructions system",
    "system prompt": "system",
    "addressed": _AI_WORDS,
    "addressed with an order": f"{_AI_WORDS} | agent agents",
    "addressed softly": f"{_AI_WORDS} | agent agents | before & tool | @ todo [ & ai llm agent assistant"
    " claude copilot gpt bot system | when & summarizing summarising summarize summarise read process",
    "jailbreak": "jailbreak jailbroken dan anything developer disable bypass turn remove lift suspend"
    " override deactivate ignore policy policies unrestricted unfiltered uncensored unaligned guardrails",
    "no limits": "without no free dan",
    "exfiltration": f":// @ url link address endpoint query image & {_LOOT_WORDS}",  # a place and a thing
    "beacon": "]( & :// | <img & ://",
    "blank parameter": "://",
    "upload": "curl env printenv cat",
    "secret file": "~/. mcp.json process.env os.environ $ env[ .ssh id_rsa id_ed25519 id_ecdsa"
    " .aws/credentials /etc/passwd /etc/shadow /etc/sudoers .npmrc .netrc .pgpass .kube/config openai_"
    " anthropic_ aws_secret github_ npm_ stripe_ secrets. secret. .env saved",
    "asks for secrets": "key keys secret secrets password passwords passphrase passphrases credentials"
    " tokens environment env cookies seed value contents",
    "pipe to shell": "curl wget iwr invoke-webrequest iex sh bash",
    "pipe to root shell": "curl wget",
    "hidden from user": "not n't never",
    "keeps the user out": "not n't never without keep hide",
    "no confirmation": "without need not skip no never n't",
    "stealth": "silently quietly secretly covertly discreetly",
    "deceives": "tell inform assure convince reassure say state report claim respond reply answer write"
    " conclude output print",
    "orders commands": "execute run",
    "orders a tool call": "call invoke trigger execute use run using via through",
    "urgency": "immediately right urgent urgently",
    "destructive": "rm --no-preserve-root chmod mkfs dd :(){ drop push delete destroy wipe truncate remove"
    " erase purge",
    # One alternative per branch of the rule's pattern: its plain word list passed most chunks of code and
    # logs ("close", "push", "remove", "send"), and the rule's eighteen branches were a third of the
    # detector's time on coding-agent traffic.
    "privileged": "grant give & owner admin administrator root write maintainer & role access rights"
    " permission permissions | lock & the | close & every all & issue issues"
    " | approve merge & pr prs pull request requests | transfer wire send & $ € £ | wire & funds transfer"
    " | issue & refund | publish & pypi | push & production prod main master | accept & invitations"
    " | as & root | disable turn remove & 2fa two-factor mfa multi-factor authentication firewall antivirus"
    " audit signature | force-push | add make invite & as & super superadmin admin administrator owner"
    " maintainer | transfer wire send pay remit & eur usd gbp chf btc eth usdt dollars euros pounds"
    " | pay & iban account wallet | forward & emails messages files documents",
    "phishing": "ask",
    "file into argument": "pass read",
    "your reply": "your",
    "decode and obey": "decode follow execute obey run",
    "tool call": "tool_use function_call tool_call tool_calls <function_calls <invoke tool_name function_name"
    ' "function"',
    "role json": "role",
    "dangerous call": "name command cmd tool function action invoke bypass",
    # The reader, resets, safeguards and memory (``injection_rules_reader`` and the modules after it).
    "addresses the AI reader": _AI_WORDS,
    "heading for AI readers": "# & to for",
    "promotes": "suggest recommend tell ask urge encourage prefer always only",
    "addresses an agent": "agent agents bot bots model models @",
    "the reader of this": "this these channel thread inbox mailbox page repo repository document file email"
    " emails issue issues chat ticket tickets conversation feed queue comment comments review reviews",
    "voids what it was told": "you your context everything whatever model model's assistant assistant's",
    "fresh start": "slate hereby sentence line point paragraph message one only sole single operative"
    " governing govern governs baseline priority brief directive force",
    "removes a safeguard": "disable skip bypass turn remove drop deactivate suppress skip_ disable_ bypass_"
    " verify check require strict --no-verify",
    "safeguard off": "disabled skipped waived bypassed removed suspended switched turned & verification"
    " checks check review reviews protection scan scans scanning signature 2fa mfa two-factor tls ssl"
    " certificate confirmation codeowners hooks audit identity fraud background kyc | optional safely",
    "leaks its context": "context prompt instructions keys key history headers token variables conversation"
    " chat session",
    "role tag": "<user <human <assistant <system <developer assistant ai model gpt claude bot",
    "closes the results": "</",
    "writes to memory": "memory memories knowledge file mind preference fact rule persist remember notes",
    "future sessions": "future across session",
    "standing permission": "authorized authorised approved pre-approved permitted allowed granted consented"
    " agreed standing | may are is & approve refund run execute send share delete transfer grant"
    " publish disable bypass wire pay merge deploy",
    "gives it to anyone": "whoever anyone anybody any",
    # The structural signs (``injection_rules_signals``).
    "persona without rules": "you proceed operate continue act respond answer behave",
    "key for the model": "message messages note notes instruction instructions notice notices prompt prompts"
    " directive directives hint hints order orders & ai llm llms agent agents assistant assistants model"
    " models bot bots copilot copilots",
    "meant for AI": "meant intended written addressed reserved | humans human people & not can may should",
    "header for the model": f"{_AI_WORDS} | model models agent agents bot bots copilots crawler crawlers"
    " scraper scrapers summarizer summarizers summariser summarisers",
    "greets the model": "dear hello hi hey greetings attention",
    "drops the task": "forget ignore drop abandon scrap skip disregard cancel & task assignment job",
    "hidden markup": "style hidden aria",
    "unredacted": "redact redacting redacted redaction mask masked masking censor censored censoring"
    " obfuscate obfuscated obfuscating truncate truncated truncating unredacted | output contents content"
    " result & env printenv set export cat",
    "mass send": "everyone everybody all entire whole every",
    "uses the user's credentials": "using npm cargo gem twine",
}
"""Each rule's gate by name; a rule of another language passes on non-ASCII letters or ``_FOREIGN``."""


def _parse(spec: str) -> tuple[tuple[frozenset[str], ...], ...]:
    """``a b & c | d``: (a or b) and c, or d, as alternatives of groups of tokens."""
    return tuple(
        tuple(frozenset(group.split()) for group in alternative.split(" & "))
        for alternative in spec.split(" | ")
    )


_PARSED = {name: _parse(spec) for name, spec in GATES.items()}
# Tokens that are not plain words are looked for as substrings, once per chunk.
_SUBSTRINGS = tuple(
    sorted(
        {
            t
            for gate in _PARSED.values()
            for groups in gate
            for group in groups
            for t in group
            if not _WORD.fullmatch(t)
        }
    )
)
_FOREIGN_WORDS = frozenset(_FOREIGN.split()) | frozenset(ASCII_WORDS)
_NON_ASCII_LETTER = re.compile(r"(?![\x00-\x7f])[^\W\d_]")
OTHER_LANGUAGE = "\x00other language"
"""The token ``tokens_of`` adds when a chunk may be in another language (non-ASCII letters or a word
of ``_FOREIGN``): the gate of every rule in ``injection_rules_i18n``."""


def tokens_of(lowered: str) -> frozenset[str]:
    """What a lowercased chunk holds of the gates' tokens: its words (ASCII letters), the substring
    tokens found in it, and ``OTHER_LANGUAGE`` when it may be in another language."""
    words = set(_WORD.findall(lowered))
    found = {t for t in _SUBSTRINGS if t in lowered}
    if not _FOREIGN_WORDS.isdisjoint(words) or _NON_ASCII_LETTER.search(lowered):
        found.add(OTHER_LANGUAGE)
    return frozenset(words | found)


def passes(rule: str, tokens: Set[str]) -> bool:
    """Whether a chunk (its ``tokens_of``) may hold a match of ``rule``."""
    gate = _PARSED.get(rule)
    if gate is None:  # another language's rule
        return OTHER_LANGUAGE in tokens
    return any(all(not group.isdisjoint(tokens) for group in groups) for groups in gate)


class GateIndex:
    """``passes`` for a list of rules at once, asking only the rules a chunk may pass.

    Each alternative of a gate is filed under the tokens of one of its groups (the smallest): a chunk
    that passes the alternative holds one of them, so the rules filed under none of the chunk's tokens
    cannot pass and are not asked. The answer is exactly ``passes``' for every rule, in the rules'
    order; a chunk holds tens of tokens where the rules number in the hundreds.
    """

    def __init__(self, names: Sequence[str]) -> None:
        self.names = tuple(names)
        self._by_token: dict[str, list[int]] = {}
        for i, name in enumerate(self.names):
            gate = _PARSED.get(name)
            anchors = {OTHER_LANGUAGE} if gate is None else {t for g in gate for t in min(g, key=len)}
            for token in anchors:
                self._by_token.setdefault(token, []).append(i)

    def passing(self, tokens: Set[str]) -> list[int]:
        """The positions of the rules whose gate ``tokens`` (a chunk's ``tokens_of``) passes, in order."""
        maybe: set[int] = set()
        for token in tokens:
            filed = self._by_token.get(token)
            if filed is not None:
                maybe.update(filed)
        return [i for i in sorted(maybe) if passes(self.names[i], tokens)]
