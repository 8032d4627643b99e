"""Who and what a chat sentence names: the entity hubs a memory links to, the names a
user writes (to tell "Noor got the job" from "Coffee number two in hand"), and the one person
or pet a turn has named, which a following "she" or "她" stands for."""

from __future__ import annotations

import re
from functools import cache

from vaultmem.text.pattern_words import KNOWN_TOOLS
from vaultmem.text.patterns import Detection, detect
from vaultmem.text.zh_names import zh_entities

ENTITY_SKIP = {"I", "The", "A", "An", "It", "This", "That", "On", "In", "Around", "My", "We", "As", "Of",
               "They", "Their", "There", "He", "She", "His", "Her", "And", "But", "So", "Going",
               "Last", "Next", "Yesterday", "Today", "Tomorrow", "Thanks", "Plus", "Also",
               "Just", "Lately", "Since", "Now", "Family", "Everyone", "Here", "What", "When"}
_EN_PRONOUN = re.compile(r"^(?:(?:and|but|so|also|oh|plus)[,\s]+)?(she|he)(?:'s|\s+(?:is|was|has|had|will|would))?\b", re.I)
_ZH_PRONOUN = re.compile(r"^(?:[而且但是不过]{0,2})?([她他])(?![们的家])")


def the_one_named(sentence: str, chinese: bool, vocatives) -> str | None:
    """The one person or pet a sentence names ("write me a haiku about Pistachio, our cat",
    "我女儿糖糖天天偷偷喂它零食"), for a "she" or "他" that follows."""
    if chinese:
        found = detect(sentence, True)
        names = [e for e in (found.entities if found else []) if not ZH_COMMON.search(e)]
        names += re.findall(r"(?:女儿|儿子|老公|老婆|弟弟|哥哥|姐姐|妹妹|爸|妈|朋友|同事)([\u4e00-\u9fff]{2,3}?)(?=[天每最说要在是也都又就，。！]|$)", sentence)
    else:
        names = [m.group(1) for m in re.finditer(r"(?<=[a-z,;:] )([A-Z][a-z]+)\b(?!['’]s\b)", sentence)]
        names = [n for n in names if n not in ENTITY_SKIP and n not in months_days() and n not in vocatives]
    names = list(dict.fromkeys(names))
    return names[0] if len(names) == 1 else None


def resolve_pronoun(sentence: str, antecedent: str | None, chinese: bool) -> str:
    """"she knocked my coffee off the desk again", after "a haiku about Pistachio": the
    pronoun becomes the name, so the memory says who ("她才四岁" -> "糖糖才四岁")."""
    if not antecedent:
        return sentence
    m = (_ZH_PRONOUN if chinese else _EN_PRONOUN).match(sentence.strip())
    if not m:
        return sentence
    text = sentence.strip()
    if chinese:
        return text[:m.start(1)] + antecedent + text[m.end(1):]
    said = m.group(0)[m.start(1) - m.start(0):]
    tail = {"she's": "'s", "he's": "'s"}.get(said.lower(), said[len(m.group(1)):])
    return text[:m.start(1)] + antecedent + tail + text[m.end(0):]


def known_names(turns) -> set[str]:
    """Capitalised words the user writes inside a sentence ("just me and Noor"): names, so
    that "Noor got the job" can be told from "Coffee number two in hand" at a sentence start."""
    found: set[str] = set()
    for turn in turns:
        if (turn.role or "user").lower() == "user":
            found.update(re.findall(r"(?<=[a-z0-9,;:] )([A-Z][a-z]{1,}(?:'s)?)", turn.text or ""))
    return {w.removesuffix("'s") for w in found} - ENTITY_SKIP - months_days()


def names_someone(sentence: str, known: set[str], dated: bool = False) -> bool:
    """A name inside the sentence, or a known one at its start. Dated news may also open
    with any capitalised word ("Kabir lost his first tooth yesterday") or a determined noun
    ("the kids start school on Monday"), not with "someone" or no subject at all."""
    if dated and re.match(r"(?:the|a|an|his|her|their|our|my)\s+(?!one\b|thing\b)[a-z]", sentence.strip(), re.I):
        return True
    words = re.findall(r"(?<![\w'])[A-Z][\w'&-]*", sentence)
    first = sentence.strip()[:1].isupper()
    for i, word in enumerate(words):
        bare = word.removesuffix("'s").removesuffix("’s")
        if bare in ENTITY_SKIP or bare in months_days() or bare == "I":
            continue
        if i or not first or bare in known:
            return True
        if dated and bare.lower() not in _NOT_NAMES and not bare.lower().endswith("ed"):
            return True
    return False


_NOT_NAMES = {"someone", "somebody", "nobody", "everyone", "everybody", "went", "got", "made", "saw",
              "took", "came", "had", "did", "ran", "met", "bought", "found", "left", "spent", "ah", "oh"}


# One compiled pattern per known tool (a pattern built per call flooded re's cache, which
# then recompiled the policy's and the classifier's patterns: ~1 CPU-s per LoCoMo
# conversation), tried only where the text holds the tool's name in any case.
# A run of capitalised words, a title's full stop within it ("Dr. Lee", "St. Louis"): "Dr"
# alone is no one's hub.
_TITLES = ("Dr", "Mr", "Mrs", "Ms", "Prof", "St")
_CAPITALISED = re.compile(r"(?<![\w'])((?:(?:" + "|".join(_TITLES) + r")\.\s+)?[A-Z][\w&+-]*(?:'[A-Z]\w*)?"
                          r"(?:\s+(?:of\s+)?[A-Z][\w&+-]*)*)")
_TOOL_PATTERNS = [(tool, tool.lower(), re.compile(rf"(?<![\w]){re.escape(tool)}(?![\w])", re.I))
                  for tool in KNOWN_TOOLS if len(tool) > 2]


def entities_of(group: list[dict], detection: Detection | None) -> list[str]:
    found: list[str] = []
    name = group[0]["name"]
    if name and name not in ("the user", "用户"):
        found.append(name)
    if detection:
        found.extend(e for e in detection.entities if e)
    for piece in group:
        text = piece["original"]
        for m in _CAPITALISED.finditer(text):
            words = m.group(1).split()
            while words and words[0] in ENTITY_SKIP:
                words = words[1:]
            while words and (words[-1] in ENTITY_SKIP or words[-1] in months_days()):
                words = words[:-1]
            # the start of the text, or of a line of text pasted in (a form, a list, a letter)
            at_start = not text[:m.start()].split("\n")[-1].strip(" \"'(-*•>#\t")
            if at_start and len(words) == 1 and not words[0].isupper() \
                    and not re.search(r"[\u4e00-\u9fff]", text):
                continue  # a capital that only starts the sentence names nothing (in English)
            # \w takes CJK too: "HR说不好开" names HR, "V0最简单" nothing
            entity = re.split(r"[\u3040-\u30ff\u3400-\u9fff]", " ".join(words))[0].rstrip(".")
            if entity and len(entity) > 1:
                found.append(entity)
        lowered = text.lower()
        found.extend(tool for tool, key, pattern in _TOOL_PATTERNS if key in lowered and pattern.search(text))
        found.extend(e for e in zh_entities(text) if not ZH_COMMON.fullmatch(e))
    unique: list[str] = []
    for entity in found:
        entity = re.sub(r"['’]s$", "", entity.rstrip("."))
        if junk_entity(entity):
            continue
        if entity.lower() not in {u.lower() for u in unique} and entity not in months_days():
            unique.append(entity)
    # "St Mary" and "Hospital" are parts of "St Mary's Hospital", not entities of their own
    unique = [e for e in unique if not any(e != o and re.search(rf"\b{re.escape(e)}\b", o) for o in unique)]
    return unique[:6]


# "跟同事去打羽毛球": colleagues, friends and kin are no one's name
ZH_COMMON = re.compile(r"同事|朋友|同学|老公|老婆|孩子|女儿|儿子|家人|爸|妈|老板|邻居|客户|领导|老师|大家|"
                       r"别人|他们|她们|我们|你们|室友|对象|亲戚|弟|哥|姐|妹|爷|奶|公公|婆婆|宝宝")
_CODE_WORDS = frozenset("""select from where insert update delete join group order by values create drop
table limit desc asc into set and or not null true false none def return import class lambda async
await const let var function elif else endif fi done esac echo sudo mismatch misc todo fixme""".split())


def junk_entity(name: str) -> bool:
    """What names no hub a person would keep: "MT", "CI" (abbreviations of up to three
    capitals, unless a known tool), "SELECT", "DESC LIMIT" (code), "EpiPen-level"."""
    if re.fullmatch(r"[A-Z]{1,3}s?", name) and name not in KNOWN_TOOLS:
        return True
    if name.rstrip(".") in _TITLES:
        return True
    if all(w.lower() in _CODE_WORDS for w in name.split()):
        return True
    return bool(re.search(r"-(?:level|ish|like|style|esque|type|ish)$|redacted", name, re.I)
                or re.fullmatch(r"[\d\s.,:-]+", name))


@cache
def months_days() -> frozenset[str]:
    """Month and weekday names ("Thursdays" too): capitalised, but no one's name (asked once
    per word)."""
    from vaultmem.text.dates import MONTHS, WEEKDAYS
    days = {d.capitalize() for d in WEEKDAYS}
    return frozenset(MONTHS) | days | {f"{d}s" for d in days}
