"""What a chat sentence is: a statement worth keeping, or a greeting, thanks, question,
one-off request, reaction or venting that is not. English and Chinese. The greeting, request
and venting rules are `noise.py`'s, which the write policy screens by too
(`policy/screen.py`), so extraction and `add` agree."""

from __future__ import annotations

import re
from datetime import date

from vaultmem.text.dates import find_date
from vaultmem.text.noise import is_request, is_venting, opens_with_greeting
from vaultmem.text.rewrite import has_first_person, second_to_first_person
from vaultmem.text.script import is_chinese

_SOME_DAY = date(2000, 1, 3)  # any anchor will do to ask "is there a date expression here?"
_DISCOURSE = re.compile(
    r"^(?:(?:oh|wow|woah|whoa|yeah|yes|yep|yup|well|so|and|but|haha+|lol|hey|hi|hello|ok|okay|um+|"
    r"uh+|hmm+|honestly|also|plus|anyway|btw|by the way|totally|sure|right|cool|great|nice|"
    r"awesome|thanks|thank you|aw+|oh man|omg|absolutely|definitely|true|congrats|lately|"
    r"(?:good|nice) (?:catch|call)|fair point|lmao|sounds (?:good|great)|got it|sorted|perfect|"
    r"guess what|(?:(?:the|some|other|more|a|one)\s+)*(?:big|bigger|biggest|good|great|bad|some|other|more|diet|job|"
    r"work|house|family|quick|happy|sad|exciting)\s+news|"
    r"on the (?:bright|plus|other|flip) side|(?:an? )?important one|(?:the )?good part|turns out|"
    r"(?:work|money|health|house|school|family|diet|food|fitness|career|sleep)-?wise|in other news|"
    r"speaking of (?:which|that)|side note|real quick|just so you know|for context|for the record|"
    r"(?:quick |small |big )?update|(?:ok(?:ay)? )?confession(?: time)?|fun fact|"
    r"(?:un)?related|anyway|(?:one more|another|other|last|different|random) (?:thing|topic|question|one)|"
    r"something (?:silly|fun|random|quick|different|else))\b[\s,!.:;—–-]*)+", re.I)
_ZH_DISCOURSE = re.compile(r"^(?:(?:哈哈+|嗯+|哦+|啊+|好的|好吧|对了|那个|说实话|你好|嗨|早安|早上好|早|另外|还有|顺便说一下|顺便|"
                           r"(?:跟|和)?你说(?:个|件)?(?:事|事儿)?|告诉你(?:个|件)?(?:事|好消息|消息)?|说个事|有个(?:好)?消息|好消息是?|"
                           r"坏消息是?|大消息|重要的是|其实吧|话说|对啊|是啊|没错|挺好的|还行|要的|不用了|算了)"
                           r"[，,！!。～~\s]*)+")
_REACTION = re.compile(
    r"\b(?:thank(?:s| you)|appreciate (?:it|that|you|your)|proud of you|happy for you|"
    r"glad (?:to hear|you|that you)|agree|hope you|wish you|can't wait to (?:see|hear)|means? a lot|"
    r"i bet|i feel you|i hear you|same here|me too|love (?:that|this|it|those|these|your)|"
    r"miss(?:ed)? you|see you|good luck|take care|know what you mean|know how you feel|"
    r"stoked for you|excited for you|you're right|so true|keep (?:you|ya) posted|"
    r"love (?:how|what|that) you|(?:we|you)(?:'ve)? got this|have you in my corner|"
    r"i(?:'m| am) sure you|i know you|glad (?:i|to) (?:could )?help)\b", re.I)
_IMPERATIVE = re.compile(r"^(?:take|look|check|keep|let's|let|have|see|come|go|tell|guess|imagine|"
                         r"here's|here is|this is (?:a|my) (?:pic|photo|picture))\b", re.I)
_ZH_REACTION = re.compile(r"谢谢|我也是|我同意|为你高兴|我懂|我明白你|祝你")
_EMPTY_WORDS = set("""i i'm am so really very too just the a it is that this me my we us our happy glad
good great fine ok okay sorry excited sure well thankful grateful lucky tired know think see yeah
totally was be feel feeling it's that's love like awesome amazing cool wow hope guess mean can't wait
don't do as here there thanks thank you much all oh always now i've i'll super pretty did does yes no
not have has had will would can could""".split())
_IMPLICIT = re.compile(
    r"^(?:(?:still|now|also|currently|finally)\s+)?(?:((?:gonna|going to)(?!\s+be\b)|planning (?:to|on)|hoping to|"
    r"trying to|thinking (?:about|of)|researching|working on|looking into|learning|studying|training|"
    r"saving|heading|getting ready|preparing|volunteering|(?!(?:no|some|any|every)thing\b|morning\b|evening\b|spring\b|wedding\b|building\b)"
    r"\w+ing(?=\s+(?:up|my|a|an|the|some|on|for|with|out|our)\b))|"
    r"((?:just )?(?:got|finished|started|went|came|bought|moved|signed|took|made|had|lost|found|met|"
    r"visited|joined|quit|won|left|sold|booked|adopted|tried|\w+ed)(?=\s+(?:my|a|an|the|some|our|back|up|to|into|over)\b)|"
    r"started|finished|signed up)|(been(?!\s+(?:a|an|the|such|quite|ages|forever|too)\b)))\b", re.I)
_CATCH_UP = re.compile(r"\bsince (?:we|our) (?:last )?(?:talked|spoke|chatted|chat|talk|caught up)\b|"
                       r"^(?:a lot'?s?|lots|so much|much|some big things) (?:has |have )?(?:been going on|happened)", re.I)
_ADDRESSING = re.compile(r"\b(?:want(?:ed)?|have|had|need(?:ed)?|got) to tell you\b|\bguess what\b|"
                         r"\bcheck (?:this|it) out\b|\btake a look\b|\blet you know\b|\bfill you in\b|"
                         r"\bcatch you up\b|\bupdate you\b", re.I)
_PROCEDURE = re.compile(
    r"^(?:(?:please|pls|and|also|ok|okay)[,\s]+)*(?:from now on|going forward|in (?:the )?future|"
    r"always|never|whenever|every time|each time|don't ever|do not ever|make sure (?:to|you)|"
    r"(?:don't|do not) (?:ever )?(?:suggest|schedule|book|recommend|send|use|give me|put|plan|add|include|"
    r"mention|call me|assume|remind me))\b"
    r"(?!\s+(?:been|had|wanted|thought|knew|loved|felt|imagined|mind|again|mind that)\b)", re.I)
_ZH_PROCEDURE = re.compile(r"^(?:请|麻烦)?(?:以后|今后|从现在开始|从今以后|往后|每次|永远不要|不要再|一定要|总是|务必)")
_REMEMBER = re.compile(
    r"^(?:(?:please|pls|and|also|oh|hey)[,\s]+)*(?:remember|note|keep in mind|don't forget|"
    r"do not forget|for future reference|fyi)(?!\s+(?:when|how|the time|what)\b)(?:\s+that)?[,:]?\s+", re.I)
_ZH_REMEMBER = re.compile(r"^(?:请|你)?(?:帮我)?(?:记住|记得|别忘了|记一下)(?:一下)?[，,：:]?")
_CORRECTION = re.compile(
    r"^(?:no[,.!]?\s+)?(?:that's|that is|that was|this is)\s+(?:wrong|not right|incorrect|not true|a mistake)[,.!;]*\s*"
    r"|^(?:sorry|oops)[,.!]?\s+(?:I meant|I mean)\s+(?:that\s+)?"
    r"|^(?:correction|to correct myself|I misspoke|I was wrong)[,:.!]*\s*"
    r"|^I meant\s+(?:to say\s+)?(?:that\s+)?|^actually[,]?\s+", re.I)
_ZH_CORRECTION = re.compile(r"^(?:我说错了|说错了|不对|不是的|更正一下|纠正一下|我是说|我的意思是)[，,。！!\s]*")
_PAST = re.compile(r"\b(?:I|we)\b(?:\s+\w+)?\s+(?:went|got|made|saw|took|came|ran|met|bought|found|gave|"
                   r"felt|had|did|told|spent|won|lost|left|\w+ed)\b|我.*了", re.I)


def classify_text(text: str, role: str = "user") -> tuple[str, str]:
    """(kind, reason): 'memory' when some sentence is worth extracting, otherwise the kind of
    turn it is ('empty', 'venting', 'greeting', 'filler', 'question', 'request')."""
    if not clean_text(text):
        if shared_images(text):
            return "memory", "shared an image"
        return "empty", "no text"
    if role == "assistant":
        if assistant_statements(text):
            return "memory", "the assistant restates a user fact"
        return "filler", "assistant turn without a user fact"
    if is_venting(text):
        return "venting", "emotional venting, no lasting fact"
    kinds = [sentence_kind(s) for s in split_sentences(text)] + ["memory"] * len(shared_images(text))
    if "memory" in kinds:
        return "memory", "first-person statement"
    for kind, reason in (("request", "one-off request"), ("question", "question"),
                         ("greeting", "greeting"), ("filler", "filler or reaction")):
        if kind in kinds:
            return kind, reason
    return "filler", "filler or reaction"


def sentence_kind(sentence: str) -> str:
    chinese = is_chinese(sentence)
    s = sentence.strip()
    if re.search(r"[?？]$", s) or (chinese and re.search(r"[吗呢][。.]?$", s)):
        return "question"
    if remember_prefix(s, chinese)[0] or procedure_prefix(s, chinese):
        return "memory"
    if is_request(s, chinese):
        return "request"
    rest = strip_discourse(correction_prefix(s, chinese)[0], chinese)
    if not is_reaction(s) and (first_person_statement(rest, chinese) or is_informative(rest, chinese)):
        return "memory"
    if opens_with_greeting(s, chinese):
        return "greeting"
    return "filler"


def shared_images(text: str) -> list[str]:
    """What the speaker shared: the captions of " [shares a photo of ...]" markers."""
    return [m.strip() for m in re.findall(r"\[shares? ([^\]]+)\]", text or "") if m.strip()]


def clean_text(text: str) -> str:
    """Turn text without shared-image markers and code blocks (tool chatter, not memory)."""
    text = re.sub(r"```.*?(?:```|$)", " ", text or "", flags=re.S)
    text = re.sub(r"\[shares? [^\]]*\]", " ", text)
    return re.sub(r"[ \t]+", " ", text).strip()


def split_sentences(text: str) -> list[str]:
    """Sentences, with very long ones cut at dashes and semicolons."""
    out = []
    for line in clean_text(text).splitlines():
        # a title's full stop ends no sentence: "my manager is Dr. Okafor"
        for part in re.split(r"(?<=[。！？；])\s*(?=\S)|(?<!\bDr\.)(?<!\bMr\.)(?<!\bMs\.)(?<!\bMrs\.)(?<!\bSt\.)"
                             r"(?<!\bProf\.)(?<=[.!?])\s+|(?<=[!?])(?=[\u4e00-\u9fff])", line):
            part = part.strip()
            if not part:
                continue
            if len(part.split()) > 35:
                out.extend(c for p in re.split(r"\s+[-–—]+\s+|;\s+", part) if p.strip()
                           for c in _clauses(p.strip()))
            else:
                out.extend(_clauses(statement_part(part)))
    return out


def statement_part(sentence: str) -> str:
    """"我一天一杯奶茶，已经戒不掉了，有没有热量低一点的点法？" says something before it asks:
    the question's last clause goes, the statement stays (a sentence that only asks is kept
    whole, and then dropped as a question)."""
    if not re.search(r"[?？]\s*$", sentence):
        return sentence
    head = re.split(r"[，,]\s*(?=[^，,]*$)", sentence.strip())
    if len(head) < 2 or not has_first_person(head[0]) or re.search(r"[?？]", head[0]):
        return sentence
    return head[0] + ("。" if is_chinese(head[0]) else ".")


def _clauses(sentence: str) -> list[str]:
    """"I'm Tom and I work at Acme" holds two facts: split it where a new "I ..." clause
    starts after a clause that had its own "I" (not in "My wife and I ...")."""
    parts = re.split(r",?\s+and\s+(?=I\b|I'm\b|I've\b|my\b)|，(?=我)", sentence)
    out: list[str] = []
    for part in (p.strip() for p in parts):
        if out and not re.search(r"(?<![\w'])I(?:'m|'ve)?(?![\w'])|我", out[-1]):
            out[-1] = f"{out[-1]} and {part}" if not is_chinese(part) else f"{out[-1]}，{part}"
        elif part:
            out.append(part)
    return out


def strip_discourse(sentence: str, chinese: bool) -> str:
    """Drop leading interjections ("Wow, yeah, ...") and supply the "I" casual chat leaves out
    ("Researching adoption agencies" -> "I'm researching adoption agencies")."""
    if chinese:
        s = _ZH_DISCOURSE.sub("", sentence).strip()
        # (not where the clause names the speaker further on: "现在周五我宁愿去公司")
        if re.match(r"(?:最近|刚刚|刚|正在|一直|现在|目前)(?:在|又|也|才)?[\u4e00-\u9fff]", s) \
                and "我" not in re.split(r"[，,。！？!?；;]", s, maxsplit=1)[0]:
            s = "我" + s  # casual Chinese drops the 我: "最近在学日语"
        return s
    s = _DISCOURSE.sub("", sentence).strip()
    # "Severe peanut allergy, like EpiPen-level.": the speaker's own condition, said short
    s = re.sub(r"^(?=(?:(?:a|an|really|very|super|quite|pretty)\s+)?(?:severe|mild|bad|serious|"
               r"life-threatening|slight|major|minor)?\s*[\w-]+\s+(?:allergy|intolerance)\b)(?:an?\s+)?",
               "I have a ", s, count=1, flags=re.I)
    s = re.sub(r"^I have a ([A-Z])(?=[a-z])", lambda m: "I have a " + m.group(1).lower(), s)
    # "guess who lives in Raleigh now" is news about the speaker
    s = re.sub(r"^guess who (lives|works|moved|got|is)\b",
               lambda m: "I " + {"lives": "live", "works": "work", "is": "am"}.get(m.group(1), m.group(1)),
               s, flags=re.I)
    # "First week at Orrin!" is the speaker's own first week
    s = re.sub(r"^(?:it's\s+)?(?:my\s+)?(first|second|third|last)\s+(day|week|month)\s+(at|in|with)\b",
               lambda m: f"It's my {m.group(1).lower()} {m.group(2).lower()} {m.group(3).lower()}", s, flags=re.I)
    s = re.sub(r"^since (?:we|our) (?:last )?(?:talked|spoke|chatted|chat|talk)\s*,\s*", "", s, flags=re.I)
    s = re.sub(r"^[A-Z][a-z]+,\s+(?=I\b|I'|my\b|we\b)", "", s)  # a name addressed: "Mel, I ..."
    m = _IMPLICIT.match(s)
    if m and not re.search(r"\b(?:is|are|was|were)\b|'s\b", re.split(r"[,\u2013\u2014;]| - ", s)[0]):
        lead = "I'm " if m.group(1) else ("I " if m.group(2) else "I've ")
        s = lead + s[:1].lower() + s[1:]
    return s


def first_person_statement(sentence: str, chinese: bool) -> bool:
    """A statement by the speaker about themselves with something in it beyond a reaction."""
    s = sentence.strip()
    if not s or re.search(r"[?？]$", s):
        return False
    if chinese:
        return "我" in s and not _ZH_REACTION.search(s) and len(re.sub(r"\W", "", s)) >= 4
    if not has_first_person(s):
        return False
    speaker_subject = re.search(r"(?<![\w'])(?:I|I'm|I've|I'd|I'll|we|we're|we've|we'll)(?![\w'])", s, re.I)
    if re.search(r"\byou(?:r|'re|'ve|'d|'ll|rself)?\b", s, re.I) and not speaker_subject:
        return False  # "Your words mean a lot to me": about the listener, not the speaker
    if (_CATCH_UP.search(s) and len(s.split()) <= 10) or _ADDRESSING.search(s) \
            or re.match(r"let's\b|let us\b", s, re.I):
        return False
    words = re.findall(r"[\w']+", s.lower())
    if _REACTION.search(s) and (re.search(r"\byou(?:r|'re)?\b", s, re.I) or len(words) <= 6):
        return False
    return any(w not in _EMPTY_WORDS for w in words)


def is_context_statement(sentence: str, chinese: bool) -> bool:
    """A sentence that is not about the speaker but says more about what they just said."""
    s = sentence.strip()
    if not s or re.search(r"[?？]$", s) or is_request(s, chinese) or opens_with_greeting(s, chinese):
        return False
    if chinese:
        return "你" not in s and len(s) >= 6
    # "Jordan hates mushrooms": someone named, and what is true of them, in three words
    named = len(s.split()) >= 3 and bool(_NAMED_SUBJECT.match(s))
    return ((len(s.split()) >= 5 or named) and not _REACTION.search(s) and not _IMPERATIVE.match(s)
            and not _CATCH_UP.search(s) and not _ADDRESSING.search(s)
            and not re.search(r"\byou(?:r|'re|'ve|'d|'ll|rself)?\b|\by'all\b", s, re.I))


_NAMED_SUBJECT = re.compile(r"[A-Z][a-z]+(?:'s)?\s+(?:[a-z]+s|is|was|has|had)\s+\w")


def is_informative(sentence: str, chinese: bool) -> bool:
    """A statement not about the speaker that still carries news: a name, a number, or length
    ("It was Matt Patterson, he is so talented!")."""
    if not is_context_statement(sentence, chinese):
        return False
    if chinese:
        return len(sentence) >= 10
    rest = sentence.split(" ", 1)[1] if " " in sentence else ""
    return bool(len(sentence.split()) >= 9 or re.search(r"\d|\b[A-Z][a-z]+", rest) or _NAMED_SUBJECT.match(sentence)
                or find_date(sentence, _SOME_DAY) is not None)


def is_reaction(sentence: str) -> bool:
    """Thanks, praise, agreement or sympathy addressed to the other person."""
    words = re.findall(r"[\w']+", sentence.lower())
    if _ZH_REACTION.search(sentence):
        return True
    return bool(_REACTION.search(sentence)) and (bool(re.search(r"\byou(?:r|'re)?\b", sentence, re.I))
                                                 or len(words) <= 6)


def is_past(sentence: str) -> bool:
    return bool(_PAST.search(sentence))


def correction_prefix(sentence: str, chinese: bool) -> tuple[str, bool]:
    """(sentence without its correction marker, whether it had one)."""
    bare = re.sub(r"^(?:also|and|oh|oops|hmm|wait|sorry)[,\s]+", "", sentence.strip(), flags=re.I)
    m = (_ZH_CORRECTION if chinese else _CORRECTION).match(bare)
    if not m:
        return sentence, False
    return bare[m.end():].strip(), True


def procedure_prefix(sentence: str, chinese: bool) -> bool:
    return bool((_ZH_PROCEDURE if chinese else _PROCEDURE).match(sentence.strip()))


def remember_prefix(sentence: str, chinese: bool) -> tuple[bool, str]:
    """(whether the sentence asks to remember something, what is to be remembered)."""
    m = (_ZH_REMEMBER if chinese else _REMEMBER).match(sentence.strip())
    if not m:
        return False, sentence
    rest = sentence.strip()[m.end():].strip()
    if not chinese and rest.lower().startswith("to "):
        rest = rest[3:]
    return bool(rest), rest or sentence


def assistant_statements(text: str) -> list[str]:
    """Sentences in which the assistant restates something about the user, turned back into
    the user's own first-person words ("Noted, you prefer tea." -> "I prefer tea.")."""
    out = []
    for sentence in split_sentences(text):
        m = re.match(r"^(?:(?:got it|noted|understood|okay|ok|sure|great|thanks)[,.!]?\s*)*"
                     r"(?:I'll remember|I will remember|I've noted|I have noted|I'll keep in mind|"
                     r"noted|I'll note)(?: that)?[,:]?\s+(you\b.+)$"
                     r"|^you (?:mentioned|said|told me)(?: that)?\s+(you\b.+)$", sentence, re.I)
        if m:
            out.append(second_to_first_person(m.group(1) or m.group(2)))
        zh = re.match(r"^(?:好的[，,]?)?(?:我记住了|已记录|我会记住)[，,：:]?(你.+)$", sentence)
        if zh:
            out.append(second_to_first_person(zh.group(1)))
    return out
