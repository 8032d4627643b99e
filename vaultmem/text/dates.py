"""Relative date expressions ("yesterday", "last week", 上周六, 两天前) resolved against a session time.

Memories outlive the conversation they came from, so "yesterday" must become a date.
Only the first expression in a text is resolved; vague ones ("recently") are left alone.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime, timedelta

WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August",
          "September", "October", "November", "December")
_EN_NUMBERS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
               "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12,
               "a couple of": 2, "couple of": 2, "a couple": 2, "a few": 3, "few": 3,
               "several": 3}
_ZH_DIGITS = {"零": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7,
              "八": 8, "九": 9, "十": 10, "几": 3}
_ZH_WEEKDAY = {"一": 0, "二": 1, "三": 2, "四": 3, "五": 4, "六": 5, "日": 6, "天": 6}
_VAGUE = {"a few", "few", "several", "几"}


@dataclass(frozen=True)
class DateMatch:
    """A resolved expression: `date` (the day, or the first day of a month/year), the span
    it occupied in the text, and how precise it is (day|week|weekend|month|year|approx)."""

    date: date
    start: int
    end: int
    granularity: str
    anchor: date
    direction: int = -1  # -1 before the anchor, 0 the anchor's own week, 1 after

    def label(self, lang: str = "en") -> str:
        """The bare absolute form: '2023-05-07', 'June 2023', '2023年6月'."""
        d, a = self.date.isoformat(), self.anchor.isoformat()
        zh = lang == "zh"
        if self.granularity == "month":
            return f"{self.date.year}年{self.date.month}月" if zh else f"{MONTHS[self.date.month - 1]} {self.date.year}"
        if self.granularity == "year":
            return f"{self.date.year}年" if zh else str(self.date.year)
        if self.granularity == "week":
            if zh:
                return {-1: f"{a}之前的一周", 0: f"{a}所在的一周", 1: f"{a}之后的一周"}[self.direction]
            return {-1: f"the week before {a}", 0: f"the week of {a}", 1: f"the week after {a}"}[self.direction]
        if self.granularity == "weekend":
            return f"{d}那个周末" if zh else f"the weekend of {d}"
        if self.granularity == "approx":
            return f"{d}前后" if zh else f"around {d}"
        return d

    def phrase(self, lang: str = "en") -> str:
        """The label as a sentence opener: 'On 2023-05-07', 'In June 2023', '2023年6月'."""
        label = self.label(lang)
        if lang == "zh":
            return label
        if self.granularity in ("month", "year", "week"):
            return f"In {label}"
        if self.granularity == "approx":
            return label[:1].upper() + label[1:]
        return f"On {label}"


def resolve_relative(text: str, anchor: datetime | date, prefer: str | None = None):
    """`(date, (start, end))` for the first date expression in `text`, or `(None, None)`.

    >>> resolve_relative("I went to a support group yesterday", datetime(2023, 5, 8, 13, 56))
    (datetime.date(2023, 5, 7), (26, 35))
    """
    match = find_date(text, anchor, prefer)
    if match is None:
        return None, None
    return match.date, (match.start, match.end)


def find_date(text: str, anchor: datetime | date, prefer: str | None = None) -> DateMatch | None:
    """The first date expression in `text` resolved against `anchor`, as a `DateMatch`.

    `prefer` ("past" or "future") settles bare weekdays ("on Saturday"); without it the
    tense of the text decides.
    """
    base = anchor.date() if isinstance(anchor, datetime) else anchor
    found = []
    for pattern, handler in _RULES:
        for m in pattern.finditer(text):
            resolved = handler(m, base, prefer or _tense(text))
            if resolved is not None:
                day, gran, direction = resolved
                found.append(DateMatch(day, m.start(), m.end(), gran, base, direction))
                break
    if not found:
        return None
    return min(found, key=lambda f: (f.start, -(f.end - f.start)))


def _tense(text: str) -> str:
    if re.search(r"\b(until|till|will|gonna|going to|planning|plan to|next|upcoming)\b|'ll\b"
                 r"|要|将|打算|准备|直到", text, re.I):
        return "future"
    if re.search(r"\b(went|was|were|did|had|got|came|saw|made|took|ran|met|bought|found|"
                 r"gave|felt|left|told|swam|ate|drove|flew|wrote|spoke|sang|slept|woke|rode|threw|forgot|"
                 r"began|became|brought|bought|caught|fell|won|lost|spent|sat|stood|\w+ed)\b|了|过", text, re.I):
        return "past"
    return "future"


def _number(word: str) -> int | None:
    word = word.lower().strip()
    if word.isdigit():
        return int(word)
    if word in _EN_NUMBERS:
        return _EN_NUMBERS[word]
    if word and all(ch in _ZH_DIGITS for ch in word):
        if word == "十":
            return 10
        if word.startswith("十"):
            return 10 + _ZH_DIGITS[word[1]]
        if len(word) == 2 and word[1] == "十":
            return _ZH_DIGITS[word[0]] * 10
        if len(word) == 3 and word[1] == "十":
            return _ZH_DIGITS[word[0]] * 10 + _ZH_DIGITS[word[2]]
        if len(word) == 1:
            return _ZH_DIGITS[word]
    return None


def _month_start(day: date, offset: int) -> date:
    index = day.year * 12 + day.month - 1 + offset
    return date(index // 12, index % 12 + 1, 1)


def _last_saturday(base: date) -> date:
    saturday = base - timedelta(days=(base.weekday() - 5) % 7)
    return saturday - timedelta(days=7) if base.weekday() >= 5 else saturday


def _shift(base: date, amount: int, unit: str):
    """`amount` units from base (negative: back), with the precision the unit deserves; None
    past the calendar's range ("the pyramids were built 5000 years ago" from 2023, "999999999
    days"): no day a memory holds."""
    try:
        return _shifted(base, amount, unit)
    except (ValueError, OverflowError):
        return None


def _shifted(base: date, amount: int, unit: str):
    unit = unit.rstrip("s")
    direction = 1 if amount > 0 else -1
    if unit in ("day", "天"):
        return base + timedelta(days=amount), "day", direction
    if unit in ("week", "周", "个星期", "星期", "个礼拜", "礼拜"):
        return base + timedelta(days=7 * amount), "approx", direction
    if unit == "weekend":
        if amount < 0:
            return _last_saturday(base) + timedelta(days=7 * (amount + 1)), "weekend", direction
        upcoming = base + timedelta(days=(5 - base.weekday()) % 7 or 7)
        return upcoming + timedelta(days=7 * (amount - 1)), "weekend", direction
    if unit in ("month", "个月", "月"):
        return _month_start(base, amount), "month", direction
    if unit in ("year", "年"):
        return date(base.year + amount, 1, 1), "year", direction
    return None


def _weekday(base: date, target: int, mode: str):
    if mode == "this":
        day = base - timedelta(days=base.weekday()) + timedelta(days=target)
        return day, "day", 0
    if mode == "past":
        back = (base.weekday() - target) % 7 or 7
        return base - timedelta(days=back), "day", -1
    ahead = (target - base.weekday()) % 7 or 7
    return base + timedelta(days=ahead), "day", 1


# --- English rules ---------------------------------------------------------------------

_NUM = r"(\d+|a couple of|couple of|a few|few|several|an?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)"
_UNIT = r"(days?|weeks?|weekends?|months?|years?)"
_WD = "(" + "|".join(WEEKDAYS) + ")"


def _en_fixed(m, base, _tense_hint):
    word = m.group(0).lower()
    offsets = {"the day before yesterday": -2, "the day after tomorrow": 2}
    if word in offsets:
        return base + timedelta(days=offsets[word]), "day", (1 if offsets[word] > 0 else -1)
    if word.startswith(("yesterday", "last night")):
        return base - timedelta(days=1), "day", -1
    if word.startswith("tomorrow"):
        return base + timedelta(days=1), "day", 1
    return base, "day", 0


def _en_ago(m, base, _):
    n, unit = _number(m.group(1)), m.group(2).lower()
    if n is None:
        return None
    shifted = _shift(base, -n, unit)
    if shifted and m.group(1).lower() in _VAGUE and shifted[1] == "day":
        shifted = (shifted[0], "approx", -1)
    return shifted


def _en_in(m, base, _):
    n, unit = _number(m.group(1)), m.group(2).lower()
    return None if n is None else _shift(base, n, unit)


def _en_period(m, base, _):
    which, unit = m.group(1).lower(), m.group(2).lower()
    step = -1 if which in ("last", "past", "previous") else (1 if which in ("next", "coming") else 0)
    if unit == "week":
        return base + timedelta(days=7 * step), "week", step
    if unit == "weekend":
        saturday = _last_saturday(base)
        if step >= 0:
            saturday += timedelta(days=7)
            if step == 0 and base.weekday() >= 5:
                saturday -= timedelta(days=7)
            if step == 1 and base.weekday() >= 5:
                saturday += timedelta(days=7)
        return saturday, "weekend", step
    if unit == "month":
        return _month_start(base, step), "month", step
    return date(base.year + step, 1, 1), "year", step


# Two weekdays joined ("Tuesday and Thursday evenings", "Tuesday to Thursday", 周二到周四) or a
# weekday's evenings are a schedule that recurs, not one day.
_EN_WD_SPAN = r"(?:mon|tues?|wed(?:nes)?|thu(?:rs?)?|fri|sat(?:ur)?|sun)(?:day)?s?\b"
_EN_WD_JOIN = r"\s*(?:and|to|or|through|thru|till|until|&|-|–|/|,)\s*"
_ZH_WD_SPAN = r"(?:周|星期|礼拜)[一二三四五六日天]"
_ZH_WD_JOIN = r"\s*(?:到|至|和|、|跟|或|-|–|~|～)\s*"


def _recurring_weekday(m, chinese: bool) -> bool:
    before, after = m.string[:m.start()], m.string[m.end():]
    span, join = (_ZH_WD_SPAN, _ZH_WD_JOIN) if chinese else (_EN_WD_SPAN, _EN_WD_JOIN)
    flags = 0 if chinese else re.I
    return bool(re.match(join + span, after, flags) or re.search(span + join + "$", before, flags)
                or (not chinese and re.match(r"\s+(?:evenings|mornings|nights|afternoons)\b", after, re.I)))


def _en_weekday(m, base, tense):
    if _recurring_weekday(m, chinese=False):
        return None
    lead = (m.group(1) or "").lower().strip()
    target = next(i for i, day in enumerate(WEEKDAYS) if day.startswith(m.group(2).lower()[:3]))
    if lead in ("last", "this past", "past"):
        return _weekday(base, target, "past")
    if lead in ("next", "this coming", "coming"):
        return _weekday(base, target, "future")
    if lead == "this":
        return _weekday(base, target, "this")
    return _weekday(base, target, tense)


def _en_month_day(m, base, tense):
    groups = m.groupdict()
    month = MONTHS.index(groups["month"]) + 1
    year = int(groups["year"]) if groups.get("year") else base.year
    day = int(groups["day"]) if groups.get("day") else None
    try:
        resolved = date(year, month, day or 1)
    except ValueError:
        return None
    lead = (groups.get("lead") or "").strip().lower()
    if not groups.get("year"):
        if lead == "last" and resolved >= base.replace(day=1):
            resolved = resolved.replace(year=year - 1)
        elif lead == "next" and resolved <= base:
            resolved = resolved.replace(year=year + 1)
        elif lead not in ("last", "next") and resolved > base + timedelta(days=60) and tense == "past":
            resolved = resolved.replace(year=year - 1)  # "on May 3" said in August: this past May
        elif lead == "in" and tense == "future" and resolved < base.replace(day=1):
            resolved = resolved.replace(year=year + 1)  # "expires in March, I'll renew it" in September
    return resolved, ("day" if day else "month"), (-1 if resolved < base else 1)


def _en_iso(m, base, _):
    try:
        resolved = date.fromisoformat(m.group(0)[-10:])
    except ValueError:
        return None
    return resolved, "day", (-1 if resolved < base else 1)


_MONTH_RE = "(?P<month>" + "|".join(MONTHS) + ")"
_EN_RULES = [
    (r"\b(?:the day before yesterday|the day after tomorrow|yesterday(?: (?:morning|afternoon|evening))?"
     r"|last night|tomorrow(?: (?:morning|afternoon|evening|night))?|today|tonight"
     r"|this (?:morning|afternoon|evening))\b", _en_fixed),
    (rf"\b{_NUM} {_UNIT} ago\b", _en_ago),
    (rf"\b(?:in|within) {_NUM} {_UNIT}\b", _en_in),
    (r"\b(last|past|previous|this|next|coming) (week|weekend|month|year)\b", _en_period),
    # "every Tuesday" recurs: it names no one day
    (rf"(?<!\bevery )(?<!\beach )\b(?:(last|next|this|this past|this coming|on) )?{_WD}\b(?!s)", _en_weekday),
    (r"\b(?i:(last|next|this|this past|this coming|on) )(Mon|Tue|Tues|Wed|Thu|Thur|Thurs|Fri|Sat|Sun)\b\.?", _en_weekday),
    (rf"(?P<lead>\b(?:on|in|last|next) )?\b(?P<day>\d{{1,2}})(?:st|nd|rd|th)? (?:of )?{_MONTH_RE}"
     rf"(?:,? (?P<year>\d{{4}}))?\b", _en_month_day),
    (rf"(?P<lead>\b(?:on|in|last|next) )?\b{_MONTH_RE} (?P<day>\d{{1,2}})(?:st|nd|rd|th)?"
     rf"(?:,? (?P<year>\d{{4}}))?\b", _en_month_day),
    (rf"(?P<lead>\b(?:in|last|next|this) ){_MONTH_RE}(?:,? (?P<year>\d{{4}}))?\b", _en_month_day),
    (r"(?:\bon )?\b(?:19|20)\d{2}-\d{2}-\d{2}\b", _en_iso),
]


# --- Chinese rules ---------------------------------------------------------------------

def _zh_fixed(m, base, _):
    offsets = {"大前天": -3, "前天": -2, "昨": -1, "今": 0, "明": 1, "后天": 2, "大后天": 3}
    word = m.group(0)
    for key in ("大前天", "大后天", "前天", "后天"):
        if word == key:
            n = offsets[key]
            return base + timedelta(days=n), "day", (1 if n > 0 else -1)
    n = offsets[word[0]]
    return base + timedelta(days=n), "day", (0 if n == 0 else (1 if n > 0 else -1))


def _zh_week(m, base, _):
    which, day = m.group(1), m.group(2)
    step = {"上": -1, "这": 0, "本": 0, "下": 1}[which]
    if day in (None, ""):
        return base + timedelta(days=7 * step), "week", step
    if day == "末":
        saturday = base - timedelta(days=base.weekday()) + timedelta(days=5 + 7 * step)
        return saturday, "weekend", step
    monday = base - timedelta(days=base.weekday()) + timedelta(days=7 * step)
    return monday + timedelta(days=_ZH_WEEKDAY[day]), "day", step


def _zh_bare_weekday(m, base, tense):
    if _recurring_weekday(m, chinese=True):
        return None
    return _weekday(base, _ZH_WEEKDAY[m.group(1)], tense)


def _zh_month(m, base, _):
    step = {"上": -1, "这": 0, "本": 0, "下": 1}[m.group(1)]
    return _month_start(base, step), "month", step


def _zh_month_of_day(m, base, _):
    """"下个月10号": that day of the month before or after this one."""
    step = {"上": -1, "这": 0, "本": 0, "下": 1}[m.group(1)]
    try:
        return _month_start(base, step).replace(day=_number(m.group(2))), "day", step
    except (TypeError, ValueError):
        return None


def _zh_year(m, base, _):
    step = {"前": -2, "去": -1, "今": 0, "明": 1, "后": 2}[m.group(1)]
    return date(base.year + step, 1, 1), "year", (0 if step == 0 else (1 if step > 0 else -1))


def _zh_month_day(m, base, tense):
    """"11月22号": this year's, or last year's when that is more than 60 days ahead and
    told in the past ("5月3号去了北京" said in August is this past May)."""
    month, day = _number(m.group(1)), _number(m.group(2))
    try:
        resolved = date(base.year, month, day)
    except (TypeError, ValueError):
        return None
    if resolved > base + timedelta(days=60) and tense == "past":
        resolved = resolved.replace(year=base.year - 1)
    return resolved, "day", (-1 if resolved < base else 1)


def _zh_relative(m, base, _):
    n = _number(m.group(1))
    if n is None:
        return None
    sign = -1 if m.group(3) in ("前", "以前", "之前") else 1
    shifted = _shift(base, sign * n, m.group(2))
    if shifted and m.group(1) == "几" and shifted[1] == "day":
        shifted = (shifted[0], "approx", sign)
    return shifted


_ZH_NUM = "([0-9一二两三四五六七八九十几]+)"
_ZH_RULES = [
    (r"大前天|大后天|前天|后天|昨天|昨晚|昨日|今天|今晚|今早|今日|明天|明早|明晚|明日", _zh_fixed),
    (r"(上|这|本|下)(?:个)?(?:周|星期|礼拜)([一二三四五六日天末])?", _zh_week),
    (r"(?<![上这本下个每])(?:周|星期|礼拜)([一二三四五六日天])", _zh_bare_weekday),  # 每周三 recurs
    (_ZH_NUM + r"月" + _ZH_NUM + r"[日号]", _zh_month_day),
    (r"(上|这|本|下)个?月" + _ZH_NUM + r"[号日]", _zh_month_of_day),
    (r"(上|这|本|下)个?月", _zh_month),
    (r"(前|去|今|明|后)年(?![0-9一二两三四五六七八九十几]+(?:岁|周岁))", _zh_year),  # 今年三岁 is an age
    (_ZH_NUM + r"(天|周|个星期|个礼拜|个月|年)(以前|之前|前|以后|之后|后)", _zh_relative),
]

_CASED = ("(?P<month>", "(Mon|Tue")  # month names and weekday abbreviations: "may", "sat" are words
_RULES = [(re.compile(p, 0 if any(c in p for c in _CASED) else re.I), handler)
          for p, handler in _EN_RULES] + [(re.compile(p), handler) for p, handler in _ZH_RULES]


def says_when(text: str) -> bool:
    """Whether `text` holds a date expression of any kind ("yesterday", "5月28号",
    "last Saturday", "2023-05-08"), without resolving it: cheaper than `find_date`."""
    return any(pattern.search(text) for pattern, _ in _RULES)
