"""The type of a statement no pattern recognised, and the cue of a standing instruction
said in passing ("the metric thing still stands", "so convert when we talk about it")."""

from __future__ import annotations

import re

from vaultmem.text.classify import is_past
from vaultmem.text.pattern_words import HEALTH

STANDING = re.compile(r"\b(?:still stands|still applies|still holds|goes for (?:work|that|this|\w+ stuff) too)\b"
                      r"|(?:^|,\s*)so (?:please )?(?:convert|use|write|give|keep|answer|reply|format|stick to)\b", re.I)
_RECURRING = re.compile(r"\b(?:every|each)\s+(?:single\s+)?(?:day|morning|evening|night|week|weekend|"
                        r"monday|tuesday|wednesday|thursday|friday|saturday|sunday|other day)\b|"
                        r"\blike every day\b|\bon (?:mondays|tuesdays|wednesdays|thursdays|fridays|saturdays|"
                        r"sundays|weekends)\b", re.I)
_ZH_RECURRING = re.compile(r"每(?:天|周|个?星期|个?礼拜|晚|个月|年)|天天|周末都")
_ZH_SELF_LED = re.compile(r"^(?:[^，。]{0,6}[，,])?我(?:们)?(?!的|家|女儿|儿子|老公|老婆|爸|妈|弟|哥|姐|妹)")
_JOB_NEWS = re.compile(r"\bgot (?:the|a|her|his|their|that) (?:new )?job\b|\b(?:was|got) hired\b|"
                       r"\baccepted (?:the|an?) (?:job|offer|position)\b", re.I)
_PLAN = re.compile(r"\b(?:I'm|I am|we're|we are)\s+(?:\w+\s+)?\w+ing\b.*\b(?:for|over|during|in|on)\s+(?:the\s+)?"
                   r"(?:\w+\s+)?(?:week|weekend|holidays?|break|vacation|christmas|thanksgiving|easter|new year)\b", re.I)


def plain_kind(sentence: str, chinese: bool, valid_from, valid_to) -> str:
    """The type of a statement no pattern recognised: a habit is a preference, news of a
    job or of a condition a fact, something dated or past an event, the rest a fact."""
    if HEALTH.search(sentence):  # "…but I'm allergic to mangoes"
        return "fact"  # (and "I take metformin every morning" is no habit of taste)
    if chinese:
        if _ZH_RECURRING.search(sentence) and _ZH_SELF_LED.match(sentence):
            return "preference"
    elif _RECURRING.search(sentence) and re.match(r"(?:\w+\s+){0,3}?(?:I|we)\b", sentence, re.I) \
            and not is_past(sentence):
        return "preference"
    if not chinese and _JOB_NEWS.search(sentence):
        return "fact"
    if not chinese and _PLAN.search(sentence):
        return "event"
    return "event" if ((valid_from and not valid_to) or is_past(sentence)) else "fact"


def content_words(text: str) -> int:
    return len([w for w in re.findall(r"[^\W\d_][\w'’-]*|\d+", text)
                if w.lower() not in _FUNCTION_WORDS])


_FUNCTION_WORDS = frozenset("a an the and or but nor so is am are was were be been being do does did has "
                            "have had will would can could should shall may might must".split())
