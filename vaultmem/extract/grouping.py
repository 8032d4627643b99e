"""A turn's pieces grouped into candidates: plain statements go together up to MAX_WORDS so
a memory keeps its context; typed facts, instructions and each new date start their own.
"""

from __future__ import annotations

import re

from vaultmem.policy.candidate import Candidate
from vaultmem.text.names import entities_of
from vaultmem.text.patterns import Detection
from vaultmem.text.rewrite import capitalise
from vaultmem.text.script import is_chinese
from vaultmem.text.wording import MAX_WORDS, limit_words, lower_first


def _joined(texts: list[str], chinese: bool) -> str:
    """The sentences of one note as one text: Chinese ones run on, but after a Latin stop
    ("…Vivian. 用户是…") a space follows, as in English."""
    out = texts[0] if texts else ""
    for text in texts[1:]:
        out += text if chinese and not re.search(r"[.!?;:]$", out) else " " + text
    return out


def merge(pieces: list[dict]) -> list[list[dict]]:
    """Plain statements of one turn go together (up to MAX_WORDS) so a memory keeps its
    context; typed facts, instructions and each new date start their own memory."""
    groups: list[list[dict]] = []
    for piece in pieces:
        last = groups[-1] if groups else None
        fits = last is not None and sum(p["words"] for p in last) + piece["words"] <= MAX_WORDS
        # a date joins a group that has none: "we booked the Slovenia trip! we fly out October 9"
        dated_ok = not piece["dated"] or (fits and not any(p["dated"] for p in last))
        joinable = fits and not piece["typed"] and dated_ok and (
            not last[0]["typed"]
            # "always give me metric units. km, kg, celsius, all of it.": the instruction goes on
            or (last[0]["type"] == "procedure" and not piece["standalone"]))
        if fits and last[0]["type"] == "procedure" and piece["type"] == "procedure" and not piece["dated"] \
                and not piece["detection"] and not last[0]["detection"]:
            piece = dict(piece, text=capitalise(piece["bare"]))  # one instruction said in two sentences
            joinable = True
        if joinable:
            last.append(piece)
        elif piece["standalone"]:
            groups.append([piece])
    return groups


def candidate(group: list[dict], turn_id: str, speaker: str) -> Candidate:
    head = group[0]
    chinese = is_chinese(head["text"])
    content = _joined([p["text"] for p in group], chinese)
    if head["attributed"] and head["subject"] != "user":  # news told by a named speaker: say who
        # (in an assistant chat the user told it: the source link says so; "According to the
        # user, …" is not how a person writes a memory down)
        content = (f"{head['name']}说：{content}" if chinese
                   else capitalise(f"according to {head['name']}, {lower_first(content)}"))
        content = limit_words(content, chinese)
    detection: Detection | None = head["detection"]
    dated = next((p for p in group if p["valid_from"]), head)
    kind = "event" if head["type"] == "fact" and dated["type"] == "event" and dated is not head else head["type"]
    return Candidate(
        content=content,
        type=kind,
        importance=max(p["importance"] for p in group),
        source_messages=[turn_id],
        entities=entities_of(group, detection),
        subject=head["subject"] if detection else None,
        attribute=detection.attribute if detection else None,
        value=detection.value if detection else None,
        valid_from=dated["valid_from"],
        valid_to=dated["valid_to"],
        tags=head["tags"],
        title=head["title"],
        correction=head["correction"],
        speaker=speaker,
    )
