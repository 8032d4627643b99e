"""A question about someone in the user's life, asked by relation ("Where does the user's
boyfriend work?", 用户的老公在哪个城市工作？): the memory that names them ("The user's boyfriend is
Anand.") shares the question's words and is found first, but it says who, not where; what
they do is said of their name ("Anand is a line cook at Marrow & Vine.") in words the
question does not share, often below the search threshold.

One hop: the name a found memory gives the relation is put in the question's place and the
question is asked again (`hop`); the memories of that name it finds join the hits with the
better of their two scores, and the one that answers (it fills the slot asked, else it
scored best when asked again) leads: the question is about them. A question that asks who they are ("Who is the user's boyfriend?", 用户的男朋友叫什么)
is answered by that memory and is left as it is.

    >>> asked_relation("Where does the user's boyfriend work?")
    ('boyfriend', "the user's boyfriend")
    >>> asked_relation("用户的老公在哪个城市工作？")
    ('husband', '用户的老公')
"""

from __future__ import annotations

import re

from vaultmem.retrieve.current import ASKS_WHO, _fills
from vaultmem.store.layout import STATEMENT_TYPES
from vaultmem.text.question_frames import question_frame

# The words for one relation, English then Chinese; the key is the English word.
RELATIONS = {
    "boyfriend": ("boyfriend", "男朋友", "男友"),
    "girlfriend": ("girlfriend", "女朋友", "女友"),
    "husband": ("husband", "老公", "丈夫", "先生"),
    "wife": ("wife", "老婆", "妻子", "太太", "爱人"),
    "partner": ("partner", "fiancé", "fiance", "fiancée", "fiancee", "伴侣", "对象", "未婚夫", "未婚妻"),
    "mother": ("mother", "mom", "mum", "妈妈", "母亲", "老妈"),
    "father": ("father", "dad", "爸爸", "父亲", "老爸"),
    "daughter": ("daughter", "女儿"),
    "son": ("son", "儿子"),
    "sister": ("sister", "姐姐", "妹妹"),
    "brother": ("brother", "哥哥", "弟弟"),
    "manager": ("manager", "boss", "supervisor", "领导", "老板", "上司", "经理", "主管"),
    "roommate": ("roommate", "flatmate", "室友"),
    "landlord": ("landlord", "房东"),
    "dog": ("dog", "狗", "狗狗"),
    "cat": ("cat", "猫", "猫咪"),
}
_WORDS = {word: key for key, words in RELATIONS.items() for word in words}
_EN = "|".join(sorted((w for w in _WORDS if w.isascii()), key=len, reverse=True))
_ZH = "|".join(sorted((w for w in _WORDS if not w.isascii()), key=len, reverse=True))
_ASKED = re.compile(rf"\bthe user['’]s\s+({_EN})\b|用户的?({_ZH})", re.I)
# A name as a value: one to three capitalised words, or two to four Chinese characters.
_NAME = re.compile(r"^(?:[A-Z][\w'’.-]*(?:\s+[A-Z][\w'’.-]*){0,2}|[\u4e00-\u9fff]{2,4})$")
HOP_MARGIN = 0.01


def asked_relation(question: str) -> tuple[str, str] | None:
    """(relation, the words naming it) when `question` asks something of the user's relation
    other than who they are; else None."""
    if ASKS_WHO.search(question):  # the memory that names them answers it
        return None
    m = _ASKED.search(question)
    if m is None:
        return None
    return _WORDS[(m.group(1) or m.group(2)).lower()], m.group(0)


def name_of(relation: str, hits, props_of) -> tuple[str, list[str]] | None:
    """The name a live memory among `hits` gives the user's `relation` (its slot is the
    user's, of that relation, and it links or gives the name), with the paths of the
    memories that name them; None when none does."""
    words = RELATIONS[relation]
    found, naming = None, []
    for hit in hits:
        if hit.type not in STATEMENT_TYPES or hit.status not in ("active", "superseded"):
            continue
        props = props_of(hit.path) or {}
        if str(props.get("subject") or "").strip().lower() not in ("user", "用户", "the user"):
            continue
        attribute = str(props.get("attribute") or "").lower()
        value = str(props.get("value") or "").strip()
        said = f"{attribute} {value} {hit.text}".lower()
        if not _names_a_relation(attribute, words) or not any(w in said for w in words):
            continue
        name = _name_in(value, hit.text, props, words)
        if name and (found is None or name == found):
            found = name
            naming.append(hit.path)
    return (found, naming) if found else None


def _names_a_relation(attribute: str, words) -> bool:
    """A slot that says who someone is to the user: "family:daughter", "relationship",
    "pet:dog", "partner", "boyfriend"; not "daughter_college_location"."""
    head, _, tail = attribute.partition(":")
    return head in ("family", "relationship", "relation", "pet", "partner", "spouse") or \
        attribute in words or tail in words


def _name_in(value: str, text: str, props: dict, words) -> str | None:
    """The name a memory gives: an entity it links whose name it says, else its value less
    the relation's words, when that reads as a name."""
    from vaultmem.store.values import as_list

    for link in as_list(props.get("entities")):
        name = str(link).strip("[]").split("|", 1)[0].strip()
        if name and name in text and name.lower() not in words:
            return name
    rest = value
    for word in sorted(words, key=len, reverse=True):
        rest = re.sub(re.escape(word), "", rest, flags=re.I)
    rest = rest.strip(" ,.:;'’\"()（）")
    return rest if _NAME.match(rest) else None


def hop(hits, question: str, props_of, ask_again, naming=None) -> None:
    """Put the name of the user's relation a hit gives in the question's place, ask again
    (`ask_again(question) -> hits`), and add what that finds of the name to `hits` (in place,
    sorted by score): each with the better of its two scores, the best of them above the
    memories that only name the relation. When no hit names them, `naming(words) -> hits`
    looks for the memory that does among all, superseded ones too: a name outlives the note
    that gave it ("Chloe is in her last year at 二附中", superseded when she left for UBC)."""
    asked = asked_relation(question)
    if asked is None:
        return
    relation, words = asked
    named = name_of(relation, hits, props_of)
    if named is None and naming is not None:
        named = name_of(relation, naming(words), props_of)
    if named is None:
        return
    name, naming = named
    again = ask_again(question.replace(words, name, 1))
    by_path = {h.path: h for h in hits}
    about = []
    for hit in again:
        if hit.path in naming or hit.type not in STATEMENT_TYPES or name.lower() not in hit.text.lower():
            continue
        held = by_path.get(hit.path)
        if held is None:
            hits.append(hit)
            by_path[hit.path] = held = hit
        else:
            held.score = max(held.score, hit.score)
        about.append((hit.score, held))
    if about:
        # The memory of the name that fills the slot asked for ("school" for "Where does
        # Chloe study?") answers, else the one the question asked again finds best; it
        # leads: the question is about them, not about the user nor who they are.
        frame = question_frame(question)
        filling = [pair for pair in about if frame and _answers_frame(_attribute(props_of, pair[1]), frame)]
        best = max(filling or about, key=lambda pair: pair[0])[1]
        others = max((h.score for h in hits if h is not best), default=0.0)
        best.score = max(best.score, others + HOP_MARGIN)
    hits.sort(key=lambda h: -h.score)


def _answers_frame(attribute: str, frame: str) -> bool:
    """A memory's attribute answers the frame asked: the same, or a job for "where does
    she work" (a job is said with its place: "a structural engineer at Ridgeline")."""
    return bool(attribute) and (_fills(attribute, frame) or
                                (frame == "employer" and attribute.split(":", 1)[0] == "job"))


def _attribute(props_of, hit) -> str:
    return str((props_of(hit.path) or {}).get("attribute") or "").strip().lower()
