"""The injection detector's rules for the AI reader in other languages.

``injection_rules_i18n`` has the moves of ten languages; this module adds what generalizes across
all fourteen the red team writes in (those ten and Arabic, Turkish, Polish and Hindi): a note
addressed to an AI reader ("Для ИИ-ассистента:", "Yapay zekâ asistanları için not:", "ملاحظة
للمساعد الذكي:"), the AI that reads this text ("l'assistant qui lit ce courriel", "이 글을 읽는 AI"),
earlier instructions set aside in the languages not covered yet, and memory writes reaching into
future sessions. Prepositions come before the noun in most of these languages and after it in
Turkish, Hindi, Japanese and Korean, so both orders are matched. Every gap is bounded.
"""

from __future__ import annotations

from sleepcompact.domain.injection_rules import MEDIUM, STRONG, Rule, rule

# The AI reader's names. Short Latin names are whole tokens; CJK and Hangul have no word boundary.
_AI = (
    r"(?:(?<![a-z])(?:ai|ia|ki|yz|llm|gpt|chatgpt|copilot|claude|gemini)(?![a-z])|ии(?![а-я])|нейросет\w*"
    r"|ассистент\w*|языков\w*\s+модел\w*|asistente\w*|assistente\w*|assistant\w*|assistent\w*|asystent\w*"
    r"|asistan\w*|intelig[eê]ncia\s+artificial|intelligence\s+artificielle|intelligenza\s+artificiale"
    r"|künstliche\w*\s+intelligenz|sztuczn\w+\s+inteligencj\w+|yapay\s+zek[aâ]\w*|sprachmodell\w*"
    r"|taalmodel\w*|modelos?\s+de\s+(?:lenguaje|linguagem)|modèles?\s+de\s+langage|modell[oi]\s+linguistic\w+"
    r"|dil\s+model\w*|model\w*\s+językow\w*|人工智能|智能助手|助手|大模型|语言模型|智能体|アシスタント|言語モデル"
    r"|エージェント|인공지능|어시스턴트|언어\s*모델|에이전트|챗봇|الذكاء\s+الاصطناعي|(?:لل|ال|ل)?مساعد\w*"
    r"|(?:لل|ال)نموذج|एआई|सहायक|कृत्रिम\s+बुद्धि\S*|भाषा\s+मॉडल)"
)
# What comes before the reader's name: a note, or "for"/"to" (English is left to the English rules).
_MARK = (
    r"(?:nota|notiz|hinweis|opmerking|notitie|observa[cç][aã]o|uwaga|notatka|примечание|заметка|указание"
    r"|сообщение|mensaje|messaggio|mensagem|bericht|wiadomo\w+|ملاحظة|رسالة|تنبيه|टिप्पणी|नोट|संदेश|pour"
    r"|à\s+l['’]intention\s+d[eu'’]?|aux?|für|para|aos?|às|alla?|per|voor|aan|для|dla|إلى|الى)"
    # A whole word ("au" is not the start of "automated"); Chinese has no spaces to end one.
    r"(?:(?<=['’])|(?![^\W\d_]))|给|致"
)
# ... and after it.
_AFTER = r"(?:için|के\s+लिए|को|에게|께|한테|へ|への|に対して|宛て?)"
# Verbs of reading this text, with the relative word before them, and "this".
_RELATIVE = (
    r"(?:qui|que|che|die|der|das|который|которая|которые|который|który|która|które|الذي|التي)\s+"
    r"(?:\S+\s+)?(?:lit|traite|analyse|résume|évalue|lee|lea|procesa|procese|resume|resuma|analiza|analice"
    r"|evalúa|lê|leia|processa|avalia|avaliam|analisa|legge|elabora|riassume|analizza|valuta|leest|verwerkt"
    r"|beoordeelt|liest|verarbeitet|bewertet|читает|обрабатывает|анализирует|оценивает|czyta|przetwarza"
    r"|streszcza|ocenia|يقرأ|تقرأ|يعالج|تعالج|يلخص|يراجع)\s+(?:ce|cet|cette|ces|este|esta|estos|estas"
    r"|estes|questo|questa|questi|dit|deze|diese[nmrs]?|этот|эту|это|эти|ten|tę|to|هذا|هذه)\b"
)
_READS_THIS = (
    r"(?:읽는|처리하는|요약하는|검토하는)\s*(?:ai|인공지능|모델|어시스턴트|에이전트|챗봇)"
    r"|(?:読んでいる|読む|処理する|要約する|処理している)\s*(?:AI|アシスタント|モデル|エージェント)"
    r"|(?:阅读|读取|处理|总结|正在读)[^。\n，,]{0,8}的\s*(?:AI|人工智能|助手|模型|智能体)"
    r"|(?:okuyan|işleyen|özetleyen|değerlendiren|inceleyen)\s+(?:yapay|ai|yz|asistan|model)"
    r"|(?:पढ़ने|पढ़|संसाधित\s+करने)\S*\s+(?:वाले|वाला|वाली)\s+(?:एआई|सहायक|मॉडल)"
)

LANGUAGE_RULES: tuple[Rule, ...] = (
    rule(
        "addressed (more languages)",
        "addressed to the model",
        STRONG,
        # "Opmerking voor de AI-reviewer:", "Для ИИ-ассистента:", "PS à l'intention de l'assistant ... :".
        rf"(?:^|[\s(>\"'«:;,.-])(?:{_MARK})\s*(?:[\w'’-]{{1,14}}\s*){{0,3}}?{_AI}[^\n:：.。!?]{{0,80}}[:：]"
        # "Yapay zekâ asistanları için not:", "एआई सहायक के लिए नोट:".
        rf"|{_AI}[^\n:：.。!?]{{0,30}}?{_AFTER}[^\n:：.。!?]{{0,20}}[:：]",
    ),
    rule(
        "reads this (more languages)",
        "addressed to the AI reading this",
        STRONG,
        rf"{_AI}[^\n.。!?]{{0,40}}?{_RELATIVE}|{_READS_THIS}",
    ),
    rule(
        "override (more languages)",
        "overrides earlier instructions",
        STRONG,
        # ar, tr, pl, hi, ko, and evaluation criteria set aside (pt, es, fr, de, it).
        r"(?:تجاهل|تجاهلي|تجاهلوا|انس|انسى|لا\s+تتبع)\s+(?:\S+\s+){0,2}?(?:التعليمات|الأوامر|القواعد|الإرشادات"
        r"|التوجيهات)|(?:talimat|kural|yönerge|komut)\w*\s+(?:\S+\s+){0,2}?(?:yok\s+say|görmezden\s+gel|unut"
        r"|dikkate\s+alma|uyma)|(?:zignoruj|ignoruj|zapomnij|pomiń|nie\s+stosuj\s+się\s+do)\w*\s+(?:\S+\s+)"
        r"{0,3}?(?:instrukcj|polece|zasad|reguł|wytyczn)\w*|(?:निर्देशों|निर्देश|नियमों|आदेशों)\s*(?:को\s*)?"
        r"(?:अनदेखा|नज़रअंदाज़|नजरअंदाज|भूल)|(?:이전|앞의|위의|모든|기존)[^.\n]{0,10}(?:지시|지침|명령|규칙)[^.\n]{0,8}"
        r"(?:따르지|무시|잊어)|(?:desconsider|ignor|olvid|esqueç|oubli|vergiss|dimentic)\w*\s+(?:\S+\s+){0,3}?"
        r"(?:critérios|criterios|critères|kriterien|criteri)\b",
    ),
    rule(
        "writes to memory (more languages)",
        "asks to store something in memory",
        MEDIUM,
        r"(?:recuerda|recuérdalo|guarda\s+en\s+(?:tu\s+)?memoria|mémorise|retiens|souviens-toi|merke\s+dir"
        r"|speichere|ricorda|memorizza|lembre-se|onthoud|запомни|сохрани\s+в\s+памяти|zapamiętaj"
        r"|hatırla|याद\s+रख|记住|記憶して|覚えて|기억해|تذكر)",
    ),
    rule(
        "future sessions (more languages)",
        "reaches into future sessions",
        MEDIUM,
        r"futuras?\s+(?:conversaciones|conversas|sesiones|sessões)|(?:conversaciones|conversas|sesiones)"
        r"\s+futuras|futures\s+(?:conversations|sessions)|(?:conversations|sessions)\s+futures"
        r"|zukünftigen?\s+(?:gesprächen|sitzungen|unterhaltungen)|future\s+(?:conversazioni|sessioni)"
        r"|toekomstige\s+(?:gesprekken|sessies)|будущих\s+(?:разговор|сесси|диалог)\w*|przyszłych\s+(?:rozmow"
        r"|sesj)\w*|gelecekteki\s+(?:konuşma|oturum)\w*|भविष्य\s+की\s+(?:बातचीत|सत्र)|以后的(?:对话|会话)"
        r"|今後の(?:会話|セッション)|향후\s*(?:대화|세션)|المحادثات\s+المستقبلية",
    ),
)
"""More rules for other languages, run like ``RULES_I18N`` on the text before look-alikes are mapped."""
