"""How hits rank: the weights and factors a hit's score is made of (the formula is in
`search`'s docstring), the tests they apply to (filler, saying when), and the final order,
one hit per memory note and repeats of shown turns ranked down (`best_per_note`).
"""

from __future__ import annotations

import heapq
import re
from datetime import date, timedelta
from functools import lru_cache
from typing import NamedTuple

from vaultmem.retrieve.hits import Hit
from vaultmem.store import link_note

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
# A question that names a time ("four weeks ago", "last weekend", "in March", 上周六) is
# about what was said then: a passage or memory said within that span (`asked_span`) adds
# DATE_BONUS to its match (`parts["date"]`), and the span's own best passages join the
# candidates, so the turn that answers is found even when it shares no word with the question
# ("I mentioned an investment for a competition four weeks ago? What did I buy?": "I actually
# got my own set of sculpting tools ... today", said 28 days before it was asked).
DATE_BONUS = 0.2
# How far around the named day a span reaches, by how precisely it was named: "three days
# ago" is a day either side, "four weeks ago" (approx) four days, a weekend its Friday to Monday.
# Within a span around a named day the bonus falls with the distance from that day
# (`date_bonus`): "four weeks ago" is most likely that day, less likely three days off, and the
# turn said on it ("sculpting tools ... today") no longer ties with the span's other chatter.
# LongMemEval-S dev slice R@10 (kept vaults, asked on their day): flat 90.2, graded 93.6
# (temporal 70 -> 90); agent51 dev and LoCoMo dev unchanged.
DAY_SLACK = {"day": 1, "approx": 4}


class Span(NamedTuple):
    """The days a question names (ISO, first and last) and, when it named one day with some
    slack ("four weeks ago"), that day and the slack; `day` is "" for a weekend, week or month."""
    first: str
    last: str
    day: str = ""
    slack: int = 0
# In a person's session with an assistant, the assistant's answers (recipes, lists, how-tos)
# share the question's words more than the person's own aside that answers it ("How many
# doctors did I visit?": "the doctor will examine…" against "my dermatologist, Dr. Lee"). A
# chunk of the assistant's turn alone ranks ASSISTANT_FACTOR lower unless the question asks
# what the assistant said ("you recommended", "our previous chat", 你推荐的, 我们上次的对话).
# LongMemEval-S dev slice R@5 / R@10 (kept vaults, asked on their day, every question): 1.0
# 76.1 / 82.2, 0.9 78.9 / 87.3, 0.8 80.0 / 87.3, 0.7 81.1 / 87.3, 0.6 84.4 / 87.3; batch 2
# tune's current, as_of and leads the same at 1.0 and 0.6. Applied to every question, it cost
# agent sessions (benchmarks/data/blind/agent51 dev) 77.8 -> 70.5 R@5: there the assistant's
# turns hold what was found ("Why did the export test never fail on my machine?"), hence
# `favours_the_person` (84.0 / 96.9 there; LongMemEval-S dev 81.8 / 90.2).
ASSISTANT_FACTOR = 0.7
ASKS_ASSISTANT = re.compile(
    r"\byou (?:told|recommended|suggested|said|mentioned|gave|listed|provided|wrote|explained|described|"
    r"shared|showed|came up with|helped|made|created|proposed|found|fixed|changed|ran)\b|"
    r"\bdid you (?:tell|recommend|suggest|say|mention|give|list|provide|write|explain|describe|share|show|"
    r"come up with|propose|find|fix|change|run)\b|"
    r"\b(?:our|the) (?:previous|last|earlier|past|first|other) (?:chat|conversation|discussion|session)s?\b|"
    r"\bwe (?:discussed|talked|decided|agreed|chatted|went over|fixed|changed|chose|settled)\b|"
    r"你(?:之前|上次|刚才)?(?:说|推荐|建议|提到|告诉|列出|给出|讲)|我们(?:之前|上次|刚才)的?(?:对话|聊天|讨论)|"
    r"我们(?:之前|上次)?(?:讨论|聊|决定|商量)", re.I)
# The factor is for questions about the person's own life, in the first person singular ("How
# many doctors did I visit?", 我去过哪些地方); one that asks why, or what caused or fixed
# something, asks for what was found, and in an agent's session that is the assistant's turn
# ("Why did the export test never fail on my machine?").
_ABOUT_ME = re.compile(r"\b(?:I|I'm|I've|I'd|my|me|mine|myself)\b|我(?!们)", re.I)
_ASKS_WHY = re.compile(r"\bwhy\b|\bhow come\b|\b(?:what|which) (?:\w+ )?(?:caused|fixed|broke|solved)\b|"
                       r"\broot cause\b|\breason\b|为什么|为啥|原因|怎么修", re.I)


def favours_the_person(query: str) -> bool:
    """Whether the assistant's own turns rank ASSISTANT_FACTOR lower for `query`.

    >>> favours_the_person("How many different doctors did I visit?")
    True
    >>> [favours_the_person(q) for q in ("Why did the upload test fail on my machine?",
    ...     "What did you recommend for my trip?", "What caused the duplicated rows?")]
    [False, False, False]
    """
    return bool(_ABOUT_ME.search(query)) and not _ASKS_WHY.search(query) and not ASKS_ASSISTANT.search(query)


# A question that counts ("How many different doctors did I visit?", "What is the total number
# of siblings I have?", 一共) is embedded without its counting words: they name no thing a
# passage says, and they pulled its vector towards word problems and tables ("Madison eats 3
# fewer breakfasts in total…") and away from "my dermatologist, Dr. Lee" or "a family with 3
# sisters". Keyword matching still sees the whole question. LongMemEval-S dev slice (kept
# vaults): multi-session R@10 60.7 -> 71.3, overall 88.4 -> 90.2; LoCoMo dev 83.4 either way.
_COUNTING = re.compile(r"^(?:what (?:is|was) |what's )?(?:the )?(?:total )?number of |"
                       r"^how many (?:more |fewer |different |other |times |in total )?|"
                       r"\b(?:in total|combined|altogether|in all)\b|一共|总共|加起来|合计", re.I)
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
    from vaultmem.text.classify import classify_text, is_reaction
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
        # A short answer that names something ("She moved to Chicago.", "Three.") is no
        # acknowledgement, unless it thanks or cheers someone by name ("Thanks, Mel!").
        words = len(turn.split())
        small_talk = kind == "empty" or (kind == "filler" and words <= ACKNOWLEDGEMENT_WORDS
                                         and (is_reaction(turn) or not names_something(turn))) \
            or ((kind == "greeting" or greets and kind in ("question", "filler")) and words <= GREETING_WORDS)
        if not small_talk:
            return False
    return True


def asked_span(query: str, today: date) -> Span | None:
    """(first day, last day) of the time `query` names, as ISO days, when it names one in the
    past: a day, a few days or weeks ago, a weekend, a week or a month. None for a year (too
    wide to tell passages apart), for a time ahead, and for today alone ("any documentary
    recommendations for tonight?" asks for something new, not for what was said today).

    >>> asked_span("What did I buy four weeks ago?", date(2023, 4, 1))
    Span(first='2023-02-28', last='2023-03-08', day='2023-03-04', slack=4)
    >>> asked_span("我上周六去了哪里？", date(2023, 5, 31))
    Span(first='2023-05-26', last='2023-05-28', day='2023-05-27', slack=1)
    >>> asked_span("Where did I go last weekend?", date(2023, 5, 31))
    Span(first='2023-05-26', last='2023-05-29', day='', slack=0)
    >>> asked_span("Any plans for tonight?", date(2023, 5, 31)) is None
    True
    """
    from vaultmem.text.dates import find_date

    match = find_date(query, today, prefer="past")
    if match is None or match.granularity == "year":
        return None
    day, named, slack = match.date, "", 0
    if match.granularity in DAY_SLACK:
        if match.granularity == "day" and day == today:
            return None
        named, slack = day.isoformat(), DAY_SLACK[match.granularity]
        first, last = day - timedelta(days=slack), day + timedelta(days=slack)
    elif match.granularity == "weekend":
        first, last = day - timedelta(days=1), day + timedelta(days=2)
    elif match.granularity == "week":
        first = day - timedelta(days=day.weekday())
        last = first + timedelta(days=6)
    else:  # a month, from its first day
        first = day
        last = date(day.year + day.month // 12, day.month % 12 + 1, 1) - timedelta(days=1)
    if first > today:
        return None
    return Span(first.isoformat(), min(last, today).isoformat(), named, slack)


def date_bonus(span: Span | None, said: str) -> float:
    """What a chunk said on ISO day `said` adds to its match for a question naming `span`:
    DATE_BONUS across a weekend, week or month; around a named day, less the further off.

    >>> span = Span("2023-02-28", "2023-03-08", "2023-03-04", 4)
    >>> [round(date_bonus(span, day), 2) for day in ("2023-03-04", "2023-03-01", "2023-03-08", "2023-03-09")]
    [0.2, 0.08, 0.04, 0.0]
    """
    if span is None or not span.first <= said[:10] <= span.last:
        return 0.0
    if not span.day:
        return DATE_BONUS
    off = abs((date.fromisoformat(said[:10]) - date.fromisoformat(span.day)).days)
    return DATE_BONUS * (1 - off / (span.slack + 1))


def embedded_query(query: str) -> str:
    """The question as its vector is made: without the words that only ask to count.

    >>> embedded_query("What is the total number of siblings I have?")
    'siblings I have?'
    >>> embedded_query("How many different doctors did I visit?")
    'doctors did I visit?'
    >>> embedded_query("How many")
    'How many'
    """
    stripped = re.sub(r"\s{2,}", " ", _COUNTING.sub("", query)).strip()
    return stripped if re.search(r"\w", stripped) else query


def by_assistant_alone(text: str, turns: int) -> bool:
    """A session chunk of one turn, the assistant's (`chunking.is_assistant` of its speaker)."""
    from vaultmem.index.chunking import is_assistant

    speaker = _SPEAKER.match(text) if turns == 1 else None
    return bool(speaker) and is_assistant(speaker.group(0)[:-2])


_NUMBER_WORDS = frozenset("one two three four five six seven eight nine ten eleven twelve twenty "
                          "hundred thousand first second third".split())


def names_something(turn: str) -> bool:
    """Whether a short turn names a thing, a place, a person or a number: a capitalised word
    past its first ("I" and thanks or greetings aside), a digit or a number word.

    >>> names_something("She moved to Chicago."), names_something("OK, Thanks!"), names_something("Got it.")
    (True, False, False)
    """
    from vaultmem.text.noise import ONLY_GREETING

    words = re.findall(r"[^\W\d_][\w'-]*|\d", turn)
    return any(word.isdigit() or word.lower() in _NUMBER_WORDS
               or (n and word[0].isupper() and word != "I" and not ONLY_GREETING.match(word))
               for n, word in enumerate(words))


class SnapshotRow:
    """A candidate's row, read from the snapshot's columns only when `best_per_note` looks
    at it: most candidates never reach it, and a dict of every column per candidate cost
    more than scoring them."""

    __slots__ = ("columns", "offset", "when", "date")

    def __init__(self, columns: dict, offset: int, when: float = 0.0, date: float = 0.0):
        self.columns, self.offset, self.when, self.date = columns, offset, when, date

    def __getitem__(self, name: str):
        if name == "when":
            return self.when
        if name == "date":
            return self.date
        return self.columns[name][self.offset]

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
        if row.get("date"):
            parts["date"] = row["date"]
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
        sessions = {link_note(s) for s in row["sources"] or ()} or {""}
    return {(session, str(m)) for session in sessions for m in messages}
