"""A proposed memory: what an extractor hands to the write policy, before anything is written."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date

from vaultmem.store.layout import STATEMENT_TYPES
from vaultmem.text.script import script_share

_TRAILING = set("a an the and or but so it its it's is was are were to of in on at for with as that "
                "this their they them which who when while from by".split() + ["", "-", "–", "—"])
TITLE_LIMIT = 60
_PHRASE_OPENERS = set("over than for with from to in on at of by about after before because and but or while "
                      "since until during into near without like as who which that when where".split())

# Characters Obsidian links or some file systems cannot hold; the vault makes the final
# name safe and unique, this only keeps titles readable.
_TITLE_UNSAFE = re.compile(r'[#|^:%\[\]/\\*"<>?]+')


@dataclass
class Candidate:
    """One memory statement with its provenance.

    `content` is a self-contained third-person statement ("Alice lives in Shanghai.");
    `source_messages` are the original message ids it was built from (usually one).
    `subject`/`attribute`/`value` let the policy spot contradictions: a later candidate with
    the same subject and attribute but another value supersedes the earlier memory
    (`attribute="likes:coffee"`, `value="no"`). `rejected_reason` is set only on candidates
    an extractor proposes *and* turns down (e.g. emotional venting), so the run can report them.
    `corrects` is set on a turn that only fixes a detail of something said before ("sorry, I
    meant Thursday"): the policy finds that memory and supersedes it with the detail fixed.
    """

    content: str
    type: str
    importance: float = 0.5
    source_messages: list[str] = field(default_factory=list)
    entities: list[str] = field(default_factory=list)
    subject: str | None = None
    attribute: str | None = None
    value: str | None = None
    valid_from: date | None = None
    valid_to: date | None = None
    tags: list[str] = field(default_factory=list)
    title: str = ""
    alias: str = ""  # the title in English when the statement is not (the model's), for Obsidian's aliases
    correction: bool = False
    speaker: str = ""
    rejected_reason: str | None = None
    corrects: object = None  # an `extract.corrections.Correction`: this turn fixes one detail
    origin: str = ""  # "model" when the person's model wrote it (its dates say when it was true)
    verdict: object = None  # the model's word on what it does to what is held (`extract.llm.Verdict`)


    def __post_init__(self):
        if self.type not in STATEMENT_TYPES:
            raise ValueError(f"memory type must be one of {STATEMENT_TYPES}, not {self.type!r}")
        if not 0.0 <= float(self.importance) <= 1.0:
            raise ValueError(f"importance must be within 0-1, not {self.importance!r}")
        if not self.title:  # the model's statements: a title ends where a phrase does
            self.title = make_title(self.content, whole_phrases=self.origin == "model")


def make_title(content: str, limit: int = TITLE_LIMIT, whole_phrases: bool = False) -> str:
    """A short human title for the note's file name: its first sentence, else cut at the last
    clause that fits, else at a word boundary (Chinese at half the length: a character says more).

    >>> make_title("On 2023-05-07, Caroline went to an LGBTQ support group.")
    'Caroline went to an LGBTQ support group (2023-05-07)'
    >>> make_title("In June 2023, Melanie is going camping.")
    'Melanie is going camping (June 2023)'
    >>> make_title("The user moved to Denver in October, after two years of looking for a flat there.")
    'The user moved to Denver in October'
    >>> make_title("The user and Tom prefer small boutique hotels over big chain hotels when they travel abroad.",
    ...            whole_phrases=True)
    'The user and Tom prefer small boutique hotels'
    >>> make_title("Alice prefers heirloom tomatoes over hybrid ones because they taste of summer to her.",
    ...            whole_phrases=True)
    'Alice prefers heirloom tomatoes over hybrid ones'
    >>> make_title("The user will follow up with Dr. Patel. They also want a humidifier for the bedroom.")
    'The user will follow up with Dr. Patel'
    >>> make_title("2026-05-02，用户的书法班上了两个月了，老师说用户横画终于不抖了，现在周六上午雷打不动去练字。")
    '用户的书法班上了两个月了 (2026-05-02)'
    """
    text = content.strip()
    dated = re.match(r"(?:On|Around|In) ((?:the week (?:before|after|of) |the weekend of )?"
                     r"(?:\d{4}-\d{2}-\d{2}|[A-Z][a-z]+ \d{4}|\d{4})), (.+)$", text) or \
        re.match(r"(\d{4}-\d{2}-\d{2}(?:之前的一周|所在的一周|之后的一周|那个周末|前后)?|\d{4}年(?:\d{1,2}月)?)，(.+)$", text)
    suffix = ""
    if dated:
        text, suffix = dated.group(2), f" ({dated.group(1)})"
    text = _TITLE_UNSAFE.sub(" ", text)
    text = re.sub(r"\s+", " ", text).strip().rstrip(".!。！ ")
    text = text[:1].upper() + text[1:]
    cjk = not text or script_share(text, among="all") >= 1 / 3  # Chinese fills the room twice as fast
    room = (limit // 2 if cjk else limit) - len(suffix)
    if len(text) > room:
        # (a title's full stop ends no sentence: the guards look behind the stop, "Dr.")
        first = re.split(r"(?<!\bDr\.)(?<!\bMr\.)(?<!\bMs\.)(?<!\bMrs\.)(?<!\bSt\.)(?<=[.!?])\s+|[。！？；;]",
                         text, maxsplit=1)[0].rstrip(".!?。！？ ")
        text = first if len(first) >= room // 3 else text
    if len(text) > room:
        cut = text[:room]
        clauses = [m.start() for m in re.finditer(r"[,，、；;:：]|\s[-–—]\s|\s(?=(?:but|and|so|because|after|"
                                                  r"since|which|while|though)\s)", cut)]
        clause = next((i for i in reversed(clauses) if i >= room // 3), None)
        if clause is not None:
            cut = cut[:clause]
        elif " " in cut and not cjk:
            words = cut[: cut.rfind(" ")].split(" ")
            while len(words) > 3 and words[-1].lower().strip(",;-–—") in _TRAILING:
                words.pop()  # "... support group and it" reads as cut off; end on a content word
            # With `whole_phrases` (a model's statement with no title of its own), a phrase the
            # cut broke ("... prefer small boutique hotels over big") goes whole: the title ends
            # before the word that opened it. Offline titles keep every word that fits: the
            # index reads them, and dropping the phrase cost LoCoMo dev 0.2 points of R@10.
            after = text[len(" ".join(words)):].split()
            broken = bool(after) and after[0].lower().strip(",;") not in _PHRASE_OPENERS and \
                not words[-1].endswith((",", ";"))
            opens = [i for i, w in enumerate(words) if w.lower() in _PHRASE_OPENERS and i >= 3
                     and len(" ".join(words[:i])) >= room // 2]
            if whole_phrases and broken and opens:
                words = words[:opens[-1]]
            cut = " ".join(words)
        text = cut.rstrip(" ,;，、-–—")
    return (text + suffix) if text else "Memory"

