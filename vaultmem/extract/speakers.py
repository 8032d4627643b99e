"""Speakers as memories name them: "the user" for a generic speaker, else their name; and
the names people call each other by (vocatives), which are not what a sentence is about.
"""

from __future__ import annotations

import re

_GENERIC_SPEAKERS = {"", "user", "human", "me", "you", "customer", "assistant"}


def display_name(speaker: str, names: dict, chinese: bool) -> tuple[str, str]:
    """(name used inside statements, subject key): ('Caroline', 'Caroline'), ('the user', 'user')."""
    shown = names.get(speaker, speaker) or ""
    if shown.strip().lower() in _GENERIC_SPEAKERS:
        return ("用户" if chinese else "the user"), "user"
    return shown, shown


def vocatives(turns) -> set[str]:
    """Speaker names and their short forms ("Mel" for Melanie), as people call each other."""
    names = {t.speaker for t in turns if t.speaker and t.speaker.lower() not in _GENERIC_SPEAKERS}
    return {n[:k] for n in names for k in (3, len(n)) if len(n) >= 3 and n[:1].isupper()}


def strip_vocative(sentence: str, vocatives: set[str]) -> str:
    """"Hey Caroline, since we ..." -> "since we ...": the person addressed is not the topic."""
    for word in vocatives:
        lead = r"^(?:(?:hey|hi|oh|wow|yeah|yes|thanks|thank you)\W+)?"
        sentence = re.sub(rf"{lead}{re.escape(word)}\w*\s*[,!.\-–—]+\s*", "", sentence, flags=re.I)
        sentence = re.sub(rf",\s*{re.escape(word)}\w*(?=\s*[.!?]*$)", "", sentence)
    return sentence


def strip_names(sentence: str, vocatives) -> str:
    """The sentence without the names people call each other by: "Remember Jon, just do it"
    is not news about anyone named Jon."""
    for word in vocatives:
        sentence = re.sub(rf"\b{re.escape(word)}\w*\b", "", sentence)
    return sentence
