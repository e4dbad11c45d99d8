"""The injection detector's lexicons for the AI reader in about thirty languages.

``injection_rules_i18n`` and ``injection_rules_languages`` match whole moves phrase by phrase in the
languages they were written for, and miss a language they were not. A held-out corpus writes in
languages nobody tuned for, so this module covers the ~30 languages most used on the web with small
lexicons instead of phrases: the AI reader's names, the words that mark a note as meant for someone
("note for", "to", "dear") and "this" (text, page, message), instructions set aside, risky orders,
acting without approval, and keeping the user out. The signs combine like the English ones: a header
that names an AI reader ("Kwa msaidizi wa AI unayesoma ujumbe huu:", "Gửi trợ lý AI:") flags alone
when it also says to whom or "this"; a bare one needs another sign (instructions voided, a risky
order) nearby. A human-to-human request with the same verbs names no AI and stays clean.
Every gap is bounded, so each rule is linear; the rules run where ``injection_gates`` sees another
language (non-ASCII letters, or a word of its foreign list).
"""

from __future__ import annotations

import re

from sleepcompact.domain.injection_rules import FAINT, MEDIUM, STRONG, WEAK, Rule, rule

_SPACED_SCRIPT = re.compile(r"[A-Za-z\u00c0-\u024f\u0370-\u04ff\u0900-\u09ff]")
ASCII_WORDS: set[str] = set()
"""The lexicons' words in plain ASCII letters (Indonesian, Swahili, ...): ``injection_gates`` reads a
chunk holding one as maybe in another language, so these rules run on it."""
# English words that are also words of a lexicon: they may not open the rules to English text.
_ENGLISH_WORDS = (
    "a an to no not per pro al ai care that the this these ten ta lee analyse resume lit lis say chatgpt"
    " claude copilot gemini gpt llm llms die den das der salve mai nu bu ez sil ito ce ces cher som lea"
    " till dit guarda cara caro"
)
_ENGLISH = frozenset(_ENGLISH_WORDS.split())


def _any(words: str) -> str:
    """An alternation of the space-separated ``words`` (``_`` stands for a space inside a word).

    A word in a script that separates words with spaces (Latin, Greek, Cyrillic, Devanagari, Bengali)
    must start a word, and end one unless it is a stem (``\\w*``): "lee" is not the end of "sleep".
    Chinese, Japanese, Thai, Hebrew and Arabic attach particles and prefixes, so their words are
    matched anywhere. Each group is tried only where its first letters occur, which keeps a rule of
    hundreds of words about as fast as a rule of one.
    """
    spaced: list[str] = []
    attached: list[str] = []
    for word in words.split():
        pattern = word.replace("_", r"\s+")
        if _SPACED_SCRIPT.match(word):
            stem = word.endswith(("*", "?", ")"))
            spaced.append(pattern + ("" if stem else r"(?![^\W\d_])"))
        else:
            attached.append(pattern)
        if re.fullmatch(r"[a-z_]+", word):  # a plain word, not a stem: the gate sees whole words
            # A phrase matches only with all its words, so its longest one is enough to open the gate
            # (its short ones, "in", "de", "en", would open it to most English text).
            parts = sorted((w for w in word.split("_") if w not in _ENGLISH), key=len, reverse=True)
            ASCII_WORDS.update(parts[:1])
    groups = []
    for group, before in ((spaced, r"(?<![^\W\d_])"), (attached, "")):
        if group:
            firsts = "".join(sorted({re.escape(w[0]) for w in group}))
            groups.append(f"{before}(?=[{firsts}])(?:{'|'.join(group)})")
    return "(?:" + "|".join(groups) + ")"


# A letter may not touch the short Latin names ("ai" is not the end of "chai", "ia" not of "media").
_NO_LETTER_BEFORE = r"(?<![^\W\d_])"
_NO_LETTER_AFTER = r"(?![^\W\d_])"
_AI_SHORT = _any("ai a\\.i\\. ki ia yz llm llms gpt chatgpt copilot claude gemini chatbot\\w* ии ші шi τν")
# Names of the AI reader; stems take any ending (asistente, assistenten, asistentul, avustajalle).
_AI_LONG = _any(
    # Romance, Germanic, Slavic and Uralic languages in Latin letters, Turkish, Indonesian, Swahili
    "asist\\w* assistent\\w* asystent\\w* asszisztens\\w* avustaj\\w* tekoäly\\w*"
    " msaidizi wasaidizi"
    " trợ_lý trí_tuệ_nhân_tạo kecerdasan_buatan yapay_zek\\w* sztuczn\\w*_inteligencj\\w*"
    " uměl\\w*_inteligenc\\w* inteligen\\w*_artificial\\w* intelligen\\w*_artificiel\\w*"
    " intelligenza_artificiale künstlich\\w*_intelligenz kunstmatige_intelligentie"
    " artificiell_intelligens kunstig_intelligens mesterséges_intelligenci\\w* tehisintellekt\\w*"
    " dirbtin\\w*_intelekt\\w* umjetn\\w*_inteligencij\\w* umel\\w*_inteligenci\\w* sprachmodell\\w*"
    " språkmodell\\w* kielimalli\\w* nyelvi_modell\\w* jazykov\\w*_model\\w* dil_model\\w*"
    " model\\w*_(?:de_)?(?:limbaj|lenguaje|linguagem|langage|linguistic\\w*|języ\\w*)"
    # Cyrillic, Greek, Hebrew, Arabic, Persian, Urdu
    " ассистент\\w* асистент\\w* помічник\\w* помощник\\w* нейросет\\w* нейромереж\\w* чат-?бот\\w*"
    " штучн\\w*_інтелект\\w* искусствен\\w*_интеллект\\w* изкуствен\\w*_интелект\\w* βοηθ\\w*"
    " τεχνητ\\w*_νοημοσύν\\w* עוזר\\w* בינה_מלאכותית הבינה_המלאכותית סייען\\w* مساعد\\w*"
    " الذكاء_الاصطناعي ذكاء_اصطناعي دستیار\\w* هوش_مصنوعی چت‌بات مصنوعی_ذہانت"
    # Indic, Thai, CJK
    " एआई सहायक कृत्रिम_बुद्धि\\S* এআই সহকারী সহায়ক কৃত্রিম_বুদ্ধিমত্তা ผู้ช่วย ปัญญาประดิษฐ์ เอไอ"
    " 人工智能 人工智慧 智能助手 助手 助理 智能体 大模型 语言模型"
    " アシスタント 人工知能 エージェント 言語モデル"
    " 인공지능 어시스턴트 에이전트 챗봇 언어\\s*모델"
)
AI_WORLD = (
    rf"(?:{_NO_LETTER_BEFORE}{_AI_SHORT}{_NO_LETTER_AFTER}|(?-i:\bMI\b)|{_NO_LETTER_BEFORE}{_AI_LONG}"
    r")"
)
"""The AI reader's name in about thirty languages (short Latin names as whole words)."""
# ... without the names English shares ("AI:", "Claude, ..."): a header with one of those alone is
# English, which the English rules weigh.
_AI_NAMED = (
    rf"(?:{_NO_LETTER_BEFORE}(?:ki|ia|yz|ии|ші|шi|τν){_NO_LETTER_AFTER}|(?-i:\bMI\b)"
    rf"|{_NO_LETTER_BEFORE}{_AI_LONG})"
)

# Words that say whom a note is for ("note for", "to", "attention of", "dear"), before or after the name.
_MARK = _any(
    "nota notiz hinweis remarque catatan pesan ujumbe ghi_chú lưu_ý gửi kính_gửi uwaga"
    " wiadomość poznámka upozornění zpráva notă mesaj mesajul huomautus viesti megjegyzés üzenet"
    " meddelande anteckning bericht opmerking besked σημείωση μήνυμα примечание заметка сообщение"
    " примітка повідомлення הערה הודעה ملاحظة رسالة یادداشت پیام नोट संदेश টীকা বার্তা หมายเหตุ ถึง"
    " สำหรับ 给 致 提示 注意 メモ 注記 참고 메모 para pour für aan voor till för til per pro pentru"
    " către untuk kepada kwa dla для до к προς για à_l'attention alla al all' ao à às aos zu"
    " számára részére varten estimad\\w* querid\\w* caro cara cher chère liebe[rs]? kära kjære drogi"
    " drahý milý dragă hyvä kedves sevgili sayın уважаем\\w* дорог\\w* шановн\\w* αγαπητ\\w*"
    " برای به 親愛的 尊敬的 친애하는"
)
_MARK_AFTER = _any(
    "için için_not için_bilgi के_लिए को এর_জন্য জন্য へ への に対して 宛て 에게 께 한테 -nak -nek"
)
# "this" (text, page, message, file) and verbs of reading or handling it.
_THIS = _any(
    "este esta estos estas esto ce cet cette ces dies\\w* questo questa questi dit deze"
    " detta denna dessa dette denne tämä tätä tämän tässä ez ezt ennek ebben ezen tento tuto této tomto"
    " tohoto tę tego tej acest această acestui acestei aceasta bu bunu bunun bu_ini huu hii"
    " hiki này ito этот эту это эти этого цей цю це ці цим цього цієї αυτό αυτή αυτόν αυτά αυτού הזה"
    " הזאת זה זו هذا هذه این यह इस এই นี้ 这 此 這 この 本 이"
)
_READS = _any(
    "lee lea lees procesa resume analiza revisa gestiona lit lis traite résume analyse gère liest"
    " verarbeitet bearbeitet zusammenfasst legge elabora riassume analizza gestisce lê leia processa"
    " resume analisa gere leest verwerkt läser behandlar sammanfattar leser læser behandler lukee"
    " käsittelee tiivistää olvas feldolgoz összefoglal čte zpracovává shrnuje czyta przetwarza citește"
    " procesează rezumă okuyan işleyen özetleyen membaca memproses meringkas đọc xử_lý tóm_tắt anasoma"
    " unayesoma inayosoma читает обрабатывает читаєш читає обробляє працює διαβάζει επεξεργάζεται"
    " קורא קוראת שקורא שמסכם מסכם מעבד يقرأ يعالج يلخص می‌خواند می\\s*خواند پردازش पढ़ পড়ছে পড়ে"
    " อ่าน 阅读 读取 处理 总结 読んで 読む 処理 要約 읽는 처리 요약"
)
_RELATIVE = _any(
    "que qui che die der das den som joka jotka amely aki který která které care ce który która które"
    " yang anayesoma unaye ambaye mà который которая которые що який яка που ש الذي التي که जो যে ที่"
)
# Instructions, rules, settings; and the words that set them aside ("no longer valid", "ignore").
_INSTR = _any(
    "instrucc\\w* instrucţ\\w* instrucț\\w* instruç\\w* istruzion\\w* instruktion\\w* instrukc\\w*"
    " instruksi\\w* anweisung\\w* vorgaben? regeln? règles? reglas? regras? regole pautas? consignes?"
    " directiv\\w* diretriz\\w* richtlinien pokyn\\w* pravidl\\w* utasítás\\w* szabály\\w* ohje\\w*"
    " sääntö\\w* ohjeistus\\w* talimat\\w* kural\\w* yönerge\\w* aturan arahan maagizo kanuni quy_tắc"
    " hướng_dẫn chỉ_thị reguli\\w* regulile instrucțiunile riktlinjer regler retningslinjer"
    " инструкц\\w* указани\\w* правил\\w* настройк\\w* вказівк\\w* інструкц\\w* οδηγί\\w* κανόν\\w*"
    " הוראות הנחיות כללים تعليمات التعليمات قواعد دستورالعمل\\S* دستورات قوانین निर्देश\\S* নির্দেশ\\S*"
    " คำสั่ง กฎ 指令 指示 规则 規則 设定 設定 提示词 システム指示 지시\\S* 지침 규칙"
)
_VOID = _any(
    "ignora\\w* ignore[rz] ignorier\\w* olvid\\w* oubli\\w* vergiss\\w* dimentic\\w* esqueç\\w* negeer\\w*"
    " glöm\\w* glem\\w*"
    " unohda\\w* felejtsd\\w* hagyd_figyelmen_kívül zapomeň\\w* ignoruj\\w* zapomnij\\w* uită\\w* unut"
    " yok_say abaikan lupakan puuza sahau bỏ_qua quên не_действ\\w* недействительн\\w* отменен\\w*"
    " забудь\\w* игнориру\\w* ігноруй\\w* забудь\\w* не_діють більше_не скасован\\w* αγνόησε\\w*"
    " ξέχασε\\w* δεν_ισχύουν δεν_ισχύει התעלם\\w* שכח\\w* בטלות בטלה אינן_תקפות تجاهل انس ملغاة"
    " نادیده فراموش لغو अनदेखा भूल উপেক্ষা ভুলে เพิกเฉย ลืม ไม่มีผล 忽略 无视 忘记 作废 無視 忘れ 無効 무시 잊어 무효"
    " ya_no_(?:valen|aplican|son_válidas|rigen) ne_(?:comptent|s'appliquent|valent)_plus"
    " plus_valables? nicht_mehr_gültig gelten_nicht_mehr non_(?:valgono|sono)_più não_(?:valem|se_aplicam)"
    " gäller_inte_längre gjelder_ikke_lenger eivät_ole_enää_voimassa nem_érvényes\\w* již_neplatí"
    " nu_mai_sunt_valabile nie_obowiązują geçersiz tidak_berlaku_lagi hazitumiki không_còn_hiệu_lực"
    " không_còn_áp_dụng"
)
# Risky orders in the imperative: send, forward, transfer, refund, pay, delete, run, grant, publish,
# reveal, share, remember.
_ORDER = _any(
    "envía envia reenvía reenvia transfiere borra elimina ejecuta revela comparte guarda recuerda"
    " envoie envoyez transfère supprime efface exécute révèle partage ajoute mémorise retiens"
    " sende schicke leite überweise lösche führe verrate teile speichere merke invia inoltra trasferisci"
    " elimina cancella esegui rivela condividi ricorda salva envie encaminhe transfira apague exclua"
    " revele compartilhe lembre stuur verstuur verwijder voer deel onthoud skicka"
    " vidarebefordra överför radera ta_bort kör avslöja dela spara kom_ihåg slett kjør lähetä"
    " välitä siirrä poista suorita paljasta jaa tallenna muista küldd továbbítsd utald töröld futtasd"
    " oszd jegyezd pošli přepošli převeď smaž spusť prozraď sdílej ulož zapamatuj wyślij prześlij"
    " przelej usuń uruchom ujawnij udostępnij zapisz zapamiętaj trimite redirecționează transferă"
    " șterge rulează execută dezvăluie distribuie salvează ține_minte gönder ilet aktar sil çalıştır"
    " paylaş kaydet hatırla kirim teruskan hapus jalankan ungkapkan bagikan simpan ingat tuma"
    " hamisha futa endesha fichua shiriki hifadhi kumbuka gửi chuyển xóa xoá chạy tiết_lộ chia_sẻ lưu"
    " nhớ hãy отправь перешли переведи удали выполни запусти раскрой покажи сохрани запомни надішли"
    " перешли переказ видали виконай запусти розкрий збережи запам'ятай στείλε προώθησε μετάφερε"
    " διέγραψε εκτέλεσε αποκάλυψε μοιράσου αποθήκευσε θυμήσου κάνε שלח העבר מחק הרץ חשוף שתף שמור זכור"
    " أرسل حول احذف نفذ شغل اكشف شارك احفظ تذكر بفرست ارسال انتقال حذف اجرا فاش ذخیره به_خاطر_بسپار"
    " भेज\\S* हटा\\S* चला\\S* बता\\S* याद পাঠা\\S* মুছে চালা\\S* মনে_রাখ\\S* ส่ง โอน ลบ รัน เปิดเผย"
    " บันทึก จำ 发送 转发 转账 删除 执行 运行 泄露 记住 保存 送信 転送 送金 削除 実行 記憶 覚え 보내 전송"
    " 송금 삭제 실행 공개 기억 저장"
)
# Acting without approval, and keeping the user out of it.
_UNCHECKED = _any(
    "sin_(?:confirmación|aprobación|preguntar|verificar) sans_(?:confirmation|approbation|demander"
    "|vérifier) ohne_(?:bestätigung|rückfrage|freigabe|genehmigung|nachzufragen)"
    " senza_(?:conferma|approvazione|chiedere) sem_(?:confirmação|aprovação|perguntar) zonder"
    "_(?:bevestiging|goedkeuring) utan_(?:bekräftelse|godkännande|att_fråga) uten_(?:bekreftelse"
    "|godkjenning) ilman_(?:vahvistusta|hyväksyntää|lupaa) jóváhagyás_nélkül megerősítés_nélkül"
    " bez_(?:potvrzení|schválení|potwierdzenia|zgody|zatwierdzenia|підтвердження|погодження)"
    " fără_(?:confirmare|aprobare) onay\\w*_(?:almadan|beklemeden|istemeden) tanpa_(?:konfirmasi"
    "|persetujuan|bertanya) bila_(?:kuthibitisha|idhini|kuuliza) không_cần_(?:xác_nhận|hỏi|phê_duyệt)"
    " без_(?:подтверждени\\w*|согласовани\\w*|одобрени\\w*|підтвердженн\\w*|погодженн\\w*) χωρίς_(?:έγκριση"
    "|επιβεβαίωση) ללא_(?:אישור|לשאול) بدون_(?:تأكيد|موافقة|تایید|اجازه) बिना_(?:पुष्टि|अनुमति)"
    " অনুমতি_ছাড়া নিশ্চিত_না_করে โดยไม่ต้อง ไม่ต้องยืนยัน 无需确认 不经确认 无需批准 確認せず 確認なしで"
    " 承認なしで 확인\\s*없이 승인\\s*없이"
)
_USER_OUT = _any(
    "no_(?:le_)?(?:digas|menciones|informes)\\w* ne_(?:le_)?(?:dis|dites|mentionne)\\w* nichts_sagen"
    " non_(?:dirlo|dire|menzionar\\w*) não_(?:diga|mencione|conte) niet_(?:vertellen|melden) nämn_inte"
    " säg_inte nevn_ikke älä_(?:kerro|mainitse) ne_(?:mondd|említsd) neříkej nezmiňuj nie_mów"
    " nie_wspominaj nu_(?:spune|menționa) söyleme bahsetme jangan_(?:beri_tahu|sebut|memberitahu)"
    " usimwambie usiseme đừng_(?:nói|báo|nhắc) не_(?:говори|сообщай|упоминай|кажи|повідомляй|згадуй)"
    " μην_(?:πεις|αναφέρεις) אל_(?:תספר|תזכיר|תגיד) لا_(?:تخبر|تذكر) نگو ذکر_نکن मत_बताना না_জানিয়ে"
    " ไม่ต้องบอก อย่าบอก 不要告诉 不要提 言わないで 伝えないで 말하지\\s*마 알리지\\s*마"
)
# Reaching past this conversation: "from now on", and the model's memory.
_LASTING = _any(
    "de_ahora_en_adelante a_partir_de_ahora desde_ahora désormais dorénavant à_partir_de_maintenant"
    " ab_sofort ab_jetzt von_nun_an d'ora_in_poi da_ora_in_poi a_partir_de_agora de_agora_em_diante"
    " vanaf_nu från_och_med_nu hädanefter fra_nå_av tästä_lähtien jatkossa mostantól ezentúl odteď"
    " od_teď od_nynějška od_teraz odtąd de_acum_înainte de_acum_încolo bundan_sonra mulai_sekarang"
    " mulai_saat_ini kuanzia_sasa từ_giờ kể_từ_bây_giờ отныне с_этого_момента впредь відтепер"
    " з_цього_моменту από_τώρα_και_στο_εξής στο_εξής מעכשיו מעתה من_الآن_فصاعدا از_این_به_بعد अब_से"
    " এখন_থেকে ตั้งแต่นี้ไป 从现在起 从现在开始 今後 これから以降 앞으로 이제부터 memoria memorie mémoire"
    " gedächtnis memória geheugen minne muisti\\w* memóri\\w* paměti paměť pamięć pamięci memoriei bellek\\w*"
    " hafıza\\w* memori kumbukumbu bộ_nhớ памят\\w* μνήμη זיכרון الذاكرة حافظه स्मृति মেমরি"
    " หน่วยความจำ 记忆 記憶 メモリ 메모리"
)
_CLAUSE_END = r"[\n.!?。！？]"

WORLD_RULES: tuple[Rule, ...] = (
    rule(
        "addressed (world)",
        "addressed to the model",
        STRONG,
        # A header that names the AI reader and says it is for it or about this text, then a colon:
        # "Kwa msaidizi wa AI unayesoma ujumbe huu:", "Till den AI-assistent som läser detta dokument:".
        # The lookahead finds the colon first: most sentences have none, and are left at once.
        rf"(?:^|(?<=[.!?。！？>(\[\"'*_]))(?=[^\n.!?。:：]{{0,150}}[:：])[^\S\n]{{0,10}}[^\n.!?。:：]{{0,40}}?"
        rf"(?:{_MARK}[^\n.!?。:：]{{0,30}}?{AI_WORLD}|{AI_WORLD}[^\n.!?。:：]{{0,20}}?{_MARK_AFTER}"
        rf"|{AI_WORLD}[^\n.!?。:：]{{0,50}}?(?:{_THIS}|{_READS}))[^\n.!?。:：]{{0,60}}[:：]",
    ),
    rule(
        "addressed softly (world)",
        "speaks to the model",
        MEDIUM,
        # A header naming an AI with text after it ("Asistente de IA: ..."), or the AI reading this.
        rf"(?:^|(?<=[.!?。！？>(\[\"'*_]))(?=[^\n.!?。:：]{{0,75}}[:：])[^\S\n]{{0,10}}[^\n.!?。:：]{{0,30}}?{_AI_NAMED}"
        r"[^\n.!?。:：]{0,40}[:：][^\S\n]{0,10}\S"
        # A vocative: the name alone, then a comma ("Assistente, a partir de agora ..."); "Asistentul
        # nostru de vânzări, Ioana, ..." is a subject.
        rf"|(?:^|(?<=[.!?。！？>(\[\"'*_]))[^\S\n]{{0,10}}[^\n.!?。:：,，]{{0,12}}?{_AI_NAMED}[^\n.!?。:：,，]{{0,12}}[,，、]"
        rf"[^\S\n]{{0,10}}\S|{AI_WORLD}[^\n.!?。]{{0,30}}?(?:{_RELATIVE}\s+)?[^\n.!?。]{{0,10}}?{_READS}",
    ),
    rule(
        "override (world)",
        "sets earlier instructions aside",
        # People retire old instructions too ("the old instructions no longer apply"): it counts only
        # with the AI addressed or another sign.
        WEAK,
        rf"{_INSTR}[^\n.!?。]{{0,50}}?{_VOID}|{_VOID}[^\n.!?。]{{0,40}}?{_INSTR}",
    ),
    rule(
        "order (world)",
        "a risky order",
        # Product text names the assistant and its buttons ("AI 어시스턴트 안내: ... 삭제할 수 있습니다"), so
        # a risky verb only tips a combination over.
        FAINT,
        rf"(?:^|[\s:：,，、(\"'*_]){_ORDER}",
    ),
    rule(
        "lasting (world)",
        "reaches past this conversation",
        WEAK,
        _LASTING,
    ),
    rule(
        "no confirmation (world)",
        "acts without confirmation",
        MEDIUM,
        _UNCHECKED,
    ),
    rule(
        "keeps the user out (world)",
        "keeps the user out of it",
        MEDIUM,
        _USER_OUT,
    ),
)
"""Lexicon rules for the AI reader, voided instructions and risky orders in about thirty languages."""
