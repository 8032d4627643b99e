"""The frames of an English sentence: one reader per attribute (home, employer, job, manager,
tool, diet, learning, commute, and "my X is Y" for any other), in the order `frames.read`
tries them (`EN_FRAMES`).
"""

from __future__ import annotations

import re

from vaultmem.text.frame_cues import HOME_CUE, TITLE, WORK_CUE
from vaultmem.text.modality import Reading, modality, reading, subject_en
from vaultmem.text.values import CAP, NAME_SPAN, NOT_NAMES, clean_name, org_en, place_en, tools_in

_TITLE_CUE = re.compile(r"\b(?:promot\w+|title|role|position|work(?:s|ing)?\s+as|I'm\s+(?:now\s+)?(?:a|an|the)?|"
                        r"I am\s+(?:now\s+)?(?:a|an|the)?|became|become|becoming|now\s+(?:a|an|the)?|"
                        r"new\s+(?:job|gig)\s+as|hired\s+as|as\s+(?:a|an|the))\b", re.I)
_MANAGER_EN = re.compile(rf"\b(?:my|our)\s+(?:new\s+)?(?:manager|boss|lead|supervisor|team lead|line manager)"
                         rf"(?:\s+is|,|:|\s+-)?\s+(?:now\s+)?({CAP}(?:\s+{CAP})?)"
                         rf"|\b({CAP}(?:\s+{CAP})?)\s+is\s+(?:now\s+)?my\s+(?:new\s+)?(?:manager|boss|lead|supervisor)"
                         rf"|\breport(?:ing|s)?\s+to\s+({CAP}(?:\s+{CAP})?)\b")
_COMMUTE = re.compile(r"\b(?:drive|driving|drove|take the (?:train|bus|subway|tube|metro|ferry)|taking the (?:train|bus|subway|"
                      r"tube|metro|ferry)|bike|biking|cycle|cycling|walk|walking|carpool\w*|scooter)\b"
                      r"(?=.{0,40}\b(?:work|office|commute|job)\b)|\bcommut\w+\s+by\s+(\w+)", re.I)
_LANGS_EN = ("Japanese", "Spanish", "French", "German", "Italian", "Korean", "Mandarin", "Chinese", "Portuguese",
             "Russian", "Arabic", "Dutch", "Swedish", "Greek", "Turkish", "Hindi", "Vietnamese", "Thai", "English")
_LEARN_EN = re.compile(rf"\b(?:learning|studying|taking|practi[cs]ing|started)\s+(?:\w+\s+)?({'|'.join(_LANGS_EN)})\b", re.I)
_DIETS = ("keto", "vegan", "vegetarian", "pescatarian", "paleo", "Mediterranean", "low-carb", "gluten-free",
          "plant-based", "carnivore", "whole30", "intermittent fasting", "low-fodmap", "dairy-free", "halal", "kosher")
_DIET_EN = re.compile(rf"\b({'|'.join(map(re.escape, _DIETS))})\b", re.I)
_DIET_CUE = re.compile(r"\b(?:diet|eat(?:ing)?|went|gone|going|switched|started|stopped|quit|on|am|I'm|been|no longer|"
                       r"back to|dropped)\b", re.I)


def _en_home(s: str) -> Reading | None:
    if not HOME_CUE.search(s):
        return None
    if re.search(r"\b(?:visit\w*|trip|vacation|holiday|travel\w*|flew|flying|conference|stay(?:ed|ing)? (?:at|in) a hotel|"
                 r"cabin|cottage|airbnb|hotel|resort|campsite|getaway|thanksgiving|christmas|for the (?:week|weekend))\b", s, re.I) \
            and not re.search(r"\b(?:moved|live|living|settled|relocat)\b", s, re.I):
        return None
    if re.search(r"\b(?:until|till|for the (?:week|weekend|month)|for (?:a|two|three|\d+) (?:days|nights|weeks))\b",
                 s, re.I) and not re.search(r"\b(?:moved|live|living|lives|settled|relocat\w*)\b", s, re.I):
        return None   # "I'm in Tokyo until Friday": a stay, not a home
    if re.search(r"\b(?:moved|moving|move)\s+(?:my|our|the|all|his|her|their)\s+(?!family\b|stuff\b|things\b)\w+", s, re.I) \
            and not re.search(r"\b(?:live|living|lives|settled|flat|apartment|house|home|rental)\b", s, re.I):
        return None   # "moved my editing to Capture One": a thing moved, not the person
    moved = re.search(r"\bfrom\s+(?:the\s+)?" + NAME_SPAN + r"\s+to\s+(?:the\s+)?(" + NAME_SPAN + ")", s)
    value = clean_name(moved.group(1)) if moved else None
    value = value or place_en(re.sub(r"\bfrom\s+(?:the\s+)?" + NAME_SPAN, "", s) if re.search(r"\bto\b", s) else s)
    if value and re.match(rf"\bfrom\s+(?:the\s+)?{re.escape(value)}", s[s.find(value) - 5:] if value in s else ""):
        return None
    return reading("home", value, s, False)


def _en_employer(s: str) -> Reading | None:
    if not WORK_CUE.search(s):
        return None
    value = org_en(s)
    if value is None or re.search(rf"\b(?:in|to)\s+{re.escape(value)}\b", s) and not re.search(
            rf"\b(?:at|for|joined|join)\s+{re.escape(value)}", s):
        return None
    found = reading("employer", value, s, False)
    if found and found.modality == "fact" and re.search(r"\b(?:left|quit|laid off|resigned|fired)\b", s, re.I):
        return Reading("employer", found.value, "ended", found.subject)
    return found


def _en_job(s: str) -> Reading | None:
    if not _TITLE_CUE.search(s):
        return None
    for m in TITLE.finditer(s):
        raw = m.group(1).strip()
        cut = [w.end() for w in re.finditer(r"\b(?:to|as|is|am|are|was|be|been|being|now|the|a|an|my|our|new|got|get|"
                                            r"promoted|became|become|becoming|officially|finally|m|I|title|role|"
                                            r"position|job|work|works|working|everyone|that|it's|its)\b", raw, re.I)]
        title = raw[max(cut):].strip() if cut else raw
        if not title or not TITLE.fullmatch(title):
            continue
        before = s[:m.start() + raw.find(title) if title in raw else m.start()]
        if not title or re.search(r"\b(?:my|our|his|her|their|your)\s*$|(?<!\bI'm )(?<!\bis )(?<!\bas )\bthe\s*$",
                                  before, re.I):
            continue  # "my manager Dana": a person, not a title
        if not re.search(r"(?:promot\w+\s+to|title|role|position|as|I'm|I am|became|become|now|is now)\s*(?:(?:a|an|the|now|officially|finally)\s+)*$",
                         before, re.I) and not re.search(r"\bnow\b", s[m.end():m.end() + 8], re.I):
            continue
        return reading("job", title, s, False)
    return None


def _en_manager(s: str) -> Reading | None:
    m = _MANAGER_EN.search(s)
    if not m:
        return None
    name = clean_name(next(g for g in m.groups() if g))
    return Reading("manager", name, modality(s, False, name)) if name else None


def _en_tool(s: str) -> Reading | None:
    found = tools_in(s)
    if not found or not re.search(r"(?<![\w'])(?:I|I'm|I've|my|me)(?![\w'])", s):
        return None   # "we're on Python 3.12 for this service": a project's, not the person's
    # the tool the sentence now uses: after "switched to", "moved to", "only", "use", "in"
    m = re.search(r"\b(?:switched|switching|moved|moving|migrated|went back|gone back|changed)\s+(?:over\s+)?(?:from\s+\S+(?:\s\S+)?\s+)?to\s+(?:the\s+)?(\S+(?:\s\S+)?)"
                  r"|\b(?:use|using|uses|prefer|code in|coding in|write (?:it )?in|writing in|do everything in|"
                  r"everything (?:else )?(?:is )?in|living in|running|on)\s+(?:the\s+)?(\S+(?:\s\S+)?)", s, re.I)
    if not m:
        return None
    target = (m.group(1) or m.group(2))
    for tool, kind in found:
        if target.lower().startswith(tool.lower()) or tool.lower() in target.lower():
            its_modality = modality(s, False, tool)
            if re.search(rf"\b(?:only|just)\s+(?:use\s+)?{re.escape(tool)}\s+for\b", s, re.I):
                continue  # "I only use Vim for commit messages": narrowed, not the main one
            return Reading(f"tool:{kind}", tool, its_modality, subject_en(s))
    return None


def _en_diet(s: str) -> Reading | None:
    m = _DIET_EN.search(s)
    if not m or not _DIET_CUE.search(s):
        return None
    if re.search(rf"\b(?:stopped|quit|dropped|no longer|gave up|off|not)\b[^.]*\b{re.escape(m.group(1))}", s, re.I):
        return Reading("diet", m.group(1).lower(), "ended", subject_en(s))
    return reading("diet", m.group(1).lower(), s, False)


def _en_learning(s: str) -> Reading | None:
    m = _LEARN_EN.search(s)
    return reading("learning", m.group(1).capitalize(), s, False) if m else None


def _en_commute(s: str) -> Reading | None:
    switched = re.search(r"\b(?:switched|changed|moved) (?:over )?to (?:the |a )?(train|bus|subway|tube|metro|ferry|bike|biking|"
                         r"cycling|walking|driving|car|scooter|e-bike)\b", s, re.I)
    if switched and re.search(r"\b(?:work|office|commut\w*|job)\b", s, re.I):
        return reading("commute", switched.group(1).lower().replace("biking", "bike").replace("cycling", "bike"), s, False)
    found = list(_COMMUTE.finditer(s))
    if not found:
        return None
    m = next((f for f in found if re.search(r"\b(?:switched to|now|started|these days|instead)\s*(?:the\s+)?$",
                                              s[:f.start()], re.I)), found[0])
    mode = (m.group(1) or m.group(0)).lower()
    mode = re.sub(r"^(?:taking|take) the ", "", mode)
    mode = {"driving": "drive", "drove": "drive", "biking": "bike", "cycling": "bike", "cycle": "bike",
            "walking": "walk"}.get(mode, mode)
    return reading("commute", mode, s, False)


# "my GP is Dr. Anderson", "Mia's teacher is now Mr Dawson", "our vet is Bayview Vet": whose thing,
# which thing, and its value, whatever the thing is (the attribute is the thing's name).
_POSSESSIVE_IS = re.compile(
    rf"\b(?:(?P<mine>my|our)|(?P<owner>{CAP})['’]s)\s+(?:new\s+|current\s+|main\s+)?"
    r"(?P<thing>(?!(?:name|names|birthday|favou?rite|life|day|week|job|head|heart|mind|back|bad|fault|guess|"
    r"point|plan|turn|problem|thing|issue|question|answer|advice|idea)\b)[a-z][a-z-]+(?:\s+[a-z][a-z-]+)?)\s+"
    rf"(?:is|are|'s)\s+(?:now\s+|actually\s+|officially\s+)?(?:called\s+|named\s+)?"
    rf"(?P<value>(?:Dr\.?\s+|Mr\.?\s+|Mrs\.?\s+|Ms\.?\s+)?{CAP}(?:\s+{CAP}){{0,3}}|\d[\w./:-]*)")


def _en_possessive(s: str) -> Reading | None:
    m = _POSSESSIVE_IS.search(s)
    if not m:
        return None
    value = m.group("value").rstrip(".,")
    if value in NOT_NAMES or value.split()[0] in NOT_NAMES:
        return None
    subject = "user" if m.group("mine") else m.group("owner")
    thing = m.group("thing").lower()
    if value[:1].isdigit() and thing in _RELATION_NOUNS:
        thing += " age"   # "my daughter is 4 now"
    return Reading(thing, value, modality(s, False, value), subject)


_RELATION_NOUNS = frozenset("""son daughter kid kids child children baby boy girl brother sister mom mum dad mother father
wife husband partner boyfriend girlfriend dog cat puppy kitten""".split())


EN_FRAMES = (_en_manager, _en_possessive, _en_home, _en_employer, _en_job, _en_tool, _en_diet, _en_learning,
             _en_commute)
