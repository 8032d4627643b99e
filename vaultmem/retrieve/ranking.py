"""How hits rank: the weights and factors a hit's score is made of (the formula is in
`search`'s docstring), the tests they apply to (filler, saying when), and the final order,
one hit per memory note and repeats of shown turns ranked down (`best_per_note`).
"""

from __future__ import annotations

import heapq
import re
from datetime import date
from functools import lru_cache

from vaultmem.retrieve.hits import Hit

KEYWORD_WEIGHT = 0.5
# The bundled model knows little Chinese: for a question mostly in CJK its cosines are close
# to noise (0.68 for an unrelated note, 0.41 for the one that answers), so shared words count
# for more until a multilingual model is configured. 1.5 (from 1.0): LoCoMo-zh R@10 48.6 ->
# 49.5, and a note that shares 弟弟 with the question beats one that shares only 用户.
KEYWORD_WEIGHT_CJK = 1.5
# With a multilingual model the vectors understand Chinese, and the bigram overlap (noisy:
# "婷在", "是哪") counts for less. LoCoMo-zh R@10 with use-multilingual-v3: 1.5 66.6,
# 1.0 69.7, 0.7 68.1, 0.3 65.0.
KEYWORD_WEIGHT_CJK_MULTILINGUAL = 1.0
# A session chunk is the user's own words, the evidence the memories were drawn from, but
# it carries no importance and ages from the conversation while its memories age from
# extraction, and short entity-named statements embed closer to a question: without this
# the memories crowd the turns out (LoCoMo dev R@5 66.5 -> 71.2 with 1.2 and weight 0.5).
SESSION_FACTOR = 1.2
IMPORTANCE_WEIGHT = 0.10
RECENCY_WEIGHT = 0.05
RECENCY_HALF_LIFE_DAYS = 180
# Memories nobody recalled (nor updated) for `[gc] stale_after_days` rank this much lower.
STALE_FACTOR = 0.85
# A session chunk of greetings and filler is embedded with its neighbour turn, so it matches
# what the next turn says ("Hi there!" scored 1.09 against 1.04 for the memory that answered
# "does the user have a cat?") while showing nothing: it must never outrank a memory.
FILLER_FACTOR = 0.3
# The person's own notes compete with the memories by the same score: a chunk of a note
# carries its title and heading path, which a question shares as often as a memory's words.
NOTE_FACTOR = 1.0
# A hit whose source turns are all shown by higher hits (a memory beside the turn it was
# drawn from) tells the reader little new: it ranks as if it scored this much less.
REPEAT_FACTOR = 0.5
# A question that asks when ("when did…", 哪天, 什么时候) favours passages that say when
# ("last Saturday", 5月28号, "yesterday"): the turn that answers it may share no other word
# with it ("比亚迪宋PLUS，插混的，上周六提的" for "苏晴是哪天把新车开回家的？"). Added to the
# match before the weights. LoCoMo-zh R@10 with use-multilingual-v3 (post-hoc, 30 hits
# re-ranked): +0 69.7, +0.1 71.8, +0.2 74.4, +0.3 74.4; LoCoMo dev 80.5 -> 81.0 at 0.2.
WHEN_BONUS = 0.2
ASKS_WHEN = re.compile(r"\bwhen\b|\bwhat (?:date|day|year|month|time of year)\b|\bhow long ago\b|"
                       r"\bwhich (?:day|date|year|month)\b|哪天|哪一天|什么时候|几号|几月|哪年|哪一年|"
                       r"哪个月|何时|多久以前", re.I)
# Small talk is short: a longer chunk is not classified (the classifier costs ~0.3 ms), a
# greeting turn is small talk up to GREETING_WORDS, another reaction up to ACKNOWLEDGEMENT_WORDS.
# (LoCoMo dev: a 30-word cap on any reaction flagged 26 of 185 evidence turns and cost
# 0.9 points of R@10; these caps flag 3.)
FILLER_MAX_WORDS = 30
GREETING_WORDS = 12
ACKNOWLEDGEMENT_WORDS = 4
# "Alice: " opening a chunk line (chunking writes each turn as `Speaker: text`).
_SPEAKER = re.compile(r"^[^:\n]{1,60}: ")


def weight(importance: float, said: str, today: date) -> float:
    """Multiplier in [1 - weights, 1] from importance and the age of `said`, the day the
    memory was said (`valid_from`; else its last update: an undated memory ages from when
    vaultmem learnt it)."""
    try:
        age = max(0, (today - date.fromisoformat(said[:10])).days)
        recency = 0.5 ** (age / RECENCY_HALF_LIFE_DAYS)
    except ValueError:
        recency = 0.5
    spare = 1 - IMPORTANCE_WEIGHT - RECENCY_WEIGHT
    return spare + IMPORTANCE_WEIGHT * float(importance) + RECENCY_WEIGHT * recency


@lru_cache(maxsize=65536)
def says_when_cached(text: str) -> bool:
    """`dates.says_when`, remembered per chunk text (asked for each candidate of a "when?")."""
    from vaultmem.text.dates import says_when

    return says_when(text)


@lru_cache(maxsize=65536)
def is_filler(text: str) -> bool:
    r"""True when every turn of a session chunk (`Speaker: text` lines) is a greeting, thanks
    or filler, by the extractor's own turn classifier: nothing in it can answer a question.

    >>> is_filler("Alice: Hi there!\nBot: Hello! How can I help?")
    True
    >>> is_filler("Alice: Hi! I adopted a cat called Miso.")
    False
    """
    from vaultmem.text.classify import classify_text
    from vaultmem.text.noise import opens_with_greeting

    turns = [_SPEAKER.sub("", line, count=1) for line in text.splitlines() if line.strip()]
    if not turns or len(text.split()) > FILLER_MAX_WORDS:
        return False
    for turn in turns:
        kind, _ = classify_text(turn)
        greets = opens_with_greeting(turn, chinese=False) or opens_with_greeting(turn, chinese=True)
        # A greeting, a short greeting with a question that asks nothing ("Hello! How can I
        # help?") or a bare acknowledgement ("Thanks!", "OK, cool."). Longer reactions ("Way
        # to go, Jon! Keep it up!") stay: LoCoMo cites them as evidence of how people relate.
        words = len(turn.split())
        small_talk = kind == "empty" or (kind == "filler" and words <= ACKNOWLEDGEMENT_WORDS) \
            or ((kind == "greeting" or greets and kind in ("question", "filler")) and words <= GREETING_WORDS)
        if not small_talk:
            return False
    return True


class SnapshotRow:
    """A candidate's row, read from the snapshot's columns only when `best_per_note` looks
    at it: most candidates never reach it, and a dict of every column per candidate cost
    more than scoring them."""

    __slots__ = ("columns", "offset", "when")

    def __init__(self, columns: dict, offset: int, when: float = 0.0):
        self.columns, self.offset, self.when = columns, offset, when

    def __getitem__(self, name: str):
        return self.when if name == "when" else self.columns[name][self.offset]

    def get(self, name: str, default=None):
        return self[name]


def best_per_note(scored, k) -> list[Hit]:
    """Highest score first; a memory note appears once (its best chunk), session turns each.

    Diversity by provenance: a session chunk whose turns are all shown by higher hits already
    (by a memory drawn from them, or another chunk) tells the reader little new, so its score
    is multiplied by REPEAT_FACTOR and it takes its place among the rest by that score
    (`parts["repeat"]` says so). A memory is never a repeat: beside the raw turn it was drawn
    from it is that turn said as a dated, typed, current statement, and two memories of one
    turn say two things ("first week at Orrin Robotics", "a staff engineer now"); halving
    them let unrelated memories outrank the one that answers (LoCoMo dev R@10 81.8 either
    way). Order and shown score never disagree."""
    queue = [(-score, n, False, vector, lexical, row)
             for n, (score, vector, lexical, row) in enumerate(scored)]
    heapq.heapify(queue)
    hits, seen, covered = [], set(), set()
    while queue and len(hits) < k:
        negative, n, repeat, vector, lexical, row = heapq.heappop(queue)
        # A memory shows once (its best chunk); a session once per turn, however split.
        key = (row["note_id"], tuple(row["source_messages"] or ()) if row["type"] == "session" else ())
        if key in seen:
            continue
        provenance = turns_of(row)
        if not repeat and row["type"] == "session" and provenance and provenance <= covered:
            heapq.heappush(queue, (negative * REPEAT_FACTOR, n, True, vector, lexical, row))
            continue
        seen.add(key)
        covered |= provenance
        parts = {"vector": round(vector, 4), "keyword": round(lexical, 4)}
        if row.get("when"):
            parts["when"] = row["when"]
        if repeat:
            parts["repeat"] = REPEAT_FACTOR
        hits.append(Hit(id=row["note_id"], path=row["path"], type=row["type"], title=row["title"],
                        text=row["text"], score=-negative, status=row["status"],
                        created=row["created"], updated=row["updated"],
                        source_messages=row["source_messages"] or [],
                        sources=row["sources"] or [], importance=row["importance"], parts=parts,
                        valid_from=row.get("valid_from") or "", valid_to=row.get("valid_to") or "",
                        tags=[t for t in (row.get("tags") or "").split("|") if t]))
    return hits


def turns_of(row) -> set[tuple[str, str]]:
    """The session turns a row comes from, as (session note name, message id): message ids
    alone repeat across sessions ("m-1" starts every one). A session chunk's own note is its
    session; a memory's sessions are the notes its `sources` link into."""
    messages = row["source_messages"] or ()
    if row["type"] == "session":
        sessions = {row["path"].rsplit("/", 1)[-1].removesuffix(".md")}
    else:
        sessions = {str(s).strip("[]").split("#", 1)[0].rsplit("/", 1)[-1] for s in row["sources"] or ()} or {""}
    return {(session, str(m)) for session in sessions for m in messages}
