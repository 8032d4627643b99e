"""Values known by what they open, answer or identify: access codes, security answers, identifiers.

Digits said after what they open ("the garage keypad is 4471", 车库门禁 4471#) or near a code's
marks, a dial lock's combination, the answer to a security question, and whatever follows an
identifier's name (member ID, passport number, verification code, 身份证号).
"""

from __future__ import annotations

import re
from typing import Iterator

from vaultmem.policy.credential_values import Span

# ---- access codes said without the word "code", and security-question answers -------------------
# "the garage keypad is 4471", "the gate is 4471#", "door at the office: 8812*", "bike lock is
# 0729", 车库门禁 4471#: digits right after what they open. A year-shaped number (19xx, 20xx)
# or a short one needs a code's own marks (#, *, "punch in", "disarm", "enter"), so "the
# garage was built in 1994" and "locker 12" stay as they are.

_OPENS = (r"(?:garage|gate|front door|back door|side door|door|keypad|alarm|lock\s?box|key\s?safe|key\s?box|safe|"
          r"locker|padlock|bike lock|combination lock|lock|intercom|buzzer|entry|building|storage unit|shed|"
          r"mailbox|gym locker|panel)")
_ACCESS = re.compile(r"(?i)\b" + _OPENS + r"\b(?P<gap>(?:[ \t]+(?!(?:and|but|because|then)\b)[^\s.;!?,:=\d]+){0,5}?)"
                     r"(?:\s*(?:[:=：]|is|'s|’s|uses|takes|opens with|was changed to|changed to|now)\s*|\s+)"
                     r"(?:(?:now|still|just|the|same|new)\s+)*(?P<v>\d{3,10}[#*]?|[#*]\d{3,10}|\d{1,3}(?:-\d{1,3}){2,4})"
                     r"(?![\d:./%]|\s*(?:m|km|ft|feet|meters?|metres?|minutes?|mins?|hours?|am|pm|people|years?|"
                     r"kg|lbs?|sq|square|percent|dollars?|euros?|yuan|元|块)\b)")
_ZH_OPENS = r"(?:车库|大门|门禁|单元门|楼下门|入户门|房门|家门|门锁|密码锁|指纹锁|保险柜|保险箱|储物柜|柜子|自行车锁|车锁|报警器|电子锁|快递柜|信箱|智能锁)"
_ZH_ACCESS = re.compile(_ZH_OPENS + r"(?:的)?(?:密码|码|号码)?[^\n。！？；，,\d]{0,6}?(?:是|为|：|:|=|\s)*\s*"
                        r"(?P<v>\d{3,10}[#*＃]?|[#*]\d{3,10})(?![\d:./%]|\s*(?:米|分钟|小时|点|号楼|楼|层|岁|年|元|块|个|人|平))")
_CODE_MARKS = re.compile(r"(?i)[#*]|\b(?:punch|enter|type|key in|disarm|arm|unlock|open|code|combo|combination)\b|"
                         r"输入|按|解锁|开门|密码")


_ACCESS_OBJECT = re.compile(r"(?i)\b(?:garage|gate|door|keypad|alarm|lock\s?box|key\s?safe|safe|locker|padlock|lock|"
                            r"intercom|buzzer|entrance|entry|bin store|storage|shed|mailbox|panel|building)\b|"
                            r"车库|大门|门禁|单元门|门锁|密码锁|号码锁|指纹锁|电子锁|智能锁|保险柜|保险箱|储物柜|柜子|车锁|报警器|快递柜|信箱|"
                            r"报警|警报|撤防|布防|挂锁|衣柜|更衣柜|行李箱|锁")
_CODE_NUMBER = re.compile(r"(?<![A-Za-z0-9_.:/-])(?P<v>\d{4,10}[#*＃]?|[#*]\d{3,10}|\d{1,3}(?:[ -]\d{1,3}){2,5}(?![ -]?\d))(?![\w.:/%-]|\s*(?:m|km|ft|feet|metres?|meters?|"
                          r"minutes?|mins?|hours?|am|pm|people|years?|kg|lbs?|sq|percent|dollars?|euros?|yuan|"
                          r"米|分钟|小时|点|号楼|楼|层|岁|年|元|块|个|人|平|月|日|号)\b)")
_SENTENCE_END = re.compile(r"[.!?。！？\n](?=\s|$)|[。！？\n]")


# A dial lock's combination said as turns: "22 right, 8 left, 31 right", 右转 15 左转 27 右转 4,
# 左三圈到 18，右两圈到 42
_COMBINATION = re.compile(r"(?i)(?P<v>(?:\d{1,2}\s*(?:right|left|R|L)\b[,; ]*){3,}|"
                          r"(?:(?:right|left)\s+(?:to\s+)?\d{1,2}\b[,; ]*){3,}|"
                          r"(?:[左右](?:转|[一二两三四五六七八九\d]+圈)?(?:到)?\s*\d{1,2}[，,、 ]*){2,})")


def access_codes(text: str) -> Iterator[Span]:
    """Also: an access object and, later in its sentence, a number shaped like a code that a
    code's marks or words of setting one surround ("the after-hours entrance wants a code,
    9931", "the garage keypad … so I changed it to 90817", 储物柜是那种号码锁，我设了4082)."""
    for obj in _ACCESS_OBJECT.finditer(text):
        end = _SENTENCE_END.search(text, obj.end())
        window_end = end.start() if end else len(text)
        starts = [m.end() for m in _SENTENCE_END.finditer(text, 0, obj.start())]
        begin = starts[-1] if starts else 0
        if re.search(r"(?i)\benter\b|\btype\b|\bpunch\b|输入|按", text[begin:obj.start()]):
            window_start = begin   # "进门要在30秒内输入 8864 解除警报": the code before what it opens
        else:
            window_start = obj.end()
        window = text[window_start:window_end]
        if not re.search(r"(?i)\bcode\b|\bcombo\b|\bcombination\b|\bpin\b|changed (?:it )?to|set (?:it )?to|reset|"
                         r"\bis set\b|\benter\b|\btype\b|\bdisarm|[#*]|密码|码|改成|设了|设成|设置|输入|输|撤防|解除|挂锁|柜",
                         text[max(0, obj.start() - 30):window_end]):
            continue
        for m in _CODE_NUMBER.finditer(window):
            digits = re.sub(r"\D", "", m.group("v"))
            if len(digits) < 3:
                continue
            if re.fullmatch(r"(?:19|20)\d\d", digits) and not re.search(r"[#*]", m.group("v")):
                continue
            yield "password", window_start + m.start("v"), window_start + m.end("v")
    for m in _COMBINATION.finditer(text):
        yield "password", m.start("v"), m.end("v")
    for pattern in (_ACCESS, _ZH_ACCESS):
        for m in pattern.finditer(text):
            value = m.group("v")
            digits = re.sub(r"\D", "", value)
            year_like = bool(re.fullmatch(r"(?:19|20)\d\d", digits))
            labelled = bool(re.search(r"[:=：]\s*[#*]?\d", m.group(0)))
            if (year_like or len(digits) < 4) and not labelled \
                    and not _CODE_MARKS.search(value + " " + text[max(0, m.start() - 40):m.end() + 40]):
                continue
            yield "password", m.start("v"), m.end("v")


_SECURITY = re.compile(r"(?i)\b(?:security|secret|memorable|verification|challenge|recovery)\s+(?:question|answer|word|phrase|q)s?\b|"
                       r"\bmother'?s maiden name\b|\bmaiden name\b|密保(?:问题|答案)?|安全问题|安全提示问题|验证问题|预留问题")


_ANSWER_GIVEN = re.compile(
    r"(?i)(?:\b(?:called|named|answer(?:ed)?(?:\s+is|:)?|is|was|it's|set (?:it )?to|put)\s+|[—:：=]\s*|"
    r"(?<=[,，、])\s*(?-i:(?=[A-Z][\w'’-]*\s+[A-Z]))|"   # "the street I grew up on, Whitcombe Lane": a name after a comma
    r"(?:填的|填了|写的|写了|设的|设了|答案是|答案为|答案写的|是|叫)\s*)"
    r"(?P<v>\d{4,12}|[A-Z][\w'’-]*(?:\s+[A-Z][\w'’-]*){0,3}(?:\s*[\u4e00-\u9fff]{2,6})?|"
    r"(?<=[的了是为叫])\s*[\u4e00-\u9fff]{2,8}(?=[，。！？,.!?\s]|$))")
_NOT_ANSWERS = frozenset("""I I'm The A An It Is Was My Gmail Google Yahoo Apple Microsoft Facebook Instagram Amazon
Omron Chase Visa Mastercard Amex PayPal Venmo Zelle What Which Who How Kind Like Also Just Anyway""".split())


def security_answers(text: str) -> Iterator[Span]:
    """The answer to a security question, anywhere in a message that speaks of one: "my bank's
    security question is my first school, it's Hillcrest Elementary", "my first pet was a
    hamster called Nibbles McGee and that's the answer to every security question", 密保问题
    …我填的 19620514. What such a message names after "called", "is", "—" or 填的 goes."""
    if not _SECURITY.search(text) and not re.search(r"(?i)security (?:q|answer)|recovery question|找回问题", text):
        return
    for m in _ANSWER_GIVEN.finditer(text):
        value = m.group("v").strip()
        if not value or value.split()[0] in _NOT_ANSWERS or len(value) < (2 if re.match(r"[\u4e00-\u9fff]", value) else 3):
            continue
        if re.fullmatch(r"[\u4e00-\u9fff]+", value) and re.search(r"问题|密码|答案|什么|哪|重置|登录|登不上|不对", value):
            continue
        start = m.start("v") + m.group("v").find(value)
        yield "secret-answer", start, start + len(value)


# ---- identifiers named by what they are --------------------------------------------------------
# "member ID XGH448219077", "microchip number 985112004567321", "confirmation code K7QXRM",
# "verification code 318846", 身份证号110105199203154421 (with or without a valid checksum):
# whatever follows such a name, shaped like an identifier (digits, or letters with digits),
# is the person's and stays out.

_ID_NAME = re.compile(
    r"(?i)\b(?:member(?:ship)?\s*(?:id|number|no\.?|#)|policy\s*(?:number|no\.?|#)|insurance\s+(?:id|number|card)|"
    r"account\s*(?:number|no\.?|#)|(?:micro)?chip\s*(?:number|no\.?|id)?|confirmation\s*code|"
    r"booking\s*(?:reference|ref|code|number)|reservation\s*(?:code|number)|pnr|record\s+locator|"
    r"verification\s*code|one[- ]time\s*(?:code|password|passcode)|otp|2fa\s*code|security\s*code|"
    r"passport\s*(?:number|no\.?)|license\s*(?:number|no\.?)|licence\s*(?:number|no\.?)|"
    r"cvv2?|cvc|cid|security\s*code|one[- ]time\s*pass\s*code|passcode|authenticator(?:\s+(?:code|shows|says))?|"
    r"steam\s*guard|backup\s*codes?|recovery\s*(?:codes?|keys?)|"
    r"(?:nhs|ssn|sin|tax|patient|customer|student|employee|staff)\s*(?:id|number|no\.?)|"
    r"(?:setup|set-up|activation|access|login|sign-in|pairing|unlock|enrol?ment|registration)\s*code)\b|"
    r"(?i:policy|member(?:ship)?|account|passport|insurance|card)\s*(?:号码|号)|"
    r"身份证(?:号码|号)?|证件号(?:码)?|护照号(?:码)?|会员(?:号|卡号)|保单号|医保(?:卡)?号|社保(?:卡)?号|学号|工号|"
    r"验证码|动态码|校验码|确认码|芯片号|驾驶证号|安全码|恢复代码|恢复码|备用验证码|备用码|账号|卡号|户号")
_ID_VALUE = re.compile(r"(?<![A-Za-z0-9_-])(?P<v>\d{2,6}(?: \d{2,6}){1,5}(?![ ]?\d)|"
                       r"(?=[A-Za-z0-9-]*[0-9A-Z])[A-Za-z0-9][A-Za-z0-9-]{2,40}[A-Za-z0-9])(?![A-Za-z0-9_-])")


def identifiers(text: str) -> Iterator[Span]:
    for key in _ID_NAME.finditer(text):
        end = _SENTENCE_END.search(text, key.end())
        window_end = min(end.start() if end else len(text), key.end() + 60)
        m = _ID_VALUE.search(text, key.end(), window_end)
        if m is None:
            continue
        value = m.group("v")
        digits = sum(c.isdigit() for c in value)
        code_like = len(value) >= 5 and digits >= 1 and not value.islower()
        short_code = re.fullmatch(r"\d{3,4}", value) and re.search(r"(?i)cvv|cvc|cid|security code|安全码", key.group(0))
        if not (digits >= 4 or code_like or short_code) or re.fullmatch(r"(?:19|20)\d\d(?:-\d{1,2}){0,2}", value):
            continue   # a year or date, a word: not an identifier
        yield "identifier", m.start("v"), m.end("v")
