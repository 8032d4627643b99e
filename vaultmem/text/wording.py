"""How a chat sentence becomes a memory's words: in the third person, its relative date made
absolute and put where it reads ("I went to a support group yesterday" -> "On 2023-05-07,
Caroline went to a support group."), a standing instruction labelled, finished and cut to
MAX_WORDS."""

from __future__ import annotations

import re

from vaultmem.text.dates import DateMatch
from vaultmem.text.rewrite import capitalise, to_third_person

MAX_WORDS = 40
_LOWER_STARTS = {"it", "the", "this", "that", "there", "a", "an", "these", "those", "they",
                 "their", "going", "everyone", "everything", "some", "lots", "now", "it's", "that's",
                 "there's", "here's", "they're", "they've", "what", "when", "how", "so", "all",
                 "people", "seeing", "being", "having", "my", "one", "every", "in", "on",
                 "around", "during", "since", "after", "before"}
_ABSOLUTE = re.compile(r"\b(?:January|February|March|April|May|June|July|August|September|October|"
                       r"November|December|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)\.?\s+\d{1,2}\b"
                       r"|\b\d{1,2}(?:st|nd|rd|th)?\s+(?:of\s+)?(?:January|February|March|April|May|June|July|"
                       r"August|September|October|November|December)\b|\b\d{4}-\d{2}-\d{2}\b|\d{1,2}月\d{1,2}[日号]")
_RECURRING_DAY = re.compile(r"birthday|anniversary|name day|生日|纪念日", re.I)
_BOUND = re.compile(r"(?:\b(?:until|till|through|up to)|到|直到)\s*$", re.I)
_COPULA = re.compile(r"\b(?:is|was|are|were|be)\s+$|是$", re.I)
_IN_PLACE = re.compile(r"\b(?:since|before|after|by|from|when|because|that|than|starting|beginning|effective|"
                       r"as of)\s+(?:\w+\s+){0,6}$", re.I)


def with_date(sentence: str, match: DateMatch | None, name: str, chinese: bool, procedure: bool):
    """The sentence in the third person with its date made absolute."""
    lang = "zh" if chinese else "en"
    if match is None:
        return finish(to_third_person(sentence, name) if not procedure else sentence, chinese), None, None
    before, after = sentence[:match.start], sentence[match.end:]
    said = sentence[match.start:match.end]
    if _COPULA.search(before) and (not said.lower().startswith("on ") or _RECURRING_DAY.search(before)):
        # "my birthday is March 3": a recurring date, not an event ("the play is on
        # December 14" is one)
        return finish(to_third_person(sentence, name), chinese), None, None
    if _ABSOLUTE.search(sentence[match.start:match.end]) and not procedure:
        # "the talk is on November 26" names its day already: kept in the speaker's words (the
        # day is still `valid_from`); only "yesterday", "next Friday" need making absolute
        return finish(to_third_person(sentence, name), chinese), match.date, None
    if _BOUND.search(before):
        text = before + match.label(lang) + after
        anchor_day = match.anchor
        return finish(to_third_person(text, name), chinese), anchor_day, match.date
    if procedure:
        return finish(before + match.label(lang) + after, chinese), None, None
    if _IN_PLACE.search(before) and not chinese:
        phrase = match.phrase(lang)
        phrase = phrase[:1].lower() + phrase[1:]
        if re.search(r"\b(?:since|before|after|by|from|starting|beginning|effective|as of)\s+$", before, re.I):
            phrase = match.label(lang)
        return finish(to_third_person(before + phrase + after, name), chinese), match.date, None
    joiner = "" if chinese else " "
    # "my passport expires in March, I'll renew it": the comma between the clauses stays
    after = after.lstrip(" ") if after.lstrip(" ").startswith(",") and before.strip() else joiner + after.lstrip(" ,")
    rest = re.sub(r"\s{2,}", " ", (before.rstrip(" ,") + after).strip())
    rest = re.sub(r"\s+([,.!?;])", r"\1", rest).strip(" ,，")
    body = to_third_person(rest, name)
    if chinese:
        return finish(f"{match.phrase(lang)}，{body}", chinese), match.date, None
    first = body.split(" ", 1)[0].lower()
    if first in _LOWER_STARTS or first.endswith("ing"):
        body = body[:1].lower() + body[1:]
    return finish(f"{match.phrase(lang)}, {body}", chinese), match.date, None


def lower_first(text: str) -> str:
    first = text.split(" ", 1)[0].lower().strip(",")
    if first in _LOWER_STARTS or first in {"his", "her", "its", "our", "he", "she", "we", "one"}:
        return text[:1].lower() + text[1:]
    return text


def instruction_text(text: str, name: str, chinese: bool) -> str:
    body = to_third_person(text, name)
    if chinese:
        return f"{name}的长期要求：{body}"
    body = body[:1].lower() + body[1:] if not body.startswith(("I ", name)) else body
    return capitalise(f"{name}'s standing instruction: {body}")


def finish(text: str, chinese: bool) -> str:
    text = re.sub(r"\s+", " ", text).strip().strip(",，;:；：").lstrip("-–—• ")
    if not chinese:  # chat tics at the end say nothing: "Kabir lost his first tooth btw"
        text = re.sub(r"(?:[\s,]+\b(?:btw|lol|haha+|tbh|lmao)\b)+(?=\s*[.!?,]*$)", "", text, flags=re.I)
        text = re.sub(r"\b(?:btw|lol)\b,?\s*(?=[,.])", "", text, flags=re.I).replace(" ,", ",")
    text = capitalise(text)
    if chinese:
        return text if re.search(r"[。！？.!?]$", text) else text + "。"
    text = re.sub(r"[!?]+$", ".", text)
    return text if re.search(r"[.!…\"')]$", text) else text + "."


def limit_words(text: str, chinese: bool) -> str:
    if chinese:
        return text if len(text) <= 2 * MAX_WORDS else text[: 2 * MAX_WORDS - 1] + "…"
    words = text.split()
    return text if len(words) <= MAX_WORDS else " ".join(words[:MAX_WORDS - 1]).rstrip(",;") + "…"
