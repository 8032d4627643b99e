"""The English and Chinese sentence patterns the offline extractor recognises.

Each detector looks at one first-person sentence and, when it knows what kind of memory
it is (a preference, the user's home, job, family, pets, tools, projects), says which
attribute it sets and to what value, so that a later contradicting statement can be found.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from vaultmem.text.pattern_words import DIETS, EDITORS, JOBS, KNOWN_TOOLS, PETS, RELATIONS

_TOOL_RE = "|".join(re.escape(t) for t in sorted(KNOWN_TOOLS, key=len, reverse=True))
_EDITOR_KEYS = {t.lower() for t in EDITORS}
_DIET_RE = "|".join(re.escape(d) for d in sorted(DIETS, key=len, reverse=True))
_PRONOUN_OBJECTS = {"it", "that", "this", "them", "you", "him", "her", "these", "those", "how",
                    "what", "when", "the way", "everything", "all", "seeing", "hearing", "one",
                    "你", "它", "这个", "那个", "他", "她", "这", "那", "你们", "一切"}
_CAP = r"[A-Z][\w'&.-]*"
_PLACE = rf"((?:the )?{_CAP}(?:(?:,? | of | de ){_CAP})*)"
_ADV = r"(?:\s+(?:really|also|just|still|totally|absolutely|truly|kinda|definitely|especially|actually|now|currently|mostly|mainly|usually|always|genuinely|honestly|so|very|completely|officially|finally))*"
_STOP_OBJECT = re.compile(r"\s+and\s+(?:it|i|that|we|they|he|she|you|this|it's|i'm)\b.*$|\s+(?:because|but|when|since|so|and then|while|as|if|though|which|"
                          r"who|whenever|cause|'cause|over|rather than|instead of)\b.*$|[,.;:!?\u2013\u2014()\[\]].*$|\s+-\s.*$", re.I)
_ZH_STOP = re.compile(r"[，。！？,.!?；;、].*$|(?:因为|但是|所以|的时候).*$")


@dataclass
class Detection:
    kind: str                # tag: preference, name, job, home, family, pet, tool, project, ...
    type: str                # memory type
    attribute: str | None = None
    value: str | None = None
    importance: float = 0.6
    entities: list[str] = field(default_factory=list)


def _object(text: str, limit: int = 6) -> str:
    text = _STOP_OBJECT.sub("", text.strip())
    text = re.sub(r"\s+(?:anymore|any more|now|lately|either|too|at all|so much|a lot|that much|"
                  r"these days|nowadays)$", "", text, flags=re.I)
    text = re.sub(r"^(?:to |the |a |an |my |our |some )+", "", text, flags=re.I).strip()
    return " ".join(text.split()[:limit])


def _zh_object(text: str) -> str:
    text = _ZH_STOP.sub("", text.strip())
    return re.sub(r"(?:了|的|啊|呀|吧|呢|哦)+$", "", text).strip()


def _key(text: str) -> str:
    return re.sub(r"\s+", " ", text.lower()).strip()


def detect(sentence: str, chinese: bool) -> Detection | None:
    """The first pattern that recognises the sentence, or None for a plain statement."""
    for detector in (_ZH_DETECTORS if chinese else _EN_DETECTORS):
        found = detector(sentence)
        if found is not None:
            return found
    return None


# --- English ---------------------------------------------------------------------------

def _en_preference(s: str) -> Detection | None:
    neg = re.search(rf"\bI{_ADV}\s+(?:don't|do not|no longer|never|can't|cannot|didn't)"
                    rf"{_ADV}\s+(?:like|enjoy|love|stand|bear)\s+(.+)"
                    rf"|\bI{_ADV}\s+(?:hate|dislike|detest|loathe|despise)\s+(.+)"
                    rf"|\bI(?:'m| am){_ADV}\s+not{_ADV}\s+(?:a (?:big |huge )?fan of|into|keen on)\s+(.+)"
                    rf"|\bI(?:'m| am){_ADV}\s+(?:cutting back on|cutting down on|giving up|quitting)\s+(.+)", s, re.I)
    if neg:
        value = "reducing" if neg.group(4) else "no"
        obj = _object(next(g for g in neg.groups() if g))
        return _likes(obj, value)
    # "I'll eat pretty much anything except eggplant": the exception is the dislike
    except_ = re.search(rf"\bI(?:'ll| will| can| would)?{_ADV}\s+(?:eat|drink|watch|read|listen to|try)\s+"
                        r"(?:pretty much |just about |almost |basically )?(?:anything|everything) (?:except|but|apart from) (.+)", s, re.I)
    if except_:
        return _likes(_object(except_.group(1)), "no")
    # "bouldering is not for me", "running just isn't my thing"
    verdict = re.search(r"(?:^|[,;:]\s*)(?:(?:honestly|frankly|turns out|but|so)[,\s]+)*"
                        r"((?:[\w'-]+ ){0,2}[\w'-]+) (?:is|was|isn't|wasn't|is just|was just|is really)"
                        r"(?: really| just| definitely| totally)? (?:not|n't)?\s*(?:for me|my thing|my jam)\b", s, re.I)
    if verdict and re.search(r"\bnot\b|n't\b", verdict.group(0), re.I):
        return _likes(_object(verdict.group(1)), "no")
    favorite = re.search(r"\bmy (?:all-time )?favou?rite ([\w -]{2,30}?) (?:is|was|are) (.+)", s, re.I)
    if favorite:
        value = _object(favorite.group(2))
        if value:
            return Detection("preference", "preference", f"favorite:{_key(favorite.group(1))}", value, 0.6)
    pos = re.search(rf"\bI{_ADV}\s+(?:love|like|enjoy|adore|prefer)\s+(.+)"
                    rf"|\bI(?:'m| am|'ve been| have been|'ve gotten| got){_ADV}\s+(?:into|a (?:big |huge )?fan of|keen on|"
                    rf"passionate about|obsessed with|crazy about|fond of|hooked on|addicted to)\s+(.+)"
                    rf"|\bI(?:'ve| have){_ADV}\s+(?:come around on|come round on|come around to|warmed up to|"
                    rf"fallen in love with)\s+(.+)", s, re.I)
    if pos:
        obj = _object(next(g for g in pos.groups() if g))
        return _likes(obj, "yes")
    return None


def _likes(obj: str, value: str) -> Detection | None:
    if not obj or _key(obj) in _PRONOUN_OBJECTS or _key(obj).split(" ")[0] in _PRONOUN_OBJECTS:
        return None
    return Detection("preference", "preference", f"likes:{_key(obj)}", value, 0.6)


def _en_name(s: str) -> Detection | None:
    m = re.search(rf"\b(?i:my name is) ({_CAP}(?: {_CAP})?)|\b(?:I'm|I am) ([A-Z][a-z]+)(?=[,.!]|$)"
                  rf"|\bcall me ({_CAP})", s)
    if not m:
        return None
    name = (m.group(1) or m.group(2) or m.group(3)).rstrip(".")
    if name.lower() in {"sorry", "fine", "good", "great", "back", "here", "done", "ready", "glad",
                        "happy", "okay", "ok", "home", "new", "tired", "busy", "sure", "in", "out"}:
        return None
    return Detection("name", "fact", "name", name, 0.8, [name])


def _en_job(s: str) -> Detection | None:
    jobs = "|".join(JOBS)
    m = re.search(rf"\bI{_ADV}\s+work(?:ed)? as (?:an? )?([\w -]+?)(?: at ({_CAP}(?: {_CAP})*))?(?=[,.;!]|$| and| in| for| \(| with| since| where)"
                  rf"|\bI(?:'m| am){_ADV}\s+(?:an? )((?:[\w-]+ ){{0,3}}?(?:{jobs})s?)\b(?: at ({_CAP}(?: {_CAP})*))?"
                  rf"|\bmy (?:job|profession|occupation) is (?:an? )?((?:[\w-]+ ){{0,3}}(?:{jobs}))\b", s, re.I)
    if m:
        job = (m.group(1) or m.group(3) or m.group(5)).strip()
        employer = (m.group(2) or m.group(4) or "").rstrip(".")
        return Detection("job", "fact", "job", _object(job), 0.7, [employer] if employer else [])
    # "I got promoted, I'm quality engineering lead now": a title without an article
    m = re.search(rf"\bI(?:'m| am)\s+(?:now\s+)?((?:[\w-]+ ){{0,3}}(?:{jobs}))\s+now\b"
                  rf"|\b(?:I (?:got|was|have been|'ve been) )?promoted to (?:an? |the )?((?:[\w-]+ ){{0,3}}?(?:{jobs}))\b", s, re.I)
    if m:
        return Detection("job", "fact", "job", _object(m.group(1) or m.group(2)), 0.7)
    m = re.search(rf"\bI{_ADV}\s+work (?:at|for) ({_CAP}(?: {_CAP})*)"
                  rf"|\b(?:I(?:'ve| have)?{_ADV}\s+(?:started(?: working)? at|joined|started a new job at|got a job at|"
                  rf"took a job at|accepted an offer from|signed with)|(?i:(?:my )?(?:first|second) "
                  rf"(?:day|week|month) at)|I(?:'m| am) (?:now )?(?:working|employed) (?:at|for))\s+({_CAP}(?: {_CAP})*)", s)
    if m:
        employer = (m.group(1) or m.group(2)).rstrip(".")
        return Detection("job", "fact", "employer", employer, 0.7, [employer])
    return None


def _en_home(s: str) -> Detection | None:
    m = re.search(rf"\b(?:I|we)(?:'ve| have)?{_ADV}\s+(?:live|lived|moved|relocated)\s+(?:in|to)\s+{_PLACE}"
                  rf"|\b(?:I(?:'m| am)|we(?:'re| are)){_ADV}\s+(?:based|living|settled) in\s+{_PLACE}"
                  rf"|\bguess who (?:lives|is living) in\s+{_PLACE}", s)
    if m:
        place = next(g for g in m.groups() if g).rstrip(".")
        return Detection("home", "fact", "home", place, 0.7, [place])
    m = re.search(rf"\bI(?:'m| am){_ADV}\s+(?:originally )?from\s+{_PLACE}|\bI{_ADV}\s+(?:moved|came) (?:here )?from\s+{_PLACE}", s)
    if m:
        place = (m.group(1) or m.group(2)).rstrip(".")
        return Detection("home", "fact", "origin", place, 0.7, [place])
    m = re.search(rf"\bI(?:'m| am| will be|'ll be){_ADV}\s+(?:in|at|staying in|visiting|travell?ing in)\s+{_PLACE}", s)
    if m:
        place = m.group(1).rstrip(".")
        return Detection("location", "fact", "location", place, 0.6, [place])
    return None


def _en_family(s: str) -> Detection | None:
    rel = "|".join(RELATIONS)
    m = re.search(rf"\b(?i:my) ({rel})(?:,| is| 's|'s)?\s+(?:(?:named|called)\s+)?({_CAP})\b", s)
    if m and m.group(2) not in ("I",):
        return Detection("family", "fact", f"family:{m.group(1).lower()}", m.group(2), 0.7, [m.group(2)])
    m = re.search(rf"\bI have (an?|one|two|three|four|five|\d+) ({rel}|sons|daughters|sisters|brothers)\b", s, re.I)
    if m:
        return Detection("family", "fact", f"family:{m.group(2).lower()}", m.group(1).lower(), 0.7)
    m = re.search(r"\bI(?:'m| am)(?: happily)? (married|single|divorced|engaged|widowed)\b", s, re.I)
    if m:
        return Detection("family", "fact", "relationship", m.group(1).lower(), 0.7)
    return None


def _en_pet(s: str) -> Detection | None:
    pets = "|".join(PETS)
    m = re.search(rf"\b(?i:my) ({pets})(?:,| is| 's|'s)?\s+(?:(?:named|called)\s+)?({_CAP})\b"
                  rf"|\bI have (?:an?|one|two) ({pets})s?(?: named| called)?\s*({_CAP})?", s)
    if not m:
        return None
    kind = (m.group(1) or m.group(3)).lower()
    name = m.group(2) or m.group(4)
    return Detection("pet", "fact", f"pet:{kind}", name or "yes", 0.6, [name] if name else [])


def _en_tool(s: str) -> Detection | None:
    m = re.search(rf"\bI(?:'ve| have)?{_ADV}\s+(?:use|am using|'m using|switched (?:over )?to|moved (?:over )?to|"
                  rf"rely on|migrated to|(?:do|write) (?:all |most )?(?:of )?my (?:coding|programming|code|"
                  rf"development|dev work|writing) in|code in|program in)\s+"
                  rf"(?:the )?({_TOOL_RE}|{_CAP}(?: {_CAP})?)(?=\W|$)", s.replace("I'm using", "I am using"))
    if not m or m.group(1) in ("I",):
        return None
    tool = m.group(1)
    if not re.fullmatch(_TOOL_RE, tool) and not re.search(r"\buse\b", m.group(0)):
        return None  # "moved to Berlin" is a home, not a tool
    return _tool(tool)


def _tool(tool: str) -> Detection:
    if tool.lower() in _EDITOR_KEYS:
        return Detection("tool", "fact", "editor", tool, 0.6, [tool])
    return Detection("tool", "fact", f"tool:{_key(tool)}", "yes", 0.6, [tool])


def _en_diet(s: str) -> Detection | None:
    m = re.search(rf"\b(?:I(?:'m| am|'ve been| have been){_ADV}\s+(?:doing|on|following|trying|eating|going)"
                  rf"|(?:put|has put|have put|switched|moved) me on|I(?:'ve| have)?{_ADV}\s+(?:started|switched to|gone|went))"
                  rf"\s+(?:an? |the )?({_DIET_RE})\b"
                  rf"|\bI(?:'m| am){_ADV}\s+(?:an? )?(vegan|vegetarian|pescatarian)\b", s, re.I)
    if not m:
        return None
    diet = (m.group(1) or m.group(2))
    return Detection("diet", "fact", "diet", diet.lower(), 0.7)


def _en_project(s: str) -> Detection | None:
    m = re.search(rf"\bI(?:'m| am|'ve been| have been){_ADV}\s+(working on|building|developing|writing|"
                  rf"creating|learning|studying|training for|organizing|organising|researching)\s+(.+)", s, re.I)
    if not m:
        return None
    what = _object(m.group(2), 8)
    if not what or _key(what) in _PRONOUN_OBJECTS:
        return None
    return Detection("project", "fact", f"project:{_key(what)}", "active", 0.6)


def _en_hobby(s: str) -> Detection | None:
    m = re.search(r"\bI(?:'ve been)?{adv}\s+(?:play|practi[cs]e|do|started|took up|playing|doing)\s+"
                  r"(the (?:violin|guitar|piano|drums|cello|flute)|yoga|pilates|tennis|soccer|football|"
                  r"basketball|chess|pottery|painting|climbing|running|swimming|hiking)\b".format(adv=_ADV), s, re.I)
    if not m:
        return None
    return Detection("hobby", "fact", f"hobby:{_key(_object(m.group(1)))}", "yes", 0.6)


_EN_DETECTORS = (_en_name, _en_diet, _en_preference, _en_job, _en_home, _en_family, _en_pet, _en_tool,
                 _en_project, _en_hobby)


# --- Chinese ---------------------------------------------------------------------------

_ZH_ADV = r"(?:很|非常|特别|超|真的|一直|也|还|最|挺|蛮|其实|现在|目前|更|比较)*"


def _zh_preference(s: str) -> Detection | None:
    favorite = re.search(r"我最喜欢的(.{1,6}?)是(.+)", s)
    if favorite:
        value = _zh_object(favorite.group(2))
        if value:
            return Detection("preference", "preference", f"favorite:{favorite.group(1)}", value, 0.6)
    # "我什么都吃，就是不吃茄子": the exception is the dislike
    except_ = re.search(r"我?什么都(?:吃|喝|看)[^。]{0,3}?(?:就是|除了|但是?|只是)(?:不吃|不喝|不碰|受不了)?([\u4e00-\u9fff]{1,6}?)"
                        r"(?:除外|不吃|不行)?(?=[，。！,.!]|$)", s)
    if except_:
        return _likes(_zh_object(except_.group(1)), "no")
    neg = re.search(rf"我{_ZH_ADV}(?:不太喜欢|不怎么喜欢|不喜欢|不爱|讨厌|受不了|不再喜欢|不想再|戒了|在戒|戒掉了)(.+)", s)
    if neg:
        obj = _zh_object(neg.group(1))
        return _likes(obj, "no") if obj else None
    # The object first, as people say it: "奶茶我已经彻底戒了", "咖啡我现在不喝了"
    topic = re.search(r"(?:^|[，,：:]|所以|但是|不过|现在)([\u4e00-\u9fff]{1,6}?)我(?:已经|早就|现在|也|都)*"
                      r"(?:彻底|完全|基本)?(?:戒了|戒掉了|不喝了|不吃了|不碰了|不玩了|不再喝了|不再吃了)", s)
    if topic:
        return _likes(re.sub(r"^(?:所以|但是|不过|现在|而且|然后|反正)", "", topic.group(1)), "no")
    # A habit: "我一天一杯奶茶", "我每天都喝咖啡"
    habit = re.search(r"我(?:每天|一天|天天|每周|每晚|每早)(?:都|要|得)?(?:喝|吃|来)?(?:[一两三四五几]?[杯顿次碗瓶份])?"
                      r"([\u4e00-\u9fff]{1,5}?)(?=[，。！,.!]|$|已经|了)", s)
    if habit:
        return _likes(habit.group(1), "yes")
    pos = re.search(rf"我{_ZH_ADV}(?:喜欢|爱|热爱|迷上了|爱上了|偏爱)(.+)", s)
    if pos:
        obj = _zh_object(pos.group(1))
        return _likes(obj, "yes") if obj else None
    return None


def _zh_name(s: str) -> Detection | None:
    m = re.search(r"我(?:的名字)?(?:叫|是叫)([\u4e00-\u9fff]{1,4}|[A-Z][a-z]+)(?=[，。！,.!\s]|$)", s)
    if not m:
        return None
    return Detection("name", "fact", "name", m.group(1), 0.8, [m.group(1)])


def _zh_job(s: str) -> Detection | None:
    m = re.search(r"(?:入职(?:了)?|跳槽到(?:了)?|加入(?:了)?|去了?)([\u4e00-\u9fffA-Za-z]{2,12}?)(?:公司)?(?:了)?(?=[，。！,.!；]|$|做|当|上班|工作)", s)
    if m and re.search(r"入职|跳槽|加入|上班|工作", s):
        org = m.group(1)
        return Detection("job", "fact", "employer", org, 0.7, [org])
    m = re.search(r"我?(?:现在|目前)?在([\u4e00-\u9fffA-Za-z]{2,16}?)(?:做|当)([\u4e00-\u9fff]{2,8}?)(?=[，。！,.!]|$)", s)
    if m and re.search(r"(?:师|员|经理|工程师|分析师|老师|医生|护士|设计师|主管|总监|顾问)$", m.group(2)):
        org = re.sub(r"^.{1,4}的(?=.{2,})", "", m.group(1))  # "成都的锦程新能源" -> the company
        return Detection("job", "fact", "job", m.group(2), 0.7, [org])
    m = re.search(r"我(?:现在)?是(?:一名|一个|一位|个)(.+)", s)
    if m:
        return Detection("job", "fact", "job", _zh_object(m.group(1)), 0.7)
    m = re.search(r"我(?:现在|目前)?在(.+?)(?:工作|上班)", s)
    if m:
        org = _zh_object(m.group(1))
        return Detection("job", "fact", "employer", org, 0.7, [org])
    m = re.search(r"我的工作是(.+)", s)
    if m:
        return Detection("job", "fact", "job", _zh_object(m.group(1)), 0.7)
    return None


def _zh_home(s: str) -> Detection | None:
    m = re.search(r"我们?(?:已经|现在|终于)*在([\u4e00-\u9fff]{2,6}?)(?:住下来|安顿下来|定居|安家|落脚)", s)
    if m:
        return Detection("home", "fact", "home", m.group(1), 0.7, [m.group(1)])
    m = re.search(r"我们?" + _ZH_ADV + r"(?:住在|住|搬到了|搬到|搬去了|搬去|搬家到)(.+)", s)
    if m:
        place = re.sub(r"(?:去了|了|住)$", "", _zh_object(m.group(1)))
        return Detection("home", "fact", "home", place, 0.7, [place]) if place else None
    m = re.search(r"我来自(.+)", s)
    if m:
        place = _zh_object(m.group(1))
        return Detection("home", "fact", "origin", place, 0.7, [place]) if place else None
    return None


def _zh_family(s: str) -> Detection | None:
    m = re.search(r"我(?:的)?(女儿|儿子|老婆|妻子|丈夫|老公|妈妈|母亲|爸爸|父亲|姐姐|妹妹|哥哥|弟弟|孩子|"
                  r"男朋友|女朋友)(?:叫|名叫|的名字是)([\u4e00-\u9fff]{1,4}|[A-Z][a-z]+)", s)
    if not m:
        return None
    return Detection("family", "fact", f"family:{m.group(1)}", m.group(2), 0.7, [m.group(2)])


def _zh_pet(s: str) -> Detection | None:
    m = re.search(r"我(?:家)?(?:的|养的)?(?:那只|这只)?(狗|猫|小狗|小猫|狗狗|猫咪)叫([\u4e00-\u9fff]{1,4}|[A-Z][a-z]+)"
                  r"|我养了(?:一只|一条|两只)(狗|猫|小狗|小猫)(?:，?叫([\u4e00-\u9fff]{1,4}|[A-Z][a-z]+))?", s)
    if not m:
        return None
    kind, name = m.group(1) or m.group(3), m.group(2) or m.group(4)
    return Detection("pet", "fact", f"pet:{kind}", name or "yes", 0.6, [name] if name else [])


def _zh_tool(s: str) -> Detection | None:
    m = re.search(rf"我{_ZH_ADV}(?:都|在|主要|平时|一般)*用({_TOOL_RE}|[A-Za-z][\w.+#-]*)", s)
    if not m:
        return None
    return Detection("tool", "fact", f"tool:{_key(m.group(1))}", "yes", 0.6, [m.group(1)])


def _zh_project(s: str) -> Detection | None:
    m = re.search(r"我(?:最近|现在|目前|正)*在(做|写|开发|搞|学|准备|研究|筹备)(.+)", s)
    if not m:
        return None
    what = m.group(1) + _zh_object(m.group(2))
    return Detection("project", "fact", f"project:{what}", "active", 0.6)


def _zh_diet(s: str) -> Detection | None:
    m = re.search(r"我(?:现在|最近|目前|已经)*(?:在|开始)?(?:吃|做|改成|换成)?(生酮|素食|纯素|低碳水?|轻断食|地中海饮食|控糖|低脂)"
                  r"(?:饮食)?", s)
    if not m or not re.search(r"我(?:现在|最近|目前|已经)*(?:在|开始|吃|做|改成|换成)", s):
        return None
    return Detection("diet", "fact", "diet", m.group(1), 0.7)


_ZH_DETECTORS = (_zh_name, _zh_diet, _zh_preference, _zh_job, _zh_home, _zh_family, _zh_pet, _zh_tool,
                 _zh_project)
