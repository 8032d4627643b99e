"""Subject, attribute and value of a chat sentence, read from what it speaks of, not from how.

A frame is one attribute a person has one value of at a time (where they live, who they
work for, their title, their partner, a child's name, their editor, their diet, ...). It is
read from two things a sentence holds whatever its wording: a **cue** that speaks of the
attribute (live, moved, new place, flat, 搬, 住, 新家 for `home`) and a **value of the
attribute's kind** near it (a place, an organisation, a person's name, a title, a tool of a
kind). "ugh the commute from the new place in Oakland is brutal", "the Lisbon flat finally
feels like home" and 「我们在厦门安顿下来了」 all read as `home` = the place they name.

Around the cue, the **modality** says whether the value holds: `fact`, `plan` ("we're
probably moving to Lisbon in spring", 打算搬去上海), `hypothetical` ("if we moved to
Austin"), `negated` ("we're not moving to Austin after all", "I thought about Neovim but
I'm sticking with VS Code" gives Neovim negated and VS Code a fact) and `other` (someone
else's: "my friend Jake just moved to Seattle"). Only a `fact` about the speaker fills the
speaker's slot; the write policy supersedes on it, and `context` groups memories of one
slot at read time with the same reading (`read`, `question_frame`).

    >>> read("ugh the commute from the new place in Oakland is brutal")
    Reading(attribute='home', value='Oakland', modality='fact', subject='user')
    >>> read("we're probably moving to Lisbon in spring").modality
    'plan'
    >>> read("我们上个月搬到了杭州").value
    '杭州'
    >>> question_frame("Where does the user live now?"), question_frame("用户在哪家公司上班？")
    ('home', 'employer')
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from vaultmem.text.rewrite import is_chinese
from vaultmem.text.values import (
    CAP,
    NAME_SPAN,
    NOT_NAMES,
    ZH_ORG,
    ZH_PLACE_SUFFIX,
    clean_name,
    org_en,
    org_zh,
    place_en,
    place_zh,
    tools_in,
    zh_listed_places,
)

# --- modality ------------------------------------------------------------------------------

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


def _modality(sentence: str, chinese: bool, value: str | None) -> str:
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


# --- frames ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class Reading:
    attribute: str
    value: str
    modality: str = "fact"
    subject: str = "user"


_HOME_CUE = re.compile(
    r"\b(?:live[sd]?|living|moved|move|moving|relocat\w*|settled|settling|based|resid\w+|unpack\w*|landlord|lease|"
    r"(?:new|our|my|the)\s+(?:\w+\s+)?(?:place|flat|apartment|apt|house|home|condo|neighbou?rhood)|"
    r"(?:flat|apartment|place|condo|house)\b(?=.{0,30}\bhome\b)|feels like home|here in|"
    r"(?:rental|renting|rent|lease)(?=.{0,25}\b(?:flat|apartment|apt|house|place|room|condo|townhouse)\b)|"
    r"(?:flat|apartment|apt|house|place|condo|townhouse)\s+(?:rental|lease)|"
    r"(?:have|'ve|has) been (?:in|living in)|(?:I'm|I am|we're|we are) (?:now )?in)\b", re.I)
_ZH_HOME_CUE = re.compile(r"住在|住到|住进|住下|住了|住(?=[\u4e00-\u9fff]{2})|搬到|搬去|搬家|搬来|搬回|搬进|定居|落户|安家|安顿|新家|我们家在|我家在|租了.{0,6}房|"
                          r"买了.{0,6}房|房子在|常驻|base在|落脚")
_WORK_CUE = re.compile(
    r"\b(?:work(?:s|ing|ed)?\s+(?:at|for)|join(?:ed|ing)?|hired|(?:started|starting|start)\s+(?:at|with)|"
    r"(?:new\s+)?job\s+(?:at|with)|offer\s+(?:from|at)|(?:first|second|third|last)\s+(?:day|week|month)\s+at|"
    r"(?:I'm|I am|I'm now|now that I'm|now I'm|we're)\s+(?:now\s+)?(?:at|over at|with)|employer|company|"
    r"left|quit|laid off|resigned from|leaving)\b", re.I)
_ZH_WORK_CUE = re.compile(r"入职|跳槽|加入了|在.{2,12}(?:上班|工作|实习)|去.{2,12}(?:上班|工作)|新公司|离职|辞职|被裁|东家|报到|"
                          r"公司(?:正式)?(?:改名|更名)|在[\u4e00-\u9fffA-Za-z]{2,8}做")
_JOB_NOUNS = (r"engineer|developer|programmer|designer|manager|director|lead|head|analyst|scientist|researcher|"
              r"architect|consultant|teacher|nurse|doctor|lawyer|accountant|writer|editor|product owner|"
              r"vp|vice president|president|officer|specialist|coordinator|administrator|technician|"
              r"supervisor|principal|partner|associate|intern|founder|cto|ceo|cfo|coo|chef|pharmacist|"
              r"professor|lecturer|recruiter|strategist|producer|planner|advisor|adviser|counsel|paralegal|"
              r"librarian|therapist|physician|surgeon|resident|fellow|owner|marketer|salesperson|rep|tester")
_TITLE = re.compile(rf"\b((?:(?:senior|junior|staff|principal|chief|lead|head|associate|assistant|deputy|"
                    rf"acting|interim|sr\.?|jr\.?|[A-Za-z-]+)\s+){{0,4}}(?:{_JOB_NOUNS})s?(?:\s+(?:of|for)\s+"
                    rf"(?!now\b)[A-Za-z&-]+(?:\s+(?!now\b|at\b|in\b)[A-Za-z&-]+)?)?)\b", re.I)
_TITLE_CUE = re.compile(r"\b(?:promot\w+|title|role|position|work(?:s|ing)?\s+as|I'm\s+(?:now\s+)?(?:a|an|the)?|"
                        r"I am\s+(?:now\s+)?(?:a|an|the)?|became|become|becoming|now\s+(?:a|an|the)?|"
                        r"new\s+(?:job|gig)\s+as|hired\s+as|as\s+(?:a|an|the))\b", re.I)
_ZH_TITLE = re.compile(r"(?:升(?:职)?(?:为|成|到了?|做了?)|晋升为|升任|当上了?|转岗(?:成|为|做)|现在是|做|当|担任|任)"
                       r"(?:了)?(?:一名|一个|个)?([\u4e00-\u9fffA-Za-z]{1,8}?(?:工程师|经理|总监|主管|总|负责人|设计师|"
                       r"分析师|老师|医生|护士|律师|会计|策划|运营|产品|组长|主任|专员|顾问|架构师|研究员|店长|总裁|"
                       r"总经理|副总|合伙人|科长|处长|部长|校长))")
_MANAGER_EN = re.compile(rf"\b(?:my|our)\s+(?:new\s+)?(?:manager|boss|lead|supervisor|team lead|line manager)"
                         rf"(?:\s+is|,|:|\s+-)?\s+(?:now\s+)?({CAP}(?:\s+{CAP})?)"
                         rf"|\b({CAP}(?:\s+{CAP})?)\s+is\s+(?:now\s+)?my\s+(?:new\s+)?(?:manager|boss|lead|supervisor)"
                         rf"|\breport(?:ing|s)?\s+to\s+({CAP}(?:\s+{CAP})?)\b")
_ZH_MANAGER = re.compile(r"(?:新)?(?:领导|老板|经理|主管|上司|组长|leader)(?:换成了?|变成了?|是|叫|现在是)([\u4e00-\u9fffA-Za-z]{2,4}?)"
                         r"(?=[，。！了,.!\s]|$)")
_COMMUTE = re.compile(r"\b(?:drive|driving|drove|take the (?:train|bus|subway|tube|metro|ferry)|taking the (?:train|bus|subway|"
                      r"tube|metro|ferry)|bike|biking|cycle|cycling|walk|walking|carpool\w*|scooter)\b"
                      r"(?=.{0,40}\b(?:work|office|commute|job)\b)|\bcommut\w+\s+by\s+(\w+)", re.I)
_ZH_COMMUTE = re.compile(r"(开车|坐地铁|坐公交|骑车|骑自行车|骑电动车|走路|打车|坐班车)(?:去|到)?(?:上班|通勤|公司)")
_LANGS_EN = ("Japanese", "Spanish", "French", "German", "Italian", "Korean", "Mandarin", "Chinese", "Portuguese",
             "Russian", "Arabic", "Dutch", "Swedish", "Greek", "Turkish", "Hindi", "Vietnamese", "Thai", "English")
_LEARN_EN = re.compile(rf"\b(?:learning|studying|taking|practi[cs]ing|started)\s+(?:\w+\s+)?({'|'.join(_LANGS_EN)})\b", re.I)
_ZH_LANGS = "日语|西班牙语|法语|德语|意大利语|韩语|英语|葡萄牙语|俄语|阿拉伯语|粤语"
_LEARN_ZH = re.compile(rf"(?:学|在学|学习|报了|开始学|改学|换成学)(?:了)?(?:一门)?({_ZH_LANGS})")
_DIETS = ("keto", "vegan", "vegetarian", "pescatarian", "paleo", "Mediterranean", "low-carb", "gluten-free",
          "plant-based", "carnivore", "whole30", "intermittent fasting", "low-fodmap", "dairy-free", "halal", "kosher")
_DIET_EN = re.compile(rf"\b({'|'.join(map(re.escape, _DIETS))})\b", re.I)
_ZH_DIET = re.compile(r"(生酮|素食|吃素|纯素|低碳水?|轻断食|地中海饮食|控糖|低脂|戒糖|断糖|无麸质)")
_DIET_CUE = re.compile(r"\b(?:diet|eat(?:ing)?|went|gone|going|switched|started|stopped|quit|on|am|I'm|been|no longer|"
                       r"back to|dropped)\b", re.I)


def read(sentence: str, chinese: bool | None = None) -> Reading | None:
    """The one slot a sentence (or clause) fills, with its modality; None for none."""
    s = " ".join(str(sentence).split())
    if not s:
        return None
    zh = is_chinese(s) if chinese is None else chinese
    for frame in (_ZH_FRAMES if zh else _EN_FRAMES):
        found = frame(s)
        if found is not None:
            return found
    return None


def _subject_en(s: str) -> str:
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


def _subject_zh(s: str) -> str:
    m = _ZH_OTHER.match(s)
    if not m or re.match(r"^(?:[^，。]{0,4}[，,])?我们", s) or re.search(rf"{m.group(1)}和我|我和{m.group(1)}", s):
        return "user"
    return m.group(1)


def _reading(attribute: str, value: str | None, s: str, zh: bool) -> Reading | None:
    if not value:
        return None
    subject = _subject_zh(s) if zh else _subject_en(s)
    modality = _modality(s, zh, value)
    return Reading(attribute, value.strip(), modality if subject == "user" else "other", subject)


def _en_home(s: str) -> Reading | None:
    if not _HOME_CUE.search(s):
        return None
    if re.search(r"\b(?:visit\w*|trip|vacation|holiday|travel\w*|flew|flying|conference|stay(?:ed|ing)? (?:at|in) a hotel|"
                 r"cabin|cottage|airbnb|hotel|resort|campsite|getaway|thanksgiving|christmas|for the (?:week|weekend))\b", s, re.I) \
            and not re.search(r"\b(?:moved|live|living|settled|relocat)\b", s, re.I):
        return None
    if re.search(r"\b(?:until|till|for the (?:week|weekend|month)|for (?:a|two|three|\d+) (?:days|nights|weeks))\b",
                 s, re.I) and not re.search(r"\b(?:moved|live|living|lives|settled|relocat\w*)\b", s, re.I):
        return None   # "I'm in Tokyo until Friday": a stay, not a home
    if re.search(r"\b(?:moved|moving|move)\s+(?:my|our|the|all|his|her|their)\s+(?!family\b|stuff\b|things\b)\w+", s, re.I) \
            and not re.search(r"\b(?:live|living|lives|settled|flat|apartment|house|home|rental)\b", s, re.I):
        return None   # "moved my editing to Capture One": a thing moved, not the person
    moved = re.search(r"\bfrom\s+(?:the\s+)?" + NAME_SPAN + r"\s+to\s+(?:the\s+)?(" + NAME_SPAN + ")", s)
    value = clean_name(moved.group(1)) if moved else None
    value = value or place_en(re.sub(r"\bfrom\s+(?:the\s+)?" + NAME_SPAN, "", s) if re.search(r"\bto\b", s) else s)
    if value and re.match(rf"\bfrom\s+(?:the\s+)?{re.escape(value)}", s[s.find(value) - 5:] if value in s else ""):
        return None
    return _reading("home", value, s, False)


def _en_employer(s: str) -> Reading | None:
    if not _WORK_CUE.search(s):
        return None
    value = org_en(s)
    if value is None or re.search(rf"\b(?:in|to)\s+{re.escape(value)}\b", s) and not re.search(
            rf"\b(?:at|for|joined|join)\s+{re.escape(value)}", s):
        return None
    reading = _reading("employer", value, s, False)
    if reading and reading.modality == "fact" and re.search(r"\b(?:left|quit|laid off|resigned|fired)\b", s, re.I):
        return Reading("employer", reading.value, "ended", reading.subject)
    return reading


def _en_job(s: str) -> Reading | None:
    if not _TITLE_CUE.search(s):
        return None
    for m in _TITLE.finditer(s):
        raw = m.group(1).strip()
        cut = [w.end() for w in re.finditer(r"\b(?:to|as|is|am|are|was|be|been|being|now|the|a|an|my|our|new|got|get|"
                                            r"promoted|became|become|becoming|officially|finally|m|I|title|role|"
                                            r"position|job|work|works|working|everyone|that|it's|its)\b", raw, re.I)]
        title = raw[max(cut):].strip() if cut else raw
        if not title or not _TITLE.fullmatch(title):
            continue
        before = s[:m.start() + raw.find(title) if title in raw else m.start()]
        if not title or re.search(r"\b(?:my|our|his|her|their|your)\s*$|(?<!\bI'm )(?<!\bis )(?<!\bas )\bthe\s*$",
                                  before, re.I):
            continue  # "my manager Dana": a person, not a title
        if not re.search(r"(?:promot\w+\s+to|title|role|position|as|I'm|I am|became|become|now|is now)\s*(?:(?:a|an|the|now|officially|finally)\s+)*$",
                         before, re.I) and not re.search(r"\bnow\b", s[m.end():m.end() + 8], re.I):
            continue
        return _reading("job", title, s, False)
    return None


def _en_manager(s: str) -> Reading | None:
    m = _MANAGER_EN.search(s)
    if not m:
        return None
    name = clean_name(next(g for g in m.groups() if g))
    return Reading("manager", name, _modality(s, False, name)) if name else None


def _en_tool(s: str) -> Reading | None:
    found = tools_in(s)
    if not found or not re.search(r"(?<![\w'])(?:I|I'm|I've|my|me)(?![\w'])", s):
        return None   # "we're on Python 3.12 for this service": a project's, not the person's
    # the tool the sentence now uses: after "switched to", "moved to", "only", "use", "in"
    m = re.search(r"\b(?:switched|switching|moved|moving|migrated|went back|gone back|changed)\s+(?:over\s+)?(?:from\s+\S+(?:\s\S+)?\s+)?to\s+(?:the\s+)?(\S+(?:\s\S+)?)"
                  r"|\b(?:use|using|uses|prefer|code in|coding in|write (?:it )?in|writing in|do everything in|"
                  r"everything (?:else )?(?:is )?in|living in|running|on)\s+(?:the\s+)?(\S+(?:\s\S+)?)", s, re.I)
    if not m:
        return None
    target = (m.group(1) or m.group(2))
    for tool, kind in found:
        if target.lower().startswith(tool.lower()) or tool.lower() in target.lower():
            modality = _modality(s, False, tool)
            if re.search(rf"\b(?:only|just)\s+(?:use\s+)?{re.escape(tool)}\s+for\b", s, re.I):
                continue  # "I only use Vim for commit messages": narrowed, not the main one
            return Reading(f"tool:{kind}", tool, modality, _subject_en(s))
    return None


def _en_diet(s: str) -> Reading | None:
    m = _DIET_EN.search(s)
    if not m or not _DIET_CUE.search(s):
        return None
    if re.search(rf"\b(?:stopped|quit|dropped|no longer|gave up|off|not)\b[^.]*\b{re.escape(m.group(1))}", s, re.I):
        return Reading("diet", m.group(1).lower(), "ended", _subject_en(s))
    return _reading("diet", m.group(1).lower(), s, False)


def _en_learning(s: str) -> Reading | None:
    m = _LEARN_EN.search(s)
    return _reading("learning", m.group(1).capitalize(), s, False) if m else None


def _en_commute(s: str) -> Reading | None:
    switched = re.search(r"\b(?:switched|changed|moved) (?:over )?to (?:the |a )?(train|bus|subway|tube|metro|ferry|bike|biking|"
                         r"cycling|walking|driving|car|scooter|e-bike)\b", s, re.I)
    if switched and re.search(r"\b(?:work|office|commut\w*|job)\b", s, re.I):
        return _reading("commute", switched.group(1).lower().replace("biking", "bike").replace("cycling", "bike"), s, False)
    found = list(_COMMUTE.finditer(s))
    if not found:
        return None
    m = next((f for f in found if re.search(r"\b(?:switched to|now|started|these days|instead)\s*(?:the\s+)?$",
                                              s[:f.start()], re.I)), found[0])
    mode = (m.group(1) or m.group(0)).lower()
    mode = re.sub(r"^(?:taking|take) the ", "", mode)
    mode = {"driving": "drive", "drove": "drive", "biking": "bike", "cycling": "bike", "cycle": "bike",
            "walking": "walk"}.get(mode, mode)
    return _reading("commute", mode, s, False)


# "my GP is Dr. Anderson", "Mia's teacher is now Mr Dawson", "our vet is Bayview Vet": whose thing,
# which thing, and its value, whatever the thing is (the attribute is the thing's name).
_POSSESSIVE_IS = re.compile(
    rf"\b(?:(?P<mine>my|our)|(?P<owner>{CAP})['’]s)\s+(?:new\s+|current\s+|main\s+)?"
    r"(?P<thing>(?!(?:name|names|birthday|favou?rite|life|day|week|job|head|heart|mind|back|bad|fault|guess|"
    r"point|plan|turn|problem|thing|issue|question|answer|advice|idea)\b)[a-z][a-z-]+(?:\s+[a-z][a-z-]+)?)\s+"
    rf"(?:is|are|'s)\s+(?:now\s+|actually\s+|officially\s+)?(?:called\s+|named\s+)?"
    rf"(?P<value>(?:Dr\.?\s+|Mr\.?\s+|Mrs\.?\s+|Ms\.?\s+)?{CAP}(?:\s+{CAP}){{0,3}}|\d[\w./:-]*)")
_ZH_POSSESSIVE_IS = re.compile(
    r"(?:(?P<mine>我(?:的|们的|家)?)|(?P<owner>[\u4e00-\u9fff]{1,3})的|(?P<bare>^|[，,。！!]\s*))(?:新)?"
    r"(?P<thing>班主任|老师|医生|主治医生|兽医|学校|幼儿园|班|专业|导师|教练|房东|领导|上司|对象|男朋友|女朋友|老公|老婆|"
    r"未婚夫|未婚妻|手机|电脑|车|车子|宠物医院|医院|健身房|套餐|英文名|名字)"
    r"(?:现在|已经|终于)?(?:换成了?|改成了?|变成了?|是|叫|在)\s*"
    r"(?P<value>(?:Mr|Mrs|Ms|Dr)\.?\s+[A-Z][A-Za-z-]+|[A-Z][A-Za-z-]*(?:\s+[A-Z][A-Za-z-]*)*|[\u4e00-\u9fffA-Za-z0-9.]{1,12}?)"
    r"(?=[，。！？,.!?；;\s]|$|了)")


def _en_possessive(s: str) -> Reading | None:
    m = _POSSESSIVE_IS.search(s)
    if not m:
        return None
    value = m.group("value").rstrip(".,")
    if value in NOT_NAMES or value.split()[0] in NOT_NAMES:
        return None
    subject = "user" if m.group("mine") else m.group("owner")
    thing = m.group("thing").lower()
    if value[:1].isdigit() and thing in _RELATION_NOUNS:
        thing += " age"   # "my daughter is 4 now"
    return Reading(thing, value, _modality(s, False, value), subject)


_RELATION_NOUNS = frozenset("""son daughter kid kids child children baby boy girl brother sister mom mum dad mother father
wife husband partner boyfriend girlfriend dog cat puppy kitten""".split())


def _zh_possessive(s: str) -> Reading | None:
    m = _ZH_POSSESSIVE_IS.search(s)
    if not m or re.match(r"(?:谁|什么|哪|多少|几)", m.group("value")):
        return None
    subject = "user" if m.group("mine") is not None or m.group("bare") is not None else m.group("owner")
    if subject in ("他", "她", "你", "谁"):
        return None
    return Reading(m.group("thing"), m.group("value").strip(), _modality(s, True, m.group("value")), subject)


_EN_FRAMES = (_en_manager, _en_possessive, _en_home, _en_employer, _en_job, _en_tool, _en_diet, _en_learning,
              _en_commute)


def _zh_home(s: str) -> Reading | None:
    if not _ZH_HOME_CUE.search(s) or re.search(r"出差|旅游|旅行|玩几天|度假", s):
        return None
    cue = _ZH_HOME_CUE.search(s)
    tail = s[cue.start():]
    clause_end = re.search(r"[，。！？；,;!?]", tail)
    clause = tail[:clause_end.start()] if clause_end else tail
    place = place_zh(clause)
    named = re.match(r"(?:住在|住到|住进|搬到|搬去|搬回|搬进|住)(?:了)?([\u4e00-\u9fff]{2,6}?)(?=[了的在，。！？,.!?\s]|$)", clause)
    if named and not _ZH_NOT_PLACE.search(named.group(1)) and (place is None or named.group(1).startswith(place)):
        place = named.group(1)   # "住上海闵行": a district no list holds, right after the cue
    if place is None:   # "广州，天河，住了六年了": the place said just before
        before = s[max(0, cue.start() - 10):cue.start()]
        place = place_zh(before) if re.search(r"住了|住(?:着|过)", s[cue.start():cue.start() + 3]) else None
    if place is None:
        return None
    moved = re.search(r"从([\u4e00-\u9fff]{2,8}?)搬", s)
    if moved and moved.group(1).startswith(place):
        place = place_zh(s[s.find("搬"):]) or None
    return _reading("home", place, s, True)


_ZH_NOT_PLACE = re.compile(r"这|那|哪|附近|家里|公司|宿舍|学校|年|月|天|久|一起|过去|过来|回来|回去|进去|出去|下来|不|没|得|多|好|很|挺|"
                           r"一个|两个|房子|小区|楼|层|套|间|屋")


def _zh_employer(s: str) -> Reading | None:
    if not _ZH_WORK_CUE.search(s):
        return None
    org = org_zh(s)
    if not org:
        return None
    if re.search(r"离职|辞职|被裁|离开了", s) and not re.search(r"入职|加入|跳槽", s):
        reading = _reading("employer", org, s, True)
        return Reading("employer", org, "ended", reading.subject) if reading.modality == "fact" else reading
    return _reading("employer", org, s, True)


def _zh_job(s: str) -> Reading | None:
    m = _ZH_TITLE.search(s)
    return _reading("job", m.group(1), s, True) if m else None


def _zh_manager(s: str) -> Reading | None:
    m = _ZH_MANAGER.search(s)
    return Reading("manager", m.group(1), _modality(s, True, m.group(1))) if m else None


def _zh_tool(s: str) -> Reading | None:
    found = tools_in(s)
    if not found or not re.search(r"用|换|改|转|切|买了|入手", s) or not re.search(r"我(?!们)", s):
        return None
    m = re.search(r"(?:换成|换到|换了|改用|转用|切到|切换到|迁到|现在用|主要用|只用|都用|在用|买了|入手了?)(?:了)?\s*([A-Za-z][\w.+#-]*(?:\s[A-Z][\w]*)?|[\u4e00-\u9fff]{2,4})", s)
    if not m:
        return None
    for tool, kind in found:
        if m.group(1).lower().startswith(tool.lower()):
            return _reading(f"tool:{kind}", tool, s, True)
    return None


def _zh_diet(s: str) -> Reading | None:
    m = _ZH_DIET.search(s)
    if not m:
        return None
    if re.search(rf"(?:不再|不|停了|放弃了?|结束了?)[^，。]{{0,4}}{m.group(1)}|{m.group(1)}[^，。]{{0,4}}(?:停了|不做了|放弃了|结束了|戒了)", s):
        return Reading("diet", m.group(1), "ended", _subject_zh(s))
    return _reading("diet", m.group(1), s, True)


def _zh_learning(s: str) -> Reading | None:
    m = _LEARN_ZH.search(s)
    return _reading("learning", m.group(1), s, True) if m else None


def _zh_commute(s: str) -> Reading | None:
    m = _ZH_COMMUTE.search(s)
    return _reading("commute", m.group(1), s, True) if m else None


_ZH_FRAMES = (_zh_manager, _zh_possessive, _zh_home, _zh_employer, _zh_job, _zh_tool, _zh_diet, _zh_learning,
              _zh_commute)


# --- questions --------------------------------------------------------------------------------

_QUESTION_FRAMES = (
    ("home", re.compile(r"\bwhere\b.*\b(?:live|living|based|reside|home|moved?)\b|\bwhich (?:city|town|country|neighbou?rhood)\b|"
                        r"\bhome (?:city|town)\b|住在|住哪|哪个城市|哪座城市|在哪(?:里)?(?:住|生活|定居|安家)|搬到(?:了)?哪", re.I)),
    ("employer", re.compile(r"\bwhere\b.*\bwork|\bwhich (?:company|firm|employer|organi[sz]ation)\b|\bwho\b.*\bwork(?:s|ing)? for\b|"
                            r"\bemployer\b|哪家公司|什么公司|公司叫什么|公司名|在哪(?:里)?(?:上班|工作)|哪个公司|东家", re.I)),
    ("job", re.compile(r"\b(?:job|title|role|position)\b|\bwhat does the user do\b|什么职位|职位|头衔|做什么工作|什么岗位|岗位|职称", re.I)),
    ("manager", re.compile(r"\b(?:manager|boss|supervisor|reports? to)\b|领导是|老板是|上司|经理是谁", re.I)),
    ("tool:editor", re.compile(r"\b(?:editor|ide)\b|编辑器|用什么写代码", re.I)),
    ("tool:language", re.compile(r"\bprogramming language\b|\bwhat language\b.*\b(?:code|program|write)\b|编程语言", re.I)),
    ("tool:phone", re.compile(r"\bphone\b|手机", re.I)),
    ("tool:notes", re.compile(r"\bnotes? app\b|\bnote-taking\b|笔记软件|记笔记", re.I)),
    ("diet", re.compile(r"\bdiet\b|饮食|吃素|忌口", re.I)),
    ("learning", re.compile(r"\blanguage\b.*\blearn|\blearn\w*\b.*\blanguage\b|学什么语|在学哪", re.I)),
    ("commute", re.compile(r"\bcommute\b|\bget to work\b|通勤|怎么去上班", re.I)),
)


def question_frame(question: str) -> str | None:
    """The attribute a question asks for, when it is one of the frames'."""
    for attribute, pattern in _QUESTION_FRAMES:
        if pattern.search(question):
            return attribute
    return None


# --- for the offline extractor ------------------------------------------------------------------

# A plan said with a hedge ("thinking about moving to Austin", 可能会搬去苏州) is not yet a
# memory; a firm one ("we're moving to Denver next month") is an event.
HEDGED = re.compile(r"\b(?:thinking (?:about|of)|considering|might|maybe|possibly|probably|hoping|hope to|"
                    r"want to|wanna|would like to|'d like to|looking (?:at|into)|toying with|tempted|"
                    r"not sure|someday|eventually)\b|考虑|可能|也许|大概|想|说不定|看看|犹豫", re.I)
# The kinds (tags) a frame's reading gives, as the pattern detectors name them.
FRAME_KINDS = {"home": "home", "employer": "job", "job": "job", "manager": "job", "diet": "diet",
               "learning": "learning", "commute": "commute"}


def frame_detection(reading: Reading):
    """The reading as the pattern detectors' `Detection`, so the write policy supersedes on it."""
    from vaultmem.text.patterns import Detection

    kind = FRAME_KINDS.get(reading.attribute) or reading.attribute.split(":", 1)[0]
    named = reading.attribute in ("home", "employer", "manager") or reading.attribute.startswith("tool:")
    value = reading.value if reading.modality != "ended" else f"not {reading.value}"
    return Detection(kind, "fact", reading.attribute, value, 0.7, [reading.value] if named else [])


# --- what a memory speaks of, for the read-time net -------------------------------------------------

_SPEAKS = {
    "home": (_HOME_CUE, _ZH_HOME_CUE),
    "employer": (_WORK_CUE, _ZH_WORK_CUE),
    "job": (re.compile(rf"\b(?:promot\w+|title|role|position|job)\b|{_TITLE.pattern}", re.I),
            re.compile(r"升职|晋升|职位|岗位|转岗|工程师|经理|总监|主管|设计师|分析师|老师|医生|护士")),
    "manager": (re.compile(r"\b(?:manager|boss|supervisor|team lead|reports? to)\b", re.I),
                re.compile(r"领导|老板|经理|主管|上司|组长|leader")),
    "diet": (re.compile(r"\b(?:diet|vegan|vegetarian|keto|pescatarian|paleo|meat|dairy|gluten)\b", re.I),
             re.compile(r"饮食|吃素|素食|生酮|控糖|低脂|戒糖|断糖|吃肉")),
    "commute": (re.compile(r"\b(?:commut\w*|drive|driving|train|bus|subway|metro|bike|cycling|ferry|walk)\b", re.I),
                re.compile(r"通勤|开车|地铁|公交|骑车|电动车|单车|打车|班车|走路")),
    "learning": (re.compile(r"\b(?:learning|studying|lessons?|class(?:es)?|course)\b", re.I),
                 re.compile(r"学|课|班")),
}


TOPICS = tuple(_SPEAKS)


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
    found = {m.group(0).rstrip(".,'’").lower() for m in re.finditer(rf"{NAME_SPAN}", text)
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
