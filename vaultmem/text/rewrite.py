"""First-person chat sentences rewritten as third-person statements ("I love it" -> "Alice loves it").

Memories are read long after the chat, by other agents and in other sessions, so "I" must
become a name. The first mention of the speaker in a sentence gets the name (with the verb
agreeing in the third person singular); later mentions become "they"/"their", which keep
plural agreement, so no gender is ever guessed.
"""

from __future__ import annotations

import re

from vaultmem.text.script import is_chinese

ADVERBS = {"really", "also", "just", "still", "totally", "absolutely", "actually", "usually",
           "always", "never", "often", "sometimes", "recently", "finally", "even", "kinda",
           "definitely", "truly", "honestly", "already", "mostly", "only", "now", "generally",
           "personally", "especially", "seriously", "literally", "certainly", "probably",
           "rarely", "sincerely", "currently", "mainly", "occasionally", "typically", "sorta",
           "genuinely", "seriously", "simply", "too", "then", "hardly", "barely", "no", "longer"}
# Words after "I" that need no -s: modals, past forms, and forms that read the same.
_KEEP = {"can", "can't", "cannot", "could", "couldn't", "will", "won't", "would", "wouldn't",
         "should", "shouldn't", "might", "must", "may", "did", "didn't", "had", "hadn't",
         "used", "went", "got", "made", "saw", "took", "came", "ran", "met", "bought", "found",
         "gave", "felt", "left", "told", "thought", "knew", "began", "became", "brought",
         "built", "caught", "chose", "drew", "drove", "ate", "fell", "fought", "flew", "forgot",
         "grew", "heard", "held", "kept", "lost", "meant", "paid", "put", "read", "rode", "sang",
         "sat", "said", "sent", "shot", "slept", "spent", "spoke", "stood", "swam", "taught",
         "threw", "understood", "woke", "won", "wore", "wrote", "let", "cut", "hit", "set",
         "quit", "hurt", "led", "lent", "sold", "won", "struck", "stuck", "dug", "fed", "bet",
         "misread", "reread", "spread", "shut", "split", "upset", "burst", "cast", "forecast"}
_ADVERB_RE = "|".join(sorted(ADVERBS, key=len, reverse=True))
# "I", its contraction or its adverbs and verb: the part whose agreement changes.
_PERSON_TOKENS = re.compile(
    rf"(?P<i>(?<![\w'])(?:I(?![\w])|i(?=['\s])))((?:'m not|'m|'ve|'ll|'d)\b|(?:\s+(?:{_ADVERB_RE})\b)*\s+[\w']+)?"
    r"|(?<![\w'-])(?:myself|mine|my|me|ourselves|ours|our|we're|we've|we'll|we'd|we)\b(?!['-])|(?<![\w'])(?-i:us)\b", re.I)
_IRREGULAR = {"have": "has", "do": "does", "go": "goes", "be": "is", "am": "is"}
# after an adverb ("I really don't like running"): the contraction agrees too
_NEGATED = {"don't": "doesn't", "dont": "doesn't", "haven't": "hasn't", "am": "is", "'m": "is"}
_FIRST_PERSON = re.compile(r"(?<![\w'])(?:I|i)(?:'m|'ve|'d|'ll)?(?![\w'])|\b(?:my|me|mine|myself|we|we're|"
                           r"we've|we'll|we'd|our|ours|ourselves)\b|(?<![\w'])(?-i:us)\b", re.I)


def has_first_person(sentence: str) -> bool:
    if is_chinese(sentence):
        return "我" in sentence
    return bool(_FIRST_PERSON.search(sentence.replace("I ", "I ")))


_NOT_VERBS = {"and", "or", "but", "too", "alone", "both", "all", "who", "that", "which", "myself",
              "personally", "only", "either", "neither", "as", "at", "in", "on", "with", "the", "a"}


def third_person_verb(verb: str) -> str:
    """'love' -> 'loves', 'go' -> 'goes', 'try' -> 'tries'; past forms and modals unchanged."""
    low = verb.lower()
    if low in _NEGATED:
        return _NEGATED[low] if verb.islower() else capitalise(_NEGATED[low])
    if low in _KEEP or low in _NOT_VERBS or (low.endswith("ed") and low not in _ED_BASE) or not low.isalpha():
        return verb
    if low in _IRREGULAR:
        return _IRREGULAR[low]
    if re.search(r"(s|sh|ch|x|z|o)$", low):
        return verb + "es"
    if re.search(r"[^aeiou]y$", low):
        return verb[:-1] + "ies"
    return verb + "s"


# Present forms that end in "ed" like a past one: "I need" -> "the user needs", not "need".
_ED_BASE = {"need", "feed", "bleed", "breed", "speed", "succeed", "proceed", "exceed", "heed", "seed",
            "weed", "plead", "embed"}


_CONTRACTIONS = [  # (pattern after "I", third person singular, plural "they")
    (r"'m not\b|\s+am not\b", "is not", "are not"),
    (r"'m\b|\s+am\b", "is", "are"),
    (r"'ve\b|\s+have\b", "has", "have"),
    (r"\s+haven't\b", "hasn't", "haven't"),
    (r"\s+don't\b", "doesn't", "don't"),
    (r"\s+do not\b", "does not", "do not"),
    (r"\s+do\b", "does", "do"),
    (r"'ll\b", "will", "will"),
    (r"'d(?=\s+(?:been|gone|had|done|seen|already|never|just)\b)", "had", "had"),
    (r"'d\b", "would", "would"),
    (r"\s+was\b", "was", "were"),
    (r"\s+wasn't\b", "wasn't", "weren't"),
]


def to_third_person(sentence: str, name: str) -> str:
    """Rewrite an English first-person sentence about `name` (e.g. "Caroline", "the user").

    >>> to_third_person("I love hiking and my dog loves it too.", "Alice")
    'Alice loves hiking and their dog loves it too.'
    >>> to_third_person('I said: "running is not for me".', "Alice")
    'Alice said: "running is not for me".'
    """
    if is_chinese(sentence):
        return to_third_person_zh(sentence, name)
    state = {"named": False}

    def person(singular_form: str, plural_form: str) -> str:
        if state["named"]:
            return plural_form
        state["named"] = True
        return singular_form

    def subject(m: re.Match) -> str:
        rest = m.group(2) or ""
        # "Sarah and I live": a plural subject keeps the verb as it is
        joint = bool(re.search(r"(?:\b[A-Z][a-z]+|\bmy [\w-]+|\b(?:he|she|they|you))\s+(?:and|&)\s+$",
                               m.string[:m.start()]))
        if re.search(r"[.!?]\s+$", m.string[:m.start()]):
            state["named"] = False  # a new sentence names the person again: "… . The user needs …"
        first = not state["named"] and not joint
        who = name if joint else person(name, "they")
        for pattern, singular, plural in _CONTRACTIONS:
            hit = re.match(pattern, rest)
            if hit:
                return f"{who} {singular if first else plural}" + rest[hit.end():]
        words = rest.split(" ")
        # words[0] is "" (rest starts with a space); skip adverbs to reach the verb.
        i = 1
        while i < len(words) and words[i].lower() in ADVERBS:
            i += 1
        if first and i < len(words):
            words[i] = third_person_verb(words[i])
        return who + " ".join(words)

    def other(m: re.Match) -> str:
        word = m.group(0).lower()
        if word == "myself":
            return "themself"
        if word == "my":
            return person(f"{name}'s", "their")
        if word == "mine":
            return person(f"{name}'s", "theirs")
        if word == "me":
            return person(name, "them")
        if word == "ourselves":
            return "themselves"
        if word in ("our", "ours"):
            return person(f"{name}'s", "their" if word == "our" else "theirs")
        if word == "us":
            return person(f"{name} and others", "them")
        verb = {"we're": " are", "we've": " have", "we'll": " will", "we'd": " would"}.get(word, "")
        return person(f"{name} and others", "they") + verb

    def dispatch(m: re.Match) -> str:
        return subject(m) if m.group("i") else other(m)

    # casual forms first, so that "I wanna" agrees like "I want to"
    sentence = re.sub(r"\bwanna\b", "want to", sentence, flags=re.I)
    sentence = re.sub(r"\bgotta\b", "have to", sentence, flags=re.I)
    sentence = re.sub(r"\bgonna\b", "going to", sentence, flags=re.I)
    sentence = re.sub(r"\b[Mm]y ((?:[\w-]+ ){0,2}?[\w-]+) (?:and|&) I\b", r"I and my \1", sentence)
    # Words in double quotes are the speaker's own and stay as said.
    parts = re.split(r'("[^"]*")', sentence)
    text = "".join(part if part.startswith('"') else _PERSON_TOKENS.sub(dispatch, part) for part in parts)
    text = re.sub(rf"([.!?]\s+){re.escape(name)}\b", lambda m: m.group(1) + capitalise(name), text)
    if "我" in text:   # a mixed sentence ("我 transfer 到 Singapore office 了"): its Chinese 我 too
        text = to_third_person_zh(text, name)
    return capitalise(text)


_ZH_KIN_LEAD = re.compile(r"^(?:男朋友|女朋友|男友|女友|老公|老婆|媳妇|丈夫|妻子|儿子|女儿|闺女|爸爸|妈妈|老爸|老妈|"
                          r"婆婆|公公|岳父|岳母|丈母娘|爷爷|奶奶|外公|外婆|姥姥|姥爷|哥哥|姐姐|弟弟|妹妹|同事|领导|"
                          r"老板|组长|经理|室友|闺蜜|邻居|房东|导师)(?![们的])")


def to_third_person_zh(sentence: str, name: str) -> str:
    """我 -> the name, 我们 -> "<name>等人"; Chinese verbs need no agreement.

    >>> to_third_person_zh("先自我介绍一下，我叫林嘉怡", "用户")
    '先自我介绍一下，用户叫林嘉怡'
    """
    if name.lower() == "the user":   # a Chinese clause in an English turn names 用户, as Chinese does
        name = "用户"
    # "男朋友陈昊下个月生日": whose boyfriend goes without saying in chat, not in a note
    sentence = _ZH_KIN_LEAD.sub(lambda m: f"{name}的{m.group(0)}", sentence)
    text = re.sub(r"(?:我们|咱们|咱)家", f"{name}家", sentence)  # 我们家柯基: the user's dog
    # 我们有个儿子: the user's child, not "the user and others'"
    text = re.sub(r"(?:我们|咱们)(?=有(?:个|一个|两个|三个)?(?:儿子|女儿|孩子|宝宝|娃|猫|狗))", name, text)
    # 我们组, 我们东湖实验小学: the group the user belongs to, not "the user and others'"
    text = re.sub(r"(?:我们|咱们)(?=(?:组|公司|学校|团队|部门|班|小区|单位|医院|处|科室|项目组|工作室|店|厂|实验室|"
                  r"课题组|team|Team)|[\u4e00-\u9fff]{2,8}?(?:小学|中学|大学|学院|公司|医院|银行|集团|幼儿园))",
                  f"{name}所在的", text)
    text = text.replace("我们", f"{name}等人").replace("咱们", f"{name}等人")
    # 我 inside a word is no person: 自我介绍, 忘我, 本我
    return re.sub(r"(?<![自忘本])我", name, text)


def second_to_first_person(sentence: str) -> str:
    """An assistant's "you live in Berlin" as the user would say it: "I live in Berlin"."""
    text = re.sub(r"\byou're\b", "I'm", sentence, flags=re.I)
    text = re.sub(r"\byou are\b", "I am", text, flags=re.I)
    text = re.sub(r"\byou were\b", "I was", text, flags=re.I)
    text = re.sub(r"\byou've\b", "I've", text, flags=re.I)
    text = re.sub(r"\byou'll\b", "I'll", text, flags=re.I)
    text = re.sub(r"\byourself\b", "myself", text, flags=re.I)
    text = re.sub(r"\byours\b", "mine", text, flags=re.I)
    text = re.sub(r"\byour\b", "my", text, flags=re.I)
    text = re.sub(r"(^|\b(?:that|and|but|so|because|when|if)\s+)you\b", r"\1I", text, flags=re.I)
    text = re.sub(r"\byou\b", "me", text, flags=re.I)
    return text.replace("你们", "我们").replace("你", "我")


def capitalise(text: str) -> str:
    return text[:1].upper() + text[1:] if text else text
