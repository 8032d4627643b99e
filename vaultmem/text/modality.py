"""A frame's reading and how it holds: the `Reading` (attribute, value, modality, subject),
the modality of a value in its sentence (`fact`, `plan`, `hypothetical`, `negated`) and whose
it is (the user's, or someone else's: `other`). See `frames` for the readings themselves.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from vaultmem.text.values import NOT_NAMES


@dataclass(frozen=True)
class Reading:
    attribute: str
    value: str
    modality: str = "fact"
    subject: str = "user"


def reading(attribute: str, value: str | None, s: str, zh: bool) -> Reading | None:
    if not value:
        return None
    subject = subject_zh(s) if zh else subject_en(s)
    its_modality = modality(s, zh, value)
    return Reading(attribute, value.strip(), its_modality if subject == "user" else "other", subject)


_PLAN = re.compile(r"\b(?:going to|gonna|plan(?:ning)? (?:to|on)|thinking (?:about|of)|considering|might|may|could|"
                   r"probably|hoping to|hope to|want to|wanna|would like to|'d like to|looking (?:at|into)|maybe|"
                   r"possibly|likely|about to|will|'ll|shall|soon|eventually|someday|next (?:week|month|year|spring|"
                   r"summer|fall|autumn|winter)|in (?:the )?(?:spring|summer|fall|autumn|winter)|if all goes well|"
                   r"fingers crossed|once|assuming)\b", re.I)
_HYPOTHETICAL = re.compile(r"^(?:\w+\s+){0,3}?(?:if|what if|imagine|suppose|supposing|in case|unless|whether)\b|"
                           r"\bwould (?:you|it|that|i|mean|have to)\b|\b(?:it|that|we|i)'d (?:mean|have to|need)\b|"
                           r"\bshould (?:i|we)\b|\bcould (?:we|i) (?:afford|manage|do)\b|\?\s*$", re.I)
_ZH_PLAN = re.compile(r"打算|准备|计划|考虑|可能|也许|大概|估计|应该会|想要?|将要|将会|要去|要搬|下(?:个)?月|明年|下周|年底|过段时间|以后|争取|看看能不能")
_ZH_HYPOTHETICAL = re.compile(r"如果|要是|假如|万一|的话|假设|是不是应该|该不该|吗[？?。]?$|[？?]$")


def modality(sentence: str, chinese: bool, value: str | None) -> str:
    clause = _clause_of(sentence, value, chinese)
    if chinese:
        if _ZH_HYPOTHETICAL.search(clause):
            return "hypothetical"
        after = sentence[sentence.find(value) + len(value):] if value and value in sentence else ""
        if re.search(r"没搬成|不搬了|没去成|不去了|黄了|取消了|算了|泡汤|作罢|没换成|不换了|没成", after):
            return "negated"
        head = clause[:clause.find(value)] if value and value in clause else clause
        if re.search(r"不搬|没搬|不去|没去|不换|没换|不用|没用|不再|没有|取消|黄了|算了|放弃|不考虑", clause) \
                and not re.search(r"不再用|不用了|不再喝|不吃了|戒了", head):
            return "negated"
        if _ZH_PLAN.search(clause) and not re.search(r"了|已经|终于|总算|现在|目前", head):
            return "plan"
        return "fact"
    if _HYPOTHETICAL.search(clause):
        return "hypothetical"
    head = clause[:clause.find(value)] if value and value in clause else clause
    at = sentence.find(value) if value and value in sentence else -1
    if (at >= 0 and re.search(r"\b(?:thought|was thinking|were thinking|considered|almost|nearly|tempted)\b", sentence[:at], re.I)
            and re.search(r"\b(?:but|though|however|instead)\b", sentence[at:], re.I)) \
            or re.search(r"\b(?:fell through|called off|cancell?ed|decided against|backed out|not (?:moving|going|taking|"
                         r"switching|joining)|won't be|no longer (?:moving|going))\b|"
                         r"\b(?:was|were) (?:going to|gonna|planning to|supposed to)\b", clause, re.I):
        return "negated"
    if _PLAN.search(clause) and not re.search(r"\b(?:now|already|finally|officially|just|have been|'ve been)\b", head, re.I):
        return "plan"
    if re.search(r"\b(?:moving|relocating|starting|joining|switching|leaving|getting married|going)\b", head, re.I) \
            and _FUTURE_TIME.search(clause):
        return "plan"   # "we are moving to Denver next month"
    return "fact"


_FUTURE_TIME = re.compile(r"\b(?:next|this coming|in (?:a|two|three|a few|\d+) (?:weeks?|months?|years?)|tomorrow|"
                          r"soon|later this|end of the (?:month|year)|in (?:the )?(?:spring|summer|fall|autumn|winter)|"
                          r"(?:on|in) (?:January|February|March|April|May|June|July|August|September|October|"
                          r"November|December))\b", re.I)


def _clause_of(sentence: str, value: str | None, chinese: bool) -> str:
    """The clause of `sentence` that holds `value` (the whole sentence without one)."""
    parts = re.split(r"[，,；;]|\s+but\s+|\s+-\s+|\s+[–—]\s+" if not chinese else r"[，,；;]|但是|不过|可是", sentence)
    if value:
        for part in parts:
            if value in part:
                return part
    return sentence


_OTHER_SUBJECT = re.compile(
    r"^(?i:(?:so|and|but|oh|also|btw|well)[,\s]+)*(?i:my|our)\s+(?:(?:best|old|older|younger|little|big|new|ex|"
    r"step|close)[\s-]+)?((?:friend|brother|sister|mom|mum|dad|mother|father|wife|husband|partner|boyfriend|"
    r"girlfriend|son|daughter|kids?|cousin|colleague|coworker|co-worker|boss|manager|neighbou?r|roommate|flatmate|"
    r"aunt|uncle|grandma|grandpa|grandmother|grandfather|niece|nephew|fianc[eé]e?|teammate|classmate|landlord|"
    r"in-laws|parents|sister-in-law|brother-in-law|mother-in-law|father-in-law)s?)"
    r"(?:\s+([A-Z][a-z]+))?\s+(?!and\b|&)(?:just\s+|finally\s+|recently\s+|also\s+|keeps\s+|always\s+)?"
    r"[a-z]+(?:s|ed)?\b"
    r"|^(?:(?:so|and|but|oh|also|btw|well)[,\s]+)*([A-Z][a-z]+)\s+(?:just\s+|finally\s+)?"
    r"(?:moved|lives|works|started|joined|left|quit|got|switched|bought)\b")
_ZH_OTHER = re.compile(r"^(?:[^，。]{0,4}[，,])?(?:我(?:的)?)?(老公|老婆|丈夫|妻子|男朋友|女朋友|对象|爸|妈|爸爸|妈妈|哥哥|姐姐|"
                       r"弟弟|妹妹|儿子|女儿|朋友|同事|闺蜜|室友|邻居|他|她|他们|她们)")
_SELF_RELATIONS = ("partner", "wife", "husband", "family", "kids", "boyfriend", "girlfriend", "fiance", "fiancee")


def subject_en(s: str) -> str:
    m = _OTHER_SUBJECT.match(s)
    if not m or re.search(r"\b(?:telling|tells|told|says|said|thinks|knows|keeps saying)\b(?:\s+\w+){0,2}\s+(?:that\s+)?"
                          r"(?:I'm|I am|I've|I have|I got|I\b)", s):
        return "user"   # "my mum keeps telling everyone I'm the head of design now": news of the user
    relation, name, named = m.group(1), m.group(2), m.group(3)
    if relation and relation.split()[0] in _SELF_RELATIONS and re.search(r"\b(?:we|us|our)\b", s, re.I):
        return "user"   # "my partner and I moved": the household
    if named and named in NOT_NAMES:
        return "user"
    return name or named or (relation or "someone")


def subject_zh(s: str) -> str:
    m = _ZH_OTHER.match(s)
    if not m or re.match(r"^(?:[^，。]{0,4}[，,])?我们", s) or re.search(rf"{m.group(1)}和我|我和{m.group(1)}", s):
        return "user"
    return m.group(1)
