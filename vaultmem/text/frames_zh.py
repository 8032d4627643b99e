"""The frames of a Chinese sentence: one reader per attribute (home, employer, job, manager,
tool, diet, learning, commute, and 「我的X是Y」 for any other), in the order `frames.read`
tries them (`ZH_FRAMES`).
"""

from __future__ import annotations

import re

from vaultmem.text.frame_cues import ZH_HOME_CUE, ZH_WORK_CUE
from vaultmem.text.modality import Reading, modality, reading, subject_zh
from vaultmem.text.values import org_zh, place_zh, tools_in

_ZH_TITLE = re.compile(r"(?:升(?:职)?(?:为|成|到了?|做了?)|晋升为|升任|当上了?|转岗(?:成|为|做)|现在是|做|当|担任|任)"
                       r"(?:了)?(?:一名|一个|个)?([\u4e00-\u9fffA-Za-z]{1,8}?(?:工程师|经理|总监|主管|总|负责人|设计师|"
                       r"分析师|老师|医生|护士|律师|会计|策划|运营|产品|组长|主任|专员|顾问|架构师|研究员|店长|总裁|"
                       r"总经理|副总|合伙人|科长|处长|部长|校长))")
_ZH_MANAGER = re.compile(r"(?:新)?(?:领导|老板|经理|主管|上司|组长|leader)(?:换成了?|变成了?|是|叫|现在是)([\u4e00-\u9fffA-Za-z]{2,4}?)"
                         r"(?=[，。！了,.!\s]|$)")
_ZH_COMMUTE = re.compile(r"(开车|坐地铁|坐公交|骑车|骑自行车|骑电动车|走路|打车|坐班车)(?:去|到)?(?:上班|通勤|公司)")
_ZH_LANGS = "日语|西班牙语|法语|德语|意大利语|韩语|英语|葡萄牙语|俄语|阿拉伯语|粤语"
_LEARN_ZH = re.compile(rf"(?:学|在学|学习|报了|开始学|改学|换成学)(?:了)?(?:一门)?({_ZH_LANGS})")
_ZH_DIET = re.compile(r"(生酮|素食|吃素|纯素|低碳水?|轻断食|地中海饮食|控糖|低脂|戒糖|断糖|无麸质)")
_ZH_POSSESSIVE_IS = re.compile(
    r"(?:(?P<mine>我(?:的|们的|家)?)|(?P<owner>[\u4e00-\u9fff]{1,3})的|(?P<bare>^|[，,。！!]\s*))(?:新)?"
    r"(?P<thing>班主任|老师|医生|主治医生|兽医|学校|幼儿园|班|专业|导师|教练|房东|领导|上司|对象|男朋友|女朋友|老公|老婆|"
    r"未婚夫|未婚妻|手机|电脑|车|车子|宠物医院|医院|健身房|套餐|英文名|名字)"
    r"(?:现在|已经|终于)?(?:换成了?|改成了?|变成了?|是|叫|在)\s*"
    r"(?P<value>(?:Mr|Mrs|Ms|Dr)\.?\s+[A-Z][A-Za-z-]+|[A-Z][A-Za-z-]*(?:\s+[A-Z][A-Za-z-]*)*|[\u4e00-\u9fffA-Za-z0-9.]{1,12}?)"
    r"(?=[，。！？,.!?；;\s]|$|了)")


def _zh_possessive(s: str) -> Reading | None:
    m = _ZH_POSSESSIVE_IS.search(s)
    if not m or re.match(r"(?:谁|什么|哪|多少|几)", m.group("value")):
        return None
    subject = "user" if m.group("mine") is not None or m.group("bare") is not None else m.group("owner")
    if subject in ("他", "她", "你", "谁"):
        return None
    return Reading(m.group("thing"), m.group("value").strip(), modality(s, True, m.group("value")), subject)


def _zh_home(s: str) -> Reading | None:
    if not ZH_HOME_CUE.search(s) or re.search(r"出差|旅游|旅行|玩几天|度假", s):
        return None
    cue = ZH_HOME_CUE.search(s)
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
    return reading("home", place, s, True)


_ZH_NOT_PLACE = re.compile(r"这|那|哪|附近|家里|公司|宿舍|学校|年|月|天|久|一起|过去|过来|回来|回去|进去|出去|下来|不|没|得|多|好|很|挺|"
                           r"一个|两个|房子|小区|楼|层|套|间|屋")


def _zh_employer(s: str) -> Reading | None:
    if not ZH_WORK_CUE.search(s):
        return None
    org = org_zh(s)
    if not org:
        return None
    if re.search(r"离职|辞职|被裁|离开了", s) and not re.search(r"入职|加入|跳槽", s):
        found = reading("employer", org, s, True)
        return Reading("employer", org, "ended", found.subject) if found.modality == "fact" else found
    return reading("employer", org, s, True)


def _zh_job(s: str) -> Reading | None:
    m = _ZH_TITLE.search(s)
    return reading("job", m.group(1), s, True) if m else None


def _zh_manager(s: str) -> Reading | None:
    m = _ZH_MANAGER.search(s)
    return Reading("manager", m.group(1), modality(s, True, m.group(1))) if m else None


def _zh_tool(s: str) -> Reading | None:
    found = tools_in(s)
    if not found or not re.search(r"用|换|改|转|切|买了|入手", s) or not re.search(r"我(?!们)", s):
        return None
    m = re.search(r"(?:换成|换到|换了|改用|转用|切到|切换到|迁到|现在用|主要用|只用|都用|在用|买了|入手了?)(?:了)?\s*([A-Za-z][\w.+#-]*(?:\s[A-Z][\w]*)?|[\u4e00-\u9fff]{2,4})", s)
    if not m:
        return None
    for tool, kind in found:
        if m.group(1).lower().startswith(tool.lower()):
            return reading(f"tool:{kind}", tool, s, True)
    return None


def _zh_diet(s: str) -> Reading | None:
    m = _ZH_DIET.search(s)
    if not m:
        return None
    if re.search(rf"(?:不再|不|停了|放弃了?|结束了?)[^，。]{{0,4}}{m.group(1)}|{m.group(1)}[^，。]{{0,4}}(?:停了|不做了|放弃了|结束了|戒了)", s):
        return Reading("diet", m.group(1), "ended", subject_zh(s))
    return reading("diet", m.group(1), s, True)


def _zh_learning(s: str) -> Reading | None:
    m = _LEARN_ZH.search(s)
    return reading("learning", m.group(1), s, True) if m else None


def _zh_commute(s: str) -> Reading | None:
    m = _ZH_COMMUTE.search(s)
    return reading("commute", m.group(1), s, True) if m else None


ZH_FRAMES = (_zh_manager, _zh_possessive, _zh_home, _zh_employer, _zh_job, _zh_tool, _zh_diet, _zh_learning,
             _zh_commute)
