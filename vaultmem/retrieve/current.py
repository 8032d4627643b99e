"""Which of the memories a question found still hold: the read-time net under the write policy.

The write policy supersedes a memory when a later statement fills the same slot (subject
and attribute) with another value. Where it missed one (a wording its rules did not read,
a note edited by hand, two devices that each learnt a value), the hits of a question may
hold two active memories of one slot with different values. Read again here, each memory's
slot comes from its note's `subject`/`attribute`/`value` or, failing that, from its
statement (`text.frames`); of two values of one slot, the one said last is current and
the other is shown as earlier, until the day the later one was said (`Hit.valid_to`, which
`context` prints as `until YYYY-MM-DD`). The current one takes the best score of its group,
so it comes first; and where the question asks for that very attribute ("Where does the
user live?"), it leads the block. A question that asks for one value in words no frame
reads ("用户最近在玩什么游戏？") is answered by the memories that score near the best and name a
value it does not: the one told last (its session's day, not the day an event happens) leads,
and an earlier one naming something the latest does not is shown as earlier.

    >>> mark_current(hits, "Where does the user live?", vault)   # doctest: +SKIP
    [('Memory/Facts/Lives in Denver.md', ['Memory/Facts/Lives in Chicago.md'])]

`doctor` lists such pairs among all active memories (`doctor.contradictions`).
"""

from __future__ import annotations

import re
from functools import lru_cache

from vaultmem.store.layout import STATEMENT_TYPES

# A memory the question asks for directly leads the block by this margin over the best hit.
LEAD_MARGIN = 0.01


def slot_of(text: str, props: dict | None = None) -> tuple[str, str, str] | None:
    """(subject, attribute, value) of a memory, lower-cased, from its note's properties or else
    its statement `text`; None when it fills no slot."""
    props = props or {}
    subject, attribute, value = (str(props.get(k) or "").strip() for k in ("subject", "attribute", "value"))
    if subject and attribute and value:
        return subject.lower(), attribute.lower(), value.lower()
    return _read_slot(text)


@lru_cache(maxsize=4096)
def _read_slot(text: str) -> tuple[str, str, str] | None:
    """The slot a statement fills, read by the frames (a warm daemon asks again of the same
    memories: kept, as it depends on the text alone)."""
    from vaultmem.text.frames import read

    reading = read(_bare(text))
    if reading is None or reading.modality not in ("fact", "ended"):
        return None
    value = reading.value if reading.modality == "fact" else f"not {reading.value}"
    return reading.subject.lower(), reading.attribute.lower(), value.lower()


def _bare(text: str) -> str:
    """A memory's statement as the frames read chat: links shown as their text, and the
    user back in the first person ("The user's friend Jake" -> "my friend Jake", 用户的 -> 我的),
    so someone else's news is not read as the user's."""
    text = re.sub(r"\[\[(?:[^\]|]*\|)?([^\]]*)\]\]", r"\1", text or "")
    text = re.sub(r"\b[Tt]he user['’]s\b", "my", text)
    text = re.sub(r"\b[Tt]he user\b", "I", text)
    return text.replace("用户", "我")


def _live(hit, as_of: str | None = None) -> bool:
    """Whether a hit is a statement that holds: today, an active memory with no end; on the
    day `as_of`, any memory that held then (the filter let only those through), a superseded
    one too, so long as it had not ended by that day."""
    if hit.type not in STATEMENT_TYPES:
        return False
    if as_of is None:
        return hit.status == "active" and not hit.valid_to
    return hit.status in ("active", "superseded") and (not hit.valid_to or hit.valid_to[:10] > as_of)


def said_day(hit) -> str:
    return (hit.valid_from or hit.created or hit.updated or "")[:10]


def mark_current(hits, question: str, props_of, as_of: str | None = None, under=(),
                 floor: float = 0.0) -> list[tuple[str, list[str]]]:
    """Mark earlier values among `hits` in place (their `valid_to`, their rank) and return
    `[(current path, [earlier paths])]`. `props_of(path) -> dict` reads a note's properties.
    With `as_of` (YYYY-MM-DD), the memories that held on that day are the live ones, a
    superseded note among them: "Which editor did the user use on 2026-08-15?" is led by the
    editor of that day as "Which editor does the user use?" is by today's, and a memory that
    held that day and has ended since scores ENDED_FACTOR times its match (`_ended_lead`).

    `under`: memories the search scored under its threshold (`floor`). They take part, and
    one the rules below lift to `floor` or over joins `hits` when it is the slot the question
    asks for or the later value of a slot a hit holds: "How does the user get to work?" asks
    for the commute, and "Since July 6 the user commutes on the Metra BNSF express" shares no
    word with it (0.14) but is the latest memory of that slot. The rest stay out, and so does
    one that ENDED_FACTOR alone would lift."""
    from vaultmem.text.question_frames import question_frame

    props_of = lru_cache(maxsize=None)(props_of)   # each note's head read once, however often asked
    shown = {h.id for h in hits}
    under = [h for h in under if h.id not in shown]   # a hop may have found it since
    before = {id(h): h.score for h in under}
    pool = [*hits, *under]
    asked = question_frame(question)
    if not asks_of_someone_else(question):
        asked = _answered_as(asked, hits, props_of, as_of)
    pairs = _mark(pool, question, asked, props_of, as_of, {id(h) for h in hits})
    currents = {path for path, _ in pairs}
    family = (asked or "").split(":", 1)[0]
    factor = ENDED_FACTOR if as_of is not None else 1.0

    def joins(hit) -> bool:
        if hit.score < floor or hit.score <= before[id(hit)] * factor:
            return False
        slot = slot_of(hit.text, props_of(hit.path))
        return hit.path in currents or bool(family and slot and _the_users(slot, family))

    hits[:] = [h for h in pool if id(h) not in before or joins(h)]
    return pairs


# Where the person has no memory of the attribute asked, its sibling answers: "Where does the
# user work?" by "The user is an ICU nurse at St. Luke's" (a job), "What does the user do for a
# living?" by "… a freelance illustrator who works from a narrowboat studio" (an employer).
# Only a question of the user's own, and only a memory the search found itself: one from under
# the threshold is not lifted for a frame that may have misread the question.
_SIBLINGS = {"employer": "job", "job": "employer"}


def _answered_as(asked: str | None, hits, props_of, as_of: str | None) -> str | None:
    """The attribute whose memories answer a question asking for `asked`: itself, or its
    sibling (`_SIBLINGS`) when none of the live `hits` is the user's `asked` and one is the
    user's sibling."""
    sibling = _SIBLINGS.get(asked or "")
    if sibling is None:
        return asked
    slots = [slot for slot in (slot_of(h.text, props_of(h.path)) for h in hits if _live(h, as_of)) if slot]
    if any(_the_users(slot, asked) for slot in slots):
        return asked
    return sibling if any(_the_users(slot, sibling) for slot in slots) else asked


def _mark(hits, question: str, asked: str | None, props_of, as_of: str | None, found: set) -> list[tuple[str, list[str]]]:
    """`mark_current` over `hits`, the search's hits (their ids: `found`) and those under its
    threshold together. The rules that read the question's words and not a slot (its anchor
    words, the answers that score near the best) read the search's hits alone: "What is the
    user trying to give up?" is not answered by "Uses Obsidian and Helix" at 0.21. `asked`:
    the attribute the question's frame asks for (`question_frame`), or None."""
    if as_of is not None:
        _ended_lead(hits, as_of)
    groups: dict[tuple[str, str], list] = {}
    slots: dict[int, tuple[str, str, str]] = {}
    for hit in hits:
        if not _live(hit, as_of):
            continue
        slot = slot_of(hit.text, props_of(hit.path))
        if slot is not None:
            slots[id(hit)] = slot
            groups.setdefault(slot[:2], []).append(hit)
    pairs = []
    best = max((h.score for h in hits), default=0.0)
    single = single_valued(question)
    # A question of the user's relation ("Where does the user's husband work?") asks for
    # their slot, not the user's: the user's own employer or home must not lead it. Who
    # they are ("Who is the user's boss?") is the user's slot.
    theirs = asks_of_someone_else(question) and not ASKS_WHO.search(question)
    # A question naming someone whose slots the hits hold ("Where does Marisol live?") asks of them.
    theirs = theirs or any(subject != "user" and _names(question, subject)
                           for (subject, _), members in groups.items() if any(id(h) in found for h in members))
    searched = [h for h in hits if id(h) in found]
    # On a past day only the slots speak: the memories that held then were told on other days
    # than the ones they held from, so "told last" says nothing of which one held then.
    if as_of is None and not theirs:
        if asked:
            pairs += _asked_slot(hits, asked, slots, best, props_of=props_of)
        elif single:
            pairs += _asked_slot(searched, None, slots, best, anchors=anchor_words(question), props_of=props_of)
    if single and not YES_NO.search(question.strip()) and not pairs and as_of is None:
        pairs += _answers(searched, question, best, asked=asked, slots=slots)
    for (subject, attribute), members in groups.items():
        values = {slots[id(h)][2] for h in members}
        latest = max(members, key=lambda h: (said_day(h), h.created or ""))
        if len(values) > 1:
            earlier = [h for h in members
                       if slots[id(h)][2] != slots[id(latest)][2] and said_day(h) <= said_day(latest)]
            for hit in earlier:
                hit.valid_to = said_day(latest) or hit.valid_to
            if earlier:
                latest.score = max(latest.score, max(h.score for h in earlier) + LEAD_MARGIN)
                pairs.append((latest.path, [h.path for h in earlier]))
        if asked and _fills(attribute, asked) and subject == "user" and not theirs:
            latest.score = max(latest.score, best + LEAD_MARGIN)
    if asked and not theirs:
        _others_aside(groups, asked, best)
    _below(pairs, hits)
    hits.sort(key=lambda h: -h.score)
    return pairs


# Asked of a past day ("What did the user drink in the morning on 2026-01-20?"), a memory that
# held that day and has ended since (its last day, `valid_to`, gone by: replaced or ended) is
# what was true then and only then; one still true now held that day too, but says nothing of the day. Among
# hits that answer alike, the ended one leads: it scores ENDED_FACTOR times its match. Batch 2's
# tune half through the model, as_of 53/62 at 1.0, 55 at 1.05, 56 at 1.1, 57 from 1.15 to 1.4.
ENDED_FACTOR = 1.25


def _ended_lead(hits, as_of: str) -> None:
    """Scale the score of each hit that held on `as_of` and has ended since, its last day
    (`valid_to`) gone by (`ENDED_FACTOR`)."""
    from vaultmem import clock

    today = clock.today().isoformat()
    for hit in hits:
        last = (hit.valid_to or "")[:10]   # the last day it held (a merge ends nothing: none)
        if hit.type in STATEMENT_TYPES and last and as_of <= last < today:
            hit.score *= ENDED_FACTOR


# Someone else's value of the slot a question asks of the user scores at most this share of
# the best hit: under the block's floor (`context.FLOOR_SHARE`), so it is not shown as an answer.
OTHERS_SHARE = 0.25


def _others_aside(groups: dict, asked: str, best: float) -> None:
    """"Where does the user live?" is not answered by "The user's friend Marisol lives in Santa
    Fe": where the user's own memory of the asked attribute is among the hits, a memory of that
    attribute whose subject is someone else answers another question and scores under
    OTHERS_SHARE of the best."""
    family = asked.split(":", 1)[0]
    if not any(_the_users(slot, family) for slot in groups):
        return
    for (subject, attribute), members in groups.items():
        if subject != "user" and _of_family(attribute, family):
            for hit in members:
                hit.score = min(hit.score, OTHERS_SHARE * best)


def _names(question: str, subject: str) -> bool:
    """Whether `question` names `subject` (a slot's lower-cased subject), as a whole word."""
    return len(subject) > 1 and re.search(rf"(?<![a-z]){re.escape(subject)}(?![a-z])", question.lower()) is not None


def _fills(attribute: str, asked: str) -> bool:
    """Whether a memory's attribute is the one a question asks for: the same, of its family
    ("family:wife" for "family"), or the same name ("editor" for "tool:editor")."""
    return attribute == asked or attribute.split(":", 1)[0] == asked or \
        attribute.split(":")[-1] == asked.split(":")[-1]


def _the_users(slot, family: str) -> bool:
    """Whether a slot ((subject, attribute, ...)) is the user's, of the attribute family asked."""
    return slot[0] == "user" and _of_family(slot[1], family)


def _of_family(attribute: str, family: str) -> bool:
    """An attribute of the family asked: "learning", "learning:piano", or a model's own name
    that opens with it ("learning_language")."""
    head = attribute.split(":", 1)[0]
    return head == family or head.startswith(family + "_")


def _of_kind(attribute: str, asked: str, text: str) -> bool:
    """A tool's slot answers a question asking for one kind of tool ("Which note-taking app…",
    `tool:notes`) when it is that kind (`tool:notes`) or its statement names a tool of that
    kind ("The user switched to VS Code", `tool:vs code`, for `tool:editor`): "The user uses
    Helix as their editor" is no later value of the notes app. Other families: any member."""
    from vaultmem.text.question_frames import speaks_of

    if not asked.startswith("tool:"):
        return True
    return _fills(attribute, asked) or speaks_of(asked, _bare(text))


def _asked_slot(hits, asked: str | None, slots: dict, best: float, anchors=None, props_of=None) -> list[tuple[str, list[str]]]:
    """The question asks for one attribute of the user ("Where does the user live?"): the
    active memories that speak of it compete, whatever their wording; the one said last
    leads the block, and an earlier one that names something it does not ("… in Chicago"
    against "… in Denver") is shown as earlier, until the later one was said. A memory about
    someone else (its slot's subject) does not compete."""
    from vaultmem.text.question_frames import about_someone_else, named_values, speaks_of

    family = asked.split(":", 1)[0] if asked else None
    competing = []
    for hit in hits:
        if not _live(hit):
            continue
        slot = slots.get(id(hit))
        if asked is None:   # no frame: the question's own words say which memories answer it
            if anchors and _anchored(hit.text, anchors) and not about_someone_else(hit.text):
                competing.append(hit)
            continue
        if slot is not None:
            if _the_users(slot, family) and _of_kind(slot[1], asked, hit.text):
                competing.append(hit)
        elif speaks_of(asked, _bare(hit.text)) and not about_someone_else(hit.text):
            competing.append(hit)
    if len(competing) < 2:
        return []
    # Said last, not true from last, for a state: the model dates "drives a Seal since
    # mid-February" by when it became true and keeps the day told in `said`, and an aside
    # told the same day must not make it look older. An event stays dated by when it happens.
    def day(hit):
        said = str((props_of(hit.path) if props_of else {}).get("said") or "")[:10]
        return said if said and hit.type != "event" else said_day(hit)

    latest = max(competing, key=lambda h: (day(h), h.score))
    named = named_values(_bare(latest.text))
    earlier = []
    for hit in competing:
        if hit is latest or day(hit) >= day(latest):
            continue
        # Asked in words no frame reads, two memories whose notes fill different slots hold
        # together ("the wedding budget is 30k" beside "married on June 19, 2027").
        if asked is None and not _one_slot(slots, hit, latest):
            continue
        if _restated(slots, hit, latest):
            continue
        own = named_values(_bare(hit.text))
        if own and not own <= named:
            hit.valid_to = day(latest)
            earlier.append(hit)
    latest.score = max(latest.score, best + LEAD_MARGIN)
    return [(latest.path, [h.path for h in earlier])] if earlier else []


# A memory answers a question no frame reads when it scores at least this share of the best one
# (blind tune halves, first form of the rule: 0.3 / 0.5 / 0.7 gave current 95 / 89 / 82 of 249 and
# leads 261 / 280 / 291 of 654; this form: 0.5 / 0.7 gave 84 / 79 and 281 / 289).
ANSWER_SHARE = 0.5
# The day an event's statement opens with is when it happens, not a value it gives
# ("2025年，12月想考下一级", "On 2026-01-18, it's -22 in Duluth"): dates inside it stay ("flight 改到12月20号").
_DATE_LEAD = re.compile(r"^(?:(?:On|In|Around)\s+)?(?:the (?:week|weekend) (?:before|of|after)\s+)?"
                        r"(?:\d{4}-\d{2}-\d{2}|[A-Z][a-z]+ \d{4}|\d{4}年(?:\d{1,2}月)?(?:\d{1,2}[日号])?|\d{4})"
                        r"(?:之前的一周|所在的一周|之后的一周|那个周末|前后)?\s*[,，]\s*")


def told_day(hit) -> str:
    """The day a memory was told: its first source session's day (an event is dated by the day
    it happens, which may come after), else the day it holds from."""
    for source in hit.sources or ():
        m = re.search(r"(\d{4}-\d{2}-\d{2})", str(source))
        if m:
            return m.group(1)
    return said_day(hit)


def _answers(hits, question: str, best: float, asked=None, slots=None) -> list[tuple[str, list[str]]]:
    """A question that asks for one value, whatever its wording: the memories that answer it
    about as well as the best one does and name a value the question does not are its answers;
    the one told last leads, and an earlier one naming something it does not is shown as earlier."""
    from vaultmem.text.question_frames import about_someone_else, named_values

    def names(statement):
        return named_values(_bare(statement), loose=False)

    asked_names = names(question.strip())
    top = max((h.score for h in hits if _live(h)), default=0.0)
    if top <= 0:
        return []
    someone = asks_of_someone_else(question)
    answers = []
    for hit in hits:
        if not _live(hit):
            continue
        statement = _DATE_LEAD.sub("", hit.text.strip())   # read past the day an event opens with
        if hit.score < ANSWER_SHARE * top or (not someone and about_someone_else(statement)):
            continue
        named = names(statement) - asked_names
        if named:
            answers.append((hit, named))
    if len(answers) < 2:
        return []
    # A memory whose slot is someone else's, or, where the question asks for a slot, another
    # slot of the user's (or another kind of tool), answers some other question: it is not the
    # latest answer ("lives and works in Glasgow" is no employer, 周子航被调到厦门工作 is not where
    # the user works, an editor is no notes app).
    family = asked.split(":", 1)[0] if asked else None

    def elsewhere(hit) -> bool:
        slot = (slots or {}).get(id(hit))
        if slot is None:
            return False
        if slot[0] != "user":
            return not someone
        return bool(family) and (slot[1].split(":", 1)[0] != family or not _of_kind(slot[1], asked, hit.text))

    other = {id(h) for h, _ in answers if elsewhere(h)}
    if len(answers) - len(other) < 1:
        return []
    latest, latest_named = max((a for a in answers if id(a[0]) not in other),
                               key=lambda a: (told_day(a[0]), a[0].created or ""))
    # Two memories whose notes say which slot each fills, and not the same one, are two facts
    # that hold together ("Anand's birthday is in October" is no new employer for Anand):
    # neither is the other's earlier value.
    earlier = []
    for hit, named in answers:
        if hit is not latest and told_day(hit) < told_day(latest) and not named <= latest_named \
                and _one_slot(slots, hit, latest) and not _restated(slots, hit, latest):
            hit.valid_to = told_day(latest)
            earlier.append(hit)
    if not earlier:
        return []
    latest.score = max(latest.score, best + LEAD_MARGIN)
    return [(latest.path, [h.path for h in earlier])]


_ASKS_OF_OTHER = re.compile(r"\buser's\s+(?:best\s+)?(?:boyfriend|girlfriend|husband|wife|partner|fianc\w*|mom|mum|dad|"
                            r"mother|father|parents?|son|daughter|kids?|child|children|dog|cat|pet|friend|sister|"
                            r"brother|manager|boss|lead|colleague|coworker|roommate|landlord|neighbou?r)\b|"
                            r"用户的?(?:男朋友|女朋友|老公|老婆|妻子|丈夫|爸|妈|父|母|儿子|女儿|孩子|狗|猫|"
                            r"朋友|同事|哥|姐|弟|妹|领导|老板|组长|经理|上司)", re.I)


# A question that asks who someone is, or their name: the user's slot of that relation.
ASKS_WHO = re.compile(r"^\s*who(?:'s| is| was)\b|\bname\b|是谁|叫什么|名字|是哪位", re.I)


def _one_slot(slots, hit, other) -> bool:
    """Whether two memories may be values of one slot: unless both say theirs and they differ."""
    mine, theirs = (slots or {}).get(id(hit)), (slots or {}).get(id(other))
    return mine is None or theirs is None or mine[:2] == theirs[:2]


def _restated(slots, hit, other) -> bool:
    """Whether two memories whose notes both say their slot fill the same one with the same
    value: the later restates it ("the blog stays on GitHub Pages" is no new value for "the
    blog is built with Hugo and hosted on GitHub Pages"), so the earlier is no earlier value.
    (Two keys of one family are left to the rules above: a tool's key may be the tool itself,
    tool:vim then tool:vs code, and a switch of tool is a new value.)"""
    mine, theirs = (slots or {}).get(id(hit)), (slots or {}).get(id(other))
    return mine is not None and theirs is not None and mine == theirs


def asks_of_someone_else(question: str) -> bool:
    """Whether a question asks about someone in the user's life ("Where does the user's
    boyfriend work?", 用户的婆婆叫什么): then news about them answers it."""
    return bool(_ASKS_OF_OTHER.search(question))


def _below(pairs, hits) -> None:
    """An earlier value never outranks the value said after it."""
    by_path = {h.path: h for h in hits}
    for current, earlier in pairs:
        for path in earlier:
            if by_path[path].score >= by_path[current].score:
                by_path[path].score = by_path[current].score - LEAD_MARGIN




# A question that asks for one value: where, which <thing>, who, when, how many, what <thing> (not
# a plural: "what pets does the user have?" may have several answers), 哪/谁/几/多少/什么时候.
_SINGLE = re.compile(r"^(?:where|who|whom|whose|when|which\s+\w+(?:(?<!s)|(?<=ss))\b|what(?:'s| is| was)|"
                     r"what\s+(?!kinds?\b|sorts?\b|types?\b)\w+(?:(?<!s)|(?<=ss))\s+(?:does|do|is|did|has)\b|"
                     r"how (?:many|much|often|long|does|do|is)|is the user|"
                     r"does the user|has the user|did the user)\b", re.I)
_ZH_SINGLE = re.compile(r"哪|谁|几|多少|什么时候|叫什么|是什么|什么(?!都)|怎么|吗[？?]?$|有没有|是不是")


# A question answered yes or no ("用户平时喝奶茶吗？", "Does the user still run?") asks for no value.
YES_NO = re.compile(r"^(?:is|are|does|do|did|has|have|was|were|can|will)\b|[吗嘛][？?]?$|是不是|有没有|还.{0,6}吗", re.I)


def single_valued(question: str) -> bool:
    from vaultmem.text.script import is_chinese

    q = question.strip()
    return bool(_ZH_SINGLE.search(q) if is_chinese(q) else _SINGLE.search(q))


_QUESTION_WORDS = frozenset("""where who whom whose when which what how many much often long does do did is was are
were has have had the a an of to in on at for with about user user's users currently current now still these days
most main usually kind sort type name named called like likes love loves enjoy enjoys feel feels think
thinks use uses using have has get gets make makes take takes go goes want wants need needs prefer prefers
right anymore any""".split())
_ZH_QUESTION_CHARS = set("用户的现在目前是在了吗呢吧什么哪里哪个哪家谁几多少怎么样有没一个里边那这会要想最主要平时一般还")


def anchor_words(question: str) -> set[str]:
    """The words a memory must share with a question to answer it: its content words
    (English, lightly stemmed), or its characters other than question words (Chinese)."""
    from vaultmem.retrieve.keywords import STOP_WORDS
    from vaultmem.text.script import is_chinese

    if is_chinese(question):
        chars = {c for c in question if "\u4e00" <= c <= "\u9fff" and c not in _ZH_QUESTION_CHARS}
        latin = {w.lower() for w in re.findall(r"[A-Za-z][A-Za-z0-9-]+", question)}
        return chars | {_stem(w) for w in latin}
    words = re.findall(r"[A-Za-z][A-Za-z'-]+", question)
    return {_stem(w.lower()) for w in words if w.lower() not in STOP_WORDS and w.lower() not in _QUESTION_WORDS}


def _stem(word: str) -> str:
    word = word.lower().removesuffix("'s")
    for suffix in ("ing", "ed", "es", "s"):
        if len(word) > len(suffix) + 3 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


def _anchored(text: str, anchors: set[str]) -> bool:
    """The memory holds at least half of the question's anchor words (one at least)."""
    from vaultmem.text.script import is_chinese

    if not anchors:
        return False
    if is_chinese(text) or any("\u4e00" <= a <= "\u9fff" for a in anchors):
        have = {c for c in text} | {_stem(w) for w in re.findall(r"[A-Za-z][A-Za-z0-9-]+", text)}
    else:
        have = {_stem(w) for w in re.findall(r"[A-Za-z][A-Za-z'-]+", text)}
    shared = len(anchors & have)
    return shared >= max(1, (len(anchors) + 1) // 2)
