"""Corrections of one detail: "sorry, I meant Thursday not Tuesday", "wait, no, it's
December 17", "不对，我是说11月22号".

People fix a slip in the next turn by naming only the new value. Such a turn is not a memory
of its own; it changes one detail of something said just before. `find_correction` reads
the new value (and the old one, when the turn names it) from the turn; `apply_correction`
rewrites the statement it corrects with the new value, so the corrected memory keeps
everything else the old one said (the write policy then supersedes the old note with it).

    >>> c = find_correction("sorry, I meant Thursday not Tuesday. swim is thursdays.", False)
    >>> c.new, c.old
    ('Thursday', 'Tuesday')
    >>> apply_correction("Kabir's swim lessons are Tuesday evenings.", c)
    "Kabir's swim lessons are Thursday evenings."
    >>> apply_correction("On 2026-12-14, Yara's school play.", find_correction("wait, no, it's December 17", False))
    "On 2026-12-17, Yara's school play."
    >>> apply_correction("用户弟弟11月8号在泉州结婚。", find_correction("不对，我是说11月22号，8号是拍婚纱照的日子", True))
    '用户弟弟11月22号在泉州结婚。'
    >>> apply_correction("The user's son Leo is six and loves dinosaurs.",
    ...                  find_correction("sorry, his name is Theo, not Leo", False))
    "The user's son Theo is six and loves dinosaurs."
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from vaultmem.text.dates import MONTHS, WEEKDAYS
from vaultmem.text.script import is_chinese

_MONTH = r"(?:%s)" % "|".join(sorted({m for m in MONTHS} | {m[:3] for m in MONTHS}, key=len, reverse=True))
_WEEKDAY = r"(?:%s)s?" % "|".join(d.capitalize() for d in WEEKDAYS)
# Each kind of detail a slip can be about, most specific first.
KINDS = (
    ("iso", re.compile(r"\b\d{4}-\d{2}-\d{2}\b")),
    ("month_day", re.compile(rf"\b{_MONTH}\.? \d{{1,2}}(?:st|nd|rd|th)?\b|\b\d{{1,2}}(?:st|nd|rd|th)? of {_MONTH}\b")),
    ("zh_date", re.compile(r"\d{1,2}月\d{1,2}[号日]")),
    ("weekday", re.compile(rf"\b{_WEEKDAY}\b", re.I)),
    ("time", re.compile(r"\b\d{1,2}(?::\d{2})?\s?(?:am|pm)\b|\b\d{1,2}:\d{2}\b|\d{1,2}点(?:半|\d{1,2}分)?", re.I)),
)
_MARKER = re.compile(
    r"^(?:(?:wait|no|oh|oops|hmm|sorry|my bad|ah|actually|correction|scratch that|"
    r"I misspoke|I was wrong)[,.!:;]*\s+)+(?:(?:I meant|I mean|it's|it is|it was|that's|make that)\b[,:]?\s*)?"
    r"|^(?:I meant|I mean)\b[,:]?\s*", re.I)
_ZH_MARKER = re.compile(r"^(?:不对|不是|说错了|我说错了|记错了|我记错了|更正一下|纠正一下|抱歉|不好意思)[，,。！!\s]*"
                        r"(?:我是说|我的意思是|应该是|是)?|^(?:我是说|我的意思是)")


@dataclass(frozen=True)
class Correction:
    kind: str          # one of KINDS' names
    new: str
    old: str | None    # named in the turn ("not Tuesday"), else None


def find_correction(text: str, chinese: bool) -> Correction | None:
    """The detail a turn corrects, when it opens with a correction and names a new date,
    weekday or time within its first sentence; else None."""
    text = " ".join(text.split())
    marker = (_ZH_MARKER if chinese else _MARKER).match(text)
    if not marker or not marker.group(0).strip():
        return None
    head = re.split(r"(?<=[.!?。！？])\s*", text[marker.end():], maxsplit=1)[0]
    for kind, pattern in KINDS:
        found = pattern.search(head)
        if found and found.start() <= 4:  # the new value leads what follows the marker
            old = re.search(rf"\bnot (?:on |at )?({pattern.pattern})", head[found.end():], re.I)
            return Correction(kind, found.group(0), old.group(1) if old else None)
    # Any one word swapped for another, both named: "his name is Theo, not Leo", "是Y不是X"
    if chinese:
        swap = re.search(r"不是([\u4e00-\u9fffA-Za-z0-9]{1,8}?)[，,]?(?:而)?是([\u4e00-\u9fffA-Za-z0-9]{1,8}?)(?=[，。！,.!]|$)", head)
        if swap:
            return Correction("word", swap.group(2), swap.group(1))
        swap = re.search(r"(?:是|叫)([\u4e00-\u9fffA-Za-z0-9]{1,8}?)[，,]?(?:不是|不叫)([\u4e00-\u9fffA-Za-z0-9]{1,8}?)(?=[，。！,.!]|$)", head)
        if swap:
            return Correction("word", swap.group(1), swap.group(2))
        return None
    swap = re.search(r"\b([\w'-]+),? not ([\w'-]+)\b", head)
    if swap and swap.group(1).lower() not in _NOT_A_VALUE and swap.group(2).lower() not in _NOT_A_VALUE:
        return Correction("word", swap.group(1), swap.group(2))
    return None


_NOT_A_VALUE = {"is", "it's", "was", "that", "this", "and", "but", "or", "i", "me", "just", "do", "does",
                "did", "are", "were", "be", "so", "really", "actually", "definitely", "certainly",
                "the", "a", "an", "one", "my", "his", "her", "their", "our", "your", "to", "at", "on", "in"}


def apply_correction(statement: str, correction: Correction) -> str | None:
    """`statement` with the corrected detail in place of the old one, or None when it holds
    no detail of that kind to correct (it is not what the correction is about)."""
    if correction.kind == "word":
        old = re.escape(correction.old or "")
        found = re.search(old if is_chinese(correction.old or "") else rf"\b{old}\b", statement)
        if not old or not found:
            return None
        return statement[:found.start()] + correction.new + statement[found.end():]
    for kind, pattern in KINDS:
        if kind != correction.kind and not (kind == "iso" and correction.kind == "month_day"):
            continue
        values = [m for m in pattern.finditer(statement)
                  if m.group(0).lower().rstrip("s") != correction.new.lower().rstrip("s")]
        if correction.old:
            values = [m for m in values if m.group(0).lower().rstrip("s") == correction.old.lower().rstrip("s")]
        if not values:
            continue
        found = values[0]
        new = _in_form_of(found.group(0), kind, correction)
        if new is None:
            continue
        return statement[:found.start()] + new + statement[found.end():]
    return None


def _in_form_of(old: str, kind: str, correction: Correction) -> str | None:
    """The new value written the way the statement wrote the old one."""
    new = correction.new
    if kind == "iso" and correction.kind == "month_day":
        month = re.search(_MONTH, new)
        day = re.search(r"\d{1,2}", new)
        if not (month and day):
            return None
        number = next(i for i, name in enumerate(MONTHS, 1) if name.startswith(month.group(0)[:3]))
        return f"{old[:4]}-{number:02d}-{int(day.group(0)):02d}"
    if kind == "weekday":  # "Tuesdays" -> "Thursdays", "tuesday" -> "thursday"
        day = re.sub(r"s$", "", new, flags=re.I)
        day = day.capitalize() if old[:1].isupper() else day.lower()
        return day + ("s" if old.lower().endswith("s") else "")
    return new
