"""Frames at read time: the slot a question asks for, and whether a memory speaks of a slot,
whose news it is and what values it names (the read-time net of `retrieve.current` and the
review of what a statement updates).

    >>> question_frame("Where does the user live now?"), question_frame("用户在哪家公司上班？")
    ('home', 'employer')
"""

from __future__ import annotations

import re

from vaultmem.text.frame_cues import HOME_CUE, TITLE, WORK_CUE, ZH_HOME_CUE, ZH_WORK_CUE
from vaultmem.text.script import is_chinese
from vaultmem.text.values import NAME_SPAN, NOT_NAMES, ZH_ORG, ZH_PLACE_SUFFIX, tools_in, zh_listed_places

_QUESTION_FRAMES = (
    ("home", re.compile(r"\bwhere\b.*\b(?:live|living|based|reside|home|moved?)\b|\bwhich (?:city|town|country|neighbou?rhood)\b|"
                        r"\bhome (?:city|town)\b|住在|住哪|哪个城市|哪座城市|在哪(?:里)?(?:住|生活|定居|安家)|搬到(?:了)?哪", re.I)),
    ("employer", re.compile(r"\bwhere\b.*\bwork(?!s? ?out)|\bwhich (?:company|firm|employer|organi[sz]ation)\b|\bwho\b.*\bwork(?:s|ing)? for\b|"
                            r"\bemployer\b|哪家公司|什么公司|公司叫什么|公司名|在哪(?:里)?(?:上班|工作)|哪个公司|东家", re.I)),
    # "What does the user do?" (for a living), not "… do on Tuesday evenings?"
    ("job", re.compile(r"\b(?:job|title|role|position|profession|occupation)\b|"
                       r"\bwhat does the user (?:currently |now )?do\b(?!\s+(?:on|in|at|after|before|during|every|with|for fun)\b)|什么职位|职位|头衔|做什么工作|什么岗位|岗位|职称", re.I)),
    ("manager", re.compile(r"\b(?:manager|boss|supervisor|reports? to)\b|领导是|老板是|上司|经理是谁", re.I)),
    ("tool:editor", re.compile(r"\b(?:editor|ide)\b|编辑器|用什么写代码", re.I)),
    ("tool:language", re.compile(r"\bprogramming language\b|\bwhat language\b.*\b(?:code|program|write)\b|编程语言", re.I)),
    ("tool:phone", re.compile(r"\bphone\b|手机", re.I)),
    ("tool:notes", re.compile(r"\bnotes? app\b|\bnote-taking\b|笔记软件|记笔记", re.I)),
    ("diet", re.compile(r"\bdiet\b|饮食|吃素|忌口", re.I)),
    ("learning", re.compile(r"\blanguage\b.*\blearn|\blearn\w*\b.*\blanguage\b|学什么语|在学哪", re.I)),
    ("school", re.compile(r"\bwhich (?:school|university|college|uni)\b|\bwhere (?:does|is) .+ (?:study|studying|go to (?:school|college|uni))\b|"
                          r"\bwhat (?:school|university|college)\b|哪所(?:学校|大学|中学)|哪个(?:学校|大学)|"
                          r"在哪(?:里|儿)?(?:上学|读书|念书|读)|什么(?:学校|大学)", re.I)),
    ("commute", re.compile(r"\bcommute\b|\bget to work\b|\bhow does the user get (?:to|into) (?:the )?(?:office|work)\b|"
                            r"通勤|怎么(?:去)?上班|怎么去公司|坐什么(?:车)?上班", re.I)),
)


def question_frame(question: str) -> str | None:
    """The attribute a question asks for, when it is one of the frames'."""
    for attribute, pattern in _QUESTION_FRAMES:
        if pattern.search(question):
            return attribute
    return None


_SPEAKS = {
    "home": (HOME_CUE, ZH_HOME_CUE),
    "employer": (WORK_CUE, ZH_WORK_CUE),
    "job": (re.compile(rf"\b(?:promot\w+|title|role|position|job)\b|{TITLE.pattern}", re.I),
            re.compile(r"升职|晋升|职位|岗位|转岗|工程师|经理|总监|主管|设计师|分析师|老师|医生|护士")),
    "manager": (re.compile(r"\b(?:manager|boss|supervisor|team lead|reports? to)\b", re.I),
                re.compile(r"领导|老板|经理|主管|上司|组长|leader")),
    "diet": (re.compile(r"\b(?:diet|vegan|vegetarian|keto|pescatarian|paleo|meat|dairy|gluten)\b", re.I),
             re.compile(r"饮食|吃素|素食|生酮|控糖|低脂|戒糖|断糖|吃肉")),
    "commute": (re.compile(r"\b(?:commut\w*|drive|driving|train|bus|subway|metro|bike|cycling|ferry|walk)\b", re.I),
                re.compile(r"通勤|开车|地铁|公交|骑车|电动车|单车|打车|班车|走路")),
    "school": (re.compile(r"\b(?:school|university|college|uni|grade|class of)\b", re.I),
               re.compile(r"学校|大学|中学|小学|附中|高[一二三]|初[一二三]|读书|上学|念书")),
    "learning": (re.compile(r"\b(?:learning|studying|lessons?|class(?:es)?|course)\b", re.I),
                 re.compile(r"学|课|班")),
}


# The attributes a model's update is checked against (`extract.review._related`): not
# "school", which a son's class and a cousin's school would both speak of.
TOPICS = tuple(t for t in _SPEAKS if t != "school")


def speaks_of(attribute: str, text: str) -> bool:
    """Whether a memory's statement speaks of `attribute` at all (a cue word; no value needed)."""
    family = attribute.split(":", 1)[0]
    if family == "tool":
        kind = attribute.split(":", 1)[1] if ":" in attribute else ""
        return any(k == kind for _t, k in tools_in(text))
    cues = _SPEAKS.get(family)
    return bool(cues and (cues[1] if is_chinese(text) else cues[0]).search(text))


_SOMEONE_ELSE = re.compile(r"^(?:The user's|用户的?)\s*(?:friend|brother|sister|mom|mum|dad|mother|father|cousin|"
                           r"colleague|coworker|neighbou?r|boss|manager|朋友|同事|哥哥|姐姐|弟弟|妹妹|爸|妈|表姐|表哥|邻居|闺蜜)"
                           r"|^(?!The user\b)[A-Z][a-z]+ (?:lives|moved|works|got|is)\b")


def about_someone_else(text: str) -> bool:
    """Whether a statement is news about someone else ("The user's friend moved…", "Jake lives…")."""
    return bool(_SOMEONE_ELSE.search(text.strip()))


def named_values(text: str, loose: bool = True) -> set[str]:
    """What a statement names that could be a slot's value: capitalised names, places and
    organisations, tools, numbers (lower-cased); for comparing two memories of one slot.
    `loose` also takes, in Chinese, what stands where a value stands (after 在/叫/是/做…),
    which may be any phrase ("地铁上看完")."""
    found = {re.sub(r"['’]s$", "", m.group(0).rstrip(".,'’")).lower() for m in re.finditer(rf"{NAME_SPAN}", text)
             if m.group(0).split()[0] not in NOT_NAMES and m.group(0) not in ("The user", "User")}
    found |= {t.lower() for t, _k in tools_in(text)}
    found |= set(re.findall(r"\d+(?:[.:]\d+)?", text))
    if is_chinese(text) and loose:
        # what stands where a value stands: after 在/叫/是/做/当/住/用/学/养/到 ("在星河互娱做游戏策划")
        found |= {m.group(1) for m in re.finditer(r"(?:住在|住|在|叫|是|做|当|用|学|养|到|去|换成|改成|转岗做|升为)"
                                                   r"([\u4e00-\u9fff]{2,6}?)(?=[，。！？、,.!?；\s]|做|当|上班|工作|了|的|$)", text)
                  if not re.search(r"这|那|哪|什么|一个|不|没|很|太|也|都|还|就|在|了", m.group(1))}
    if is_chinese(text):
        found |= {m.group(0) for m in zh_listed_places().finditer(text)}
        found |= {m.group(0) for m in ZH_PLACE_SUFFIX.finditer(text)}
        m = ZH_ORG.search(text)
        if m:
            found.add(m.group(0))
    return {v for v in found if v not in ("the user", "user", "i")}
