"""Sentences that are chat, not memory, told apart on the speaker's own words (before any
rewrite turns "!" into "." or "I" into "the user"). English and Chinese.

- a lead-in that only announces what follows ("one thing before I forget:", "有个要求："),
  which hides the instruction or fact behind it from the rules that look at a sentence's start;
- leaving the chat ("gotta go, Kabir is demanding pancakes", "我先撤了");
- small talk: the weather, the coffee in hand ("the rain is going sideways today");
- venting: tiredness and frustration ("honestly I'm knackered", "今天真的要被气哭了"), which
  makes the rest of its turn a complaint, not news;
- deferrals and verdicts on the other's answer ("we'll see", "先不用，等定下来再说",
  "the timeline thing is a good point", "a 1:1 next week makes sense");
- questions without a question mark ("how long is the drive from Raleigh to Boone");
- talk about the conversation itself ("since I'll probably be bugging you a lot");
- a sentence that leans on one before it: a bare "that"/"this" for its object ("I'll try
  that", "我把这个发给我爸") or a pronoun for its subject ("She's 68 and still…");
- inside a sentence that is news: clauses of chat of the moment (a feeling, laughter, an
  exaggeration: "白天上班晚上看书，累成狗") and interjections ("ugh", "lol", emoji), which
  `without_chat` takes out, as `without_clause` takes out the clause of a change that did not
  happen.
"""

from __future__ import annotations

import re

_EN_LEAD_WORDS = (r"(?:(?:one|another|a|the|last|final|other|big|bigger|quick|small|first|next|more|good|"
                  r"bad|random|important|weird|fun|funny|sad|honest|side|little|sanity)\s+){0,3}"
                  r"(?:thing|question|request|note|favou?r|update|reminder|heads[- ]up|fyi|btw|"
                  r"news|point|tip|rule|ask|intro|introduction|background|context|check|confession|"
                  r"fact|psa|story|thought|aside)s?")
_EN_LEAD_IN = re.compile(
    rf"^(?:(?:ok|okay|oh|also|and|so|but|anyway|alright|right)[,\s]+)*(?:{_EN_LEAD_WORDS}"
    r"(?:\s+(?:before I forget|for you|first|for whenever[^:,]{0,60}|while I remember|I want to mention))?"
    r"|heads up(?:\s+for whenever[^:,]{0,60})?)\s*[:：,\-–—]\s*(?=\S)", re.I)
_ZH_LEAD_IN = re.compile(
    r"^(?:那|对了|还有|另外|最后|顺便|好)?[，,]?(?:先|再)?(?:有|问|说|提)?(?:个|一个|一件|两件)?"
    r"(?:小|大|好|坏|实际|正经|重要)?(?:的)?(?:要求|问题|事情?|消息|提醒|请求|实际的|一个|一件事|大事|好消息|坏消息)"
    r"[：:，,]\s*(?=\S)")
_MIXED_OPENER = re.compile(r"^(?:(?:oh|ok|okay|nice|so|update|btw|anyway|welp|ugh|yay|omg|lol|haha|hmm|well|yes|yeah|"
                           r"ah|hey|wow|also)\b[,，:：!！.…~～\s]*)+(?=\S)", re.I)
# "跟你说个事，…", "我跟你讲，…": the telling, not what is told (alone, it is nothing)
_ZH_TELLING = re.compile(r"^(?:在吗|在不在)[？?，,！!\s]*|^(?:对了|哎|诶)?[，,]?我?(?:跟|和|给)你(?:说|讲|汇报)(?:一下|个|一个|一件)?"
                         r"(?:事|好消息|坏消息|消息)?[哈啊吧呀]?(?:[：:，,！!]\s*|[。！!]?$)")

_LEAVING = re.compile(
    r"^(?:(?:ok|okay|alright|right|well|anyway|sorry|ah|oh|nah|yeah|anyways)[,!.\s]+)*"
    r"(?:(?:I\s+)?(?:gotta|got to|have to|need to|must|'ve got to|have got to|better)\s+"
    r"(?:go|run|dash|head off|get going|sign off|log off|bounce|jump)\b"
    r"|I(?:'m| am) off(?:\s+to\b|\s*[.!]*$)|(?:gtg|g2g|ttyl|brb|bye|cya|see ya|talk (?:soon|later))\b)", re.I)
_ZH_LEAVING = re.compile(r"^(?:好|好的|行|那|嗯)?[，,]?(?:我)?先(?:走|撤|下|去忙|睡|闪)了|^(?:拜拜|再见|回头聊|改天聊|下次聊)"
                         r"|^(?:好|那|嗯)?[，,]?(?:先|就)这样[，,。！]*(?:吧)?(?:[，,]?我(?:先)?去(?:忙|开会|上课|睡觉|吃饭|接孩子)了?)?[。！]?$"
                         r"|^我(?:先)?去(?:忙|开会|上课|睡觉|吃饭|接孩子)了[。！]?$")
_WEATHER = re.compile(r"\b(?:rain(?:ing|y|s)?|snow(?:ing|y|s)?|sun(?:ny)?|weather|wind(?:y)?|freezing|"
                      r"heatwave|drizzl\w*|pouring|fog(?:gy)?|humid|scorching|chilly)\b", re.I)
_ZH_WEATHER = re.compile(r"下了?一?[天整]*[雨雪]|下雨|下雪|天气|出太阳|好热|好冷|太热|太冷|降温|台风天")
_IN_HAND = re.compile(r"\b(?:coffee|tea|cup|beer|wine)\b(?:\s+(?:number|no\.?)\s+\w+)?\s+in hand\b"
                      r"|^happy (?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|weekend|"
                      r"friyay)\b", re.I)
_FIRST = re.compile(r"(?<![\w'])(?:I|I'm|I've|I'd|I'll|me|my|we|we're|we've|our|us)(?![\w'])", re.I)
_VENT = re.compile(
    r"\b(?:I(?:'m| am)|I feel|feeling)\s+(?:so |absolutely |completely |totally |really |just |utterly |"
    r"properly )*(?:knackered|exhausted|shattered|wiped(?: out)?|drained|fried|burnt out|burned out|"
    r"dead tired|so tired|tired|frazzled|stressed(?: out)?|overwhelmed)\b"
    r"|\bone of those (?:days|weeks|months|nights)\b|\bso tired (?:that )?I could\b"
    r"|\b(?:it's|it is|this is|what) (?:been )?(?:an? )?(?:absolute |total |complete )?(?:nightmare|disaster|mess)\b"
    r"|\b(?:want|wanted|could) to (?:scream|cry)\b", re.I)
_ZH_VENT = re.compile(r"累死了|累趴了|好累|太累了|心累|气哭|要哭了|崩溃|烦死|郁闷死|无语了|要疯了|受不了|"
                      r"气死|好烦|头大|心态炸了")
_BUT = re.compile(r"\b(?:but|though|although|yet)\b.*(?<![\w'])(?:I|I'm|I've|we|my|our)(?![\w'])", re.I)
_ZH_BUT = re.compile(r"(?:但是|不过|可是|但).*我")
_DEFER = re.compile(
    r"^(?:(?:ok|okay|yeah|yes|well|hmm|ah|alright|right|sure)[,.!\s]+)*"
    r"(?:we'll see|we will see|let's see|never mind|no worries|no need|not now|maybe later|fair enough|"
    r"that(?:'s| is) enough (?:\w+ ){0,3}for (?:a |an |one |the )?\w+|that(?:'ll| will) (?:be|do) it|"
    r"that's it|that works|sounds (?:good|great|perfect|fine)|will do|good catch|"
    r"(?:that|this|it)(?:'s| is| looks| sounds| seems)\s+(?:\w+\s+)?(?:great|good|perfect|fine|doable|helpful|"
    r"amazing|awesome|lovely|brilliant|useful|exactly it|spot on))(?=\s*(?:[,.!;:…]|$))", re.I)
_VERDICT_END = re.compile(r"\b(?:makes (?:total |a lot of )?sense|(?:is|was) a (?:good|great|fair|valid) point|"
                          r"sounds (?:good|great|right|perfect)|looks (?:good|great|right|perfect))\s*[.!]*$", re.I)
_ZH_DEFER_CLAUSE = re.compile(r"^(?:好|嗯|行|那|先|也|哈哈)*(?:不用了?|再说吧?|等.{0,10}再说吧?|明天再说吧?|"
                              r"回头再说吧?|算了吧?|没事|可以|行吧|好吧|也行)$")
_QUESTION = re.compile(
    r"^(?:(?:ok|okay|so|and|also|oh|hmm|but)[,\s]+)*(?:(?:what's|whats|how's|where's|who's|when's)\b"
    r"|(?:how|what|which|where|why|who|when)\s+(?!(?:I|I'm|I've|we|we're|my|our|you|he|she|they)\b)"
    r"(?:\S+\s+){0,2}?(?:is|are|was|were|do|does|did|should|can|could|would|will)\b"
    r"|how (?:long|much|many|far|big|old|often)\b|(?:is there|are there|do you|does it|can I|should I|"
    r"should we)\b)", re.I)
_PLEASE = re.compile(r"^(?!.*\b(?:I|I'm|my|we|our)\b)[\w\s.'-]{1,40}?\s+(?:please|pls|plz)\b", re.I)
_ABOUT_US = re.compile(r"\b(?:bugging|bother(?:ing)?|pester(?:ing)?|asking|ask|talking to|chatting with|"
                       r"coming back to)\s+you\b|\bbit of (?:background|context)\b|\bintroduce myself\b",
                       re.I)
_ZH_ABOUT_US = re.compile(r"(?:问|找|麻烦|打扰)你|自我介绍|被你说中|你说得对|你说的对|听你的")
_BARE_OBJECT = re.compile(
    r"\b(?:try|book|do|get|buy|use|send|print|read|watch|see|check|take|make|fix|order|sign|share|post|"
    r"show|forward|ask|tell|give|keep|save|grab|pick)\s+(?:that|this|those|these)\b"
    r"(?=\s*(?:$|[,.!;:]|\b(?:and|or|but|to|for|now|later|tomorrow|today|too|again|first|then|instead|"
    r"out|up|on|off|over|with|in|at|next|soon|after|before)\b))", re.I)
_VAGUE_OBJECT = re.compile(r"\b(?:at|with|about|of|on) (?:this|that)\b(?=\s*(?:$|[,.!;:]|than\b))", re.I)
_ZH_BARE_OBJECT = re.compile(r"把(?:这个|那个|这|那|它)(?:发|给|转|拿|放|试|用|带|存|记|打印)"
                             r"|(?:试试|用|买|发|订|看看|转发)(?:这个|那个|它)(?:[。！，,.!]|$)")
_PRONOUN_LED = re.compile(r"^(?:she|he|they|his|her|their|him|them)(?:'s|'re|'ll|'d|'ve)?\b|^it(?:'s| is) for\b"
                          r"|^(?:it|that|this)(?:'s| is| was)\s+(?:so|really|very|too|pretty|super|just|"
                          r"quite|still)?\s*\w+(?:\s+(?:and|but)\b|[.!,…]|$)", re.I)
_ZH_PRONOUN_LED = re.compile(r"^(?:他|她|它)(?:们)?(?!们?[的家])")


_ZH_REACTION_LEAD = re.compile(r"^(?:哈哈+|嗯+|好)?[，,]?(?:被你说中了|你说得对|你说的对|有道理|好主意|这个办法好|"
                               r"这个主意好|不错|太好了|确实|没错)[！!，,。\s]*(?=\S)")


def strip_lead_in(sentence: str, chinese: bool) -> str:
    """"one thing before I forget: always give me metric units" -> "always give me metric
    units"; "有个要求：以后…" -> "以后…"; "被你说中了，我女儿…" -> "我女儿…"; "跟你说个事，
    我们…" -> "我们…". A sentence that is only the lead-in stays, but for the telling ("我跟你讲")."""
    s = sentence.strip()
    if chinese and (r := _ZH_REACTION_LEAD.match(s)):
        s = s[r.end():]
    if chinese:   # an English opener on a Chinese sentence ("oh 拼错了…", "update: 我们搬到…")
        s = _MIXED_OPENER.sub("", s)
    if chinese and (t := _ZH_TELLING.match(s)):
        return s[t.end():]
    m = (_ZH_LEAD_IN if chinese else _EN_LEAD_IN).match(s)
    return s[m.end():] if m else (s if s != sentence.strip() else sentence)


def chatter(sentence: str, chinese: bool) -> str | None:
    """Why a sentence is chat rather than memory ('leaving', 'small talk', 'venting',
    'deferral', 'question', 'about the conversation'), or None."""
    s = sentence.strip()
    if chinese:
        clauses = [c for c in re.split(r"[，,。！!～~…]+", s) if c.strip()]
        checks = (("leaving", bool(_ZH_LEAVING.search(s))),
                  ("venting", is_venting_sentence(s, True)),
                  ("small talk", bool(_ZH_WEATHER.search(s)) and "我" not in s),
                  ("deferral", bool(clauses) and all(_ZH_DEFER_CLAUSE.match(c.strip()) for c in clauses)),
                  ("about the conversation", bool(_ZH_ABOUT_US.search(s)) and len(clauses) <= 2))
    else:
        checks = (("leaving", bool(_LEAVING.search(s))),
                  ("venting", is_venting_sentence(s, False)),
                  ("small talk", bool(_IN_HAND.search(s)) or (bool(_WEATHER.search(s)) and not _FIRST.search(s))),
                  ("deferral", _deferral(s)),
                  ("question", bool(_QUESTION.match(s))),
                  ("request", bool(_PLEASE.match(s))),
                  ("about the conversation", bool(_ABOUT_US.search(s))))
    if re.search(r"[:：]\s*$", s):
        return "an intro to what follows"  # "What we do now:" with the list taken apart
    return next((why for why, hit in checks if hit), None)


def _deferral(s: str) -> bool:
    """"we'll see", "sounds good", "that looks great, yes please make a shopping list": said
    of the other's answer; what follows a verdict counts only when it is the speaker's own."""
    if _VERDICT_END.search(s):
        return True
    m = _DEFER.match(s)
    if not m:
        return False
    rest = re.sub(r"^(?:[\s,.!;:…]|\b(?:yes|yeah|yep|lol|haha+|ok|okay|thanks|thank you|so)\b)+", "", s[m.end():])
    return not rest.strip() or bool(re.match(r"(?:please|pls|can you|could you|would you|let's)\b", rest, re.I))


def is_venting_sentence(sentence: str, chinese: bool) -> bool:
    """Tiredness or frustration with nothing after a "but" ("I'm exhausted after the race
    but proud I finished my first marathon" is news)."""
    if not (_ZH_VENT if chinese else _VENT).search(sentence):
        return False
    return not (_ZH_BUT if chinese else _BUT).search(sentence)


def leans_on_context(sentence: str, chinese: bool) -> bool:
    """The sentence needs the one before it: its object is a bare "that"/"this" ("I'll try
    that") or its subject a pronoun ("She's 68 and still…")."""
    s = sentence.strip()
    if chinese:
        return bool(_ZH_BARE_OBJECT.search(s) or _ZH_PRONOUN_LED.match(s))
    return bool(_BARE_OBJECT.search(s) or _VAGUE_OBJECT.search(s) or _PRONOUN_LED.match(s))


# ---- chat inside a sentence that is news ------------------------------------------------------

# An untyped clause with these marks is chat of the moment, not a fact to keep: feelings,
# laughter, exaggeration (English and Chinese).
_CHAT_MARKS = re.compile(
    r"哈哈|呵呵|嘿嘿|hhh|累死|累成狗|哭成狗|崩溃|头都大了|头大|丢人|尴尬|无语|烦死|好烦|"
    r"气死|要疯了|受不了|怀疑人生|丑哭|难受|好闷|眼睛要瞎|手都.{0,3}麻|落汤鸡|躺平|摸鱼|心疼一下|"
    r"\bI need (?:coffee|lunch|sleep|a nap)\b|"
    r"\b(?:so|really|super) (?:tired|annoyed|stressed|bored|nervous|anxious)\b|\bcan(?:'t| not) wait\b|"
    r"\bjust needed to\b", re.I)
_INTERJECTIONS = re.compile(r"(?i)(?:^|(?<=\s))(?:ugh+|argh+|omg|lol|lmao|haha+|hehe|yikes|oof|sigh|ffs)\b[,.!]*\s*"
                            r"|\s*[\U0001F300-\U0001FAFF\u2600-\u27BF]+\s*")


def _drop_clauses(sentence: str, separators: str, drop) -> str:
    """The sentence without the clauses `drop(clause)` is true of (each with the separator
    before it)."""
    parts = re.split(f"({separators})", sentence)
    return "".join(part for i, part in enumerate(parts)
                   if not (i % 2 == 0 and drop(part))
                   and not (i % 2 == 1 and i + 1 < len(parts) and drop(parts[i + 1])))


def without_chat(sentence: str, chinese: bool) -> str:
    """The sentence without its clauses of chat of the moment ("白天上班晚上看书，累成狗" ->
    "白天上班晚上看书") and its interjections ("ugh", "lol"): a feeling, laughter or an
    exaggeration is not part of the fact."""
    sentence = _INTERJECTIONS.sub("", sentence).strip(" ,")
    if not _CHAT_MARKS.search(sentence):
        return sentence
    kept = _drop_clauses(sentence, r"[，,；;。！!？?]|\s+[-–—]\s+|(?<=[\u4e00-\u9fff])\s+(?=[\u4e00-\u9fff])",
                         _CHAT_MARKS.search)
    kept = kept.strip(" ，,；;").strip()
    if kept != sentence.strip():   # "累死了，不过我终于跑完了…": the "but" led away from what went
        kept = re.sub(r"^(?:不过|但是|可是|但|而且|所以|(?:but|though|so|and)\b[,\s]*)", "", kept, flags=re.I).strip()
    return kept if len(re.sub(r"\W", "", kept)) >= (6 if chinese else 12) else ""


# A clause that asks the assistant for something ("帮我列个提纲", "can you draft a reply", "I need
# a toast for Saturday"): the task of the moment, not a fact about the person. A clause that
# asks it to remember is the opposite, and stays.
_REQUEST_CLAUSE = re.compile(
    r"^\s*(?:(?:那|就|先|再|也|可以|能不能|能|麻烦|请|对|好)[，,]?\s*)*你?(?:先|再|也|顺便)?帮(?:我|忙|用户)|^\s*请你|"
    r"^\s*给我(?:写|列|推荐|想|整理|做|排)|"
    r"^\s*(?:(?:ok|okay|so|and|now|also)[,\s]+)*(?:(?:can|could|would|will) you|help me|(?:please|pls) (?!remember)\w+)\b|"
    r"^\s*(?:(?:ok|okay|so|and|now|also)[,\s]+)*I need (?:a|an|some) (?:\w+ )?(?:toast|caption|list|plan|draft|reply|message|"
    r"email|name|idea|suggestion|recipe|playlist|template|checklist|hand|gift idea)s?\b", re.I)
_REQUEST_ANYWHERE = re.compile(r"帮(?:我|忙|用户)|请你|给我(?:写|列|推荐|想|整理|做|排)|\b(?:can|could|would|will) you\b|"
                               r"\bhelp me\b|\b(?:please|pls)\b|\bI need (?:a|an|some)\b", re.I)
_REMEMBER = re.compile(r"\bremember\b|\bnote (?:that|down)\b|记住|记得|记一下|别忘", re.I)


def without_request(sentence: str, chinese: bool) -> str:
    """The sentence without its clauses that ask the assistant to do something now
    ("新班主任是 Mr Dawson，帮我写个 short email" -> "新班主任是 Mr Dawson"); "" when
    that was all of it, so the turn stays in its session note."""
    if not _REQUEST_ANYWHERE.search(sentence) or _REMEMBER.search(sentence):
        return sentence
    parts = re.split(r"([，,；;。！!？?]|\s+[-–—]\s+|(?<=[\u4e00-\u9fff])\s+(?=[\u4e00-\u9fff]))", sentence)
    ask = next((i for i in range(0, len(parts), 2) if _REQUEST_CLAUSE.search(parts[i])), None)
    if ask is None:
        return sentence
    # A sentence that opens with the request: the clauses right after it with no subject of
    # their own are its detail ("帮我写首藏头诗，藏'乔迁之喜'四个字"); one with a subject is news
    # again ("她有点 dyslexia"). After news, a request's detail may be news too ("…签名也得换，
    # 帮我排一下，林薇 品牌中心 品牌经理") and stays.
    keep = [i for i in range(0, len(parts), 2) if not _REQUEST_CLAUSE.search(parts[i])]
    detail, i = set(), (ask + 2 if ask == 0 else len(parts))
    while i < len(parts) and not _OWN_SUBJECT.match(parts[i].strip()):
        detail.add(i)
        i += 2
    keep = [i for i in keep if i not in detail]
    kept = (parts[keep[0]] + "".join(parts[i - 1] + parts[i] for i in keep[1:]) if keep else "").strip(" ，,；;").strip()
    return kept if len(re.sub(r"\W", "", kept)) >= (6 if chinese else 12) else ""


# A clause of a Chinese sentence that asks the assistant something ("苏州周边有啥不太累的地方吗",
# "哪家老字号最正宗啊", "有啥适合四五岁的恐龙手工"): the question of the moment, not a fact; the
# clauses around it may be news ("用户在小橡树幼儿园带中班").
_ZH_ASKING = re.compile(r"(?:有啥|有什么(?!事)|有没有(?!人)|哪家|哪个|哪里|哪儿|哪些|哪种|咋(?:办|弄|整|样)|"
                        r"怎么(?:办|弄|做|写|选|搞|说|安排|处理|准备|练|学|开始)|如何|推荐(?:一下|个|点)|"
                        r"能不能|可不可以|要不要|是不是|好不好|行不行|该怎|应该怎)|[吗呢么][啊呀]?[?？]?$")


def without_question(sentence: str, chinese: bool) -> str:
    """The Chinese sentence without its clauses that ask the assistant something (English
    sentences end at their question mark and are judged whole); "" when that was all of it."""
    if not chinese or not _ZH_ASKING.search(sentence) or _REMEMBER.search(sentence):
        return sentence
    kept = _drop_clauses(sentence, r"[，,；;]|(?<=[\u4e00-\u9fff])\s+(?=[\u4e00-\u9fff])",
                         lambda clause: bool(_ZH_ASKING.search(clause.strip())))
    kept = kept.strip(" ，,；;").strip()
    return kept if len(re.sub(r"\W", "", kept)) >= 6 else ""


_OWN_SUBJECT = re.compile(r"(?:I|I'm|I've|my|we|we're|our|he|she|they|his|her|their|it|[A-Z][a-z]+)\b|"
                          r"(?:我|他|她|它|咱|[\u4e00-\u9fff]{1,4}(?:是|叫|在|有))")


def without_clause(sentence: str, value: str, chinese: bool) -> str:
    """The sentence without the clause that holds `value` ("" when nothing worth a memory is left)."""
    kept = _drop_clauses(sentence, r"[，,；;]|\s+but\s+|\s+[-–—]\s+", lambda clause: value in clause)
    kept = re.sub(r"^(?:[，,；;\s]|but\s|and\s)+", "", kept.strip(), flags=re.I).strip()
    if kept == sentence.strip() or len(re.sub(r"\W", "", kept)) < (6 if chinese else 15):
        return ""
    return kept
