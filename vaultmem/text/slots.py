"""Subject / attribute / value of a memory statement, for spotting contradictions.

"The user lives in Shanghai" and "I live in Beijing" fill the same slot (user, home) with
different values, so the later one supersedes the earlier. Statements written by hand with
`add` (third person, or first person) go through here; the offline extractor sets the slot
itself with the same attribute names.

    >>> describe_statement("The user lives in Shanghai.")
    {'subject': 'user', 'attribute': 'home', 'value': 'Shanghai', 'entities': ['Shanghai']}
    >>> describe_statement("用户不再喜欢咖啡")["attribute"]
    'likes:咖啡'
"""

from __future__ import annotations

import re

_SUBJECT = r"(?P<subject>I|The user|the user|User|[A-Z][a-z]+(?: [A-Z][a-z]+)?)"
_PATTERNS = [
    ("home", re.compile(_SUBJECT + r" (?:now )?(?:lives?|living|resides?) in (?P<value>[A-Z][\w .'-]*?)"
                        r"(?:[,.;!]|$| with| and| since| now)")),
    ("home", re.compile(_SUBJECT + r" (?:has )?moved to (?P<value>[A-Z][\w .'-]*?)(?:[,.;!]|$| with| and| in \d)")),
    ("job", re.compile(_SUBJECT + r" works? as (?:an? )?(?P<value>[\w .'-]+?)(?:[,.;!]|$| at| for)")),
    ("employer", re.compile(_SUBJECT + r" works? (?:at|for) (?P<value>[A-Z][\w .&'-]*?)(?:[,.;!]|$| as)")),
    ("name", re.compile(r"(?:(?:My|my|The user's|the user's) name is|I am called|I'm called) (?P<value>[A-Z][\w'-]*)")),
]
_LIKES = re.compile(_SUBJECT + r" (?P<neg>no longer |doesn't |does not |don't |do not |dislikes? |hates? )?"
                    r"(?:likes?|loves?|enjoys?|prefers?)? ?(?P<value>[\w' -]+?)(?:[,.;!]|$)")
_ZH_HOME = re.compile(r"(?P<subject>我|用户|他|她)(?:现在)?(?:住在|搬到了?|搬去了?)(?P<value>[\u4e00-\u9fff]{2,8}?)(?:了|市|，|。|$)")
_ZH_LIKE = re.compile(r"(?P<subject>我|用户)(?P<neg>不再|不|不太)?(?:喜欢|爱)(?P<value>[\u4e00-\u9fffA-Za-z]{1,10}?)(?:了|，|。|$)")
_ZH_NAME = re.compile(r"我叫(?P<value>[\u4e00-\u9fffA-Za-z]{1,10}?)(?:，|。|$)")


def _subject(raw: str) -> str:
    return "user" if raw.lower() in {"i", "the user", "user", "我", "用户"} else raw


def describe_statement(text: str, type: str | None = None) -> dict:
    """`{"subject", "attribute", "value", "entities"}` of a statement ({} when none is found)."""
    text = " ".join(str(text).split())
    for attribute, pattern in _PATTERNS:
        match = pattern.search(text)
        if match:
            value = match.group("value").strip(" .'")
            subject = _subject(match.groupdict().get("subject") or "user")
            entities = [value] if attribute in ("home", "employer") else []
            return {"subject": subject, "attribute": attribute, "value": value, "entities": entities}
    for pattern, attribute in ((_ZH_HOME, "home"), (_ZH_NAME, "name")):
        match = pattern.search(text)
        if match:
            value = match.group("value")
            return {"subject": _subject(match.groupdict().get("subject") or "user"),
                    "attribute": attribute, "value": value,
                    "entities": [value] if attribute == "home" else []}
    match = _ZH_LIKE.search(text)
    if match:
        return {"subject": _subject(match.group("subject")), "attribute": f"likes:{match.group('value')}",
                "value": "no" if match.group("neg") else "yes", "entities": []}
    if type in (None, "preference"):
        match = _LIKES.search(text)
        if match and match.group("value") and len(match.group("value").split()) <= 4:
            verb_given = re.search(r"\b(likes?|loves?|enjoys?|prefers?|dislikes?|hates?)\b", text)
            if verb_given:
                obj = match.group("value").strip().lower()
                return {"subject": _subject(match.group("subject")), "attribute": f"likes:{obj}",
                        "value": "no" if match.group("neg") else "yes", "entities": []}
    return {}
