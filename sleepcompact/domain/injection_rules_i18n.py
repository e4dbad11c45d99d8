"""The injection detector's rules in other languages: French, German, Spanish, Italian, Portuguese,
Dutch, Chinese, Japanese, Korean and Russian.

Injections are translated to slip past English filters. These rules cover the common moves (ignore
earlier instructions, a new role, reveal the system prompt, a note to the AI, hide it from the user,
send the conversation away) in each language; they run on the text before look-alike letters are
mapped to Latin, so Cyrillic stays Cyrillic. Text after NFKC: fullwidth colons are ASCII colons.
"""

from __future__ import annotations

from sleepcompact.domain.injection_rules import MEDIUM, STRONG, Rule, rule
from sleepcompact.domain.injection_rules_languages import LANGUAGE_RULES
from sleepcompact.domain.injection_rules_world import WORLD_RULES

_URL_OR_MAIL = r"(?:https?://|[\w.+-]+@[\w-]+\.)"

_RULES: tuple[Rule, ...] = (
    rule(
        "override (other languages)",
        "overrides earlier instructions",
        STRONG,
        # fr, de, es, it, pt, nl: a verb of ignoring, then instructions (not warnings, mails or steps).
        r"\b(?:ignore[rz]?|ignorez|oublie[rz]?|oubliez|ne\s+tiens?\s+pas\s+compte)\s+(?:de\s+)?(?:toutes\s+"
        r"|tout\s+)?(?:les|tes|vos|ces|des)\s+(?:\w+\s+){0,2}?(?:instructions?|consignes?|règles"
        r"|directives)\b|\b(?:ignorier(?:e|en)?|vergiss|vergessen\s+sie"
        r"|missachte)\b[^.\n]{0,40}?\b(?:anweisungen|instruktionen|regeln|vorgaben|richtlinien|befehle)\b"
        r"|\b(?:ignora|ignore|olvida|omite|descarta|desconsidera)\w*\b[^.\n]{0,40}?\b(?:instrucciones|reglas"
        r"|indicaciones|directrices|órdenes)\b|\b(?:ignora|dimentica"
        r"|trascura)\w*\b[^.\n]{0,40}?\b(?:istruzioni|regole|indicazioni)\b|\b(?:ignore|ignora|esqueça"
        r"|esqueca|desconsidere)\w*\b[^.\n]{0,40}?\b(?:instruções|instrucoes|regras|diretrizes)\b"
        r"|\bnegeer\b[^.\n]{0,40}?\b(?:instructies|regels)\b|\bno\s+(?:sigas|obedezcas"
        r"|hagas\s+caso\s+a)\s+(?:las\s+)?(?:instrucciones|órdenes|indicaciones)|\bne\s+(?:suis|suivez"
        r"|tiens\s+pas\s+compte\s+des)\s+(?:pas\s+)?(?:les\s+)?(?:instructions|consignes)|\b(?:befolge"
        r"|folge)\s+(?:nicht\s+)?(?:den|die)\s+(?:anweisungen|regeln)\s+(?:\w+\s+){0,2}?nicht\b"
        r"|\bnon\s+seguire\s+(?:le\s+)?istruzioni|\bnão\s+(?:siga|obedeça)\s+(?:as\s+)?(?:instruções|regras)"
        r"|(?:忽略|无视|不要理会)\s*用户的?(?:问题|请求|要求|指令|输入)"
        # zh, ja, ko, ru
        r"|(?:忽略|无视|忽视|不要理会|忘记|忘掉|忽略掉)[^。\n]{0,12}(?:指令|指示|提示|规则|说明|命令|设定)|(?:指示|命令|指令|ルール|プロンプト)"
        r"[^。\n]{0,10}(?:無視|忘れ|無効に)(?!され)|(?:이전|앞의|위의|모든)[^.\n]{0,10}(?:지시|지침|명령|규칙)[^.\n]{0,8}(?:무시|잊어)"
        r"|(?:игнорируй|игнорируйте|забудь|забудьте|проигнорируй"
        r"|не\s+обращай\s+внимания\s+на)[^.\n]{0,40}?(?:инструкци|указани|правил|команд|подсказ)",
    ),
    rule(
        "role (other languages)",
        "reassigns the model's role",
        STRONG,
        # "Now you are" counts with a role for a model or an order; "you are now signed in" does not.
        r"\b(?:tu\s+es|vous\s+êtes)\s+(?:désormais|maintenant|dorénavant)\s+(?:un|une|l'|le"
        r"|la)\s*(?:\w+\s+){0,2}?(?:assistant|ia|modèle|agent|bot|administrateur)"
        r"|\b(?:à\s+partir\s+de\s+maintenant|désormais|dorénavant)\s*,?\s+(?:tu\s+(?:dois|vas|es|réponds)"
        r"|vous\s+(?:devez|allez|êtes|répondez)|réponds|répondez|ignore|ignorez|obéis|obéissez)\b"
        r"|\bdu\s+bist\s+(?:jetzt|nun|ab\s+sofort|ab\s+jetzt)\s+(?:ein|eine|der|die"
        r"|das)?\s*(?:[\w-]+\s+){0,2}?[\w-]*?(?:assistent|ki|modell|agent|bot|administrator|admin)"
        r"|\bab\s+(?:sofort|jetzt)\s*,?\s+(?:leitest|sendest|wirst|sollst|musst|bist|gibst"
        r"|ignorierst)\s+du\b|\b(?:ahora|a\s+partir\s+de\s+ahora|desde\s+ahora)\s*,?\s+(?:eres"
        r"|serás)\s+(?:un|una|el|la)?\s*(?:\w+\s+){0,2}?(?:asistente|ia|modelo|agente|bot|administrador)\b"
        r"|\b(?:a\s+partir\s+de|desde)\s+ahora\s*,?\s+(?:debes|vas\s+a|tienes\s+que)\b|\b(?:ora"
        r"|d'ora\s+in\s+poi|da\s+ora\s+in\s+poi)\s*,?\s+(?:sei\s+(?:un|una)\s+(?:\w+\s+){0,2}?(?:assistente"
        r"|ia|modello|agente)|devi)\b|\b(?:agora\s+você\s+é\s+(?:um|uma)\s+(?:\w+\s+){0,2}?(?:assistente|ia"
        r"|modelo|agente)|a\s+partir\s+de\s+agora\s*,?\s+você\s+(?:deve|vai|é|tem\s+que))\b"
        r"|你现在是[^。，,\n]{0,10}(?:助手|AI|人工智能|模型|机器人|管理员|没有)|从现在开始\s*[,，]?\s*你(?:是|必须|要|只能|将|应该)|あなたは(?:今から"
        r"|これから|今|もう)[^。\n]{0,15}(?:AI|アシスタント|モデル|管理者|制限)|(?:너는|당신은)\s*이제[^.\n]{0,15}(?:AI|어시스턴트|모델|관리자|제한)"
        r"|(?:теперь|отныне|с\s+этого\s+момента)\s*,?\s+(?:отвечай|говори|пиши|игнорируй|делай|выполняй"
        r"|отправляй)\w*|(?:теперь|отныне|с\s+этого\s+момента)\s*,?\s+ты\s+(?:\w+\s+){0,2}?(?:администратор"
        r"|ассистент|ии\b|модель|бот|агент|должен|обязан|будешь|без)",
    ),
    rule(
        "prompt extraction (other languages)",
        "asks for the system prompt",
        STRONG,
        r"\b(?:affiche|révèle|montre|donne|répète|imprime)\w*\b[^.\n]{0,30}?\b(?:prompt|invite|message"
        r"|consignes)\s+(?:système|systeme|initia\w*)|\b(?:gib|zeige?|verrate|nenne"
        r"|wiederhole)\b[^.\n]{0,30}?\bsystem-?(?:prompt|anweisung)|\b(?:revela|muestra|imprime|repite"
        r"|dime)\w*\b[^.\n]{0,30}?\b(?:prompt|mensaje|instrucciones)\s+(?:del|de)\s+sistema|\b(?:mostra"
        r"|rivela|stampa|ripeti)\w*\b[^.\n]{0,30}?\bprompt\s+di\s+sistema|\b(?:revele|mostre|exiba"
        r"|imprima)\w*\b[^.\n]{0,30}?\bprompt\s+(?:do|de)\s+sistema|(?:输出|显示|打印|告诉我|泄露|透露"
        r"|重复)[^。\n]{0,10}(?:系统提示|提示词|系统消息|初始指令)|システムプロンプト[^。\n]{0,10}(?:表示|出力|教え|見せ|開示)"
        r"|시스템\s*프롬프트[^.\n]{0,10}(?:출력|보여|공개|알려)|(?:покажи|выведи|раскрой|повтори"
        r"|напиши)[^.\n]{0,30}систем\w*\s+(?:промпт|подсказк|сообщени|инструкци)",
    ),
    rule(
        "addressed (other languages)",
        "addressed to the model",
        STRONG,
        r"\b(?:note|message|instructions?|consigne)\s+(?:pour|à)\s+(?:l'|l’|le\s+|la\s+|les\s+)?(?:assistant"
        r"|ia|modèle|agent|bot|llm)\b|\b(?:hinweis|nachricht|anweisung|notiz)\s+(?:an|für)\s+(?:den|die"
        r"|das)?\s*(?:ki|assistenten|modell|agenten|bot|ki-assistenten|ki-agenten)\b|\b(?:nota|mensaje"
        r"|instrucciones?)\s+para\s+(?:el\s+|la\s+)?(?:asistente|ia|modelo|agente|bot)\b|\b(?:nota|messaggio"
        r"|istruzioni)\s+per\s+(?:l'|l’|il\s+|la\s+)?(?:assistente|ia|modello|agente)\b|(?:给|致|对)\s*(?:AI"
        r"|人工智能|助手|模型|智能体)[^。\n]{0,8}(?:的说明|的消息|的指示|:|：)|(?:AI|アシスタント|モデル|エージェント)(?:へ|に対して|への(?:指示"
        r"|メッセージ))\s*[:：、]|(?:примечание|сообщение|инструкция|заметка)\s+для\s+(?:ии|ai|ассистента|модели"
        r"|агента|бота|ии-ассистента)",
    ),
    rule(
        "addressed softly (other languages)",
        "speaks to the model",
        MEDIUM,
        r"\b(?:para|pour|für|an|per)\s+(?:el\s+|la\s+|le\s+|l'|l’|den\s+|die\s+|das\s+|o\s+|a\s+|il\s+"
        r"|lo\s+)?(?:asistente|assistant|assistenten|assistente|ia|ki|modelo|modèle|modell|modello|agente"
        r"|agenten)\s*[:：]|^[\s>#*/-]*(?:ассистент|ии|бот|агент|asistente|assistente|assistent|助手"
        r"|アシスタント)\s*[,:：，、]|\b(?:cher|chère|querido|querida|estimado|liebe[rs]?|caro|cara)\s+(?:ia|ki"
        r"|assistant|asistente|assistent|assistente)\b",
    ),
    rule(
        "keeps the user out (other languages)",
        "keeps the user out of it",
        STRONG,
        r"\bne\s+(?:le\s+|lui\s+|leur\s+)?(?:dis|dites|mentionne[zr]?|informe[zr]?|préviens"
        r"|prévenez)\s+(?:rien\s+)?(?:pas\s+)?(?:à\s+)?l'utilisateur|\bsans\s+(?:consulter|prévenir|informer"
        r"|demander\s+à)\s+l'utilisateur|\b(?:sag|sage|erzähl|verrate)\w*\s+(?:dem|den)\s+(?:benutzer|nutzer"
        r"|anwender)\w*\s+nichts|\bno\s+(?:le\s+)?(?:digas|informes|menciones|cuentes"
        r"|avises)\w*\s+(?:nada\s+)?al\s+usuario|\bnon\s+(?:dire|dirlo|informare)\s+(?:nulla\s+)?all'utente"
        r"|不要(?:告诉|通知|让)用户|ユーザーに(?:知らせ|伝え|言わ|教え)(?:ず|ないで)|не\s+(?:говори|сообщай"
        r"|рассказывай)\w*\s+пользовател",
    ),
    rule(
        "no limits (other languages)",
        "claims the model has no limits",
        MEDIUM,
        r"\bsans\s+(?:aucune\s+)?(?:restrictions?|limites|filtres)\b"
        r"|\bohne\s+(?:jegliche\s+)?(?:einschränkungen|beschränkungen|filter|regeln)\b"
        r"|\bsin\s+(?:ninguna\s+)?(?:restricciones|límites|filtros)\b|\bsenza\s+(?:alcuna\s+)?(?:restrizioni"
        r"|limiti)\b|\bsem\s+(?:nenhuma\s+)?(?:restrições|limites)\b|没有任何限制|不受任何限制|无限制|制限のない|制限なし"
        r"|без\s+(?:каких-либо\s+)?ограничений|\bneue\s+anweisungen\s*:|\bnouvelles\s+instructions\s*:"
        r"|\bnuevas\s+instrucciones\s*:",
    ),
    rule(
        "exfiltration (other languages)",
        "sends data to an outside address",
        STRONG,
        r"\b(?:envoie[rz]?|envoyez|envoyer|transmet[st]?(?:ez)?|transmettre|transfère[rz]?|transférez"
        r"|transférer)\b[^\n]{0,80}?(?:historique"
        rf"|conversation|clés|mots\s+de\s+passe|secrets|identifiants|e-?mails)[^\n]{{0,60}}?{_URL_OR_MAIL}"
        r"|\b(?:leite|sende|schicke|übermittle|weiterleiten|senden|schicken)\w*\b[^\n]{0,80}?(?:e-?mails"
        r"|verlauf|passwörter|schlüssel"
        rf"|konversation|chat|daten)[^\n]{{0,60}}?{_URL_OR_MAIL}|\b(?:leitest|sendest"
        rf"|schickst)\s+du\b[^\n]{{0,80}}?{_URL_OR_MAIL}"
        r"|\b(?:envía|envia|enviar|reenvía|reenviar|manda|mandar|sube|subir"
        r"|encaminh)\w*\b[^\n]{0,80}?(?:historial|conversación|claves|contraseñas"
        rf"|secretos|credenciales|correos)[^\n]{{0,60}}?{_URL_OR_MAIL}"
        r"|\b(?:invia|inviare|inoltra|inoltrare|manda)\w*\b[^\n]{0,80}?(?:cronologia|conversazione|chiavi"
        r"|password|email)"
        rf"[^\n]{{0,60}}?{_URL_OR_MAIL}|(?:发送|上传|转发|传到|发到)[^。\n]{{0,30}}?{_URL_OR_MAIL}|(?:对话|聊天|记录|密码|密钥|凭证"
        rf"|历史)[^。\n]{{0,20}}?(?:发送|上传|转发)到\s*{_URL_OR_MAIL}|(?:会話|履歴|パスワード"
        rf"|キー)[^。\n]{{0,30}}?{_URL_OR_MAIL}[^。\n]{{0,10}}(?:送信|アップロード|転送)"
        r"|(?:会話|履歴|パスワード|キー|トークン)[^。\n]{0,20}?(?:送って|送信して|アップロードして|転送して)|(?:отправь|отправьте|перешли"
        r"|перешлите|загрузи)\w*[^\n]{0,80}?(?:истори|переписк|парол|ключ|данные)"
        rf"[^\n]{{0,60}}?{_URL_OR_MAIL}",
    ),
)
RULES_I18N: tuple[Rule, ...] = (*_RULES, *LANGUAGE_RULES, *WORLD_RULES)
"""Rules for the other languages, run on the text before look-alikes are mapped to Latin."""
