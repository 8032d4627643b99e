"""Subject, attribute and value of a chat sentence, read from what it speaks of, not from how.

A frame is one attribute a person has one value of at a time (where they live, who they
work for, their title, their partner, a child's name, their editor, their diet, ...). It is
read from two things a sentence holds whatever its wording: a **cue** that speaks of the
attribute (live, moved, new place, flat, 搬, 住, 新家 for `home`) and a **value of the
attribute's kind** near it (a place, an organisation, a person's name, a title, a tool of a
kind). "ugh the commute from the new place in Oakland is brutal", "the Lisbon flat finally
feels like home" and 「我们在厦门安顿下来了」 all read as `home` = the place they name.

Around the cue, the **modality** says whether the value holds: `fact`, `plan` ("we're
probably moving to Lisbon in spring", 打算搬去上海), `hypothetical` ("if we moved to
Austin"), `negated` ("we're not moving to Austin after all", "I thought about Neovim but
I'm sticking with VS Code" gives Neovim negated and VS Code a fact) and `other` (someone
else's: "my friend Jake just moved to Seattle"). Only a `fact` about the speaker fills the
speaker's slot; the write policy supersedes on it, and `context` groups memories of one
slot at read time with the same reading (`read`, `question_frames.question_frame`).

    >>> read("ugh the commute from the new place in Oakland is brutal")
    Reading(attribute='home', value='Oakland', modality='fact', subject='user')
    >>> read("we're probably moving to Lisbon in spring").modality
    'plan'
    >>> read("我们上个月搬到了杭州").value
    '杭州'
"""

from __future__ import annotations

import re

from vaultmem.text.frames_en import EN_FRAMES
from vaultmem.text.frames_zh import ZH_FRAMES
from vaultmem.text.modality import Reading
from vaultmem.text.script import is_chinese


def read(sentence: str, chinese: bool | None = None) -> Reading | None:
    """The one slot a sentence (or clause) fills, with its modality; None for none."""
    s = " ".join(str(sentence).split())
    if not s:
        return None
    zh = is_chinese(s) if chinese is None else chinese
    for frame in (ZH_FRAMES if zh else EN_FRAMES):
        found = frame(s)
        if found is not None:
            return found
    return None


# A plan said with a hedge ("thinking about moving to Austin", 可能会搬去苏州) is not yet a
# memory; a firm one ("we're moving to Denver next month") is an event.
HEDGED = re.compile(r"\b(?:thinking (?:about|of)|considering|might|maybe|possibly|probably|hoping|hope to|"
                    r"want to|wanna|would like to|'d like to|looking (?:at|into)|toying with|tempted|"
                    r"not sure|someday|eventually)\b|考虑|可能|也许|大概|想|说不定|看看|犹豫", re.I)
# The kinds (tags) a frame's reading gives, as the pattern detectors name them.
FRAME_KINDS = {"home": "home", "employer": "job", "job": "job", "manager": "job", "diet": "diet",
               "learning": "learning", "commute": "commute"}


def frame_detection(reading: Reading):
    """The reading as the pattern detectors' `Detection`, so the write policy supersedes on it."""
    from vaultmem.text.patterns import Detection

    kind = FRAME_KINDS.get(reading.attribute) or reading.attribute.split(":", 1)[0]
    named = reading.attribute in ("home", "employer", "manager") or reading.attribute.startswith("tool:")
    value = reading.value if reading.modality != "ended" else f"not {reading.value}"
    return Detection(kind, "fact", reading.attribute, value, 0.7, [reading.value] if named else [])
