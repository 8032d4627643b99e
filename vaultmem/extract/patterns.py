"""The English and Chinese sentence patterns the offline extractor recognises.

Each detector looks at one first-person sentence and, when it knows what kind of memory
it is (a preference, the user's home, job, family, pets, tools, projects), says which
attribute it sets and to what value, so that a later contradicting statement can be found.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

KNOWN_TOOLS = ("Python", "Obsidian", "VS Code", "VSCode", "Vim", "Neovim", "Emacs", "Git", "GitHub",
               "GitLab", "Docker", "Kubernetes", "Notion", "Slack", "Excel", "Figma", "Photoshop",
               "ChatGPT", "Claude", "Linux", "Ubuntu", "macOS", "Windows", "iPhone", "Android",
               "PostgreSQL", "MySQL", "SQLite", "Rust", "Go", "JavaScript", "TypeScript", "React",
               "Zotero", "Anki", "Spotify", "Jira", "Trello", "Todoist", "Logseq", "Roam",
               "Evernote", "PyCharm", "IntelliJ", "Xcode", "Jupyter", "pandas", "Kotlin", "Java",
               "Swift", "Ruby", "Rails", "Django", "Flask", "FastAPI", "Zoom", "Teams", "WeChat",
               "微信", "飞书", "钉钉", "Word", "Keynote", "Lightroom", "Blender", "Unity", "Tableau")
_TOOL_RE = "|".join(re.escape(t) for t in sorted(KNOWN_TOOLS, key=len, reverse=True))
JOBS = ("engineer", "developer", "programmer", "teacher", "nurse", "doctor", "physician",
        "lawyer", "designer", "artist", "writer", "student", "manager", "scientist", "researcher",
        "accountant", "chef", "cook", "counselor", "counsellor", "therapist", "consultant",
        "analyst", "architect", "photographer", "musician", "dentist", "pharmacist", "professor",
        "lecturer", "journalist", "editor", "librarian", "firefighter", "officer", "pilot",
        "mechanic", "electrician", "plumber", "carpenter", "farmer", "entrepreneur", "founder",
        "ceo", "cto", "barista", "waiter", "waitress", "cashier", "intern", "freelancer",
        "translator", "veterinarian", "vet", "worker", "paramedic", "soldier", "clerk",
        "secretary", "receptionist", "coach", "instructor", "tutor", "psychologist", "surgeon",
        "driver", "baker", "banker", "trader", "recruiter", "marketer", "illustrator", "actor",
        "actress", "dancer", "singer", "painter", "sculptor", "potter", "administrator",
        "technician", "specialist", "assistant", "director", "executive", "owner", "volunteer")
_RELATIONS = ("wife", "husband", "partner", "girlfriend", "boyfriend", "fiance", "fiancee",
              "son", "daughter", "kids", "kid", "children", "child", "mom", "mum", "mother",
              "dad", "father", "sister", "brother", "grandma", "grandmother", "grandpa",
              "grandfather", "aunt", "uncle", "cousin", "niece", "nephew", "parents", "baby")
_PETS = ("dog", "cat", "puppy", "kitten", "pup", "parrot", "hamster", "rabbit", "bunny",
         "guinea pig", "fish", "horse", "bird", "turtle", "snake", "lizard")
_PRONOUN_OBJECTS = {"it", "that", "this", "them", "you", "him", "her", "these", "those", "how",
                    "what", "when", "the way", "everything", "all", "seeing", "hearing", "one",
                    "你", "它", "这个", "那个", "他", "她", "这", "那", "你们", "一切"}
_CAP = r"[A-Z][\w'&.-]*"
_PLACE = rf"((?:the )?{_CAP}(?:(?:,? | of | de ){_CAP})*)"
_ADV = r"(?:\s+(?:really|also|just|still|totally|absolutely|truly|kinda|definitely|especially|actually|now|currently|mostly|mainly|usually|always|genuinely|honestly|so|very))*"
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
    favorite = re.search(r"\bmy (?:all-time )?favou?rite ([\w -]{2,30}?) (?:is|was|are) (.+)", s, re.I)
    if favorite:
        value = _object(favorite.group(2))
        if value:
            return Detection("preference", "preference", f"favorite:{_key(favorite.group(1))}", value, 0.6)
    pos = re.search(rf"\bI{_ADV}\s+(?:love|like|enjoy|adore|prefer)\s+(.+)"
                    rf"|\bI(?:'m| am){_ADV}\s+(?:into|a (?:big |huge )?fan of|keen on|passionate about|"
                    rf"obsessed with|crazy about|fond of)\s+(.+)", s, re.I)
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
    m = re.search(rf"\bI{_ADV}\s+work(?:ed)? as (?:an? )?([\w -]+?)(?: at ({_CAP}(?: {_CAP})*))?(?=[,.;!]|$| and| in| for)"
                  rf"|\bI(?:'m| am){_ADV}\s+(?:an? )((?:[\w-]+ ){{0,3}}?(?:{jobs})s?)\b(?: at ({_CAP}(?: {_CAP})*))?"
                  rf"|\bmy (?:job|profession|occupation) is (?:an? )?([\w -]+)", s, re.I)
    if m:
        job = (m.group(1) or m.group(3) or m.group(5)).strip()
        employer = (m.group(2) or m.group(4) or "").rstrip(".")
        return Detection("job", "fact", "job", _object(job), 0.7, [employer] if employer else [])
    m = re.search(rf"\bI{_ADV}\s+work (?:at|for) ({_CAP}(?: {_CAP})*)", s)
    if m:
        employer = m.group(1).rstrip(".")
        return Detection("job", "fact", "employer", employer, 0.7, [employer])
    return None


def _en_home(s: str) -> Detection | None:
    m = re.search(rf"\bI(?:'ve| have)?{_ADV}\s+(?:live|lived|moved|relocated)\s+(?:in|to)\s+{_PLACE}"
                  rf"|\bI(?:'m| am){_ADV}\s+(?:based|living|settled) in\s+{_PLACE}", s)
    if m:
        place = (m.group(1) or m.group(2)).rstrip(".")
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
    rel = "|".join(_RELATIONS)
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
    pets = "|".join(_PETS)
    m = re.search(rf"\b(?i:my) ({pets})(?:,| is| 's|'s)?\s+(?:(?:named|called)\s+)?({_CAP})\b"
                  rf"|\bI have (?:an?|one|two) ({pets})s?(?: named| called)?\s*({_CAP})?", s)
    if not m:
        return None
    kind = (m.group(1) or m.group(3)).lower()
    name = m.group(2) or m.group(4)
    return Detection("pet", "fact", f"pet:{kind}", name or "yes", 0.6, [name] if name else [])


def _en_tool(s: str) -> Detection | None:
    m = re.search(rf"\bI{_ADV}\s+(?:use|am using|'m using|switched to|moved to|rely on)\s+"
                  rf"(?:the )?({_TOOL_RE}|{_CAP}(?: {_CAP})?)(?=\W|$)", s.replace("I'm using", "I am using"))
    if not m or m.group(1) in ("I",):
        return None
    tool = m.group(1)
    if not re.fullmatch(_TOOL_RE, tool) and not re.search(r"\buse\b", m.group(0)):
        return None  # "moved to Berlin" is a home, not a tool
    return Detection("tool", "fact", f"tool:{_key(tool)}", "yes", 0.6, [tool])


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


_EN_DETECTORS = (_en_name, _en_preference, _en_job, _en_home, _en_family, _en_pet, _en_tool,
                 _en_project, _en_hobby)


# --- Chinese ---------------------------------------------------------------------------

_ZH_ADV = r"(?:很|非常|特别|超|真的|一直|也|还|最|挺|蛮|其实|现在|目前|更|比较)*"


def _zh_preference(s: str) -> Detection | None:
    favorite = re.search(r"我最喜欢的(.{1,6}?)是(.+)", s)
    if favorite:
        value = _zh_object(favorite.group(2))
        if value:
            return Detection("preference", "preference", f"favorite:{favorite.group(1)}", value, 0.6)
    neg = re.search(rf"我{_ZH_ADV}(?:不太喜欢|不怎么喜欢|不喜欢|不爱|讨厌|受不了|不再喜欢|不想再|戒了|在戒|戒掉了)(.+)", s)
    if neg:
        obj = _zh_object(neg.group(1))
        return _likes(obj, "no") if obj else None
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
    m = re.search(r"我" + _ZH_ADV + r"(?:住在|住|搬到了|搬到|搬去了|搬去|搬家到)(.+)", s)
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


_ZH_DETECTORS = (_zh_name, _zh_preference, _zh_job, _zh_home, _zh_family, _zh_pet, _zh_tool,
                 _zh_project)
