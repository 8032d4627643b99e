"""The words a query and a chunk share: content words crudely stemmed (CJK runs as bigrams),
and the share of a query's terms a text holds (the `keyword` part of a hit's score).
"""

from __future__ import annotations

import re

from vaultmem.text.script import CJK as _CJK

_WORD = re.compile(r"[a-z0-9]+|[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]+")
STOP_WORDS = frozenset("""a an and are as at be been being but by can could did do does doing
for from had has have having he her hers him his how i if in into is it its itself me my of on
or our ours she so than that the their them then there these they this those to too us was we
were what when where which while who whom why will with would you your yours about any all
also am just more most no not only other over own same some such very s t don should now
user user's""".split())


# Words people write short: a question about "doctors" meets "my dermatologist, Dr. Lee",
# and one about "Dr. Lee" meets "the doctor". (LongMemEval-S dev slice, "How many different
# doctors did I visit?": 2 of its 5 turns in the top 10 -> 3; the slice's multi-session
# R@10 71.3 -> 75.3.)
WRITTEN_SHORT = {"doctor": "dr", "professor": "prof"}
_LONG_OF = {short: word for word, short in WRITTEN_SHORT.items()}


def terms(text: str) -> set[str]:
    """Content words of `text`, crudely stemmed; CJK runs become bigrams."""
    found = set()
    for word in _WORD.findall(text.lower()):
        if _CJK.match(word):
            found.update(word[i:i + 2] for i in range(max(1, len(word) - 1)))
        elif word not in STOP_WORDS:
            found.add(stem(word))
    return found


def stem(word: str) -> str:
    """A crude English stem that meets itself across forms: live, lives, lived -> liv."""
    for suffix in ("ing", "ies", "ed", "es", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)] + ("y" if suffix == "ies" else "")
            break
    return word[:-1] if word.endswith("e") and len(word) > 3 else word


def keyword_coverage(patterns, text: str) -> float:
    """The share of a query's terms found in `text`; `patterns`: its `term_patterns()`."""
    if not patterns:
        return 0.0
    lowered = text.lower()
    return sum(1 for pattern in patterns if pattern.search(lowered)) / len(patterns)


def term_patterns(query_terms: set[str]) -> tuple:
    """One regex per term, matching the words `stem` maps onto it (liv: live, lives, lived,
    living; city: city, cities) without cutting every word of a chunk into terms; a word
    people write short matches its short form too (`WRITTEN_SHORT`).

    >>> patterns = term_patterns(terms("Which doctors did I visit?"))
    >>> keyword_coverage(patterns, "My dermatologist, Dr. Lee, looked at it"), keyword_coverage(patterns, "I visited the drive-in")
    (0.5, 0.5)
    """
    found = []
    for term in sorted(query_terms):
        if _CJK.match(term):
            found.append(re.compile(re.escape(term)))
            continue
        word = _LONG_OF.get(term, term)
        if word in WRITTEN_SHORT:
            found.append(re.compile(rf"(?<![a-z0-9])(?:{word}s?|{WRITTEN_SHORT[word]})(?![a-z0-9])"))
            continue
        base = term[:-1] if term.endswith("y") else term
        tails = "y|ies|ied|e|es|ed|ing|s" if term.endswith("y") else "e|es|ed|ing|s|ies"
        found.append(re.compile(rf"(?<![a-z0-9]){re.escape(base)}(?:{tails})?(?![a-z0-9])"))
    return tuple(found)
