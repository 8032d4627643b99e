"""The statement and title a slot reading makes: what a person would have written down.

"ugh the commute from the new place in Oakland is brutal" reads as `home` = Oakland; the
memory says "The user lives in Oakland." under the title "Lives in Oakland", not the chat
around it (which stays in the session note, where search still finds it).

    >>> from vaultmem.text.modality import Reading
    >>> frame_statement(Reading("home", "Oakland"), "the user", False, None)
    ('The user lives in Oakland.', 'Lives in Oakland')
    >>> frame_statement(Reading("employer", "明帆物流"), "用户", True, None)
    ('用户在明帆物流工作。', '在明帆物流工作')
"""

from __future__ import annotations

import re
from datetime import date

from vaultmem.text.rewrite import capitalise

_EN = {
    "home": ("{s} lives in {v}.", "Lives in {v}"),
    "employer": ("{s} works at {v}.", "Works at {v}"),
    "job": ("{s} works as {a}{v}.", "Job: {v}"),
    "manager": ("{p} manager is {v}.", "Manager: {v}"),
    "diet": ("{s} follows a {v} diet.", "Diet: {v}"),
    "learning": ("{s} is learning {v}.", "Learning {v}"),
    "commute": ("{s} commutes to work by {v}.", "Commutes by {v}"),
    "tool": ("{s} uses {v} as their {k}.", "{K}: {v}"),
}
_EN_ENDED = {
    "employer": ("{s} no longer works at {v}.", "Left {v}"),
    "diet": ("{s} no longer follows a {v} diet.", "Stopped {v} diet"),
}
_ZH = {
    "home": ("{s}住在{v}。", "住在{v}"),
    "employer": ("{s}在{v}工作。", "在{v}工作"),
    "job": ("{s}的职位是{v}。", "职位：{v}"),
    "manager": ("{s}的领导是{v}。", "领导：{v}"),
    "diet": ("{s}的饮食：{v}。", "饮食：{v}"),
    "learning": ("{s}在学{v}。", "在学{v}"),
    "commute": ("{s}通勤方式：{v}。", "通勤：{v}"),
    "tool": ("{s}用{v}（{k}）。", "{k}：{v}"),
}
_ZH_ENDED = {
    "employer": ("{s}已从{v}离职。", "从{v}离职"),
    "diet": ("{s}不再{v}。", "不再{v}"),
}
_ZH_KINDS = {"editor": "编辑器", "language": "编程语言", "framework": "框架", "phone": "手机", "os": "操作系统",
             "notes": "笔记软件", "browser": "浏览器", "database": "数据库", "cloud": "云服务"}
_COMMUTE_EN = {"drive": "car", "walk": "walking", "bike": "bike"}


def frame_statement(reading, name: str, chinese: bool, said: date | None) -> tuple[str, str]:
    """(statement, title) for a reading about `name` ("the user", "Caroline", "用户")."""
    family, _, kind = reading.attribute.partition(":")
    ended = reading.modality == "ended"
    if chinese:
        text, title = (_ZH_ENDED if ended and family in _ZH_ENDED else _ZH).get(family, ("", ""))
        k = _ZH_KINDS.get(kind, kind)
        statement = text.format(s=name, v=reading.value, k=k)
        if said is not None and statement:
            statement = statement[:-1] + f"（{said.isoformat()} 起）。"
        return statement, title.format(v=reading.value, k=k)
    text, title = (_EN_ENDED if ended and family in _EN_ENDED else _EN).get(family, ("", ""))
    value = _COMMUTE_EN.get(reading.value, reading.value) if family == "commute" else reading.value
    article = "" if family != "job" or value[:1].isupper() or value.lower().startswith(("head ", "chief ")) \
        else ("an " if value[:1].lower() in "aeiou" else "a ")
    possessive = f"{name}'s" if not name.endswith("s") else f"{name}'"
    statement = capitalise(text.format(s=name, v=value, a=article, p=possessive, k=kind))
    if said is not None and statement:
        statement = statement[:-1] + f" (since {said.isoformat()})."
    return statement, capitalise(title.format(v=value, k=kind, K=kind.capitalize()))


_FILLER_WORDS = frozenset("""i i'm im me my we we're our the a an is are was were be been am to of in on at for with and
but so it it's that this just really now finally officially like um uh ok okay yeah yes oh also still then there here
got get new place moved move moving live living lives home flat apartment work working works job start started
joined first week day month at as for real honestly totally""".split())


def says_little_else(sentence: str, value: str, chinese: bool) -> bool:
    """Whether a sentence is little more than its slot, so its statement may replace it ("ugh
    the commute from the new place in Oakland is brutal" is; "每天开车上班，从望京到国贸" is not:
    it names two places more)."""
    rest = sentence.replace(value, " ")
    if chinese:
        return len(re.sub(r"[^\u4e00-\u9fffA-Za-z0-9]", "", rest)) <= 12 and not re.search(r"[A-Z][a-z]+|\d", rest)
    words = [w for w in re.findall(r"[A-Za-z0-9'’&-]+", rest) if w.lower() not in _FILLER_WORDS]
    return len(words) <= 4 and not any(w[:1].isupper() or w[:1].isdigit() for w in words)
