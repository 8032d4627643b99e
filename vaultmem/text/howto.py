"""A how-to written out in a turn: an intro ("every first sunday of the month I do this:",
"What we do now:", "我备份照片的步骤：") and two or more numbered or bulleted steps, one per
line. It becomes one procedure memory holding every step in the speaker's words, instead of
a sentence per step that no one could follow on its own.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_STEP = re.compile(r"^\s*(?:\d{1,2}[.)、．]|[-*•])\s+(\S.*?)\s*$|^\s*\d{1,2}[.)、．](\S.*?)\s*$")
_INTRO = re.compile(
    r"\bhow (?:I|we|to)\b|\b(?:process|routine|checklist|steps|workflow|procedure|recipe|ritual|"
    r"the way (?:I|we))\b|\b(?:I|we) (?:always |usually |normally |just )?do (?:this|it)\b|"
    r"\bwhat (?:I|we) do\b|\bhere's how\b|步骤|流程|做法|怎么做|这样做|顺序", re.I)
_TOPIC = re.compile(
    r"\bhow (?:I|we) (?:do|run|handle|make|set up|deploy|release|back up|clean|prepare|cook|plan)\s+"
    r"(?:the |our |my |a )?(?P<a>[\w][\w\s-]{2,40}?)(?=\s+(?:because|since|so|and|when|every|each|on)\b|[,.:;!]|$)"
    r"|\b(?:our|my|the) (?P<b>(?:[\w-]+ ){0,2}(?:process|routine|checklist|workflow|procedure|recipe|ritual))\b",
    re.I)
_ZH_TOPIC = re.compile(r"(?:我|我们)?(?:的)?(?P<t>[\u4e00-\u9fffA-Za-z0-9]{2,12}?)的?(?P<k>步骤|流程|做法)")
_FOR = re.compile(r"\b(?:it's |it is )?for (?P<what>[\w.-]+(?:,\s*(?:our|my|the) [\w\s-]{3,40}?)?)(?=[.;!]|$)", re.I)
_SAYS_WHEN = re.compile(r"(?:^|[.!]\s+)(?P<when>(?:every|each|once a|on the first|on)\s[^.:!]{2,50}?)"
                        r"\s+(?:I|we)\s+(?:always\s+|usually\s+)?do (?:this|it)\s*:?\s*$", re.I)
MAX_STEPS = 12


@dataclass
class HowTo:
    topic: str        # "photo backup", "release process", "备份照片"
    kind: str         # "" or the Chinese word for it: 步骤, 流程, 做法
    about: str        # "ledgerkit, our internal Python library" or ""
    when: str         # "every first sunday of the month" or ""
    steps: list[str]
    rest: str         # the turn without the steps, for the sentence rules


def find_howto(text: str) -> HowTo | None:
    """The first run of two or more step lines with an intro that speaks of a procedure."""
    lines = (text or "").split("\n")
    start = end = None
    for i, line in enumerate(lines):
        if _STEP.match(line):
            if start is None:
                start = i
            end = i + 1
        elif start is not None:
            break
    if start is None or end - start < 2:
        return None
    intro = "\n".join(lines[:start]).strip()
    if not intro or not _INTRO.search(intro):
        return None
    steps = [next(g for g in _STEP.match(line).groups() if g) for line in lines[start:end]][:MAX_STEPS]
    topic, kind = "", ""
    if m := _TOPIC.search(intro):
        topic = (m.group("a") or m.group("b")).strip()
    elif m := _ZH_TOPIC.search(intro):
        topic, kind = m.group("t"), m.group("k")
    about = _FOR.search(intro)
    when = _SAYS_WHEN.search(intro)
    rest = "\n".join(lines[:start] + lines[end:])
    return HowTo(topic, kind, about.group("what") if about else "", when.group("when") if when else "",
                 steps, rest)


def howto_text(howto: HowTo, name: str, chinese: bool) -> str:
    """"The user's photo backup (every first sunday of the month): 1. plug …; 2. …"."""
    if chinese:
        head = f"{name}的{howto.topic or ''}{howto.kind or '做法'}"
        return head + "：" + "；".join(f"{i}. {s.rstrip('。；;')}" for i, s in enumerate(howto.steps, 1)) + "。"
    owner = f"{name}'s" if not name.endswith("s") else f"{name}'"
    head = f"{owner} {howto.topic or 'procedure'}"
    if howto.about:
        head += " for " + re.sub(r"\b(?:our|my)\b", "their", howto.about)
    if howto.when:
        head += f" ({howto.when.strip()})"
    steps = "; ".join(f"{i}. {s.rstrip('.;')}" for i, s in enumerate(howto.steps, 1))
    return (head[:1].upper() + head[1:]) + ": " + steps + "."
